"""The SFT → GRPO recipe on the tiny local model (CPU, nothing downloaded): SFT on demonstrations of
train queries, scored in the env on held-out queries before and after, then GRPO from the checkpoint.

A smoke run of every stage: the SFT loss falls; each stage is scored on the demonstrated queries and on
held-out ones (validation queries of the training world, none demonstrated), rewards within [0, 1]; the model
before SFT makes no tool call; GRPO runs from the saved checkpoint and its model is scored too. Whether SFT
raises the held-out reward (256 demonstrations, 10 epochs: legs that leave the query's own origin) is a
learning claim, measured by docs/RL.md "SFT, then GRPO" and the learning curves (`python -m
utp_env.rl.curve`, benchmarks/results/), not asserted here: it held one CI worker for 15 minutes. Never a
duration.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from utp_env.train_split import build_train_set

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("rl_extra")]
DEMOS = 16


def test_sft_then_grpo_runs_every_stage_and_scores_it(mini_db_path: Path, tmp_path: Path) -> None:
    from utp_env.rl import sft

    path = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    build_train_set(path, n=DEMOS, progress=False)
    out = tmp_path / "sft"
    summary = sft.main(["--tiny", "--db-path", str(path), "--limit", str(DEMOS), "--epochs", "4",
                        "--eval-limit", "2", "--grpo-steps", "1", "--output-dir", str(out),
                        "--summary", str(tmp_path / "s.json")])
    saved = json.loads((tmp_path / "s.json").read_text())
    assert saved["demos"] == summary.demos == DEMOS
    losses = summary.sft_losses
    assert losses and all(math.isfinite(x) for x in losses) and losses[-1] < losses[0]
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
    assert (out / "config.json").exists() and (out / "grpo" / "config.json").exists()
    lengths = json.loads((out / sft.DEMO_LENGTHS_FILE).read_text())  # what GRPO from this checkpoint must hold
    assert lengths["query_id"] in summary.train_queries
    assert 0 < lengths["longest_completion"] < lengths["longest_transcript"]
    assert lengths["demonstrated"] == {"level": 4, "compact": True, "max_observation_chars": 1000}


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


def test_a_demonstration_longer_than_max_length_is_refused_before_training(
        mini_db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut to --max-length, a demonstration's last calls (submit among them) would never be trained on: SFT refuses
    it in one line naming the longest and the length that fits, before pretraining starts."""
    from utp_env.rl import sft, tiny_pretrain

    def no_pretraining(*args: object, **kwargs: object) -> None:
        raise AssertionError("pretraining started before the demonstrations were checked")

    monkeypatch.setattr(tiny_pretrain, "pretrain", no_pretraining)
    db = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    refusal = (r"utp_env\.rl\.sft: 2 of 2 demonstrations are longer than --max-length 64 tokens "
               r"\(the longest, utp-train-\d+, is (\d+)\); .*give --max-length \1 or more")
    with pytest.raises(SystemExit, match=refusal):
        sft.main(["--tiny", "--db-path", str(db), "--level", "1", "--limit", "2", "--max-length", "64",
                  "--pretrain-steps", "3000", "--epochs", "1", "--grpo-steps", "0", "--eval-limit", "0",
                  "--output-dir", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


def test_tokenize_names_the_longest_transcript_and_cuts_none() -> None:
    pytest.importorskip("transformers", reason="the rl extra (pip install 'utp-env[rl]') is not installed")
    from utp_env.rl import sft
    from utp_env.rl.tiny import train_tokenizer

    tokenizer = train_tokenizer(["plan a trip to Pune and back"] * 20, vocab_size=600)
    short = {"query_id": "q-short", "messages": [{"role": "user", "content": "Pune"},
                                                 {"role": "assistant", "content": "ok"}]}
    long = {"query_id": "q-long", "messages": [{"role": "user", "content": "plan a trip to Pune " * 40},
                                               {"role": "assistant", "content": "ok"}]}
    fits = sft.tokenize([short, long], tokenizer, 10_000)
    lengths = [len(ids) for ids in fits["input_ids"]]
    with pytest.raises(sft.TranscriptTooLongError, match=rf"1 of 2 .*the longest, q-long, is {lengths[1]}\)"):
        sft.tokenize([short, long], tokenizer, lengths[0] + 1)
    assert [len(ids) for ids in sft.tokenize([short, long], tokenizer, lengths[1])["input_ids"]] == lengths


def test_grpo_refuses_a_completion_budget_that_cuts_the_demonstrated_episodes(tmp_path: Path) -> None:
    """A multi-turn rollout budget shorter than the SFT checkpoint's longest demonstration (its
    sft_demo_lengths.json) would cut every such episode before its end: refused in one line naming the need,
    unless --allow-cut-episodes. Not checked: a checkpoint without the record (a hub model), demonstrations of
    another level or env config, a broken record (named)."""
    from utp_env.rl import recipe, sft

    env = {"step_limit": 12, "max_observation_chars": 1000, "compact": True}
    demonstrated = {"level": 2, "compact": True, "max_observation_chars": 1000}
    (tmp_path / sft.DEMO_LENGTHS_FILE).write_text(json.dumps(
        {"longest_completion": 887, "query_id": "utp-train-00003", "longest_transcript": 1415,
         "demonstrated": demonstrated}))
    refusal = recipe.completion_budget_refusal(str(tmp_path), 768, 2, env)
    assert refusal is not None and "--max-completion-length 768" in refusal and "887 tokens" in refusal
    assert "utp-train-00003" in refusal and "give --max-completion-length 887 or more" in refusal
    assert recipe.completion_budget_refusal(str(tmp_path), 887, 2, env) is None
    assert recipe.completion_budget_refusal(str(tmp_path), 768, 1, env) is None  # another level's rollouts
    assert recipe.completion_budget_refusal(str(tmp_path), 768, 2, {**env, "compact": False}) is None
    assert recipe.completion_budget_refusal(str(tmp_path / "elsewhere"), 16, 2, env) is None
    argv = ["--model", str(tmp_path), "--level", "2", "--compact", "--max-observation-chars", "1000",
            "--max-completion-length", "768"]
    with pytest.raises(SystemExit, match=r"--max-completion-length 768 cannot hold .*887 or more"):
        recipe.run_grpo(recipe.parser("test").parse_args(argv), "multi_turn")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / sft.DEMO_LENGTHS_FILE).write_text("{}")
    assert "not a record utp_env.rl.sft writes" in str(recipe.completion_budget_refusal(str(broken), 768, 2, env))
