"""Agents used by the run tests (imported by `module:Class` path, also from subprocesses)."""

from __future__ import annotations

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
