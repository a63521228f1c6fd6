"""The reference planner (no LLM): uncertainty-aware buffers, or the deterministic baseline, and
its repair policy for the closed-loop env (`RepairPolicy`, repair.py; docs/REPLAN.md).

`plan_gold` is the gold planner the dataset build finds through the entry point
`utp_env.gold_planners: reference` (pyproject.toml): it plans the reference plans of a query set.
"""

from __future__ import annotations

from utp_env.agents.base import Toolkit
from utp_env.agents.reference.planner import ReferencePlanner
from utp_env.agents.reference.repair import RepairPolicy
from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.tools.database import Database

__all__ = ["ReferencePlanner", "RepairPolicy", "plan_gold"]


def plan_gold(query: Query, db: Database) -> Plan | None:
    """The reference planner's plan for `query` (None when it finds no feasible plan)."""
    return ReferencePlanner().run(query, Toolkit(db)).plan
