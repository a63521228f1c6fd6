"""The SFT → GRPO recipe on the tiny local model (CPU, nothing downloaded): SFT on reference-planner
demonstrations of train queries, scored in the env before and after, then GRPO from the checkpoint.

Asserts what holds for the tiny model (docs/RL.md "SFT, then GRPO"): the SFT loss falls, the model
that made no tool call before SFT makes them after it and earns a higher mean reward on the queries
it was shown, GRPO runs from the saved checkpoint and its rollouts reach the env. It does not assert
a gain on held-out queries: the tiny model does not generalise to them (docs/RL.md gives the
numbers). Never a duration.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from utp_env.dataset import build_train_set

pytestmark = pytest.mark.slow

REASON = "the rl extra is not installed (pip install 'utp-env[rl]'); .ci/run installs it"


@pytest.fixture(scope="module", autouse=True)
def rl_extra() -> None:
    for module in ("torch", "trl", "datasets", "tokenizers", "accelerate"):
        pytest.importorskip(module, reason=REASON)


def test_sft_then_grpo_on_the_tiny_model(mini_db_path: Path, tmp_path: Path) -> None:
    from utp_env.rl import sft

    path = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    build_train_set(path, n=8, progress=False)
    out = tmp_path / "sft"
    summary = sft.main(["--tiny", "--db-path", str(path), "--limit", "8", "--eval-limit", "8", "--epochs", "60",
                        "--grpo-steps", "1", "--output-dir", str(out), "--summary", str(tmp_path / "s.json")])
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved["demos"] == summary.demos == 8
    losses = summary.sft_losses
    assert losses and all(math.isfinite(x) for x in losses) and losses[-1] < losses[0] / 4
    ev = summary.evaluations
    assert set(ev) == {f"{stage}/{where}" for stage in ("before_sft", "after_sft", "after_grpo")
                       for where in ("seen", "held_out")}
    for result in ev.values():
        assert all(0 <= r <= 1 for r in result["rewards"]) and result["queries"] == len(result["rewards"]) > 0
    assert ev["after_sft/seen"]["tool_calls"] > ev["before_sft/seen"]["tool_calls"]
    assert ev["after_sft/seen"]["accepted_calls"] > 0
    assert ev["after_sft/seen"]["mean_reward"] > ev["before_sft/seen"]["mean_reward"]
    assert (out / "config.json").exists() and (out / "grpo" / "config.json").exists()
