"""The offline scripted model (agents/llm/scripted.py): `utp-env run` of every LLM agent end to end with no
network and no key, its usage counted, and a bad script name refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from utp_env.agents.llm.models import ModelConfigError, make_chat_model
from utp_env.cli import main


@pytest.mark.parametrize("agent", ["tool_calling", "direct", "atlas"])
def test_every_llm_agent_runs_offline(agent: str, mini_db_path: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    out = tmp_path / "run"
    assert main(["run", "--agent", agent, "--set", "model=scripted:reference", "--db", str(mini_db_path),
                 "--limit", "2", "--rollouts", "0", "--out", str(out), "--quiet"]) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["termination_reason"] for r in records] == ["submitted", "submitted"]
    assert all(r["final_pass"] for r in records)  # the reference plans, delivered through the agent's pipeline
    assert all(r["usage"]["model_calls"] >= 1 and r["usage"]["input_tokens"] > 0 for r in records)


def test_an_unknown_script_is_refused() -> None:
    with pytest.raises(ModelConfigError, match=r"model 'scripted:gpt' : unknown script|unknown script 'gpt'"):
        make_chat_model({"model": "scripted:gpt"})
