"""Agents used by the run tests (imported by `module:Class` path, also from subprocesses)."""

from __future__ import annotations

import sys
import time

from utp_env.agents.base import AgentResult, Toolkit
from utp_env.agents.reference import ReferencePlanner
from utp_env.query import Query


class SlowReference(ReferencePlanner):
    """The reference planner, slowed down so a test can kill a run between episodes."""

    def run(self, query: Query, toolkit: Toolkit) -> AgentResult:
        time.sleep(0.4)
        return super().run(query, toolkit)


class TroubledAgent(ReferencePlanner):
    """Raises on some queries, returns no plan on others, plans the rest like the reference."""

    name = "troubled"

    def run(self, query: Query, toolkit: Toolkit) -> AgentResult:
        number = int(query.query_id.rsplit("-", 1)[-1])
        if number % 3 == 0:
            raise RuntimeError(f"model exploded on {query.query_id}")
        if number % 3 == 1:
            return AgentResult(plan=None, raw_output="{not json", error="unparseable plan: no JSON object found")
        return super().run(query, toolkit)


class CutShortAgent(ReferencePlanner):
    """Plans like the reference but reports that its env episode hit the step limit (as the
    tool-calling agent does); on every third query it reports a reason that does not exist."""

    def run(self, query: Query, toolkit: Toolkit) -> AgentResult:
        result = super().run(query, toolkit)
        bogus = int(query.query_id.rsplit("-", 1)[-1]) % 3 == 0
        return result.model_copy(update={"termination_reason": "exploded" if bogus else "step_limit"})


class CountingReference(ReferencePlanner):
    """The reference planner, slowed down, appending a line to $UTP_TEST_STARTED per episode it starts
    (from any worker process), so a test can count the episodes a run began."""

    def run(self, query: Query, toolkit: Toolkit) -> AgentResult:
        import os

        with open(os.environ["UTP_TEST_STARTED"], "a", encoding="utf-8") as fh:
            fh.write(f"{query.query_id}\n")
        time.sleep(0.2)
        return super().run(query, toolkit)


class ExitingAgent(ReferencePlanner):
    """Calls `sys.exit` while planning every other query, and while repairing (as a model library might)."""

    name = "exiting"

    def run(self, query: Query, toolkit: Toolkit) -> AgentResult:
        if int(query.query_id.rsplit("-", 1)[-1]) % 2 == 0:
            sys.exit(f"exit while planning {query.query_id}")
        return super().run(query, toolkit)

    def repair(self, env: object, observation: str, info: dict) -> None:
        if info.get("disruption"):
            raise SystemExit(3)
