"""The real-model recipe of docs/RL.md ("A real run on a GPU"), stage by stage, with a model directory
that has what a hub model has (a `config.json`, a tokenizer with its files, a chat template TRL
recognises) but tiny random weights: demonstrations → SFT (`--model DIR --demos`) → multi-turn GRPO
from the SFT checkpoint (`--model CKPT --save`) → the GRPO checkpoint scored in the env, and
single-turn GRPO from the same directory. Every stage takes the previous stage's directory as it is,
and the checkpoints keep the model's chat template and special tokens unchanged (what TRL's tool
parsing needs). The commands are the docs' with sizes shrunk; no duration is asserted.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("rl_extra")]


def model_directory(path: Path, corpus: list[str]) -> Path:
    """A directory like a downloaded chat model's: Qwen3 config and weights, a fast tokenizer with TRL's
    Qwen3 tool-calling chat template, `<|im_end|>` as end of sequence (random weights; the tokenizer
    trained here on `corpus`, as a real one was trained on text like it)."""
    from utp_env.rl import tiny

    tokenizer = tiny.train_tokenizer(corpus, vocab_size=4096)
    model = tiny.build_model(tokenizer, seed=0)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_a_real_model_directory_goes_through_every_stage(mini_db_path: Path, tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    from utp_env.cli import main as cli
    from utp_env.rl import grpo_multi_turn, grpo_single_turn, sft

    db = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    demos = tmp_path / "demos.jsonl"
    # 1. demonstrations of two train queries (the split's first two, built for them alone); compact mode,
    # as for a small model (short schemas and task text)
    assert cli(["data", "demos", "--split", "train", "--db", str(db), "--limit", "2", "--compact",
                "--out", str(demos)]) == 0
    lines = demos.read_text().splitlines()
    assert len(lines) == 2
    model = model_directory(tmp_path / "model", lines * 5)
    original = AutoTokenizer.from_pretrained(model)
    # 2. SFT on them, scored in the env before and after on a held-out query
    ckpt = tmp_path / "ckpt" / "sft"
    summary = sft.main(["--model", str(model), "--demos", str(demos), "--db-path", str(db), "--epochs", "1",
                        "--max-length", "9000", "--eval-limit", "1", "--output-dir", str(ckpt),
                        "--summary", str(tmp_path / "sft.json")])
    assert (ckpt / "config.json").exists() and {"before_sft/held_out", "after_sft/held_out"} <= set(summary.evaluations)
    # 3. multi-turn GRPO from the SFT checkpoint, saved
    grpo_dir = tmp_path / "ckpt" / "grpo"
    grpo = grpo_multi_turn.main(["--model", str(ckpt), "--db-path", str(db), "--split", "train", "--limit", "1",
                                 "--num-generations", "2", "--max-completion-length", "48", "--max-steps", "1",
                                 "--compact", "--allow-cut-episodes", "--output-dir", str(grpo_dir), "--save",
                                 "--summary", str(tmp_path / "g.json")])
    assert grpo.rollouts == 2 and grpo.tensors > 0  # the diagnostic compared the trained tensors
    # 4. single-turn GRPO from the same model directory
    single = grpo_single_turn.main(["--model", str(model), "--db-path", str(db), "--split", "train", "--limit", "1",
                                    "--num-generations", "2", "--max-completion-length", "32", "--max-steps", "1",
                                    "--output-dir", str(tmp_path / "single")])
    assert len(single.rewards) == 2
    # 5. the GRPO checkpoint scored in the env, as the SFT one was
    from transformers import AutoModelForCausalLM

    schemas = sft.trl_tool_schemas(None, {"db_path": str(db), "profile": "mini", "world": 0}, None)
    trained = AutoModelForCausalLM.from_pretrained(grpo_dir)
    tokenizer = AutoTokenizer.from_pretrained(grpo_dir)
    scored = sft.evaluate_policy(trained, tokenizer, {"db_path": str(db), "profile": "mini", "world": 0},
                                 "validation", 1, schemas, None, system="plan", request="", max_new_tokens=16,
                                 rounds=1)
    assert scored["queries"] == 1 and 0 <= scored["mean_reward"] <= 1
    # every checkpoint keeps the model's chat template and its special tokens
    for folder in (ckpt, grpo_dir):
        saved = AutoTokenizer.from_pretrained(folder)
        assert saved.chat_template == original.chat_template
        assert (saved.eos_token, saved.pad_token, saved.padding_side) == (original.eos_token, original.pad_token,
                                                                          "left")
        assert json.loads((folder / "config.json").read_text())["model_type"] == "qwen3"
