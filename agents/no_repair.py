"""`no_repair`: the reference planner's plan, lived through without any repair (docs/AGENTS.md).

The baseline of the closed-loop env (UTP-Replan-v0, docs/REPLAN.md): it plans exactly as the
reference planner does (the same `ReferencePlanner`, so the same plan for the same query) and has
no `repair` method, so at every disruption the run worker (`utp_env/runs/replan_episode.py`) only
calls `continue_trip`. Comparing `reference` with `no_repair` on the same seeds measures what the
repair policy (`agents/reference/repair.py`) gains on identical days.
"""

from __future__ import annotations

from utp_env.agents.base import AgentResult, Toolkit
from utp_env.agents.reference import ReferencePlanner
from utp_env.config import UncertaintyConfig
from utp_env.query import Query


class NoRepairAgent:
    """The reference planner without a repair policy: plans like `reference`, never repairs."""

    name = "no_repair"

    def __init__(self, buffers: bool = True, config: UncertaintyConfig | None = None) -> None:
        self.planner = ReferencePlanner(buffers=buffers, config=config)

    def run(self, query: Query, toolkit: Toolkit) -> AgentResult:
        """The reference planner's plan of `query`."""
        return self.planner.run(query, toolkit)
