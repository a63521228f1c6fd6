"""What the agent reads before it acts: the task text of the first observation (`task_text`), with a
one-line summary of each tool (`summary`, the first paragraph of its description). The compact
mode's tool schemas are `utp_env.tools.tool_schemas.compact_schema`, applied in `core.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from utp_env.env.actions import ACTION_FORMAT
from utp_env.env.config import EnvConfig
from utp_env.env.episode import commonsense_rules
from utp_env.env.reward import reward_note
from utp_env.itinerary import MAX_ITEMS_PER_DAY
from utp_env.query import Query
from utp_env.tools.tool_schemas import summary
from utp_env.tools.toolkit import ToolSpec


def task_text(query: Query, tools: Mapping[str, ToolSpec[Any]], config: EnvConfig, note: str | None = None) -> str:
    """The first observation: the request, persona, risk profile, constraints and how to act; the
    rules every plan is checked on and the tools (one line in the compact mode); then `note`."""
    lc = query.local_constraint
    constraints = [f"{k}: {v if isinstance(v, str) else ', '.join(v)}"
                   for k, v in lc.model_dump().items() if v]
    tool_lines = [f"- {name}: {summary(spec.description)}" for name, spec in tools.items()]
    p = query.persona
    return "\n".join([
        f"TASK (query {query.query_id}): {query.text}",
        f"Trip: {query.days} days from {query.org} to {query.dest} ({query.visiting_city_number} "
        f"city(ies) to visit), dates {query.dates[0]} to {query.dates[-1]}, {query.people_number} "
        f"people, budget INR {query.budget_inr:,.0f}.",
        f"Persona: {p.traveler_type}; purpose {p.purpose}; {p.spending}; prefers {p.location_preference}.",
        f"Risk profile: {query.risk_profile} (size your buffers for delays and crowds accordingly).",
        "Constraints: " + ("; ".join(constraints) if constraints else "none beyond the budget."),
        "",
        "HOW TO ACT: each step, send one tool call or a JSON list of them:",
        f"  {ACTION_FORMAT}",
        f"A day holds at most {MAX_ITEMS_PER_DAY} point-of-interest items; a plan with more is refused.",
        f"Build the plan with the itinerary tools and finish with submit (or send a whole plan with "
        f"submit_plan). You have {config.step_limit} steps.",
        *rules_and_tools(tool_lines, config.compact),
        *(["", note] if note is not None else []),
    ])


def rules_and_tools(tool_lines: list[str], compact: bool) -> list[str]:
    """The task text's rules, reward note and tool list; in the compact mode one line (the tools'
    schemas name the tools, and check_plan or the final report names a failed rule)."""
    if compact:
        return ["Every plan is checked on commonsense rules (complete days, meals, stays, transport, budget); "
                "times on every item."]
    return [
        "RULES every plan is checked on (commonsense checks; check_plan reports the ones that fail):",
        *(f"- {name}: {rule}" for name, rule in commonsense_rules().items()),
        reward_note(),
        "TOOLS:", *tool_lines,
    ]
