"""Scripted conversations for the tiny model's format warm-up (`utp_env.rl.tiny.warm_up`).

Each query of the training set gets two conversations, so that the warmed-up model samples two
kinds of rollout and GRPO sees a reward difference within each group from its first step:

- multi-turn: (a) `add_leg` with the first leg of the query's reference plan, then `submit`
  (a one-leg plan, scored above 0); (b) `view_plan`, then `submit` (an empty plan, scored 0).
  The tool answers are the env's own: the calls are run on a real episode.
- single-turn: (a) the first day of the reference plan in the paper's JSON day format (a plan
  `PlanReward` parses and scores above 0); (b) a refusal that holds no plan (scored 0).

The reference plans are the dataset's (`reference_plans.jsonl`, made by the reference planner).
"""

from __future__ import annotations

import json
from typing import Any

from utp_env.env.adapters import tool_method_names
from utp_env.env.config import find_query, reference_plan
from utp_env.env.levels import LevelTask, level_task
from utp_env.itinerary import Plan, TransportLeg
from utp_env.plan_format.write import format_plan
from utp_env.rl.env import RLToolEnv
from utp_env.tools.clock import format_hhmm, format_stamp

REFUSAL = "I cannot plan this trip."
DONE = "The plan is submitted."
Conversation = tuple[list[dict[str, Any]], list[Any] | None]


def add_leg_args(day: int, leg: TransportLeg) -> dict[str, Any]:
    """`add_leg` arguments that add `leg` to day `day` (a cab gives its departure; others their number)."""
    args: dict[str, Any] = {"day": day, "mode": leg.mode, "origin": leg.origin, "destination": leg.destination}
    if leg.number:
        args["number"] = leg.number
    else:
        args["departure"] = format_hhmm(leg.dep)
    return args


def level_calls(task: LevelTask, plan: Plan) -> list[tuple[str, dict[str, Any]]]:
    """The itinerary tool calls that build `plan`'s part that a level asks (`LevelTask.view`: at level 1 the
    first leg, at level 2 the asked day's visits and meals) in an episode of that level, then `submit`:
    each leg with its planned arrival, each item with its kind, meal and times (`+1 day` past midnight)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    view = task.view(plan)
    for number in task.days:
        if number > len(view.days):
            continue
        day = view.days[number - 1]
        for leg in day.transport:
            if task.asks_element(number, "transport"):
                args = add_leg_args(number, leg)
                if leg.planned_arr is not None and leg.planned_arr != leg.arr:
                    args["planned_arrival"] = format_stamp(leg.planned_arr)
                calls.append(("add_leg", args))
        for item in day.items:
            if item.start is None or item.end is None or not task.asks_element(number, item.venue_type or ""):
                continue
            args = {"day": number, "name": item.name, "activity": item.activity, "start": format_stamp(item.start),
                    "end": format_stamp(item.end), "kind": item.venue_type}
            if item.meal is not None:
                args["meal"] = item.meal
            calls.append(("add_item", args))
    return [*calls, ("submit", {})]


def _tool_call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": "",
            "tool_calls": [{"type": "function", "function": {"name": name, "arguments": args}}]}


def multi_turn_conversations(rows: list[dict[str, Any]], env_class: type[RLToolEnv]) -> list[Conversation]:
    """Two scripted tool-calling conversations per dataset row (module docstring), run on `env_class`'s env."""
    env = env_class()
    tools = [getattr(env, name) for name in tool_method_names(env_class) if name != "get_reward"]
    out: list[Conversation] = []
    for row in rows:
        scripts: list[list[tuple[str, dict[str, Any]]]] = [[("view_plan", {}), ("submit", {})]]
        first = _first_calls(env, row["query_id"])
        if first is not None:
            scripts.insert(0, [first, ("submit", {})])
        for script in scripts:
            task = env.reset(**row) or ""
            prompt = [dict(m) for m in row["prompt"]]
            prompt[-1]["content"] = prompt[-1]["content"] + task  # what TRL does with reset's answer
            messages = list(prompt)
            for name, args in script:
                messages.append(_tool_call(name, args))
                messages.append({"role": "tool", "name": name, "content": getattr(env, name)(**args)})
            messages.append({"role": "assistant", "content": DONE})
            out.append((messages, tools))
    return out


def _first_calls(env: RLToolEnv, query_id: str) -> tuple[str, dict[str, Any]] | None:
    """The first call that builds the reference plan's part the env's level asks (`level_calls`; at level 4
    `add_leg` with the reference plan's first leg), or None when the query has no reference plan or it builds
    nothing."""
    inner = env._env
    plan = reference_plan(inner.db, query_id)
    if plan is None or not plan.days:
        return None
    if inner.level.whole_task:
        return ("add_leg", add_leg_args(1, plan.days[0].transport[0])) if plan.days[0].transport else None
    query = find_query(inner.db, query_id)
    assert query is not None  # the reference plan's query
    calls = level_calls(level_task(inner.level, query, plan), plan)
    return calls[0] if len(calls) > 1 else None


def single_turn_conversations(rows: list[dict[str, Any]], env_class: type[RLToolEnv]) -> list[Conversation]:
    """Two scripted replies per dataset row (module docstring): the reference plan's first day, and a refusal."""
    inner = env_class()._env
    db = inner.db
    out: list[Conversation] = []
    for row in rows:
        prompt = [dict(m) for m in row["prompt"]]
        plan = reference_plan(db, row["query_id"])
        query = find_query(db, row["query_id"])
        if plan is not None and plan.days and query is not None:
            # the reference plan's first day; at a level below the whole trip, its part the level asks
            part = (Plan(query_id=plan.query_id, days=plan.days[:1], source=plan.source) if inner.level.whole_task
                    else level_task(inner.level, query, plan).view(plan))
            reply = json.dumps(format_plan(part), ensure_ascii=False)
            out.append(([*prompt, {"role": "assistant", "content": reply}], None))
        out.append(([*prompt, {"role": "assistant", "content": REFUSAL}], None))
    return out
