"""Both GRPO recipes run for 2 steps on the tiny local model (CPU, nothing downloaded): the CI smoke test.

Asserts what the recipes promise (docs/RL.md): the model's tool calls reached the env (multi-turn),
rewards were returned for every rollout, some above 0 and some not (so GRPO had an advantage to
learn from), a loss was logged per step and the parameters moved. Needs the `rl` extra; .ci/run
installs it. No assertion on durations (the summary's seconds are reported by docs/RL.md only).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("rl_extra")]


def run(script: str, tmp_path: Path, mini_db_path: Path) -> dict:
    """`python -m utp_env.rl.<script> --tiny` in this process, on the test session's mini sandbox."""
    import importlib

    summary_path = tmp_path / f"{script}.json"
    module = importlib.import_module(f"utp_env.rl.{script}")
    # --split validation: the smoke test checks the mechanics on the session's small query set (the
    # default, train, would build a 5,000-query split into the shared fixture)
    module.main(["--tiny", "--max-steps", "2", "--db-path", str(mini_db_path), "--split", "validation",
                 "--output-dir", str(tmp_path / "out"), "--summary", str(summary_path)])
    return json.loads(summary_path.read_text())


def assert_trained(summary: dict, rollouts: int) -> None:
    assert len(summary["rewards"]) == rollouts and all(math.isfinite(r) and 0 <= r <= 1 for r in summary["rewards"])
    assert any(r > 0 for r in summary["rewards"]) and len(set(summary["rewards"])) > 1  # an advantage to learn
    assert len(summary["losses"]) == 2 and all(math.isfinite(x) for x in summary["losses"])
    assert summary["tensors_changed"] > 0 and summary["param_change_l2"] > 0


def test_multi_turn_grpo_reaches_the_env(tmp_path: Path, mini_db_path: Path) -> None:
    summary = run("grpo_multi_turn", tmp_path, mini_db_path)
    rollouts = 2 * summary["queries"] * 8  # steps × queries × num_generations (the tiny defaults)
    assert summary["rollouts"] == rollouts
    assert summary["tool_calls"] > 0 and set(summary["tools_called"]) <= {"add_leg", "view_plan", "submit"}
    assert summary["tools_called"].get("add_leg", 0) > 0  # a plan-changing call reached the env
    assert sum(summary["terminations"].values()) == rollouts
    assert_trained(summary, rollouts)
    assert summary["warm_up_losses"][-1] < summary["warm_up_losses"][0]


def test_single_turn_grpo_scores_plans(tmp_path: Path, mini_db_path: Path) -> None:
    summary = run("grpo_single_turn", tmp_path, mini_db_path)
    rollouts = 2 * summary["queries"] * 8
    assert summary["rollouts"] == 0 and summary["tool_calls"] == 0  # no env episodes: PlanReward scores text
    assert_trained(summary, rollouts)


def test_multi_turn_grpo_against_a_server(tmp_path: Path, mini_db_path: Path) -> None:
    """Two GRPO steps of the tiny model whose episodes run on `utp-env serve` (OpenEnv) on 127.0.0.1: the
    same rollouts and rewards as the same run with the env in this process."""
    import importlib

    from serve_process import openenv_server

    config = tmp_path / "env.yaml"
    config.write_text("step_limit: 8\nmax_observation_chars: 1000\n", encoding="utf-8")  # the --tiny settings
    summary_path = tmp_path / "remote.json"
    module = importlib.import_module("utp_env.rl.grpo_multi_turn")
    with openenv_server("--db", str(mini_db_path), "--config", str(config)) as url:
        module.main(["--tiny", "--max-steps", "2", "--db-path", str(mini_db_path), "--split", "validation",
                     "--server", url,
                     "--output-dir", str(tmp_path / "out"), "--summary", str(summary_path)])
    summary = json.loads(summary_path.read_text())
    rollouts = 2 * summary["queries"] * 8
    assert summary["rollouts"] == rollouts and sum(summary["terminations"].values()) == rollouts
    assert summary["tool_calls"] > 0 and set(summary["tools_called"]) <= {"add_leg", "view_plan", "submit"}
    assert summary["tools_called"].get("add_leg", 0) > 0  # a plan-changing call reached the server's env
    assert_trained(summary, rollouts)
    local = run("grpo_multi_turn", tmp_path / "local", mini_db_path)  # the same run with the env in-process
    assert summary["rewards"] == local["rewards"] and summary["tools_called"] == local["tools_called"]


def test_a_planted_no_op_optimizer_fails_the_run(tmp_path: Path, mini_db_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A GRPO run whose optimizer never moves a weight (TRL still logs a loss) exits with one line saying
    so, after writing its summary (0 of N trainable tensors changed)."""
    import importlib

    import torch

    from utp_env.env.adapters import PlanReward

    monkeypatch.setattr(torch.optim.AdamW, "step", lambda self, closure=None: None)
    # Rewards that vary within a group (by the completion's length), so that GRPO has a gradient:
    # with equal rewards no step has one, and the run says that instead (a different failure).
    monkeypatch.setattr(PlanReward, "score", lambda self, text, query_id: (len(text) % 7) / 7)
    summary_path = tmp_path / "noop.json"
    module = importlib.import_module("utp_env.rl.grpo_single_turn")
    with pytest.raises(SystemExit, match=r"error: GRPO \(1 steps\) changed none of the policy's \d+ trainable"):
        module.main(["--tiny", "--max-steps", "1", "--db-path", str(mini_db_path), "--split", "validation",
                     "--output-dir", str(tmp_path / "out"), "--summary", str(summary_path)])
    summary = json.loads(summary_path.read_text())
    assert summary["tensors"] > 0 and summary["tensors_changed"] == 0 and summary["param_change_l2"] == 0
