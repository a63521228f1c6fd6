"""What the agent reads before it acts: the task text of the first observation (`task_text`), with a
one-line summary of each tool (`summary`, the first paragraph of its description). The compact
mode's tool schemas are `utp_env.tools.tool_schemas.compact_schema`, applied in `core.py`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from utp_env.env.actions import ACTION_FORMAT
from utp_env.env.config import EnvConfig
from utp_env.env.episode import commonsense_rules
from utp_env.env.levels import LevelTask
from utp_env.env.reward import reward_note
from utp_env.itinerary import MAX_ITEMS_PER_DAY
from utp_env.query import Query
from utp_env.tools.clock import format_hhmm
from utp_env.tools.tool_schemas import summary
from utp_env.tools.toolkit import ToolSpec


def task_text(query: Query, tools: Mapping[str, ToolSpec[Any]], config: EnvConfig, note: str | None = None,
              task: LevelTask | None = None) -> str:
    """The first observation: the request, persona, risk profile, constraints and how to act; the
    rules every plan is checked on and the tools (one line in the compact mode); then `note`. At a level
    below the whole trip (`task`) the level's own text (`level_text`); at level 3 the first line names the level."""
    if task is not None and not task.level.whole_task:
        return level_text(task, tools, config)
    constraints = constraint_lines(query)
    tool_lines = [f"- {name}: {summary(spec.description)}" for name, spec in tools.items()]
    p = query.persona
    level = "" if task is None else f"level {task.level.number} of 4, {task.level.title}; "
    return "\n".join([
        f"TASK ({level}query {query.query_id}): {query.text}",
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


def constraint_lines(query: Query, names: tuple[str, ...] | None = None) -> list[str]:
    """The query's hard constraints as `name: value` (only `names`, when given)."""
    return [f"{k}: {v if isinstance(v, str) else ', '.join(v)}"
            for k, v in query.local_constraint.model_dump().items() if v and (names is None or k in names)]


LEVEL_CONSTRAINTS: dict[str, tuple[str, ...]] = {"transportation": ("transportation",), "budget": ()}
"""The query constraints each hard check a level scores reads (the budget is in the trip facts)."""


def level_text(task: LevelTask, tools: Mapping[str, ToolSpec[Any]], config: EnvConfig) -> str:
    """The first observation of a level below the whole trip: the part of the trip it asks with the facts it
    needs (utp_env/env/levels.py), how to act, and (unless compact) the rules it scores and the tools."""
    q, level = task.query, task.level
    day = task.days[0]
    date = q.dates[day - 1]
    names = tuple(n for check in (level.hard or ()) for n in LEVEL_CONSTRAINTS.get(check, ()))
    constraints = constraint_lines(q, names)
    facts = [f"TASK (level {level.number} of 4, query {q.query_id}): {level.title}."]
    if level.number == 1:
        leg = json.dumps({"origin": q.org, "destination": task.first_city, "date": date}, ensure_ascii=False)
        facts.append(f"Travel on day 1: {leg}; {q.people_number} people, budget INR {q.budget_inr:,.0f}.")
    else:
        p = q.persona
        hours = (f" The day is yours from {format_hhmm(task.day_start)}" if task.day_start is not None else "") + (
            f" until {format_hhmm(task.day_end)}, when the night's stay begins." if task.day_end is not None else ".")
        asked = json.dumps({"day": day, "city": task.city, "date": date}, ensure_ascii=False)
        facts += [f"Plan this day: {asked}; you stay at {task.stay} (given, with the days before it: view_plan "
                  f"shows them).{hours}",
                  f"{q.people_number} people, budget INR {q.budget_inr:,.0f}. Persona: {p.traveler_type}; purpose "
                  f"{p.purpose}; {p.spending}; prefers {p.location_preference}."]
    facts.append(f"Risk profile: {q.risk_profile} (size your buffers for delays and crowds accordingly).")
    if constraints:
        facts.append("Constraints: " + "; ".join(constraints) + ".")
    if config.compact:  # the tools' schemas say how to call them
        return "\n".join([*facts, "", f"HOW TO ACT: {level.instruction}"])
    lines = [*facts, "", f"HOW TO ACT: {level.instruction} Send one tool call or a JSON list of them each step, "
             f"as {ACTION_FORMAT}. You have {config.step_limit} steps."]
    rules = commonsense_rules(extra=True)  # a level may score extra checks (level 2: opening hours, transit)
    scored = [name for name in (level.checks or ()) if name in rules]
    tool_lines = [f"- {name}: {summary(spec.description)}" for name, spec in tools.items()]
    return "\n".join([*lines, f"SCORED at this level (checks; the metrics of what it asks): {', '.join(scored)}.",
                      *(f"- {name}: {rules[name]}" for name in scored), "TOOLS:", *tool_lines])
