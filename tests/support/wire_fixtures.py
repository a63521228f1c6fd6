"""The scripted OpenAI-compatible server as fixtures (`server`: one per module, its brain answering each
query with the reference planner's plan; `fresh`: the same server with no faults left and the key set) and
the `run` helper that plays `utp-env run` against it. Shared by the LLM agents', the resume and the
verifiers tests (tests/conftest.py loads this module as a plugin)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fault_server import FaultServer, PlanningBrain

from utp_env.agents.base import Toolkit
from utp_env.agents.reference import ReferencePlanner
from utp_env.cli import main
from utp_env.env.config import query_pool, split_pool
from utp_env.plan_format import plan_to_json
from utp_env.tools.database import Database

KEY_ENV = "UTP_FAULT_SERVER_KEY"
SLOW = 3.0  # seconds the slow fault sleeps before it answers

# tiny backoff; a generous client timeout (a loaded machine must not time out a normal reply),
# short only where the slow fault is injected (it sleeps SLOW seconds, longer than SHORT_TIMEOUT)
FAST = ["retries=3", "backoff_initial=0.01", "backoff_max=0.02", "timeout=60", f"api_key_env={KEY_ENV}"]


@pytest.fixture(scope="module")
def server(mini_db: Database) -> Iterator[FaultServer]:
    """The fault server, its brain answering each query with the reference planner's plan."""
    queries = query_pool(mini_db)
    plans: dict[str, str] = {}

    def plan_for(text: str) -> str:
        for query in queries:
            if query.text in text:
                if query.query_id not in plans:
                    result = ReferencePlanner().run(query, Toolkit(mini_db))
                    assert result.plan is not None
                    plans[query.query_id] = plan_to_json(result.plan)
                return plans[query.query_id]
        return "I do not know which trip you mean."

    for query in split_pool(mini_db, "validation")[:2]:  # the queries the runs take: plans ready before a request
        plan_for(query.text)
    with FaultServer(PlanningBrain(plan_for), slow_seconds=SLOW) as srv:
        yield srv

@pytest.fixture
def fresh(server: FaultServer, monkeypatch: pytest.MonkeyPatch) -> FaultServer:
    """The server with its queue and records emptied, and the dummy key set."""
    monkeypatch.setenv(KEY_ENV, "sk-test-not-a-real-key")
    server.faults.clear()
    server.requests.clear()
    server.log.clear()
    server.refused.clear()
    server.usage.clear()
    return server

def run(server: FaultServer, agent: str, out: Path, mini_db_path: Path, limit: int = 1,
        settings: list[str] | None = None) -> list[dict[str, Any]]:
    """`utp-env run` of `agent` against the server; the results.jsonl records."""
    argv = ["run", "--agent", agent, "--db", str(mini_db_path), "--limit", str(limit), "--rollouts", "0",
            "--out", str(out), "--quiet", "--set", f"base_url={server.base_url}", "--set", "model=fault-model"]
    for item in [*FAST, *(settings or [])]:
        argv += ["--set", item]
    main(argv)
    lines = (out / "results.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]
