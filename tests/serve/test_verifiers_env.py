"""The verifiers environment (utp_env/verifiers_env.py): `vf-eval utp-env` against a scripted OpenAI-wire
model server on 127.0.0.1 (tests/support/fault_server.py) gives the rewards `utp-env run --agent tool_calling` gives
with the same calls, and transcripts identical to the env in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verifiers")
pytest.importorskip("langchain_openai")

from fault_server import FaultServer, check_request

from utp_env.cli import main
from utp_env.env.core import UTPEnv, split_answers

KEY_ENV = "UTP_VF_SERVER_KEY"
N = 3


def vf_eval(llm: FaultServer, mini_db_path: Path, out: Path) -> list[dict[str, Any]]:
    """verifiers' own command line on the environment; the saved results, one per rollout."""
    env_args = {"db_path": str(mini_db_path), "limit": N, "max_turns": 10}
    done = subprocess.run(
        [sys.executable, "-m", "verifiers.legacy.scripts.eval", "utp-env", "-a", json.dumps(env_args), "-m",
         "scripted-model", "-b", llm.base_url, "-k", KEY_ENV, "-n", str(N), "-r", "1", "-c", "1", "-s", "-o",
         str(out), "-d", "--disable-env-server"],
        cwd=out.parent, env={**os.environ, KEY_ENV: "sk-test-not-a-real-key"}, capture_output=True, text=True,
        timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    [results] = list(out.rglob("results.jsonl"))
    return [json.loads(line) for line in results.read_text().splitlines() if line.strip()]


def test_vf_eval_gives_the_rewards_of_utp_env_run_and_the_in_process_transcripts(
        server: FaultServer, mini_db_path: Path, tmp_path: Path) -> None:
    rows = vf_eval(server, mini_db_path, tmp_path / "vf")
    assert server.refused == [] and all(check_request(body) is None for body in server.requests)
    assert len(rows) == N
    by_query = {row["info"]["query_id"]: row for row in rows}
    # utp-env run with the tool-calling agent against the same scripted model: the same calls, the same rewards
    server.requests.clear()
    os.environ[KEY_ENV] = "sk-test-not-a-real-key"
    assert main(["run", "--agent", "tool_calling", "--db", str(mini_db_path), "--limit", str(N), "--rollouts", "0",
                 "--out", str(tmp_path / "run"), "--quiet", "--set", f"base_url={server.base_url}", "--set",
                 "model=scripted-model", "--set", f"api_key_env={KEY_ENV}", "--set", "max_steps=10"]) == 0
    records = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert sorted(by_query) == sorted(r["query_id"] for r in records)
    for record in records:
        row = by_query[record["query_id"]]
        assert record["termination_reason"] == "submitted"
        assert row["reward"] == pytest.approx(record["reward"], abs=1e-12)
        assert row["metrics"]["final_pass"] == float(record["final_pass"])
    # the transcript: each assistant reply's calls played on UTPEnv in-process give the same tool messages
    for qid, row in by_query.items():
        env = UTPEnv(db_path=mini_db_path, config={"step_limit": 10})
        task, _ = env.reset(seed=row["info"]["seed"], options={"query_id": qid})
        assert row["prompt"][-1]["content"] == task
        messages = row["completion"]
        replies = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        reward = None
        for i in replies:
            calls = [json.loads(c) if isinstance(c, str) else c for c in messages[i]["tool_calls"]]
            entries = [{"id": c["id"], "type": "function", "function": {"name": c["name"],
                                                                       "arguments": c["arguments"]}} for c in calls]
            observation, reward, *_ = env.step(entries)
            answers = [m["content"] for m in messages[i + 1: i + 1 + len(calls)]]
            assert answers == split_answers(observation, len(calls))
        assert reward == pytest.approx(row["reward"], abs=1e-12)


def test_arguments_are_checked_in_one_line(mini_db_path: Path) -> None:
    from utp_env import load_environment

    for bad, message in (({"limit": 1.5}, "load_environment: limit must be an integer >= 1, not 1.5"),
                         ({"seed": -1}, "load_environment: seed must be an integer >= 0, not -1"),
                         ({"env": "UTP-v9"}, "--env: unknown env 'UTP-v9'")):
        with pytest.raises(ValueError) as error:
            load_environment(db_path=str(mini_db_path), **bad)
        assert str(error.value).startswith(message) and "\n" not in str(error.value)
    env = load_environment(db_path=str(mini_db_path), eval_split="nope", limit=1)
    with pytest.raises(ValueError, match="load_environment: split: "):
        env.get_eval_dataset()
