"""A model call that fails mid-episode: `tool_calling`'s partial plan is scored, the reason is `agent_error`.

The scripted OpenAI-compatible server (`tests/support/fault_server.py`) has the model add one leg (the first
leg of the query's reference plan), then answers the next request with a permanent fault (401).
`utp-env run` must record `agent_error` with the error, and score the one-leg plan the env holds
the way a step-limit cut is scored (evaluated, rewarded), instead of dropping it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_openai")

from fault_server import FaultServer, Reply

from utp_env.cli import main
from utp_env.env.config import reference_plan, split_pool
from utp_env.itinerary import Plan
from utp_env.rl.scripted import add_leg_args  # the same add_leg arguments the RL warm-up uses
from utp_env.tools.database import Database

KEY_ENV = "UTP_FAULT_SERVER_KEY"


class LegThenFault:
    """First request: call `add_leg` with the reference plan's first leg and queue a 401 for the next one."""

    def __init__(self, args: dict[str, Any]) -> None:
        self.args = args
        self.server: FaultServer | None = None

    def __call__(self, body: dict[str, Any], fault: str | None) -> Reply:
        assert self.server is not None
        self.server.inject("401")
        return Reply(tool_calls=[("add_leg", json.dumps(self.args))])


@pytest.fixture
def scripted(mini_db: Database, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[FaultServer, Plan]]:
    monkeypatch.setenv(KEY_ENV, "sk-test-not-a-real-key")
    query = split_pool(mini_db, "validation")[0]  # the query `utp-env run --limit 1` takes
    reference = reference_plan(mini_db, query.query_id)
    assert reference is not None and reference.days[0].transport
    brain = LegThenFault(add_leg_args(1, reference.days[0].transport[0]))
    with FaultServer(brain) as server:
        brain.server = server
        yield server, reference


def test_failed_model_call_scores_the_partial_plan_as_agent_error(scripted: tuple[FaultServer, Plan],
                                                                  tmp_path: Path, mini_db_path: Path) -> None:
    server, reference = scripted
    out = tmp_path / "run"
    main(["run", "--agent", "tool_calling", "--db", str(mini_db_path), "--limit", "1", "--rollouts", "0",
          "--out", str(out), "--quiet", "--set", f"base_url={server.base_url}", "--set", "model=fault-model",
          "--set", "retries=3", "--set", "backoff_initial=0.01", "--set", f"api_key_env={KEY_ENV}"])
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    assert len(records) == 1
    record = records[0]
    assert server.statuses() == [200, 401]  # the leg was added, then the permanent fault (not retried)
    assert record["termination_reason"] == "agent_error"
    assert "model call failed at turn 2" in record["error"] and "Incorrect API key" in record["error"]
    plan = Plan.model_validate(record["plan"])
    leg = reference.days[0].transport[0]
    assert [(t.mode, t.number, t.origin, t.destination) for t in plan.days[0].transport] == \
        [(leg.mode, leg.number, leg.origin, leg.destination)]
    assert record["report"] is not None and record["metrics"] is not None  # evaluated, as a step-limit cut is
    assert record["reward"] > 0
