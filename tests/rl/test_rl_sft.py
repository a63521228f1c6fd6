"""The SFT → GRPO recipe on the tiny local model (CPU, nothing downloaded): SFT on demonstrations of
train queries, scored in the env on held-out queries before and after, then GRPO from the checkpoint.

Asserts the direction docs/RL.md ("SFT, then GRPO") measures: the SFT loss falls; on held-out
queries of the training world (the validation split, none of them demonstrated) the model that made
no tool call before SFT earns a higher mean reward after it, with legs that leave the query's own
origin (it copied the task's cities and the env's service numbers, not a memorised leg); GRPO runs
from the saved checkpoint and its model is scored too. Another world (`--eval-world 1`) is measured
by docs/RL.md, not here (it adds minutes, and the tiny model's tokenizer does not know that world's
train and flight numbers). Never a duration.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from utp_env.train_split import build_train_set

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("rl_extra")]
DEMOS = 256  # the tiny default (TINY_DEMOS): enough distinct queries that copying beats memorising


@pytest.mark.long
def test_sft_raises_the_held_out_reward_and_grpo_runs_from_it(mini_db_path: Path, tmp_path: Path) -> None:
    from utp_env.rl import sft

    path = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    build_train_set(path, n=DEMOS, progress=False)
    out = tmp_path / "sft"
    summary = sft.main(["--tiny", "--db-path", str(path), "--eval-limit", "8", "--grpo-steps", "1",
                        "--output-dir", str(out), "--summary", str(tmp_path / "s.json")])
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved["demos"] == summary.demos == DEMOS
    losses = summary.sft_losses
    assert losses and all(math.isfinite(x) for x in losses) and losses[-1] < losses[0] / 4
    ev = summary.evaluations
    assert set(ev) == {f"{stage}/{where}" for stage in ("before_sft", "after_sft", "after_grpo")
                       for where in ("seen", "held_out")}
    for result in ev.values():
        assert all(0 <= r <= 1 for r in result["rewards"]) and result["queries"] == len(result["rewards"]) > 0
    # held out: validation queries of the training world, none of them demonstrated
    held_out = ev["after_sft/held_out"]
    assert held_out["query_ids"] and not set(held_out["query_ids"]) & set(summary.train_queries)
    assert all(q.startswith("utp-train-") for q in summary.train_queries)
    before = ev["before_sft/held_out"]
    assert before["tool_calls"] == 0 and before["mean_reward"] == 0
    assert held_out["mean_reward"] > before["mean_reward"]
    assert held_out["from_origin"] > 0  # legs the task asked for, not a memorised valid leg
    assert ev["after_grpo/held_out"]["tool_calls"] > 0
    assert (out / "config.json").exists() and (out / "grpo" / "config.json").exists()


def test_a_held_out_split_that_was_demonstrated_is_refused(mini_db_path: Path, tmp_path: Path) -> None:
    """Scoring on the split the demonstrations came from would contaminate the held-out numbers."""
    from utp_env.rl import sft

    with pytest.raises(SystemExit, match="are demonstrations"):
        sft.main(["--tiny", "--db-path", str(mini_db_path), "--split", "validation", "--limit", "2",
                  "--eval-split", "validation", "--epochs", "1", "--grpo-steps", "0"])


@pytest.mark.parametrize(("argv", "message"), [
    (["--tiny", "--swapped-copies", "-2"], "--swapped-copies is the tiny model's .*not -2"),
    (["--model", "m", "--swapped-copies", "4"], "--swapped-copies is the tiny model's .* with --model"),
    (["--model", "m", "--pretrain-steps", "10"], "a real model comes pretrained"),
    (["--tiny", "--pretrain-copy-bar", "0.5"], r"--pretrain-copy-bar .* without pretraining"),
    (["--tiny", "--pretrain-steps", "10", "--pretrain-copy-bar", "2"], r"a share in \(0, 1\] .*not 2.0")])
def test_the_tiny_models_options_are_refused_out_of_range_or_with_a_real_model(argv: list[str], message: str) -> None:
    from utp_env.rl import sft

    with pytest.raises(SystemExit, match=message):
        sft.main(argv)
