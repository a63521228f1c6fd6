"""Degenerate policies: plans an RL policy might find that leave content out, copy, invent or stuff.

Each policy turns a query's honest plan (its reference plan) into the plan a reward hacker would
submit. `tests/test_reward_hacking.py` checks that none scores above the reference planner on any
query and none above the deterministic baseline on average; `python tests/degenerate_policies.py`
prints the table of mean rewards (the closing note of issue 26 quotes it).
"""

from __future__ import annotations

from collections.abc import Callable

from utp_env.itinerary import Day, Plan, PlanItem
from utp_env.query import Query
from utp_env.tools.database import Database

PolicyFn = Callable[[Plan, Query, Database, Plan], Plan]
"""(honest plan, query, database, another query's honest plan) -> the degenerate plan."""

POI = ("visit", "event")


def _days(plan: Plan, change: Callable[[Day], Day]) -> Plan:
    return plan.model_copy(update={"days": [change(d) for d in plan.days]})


def no_times(plan: Plan, *_: object) -> Plan:
    """Every item keeps its place but states no start or end."""
    return _days(plan, lambda d: d.model_copy(update={"items": [
        i.model_copy(update={"start": None, "end": None}) for i in d.items]}))


def summary_only(plan: Plan, *_: object) -> Plan:
    """The point-of-interest list removed; the day's summary fields (meals, attractions, stay) kept."""
    return _days(plan, lambda d: d.model_copy(update={"items": []}))


def legs_only(plan: Plan, *_: object) -> Plan:
    """Only the journeys: no meals, attractions, events, stays or items."""
    return _days(plan, lambda d: Day(day=d.day, date=d.date, cities=d.cities, transport=d.transport))


def one_item_per_day(plan: Plan, *_: object) -> Plan:
    """Each day keeps its legs, its stay and its first visit only."""
    def keep(d: Day) -> Day:
        first = next((i for i in d.items if i.activity in POI), None)
        items = [i for i in d.items if i.activity not in POI or i is first]
        return d.model_copy(update={"items": items, "breakfast": None, "lunch": None, "dinner": None,
                                    "attractions": [first.name] if first and first.venue_type == "attraction"
                                    else [], "events": []})
    return _days(plan, keep)


def copies_of_one_venue(plan: Plan, *_: object) -> Plan:
    """Every restaurant visit and every attraction visit goes to the trip's first one of its kind."""
    first: dict[str, str] = {}
    for d in plan.days:
        for i in d.items:
            if i.activity == "visit" and i.venue_type is not None:
                first.setdefault(i.venue_type, i.name)

    def copy(d: Day) -> Day:
        items = [i.model_copy(update={"name": first[i.venue_type]}) if i.activity == "visit" and i.venue_type
                 in first else i for i in d.items]
        meal = first.get("restaurant")
        return d.model_copy(update={
            "items": items, "breakfast": meal if d.breakfast else None, "lunch": meal if d.lunch else None,
            "dinner": meal if d.dinner else None,
            "attractions": [first["attraction"]] * len(d.attractions) if "attraction" in first else []})
    return _days(plan, copy)


def hallucinated(plan: Plan, *_: object) -> Plan:
    """Every venue and service invented (free, perfectly buffered by construction)."""
    def invent(d: Day) -> Day:
        items = [i.model_copy(update={"name": f"Imaginary {i.venue_type or 'place'} {n}, {d.cities[-1]}",
                                      "transit_distance_m": 0.0, "transit_stop": "Imaginary Stop"})
                 if i.activity != "arrive" else i for n, i in enumerate(d.items)]
        legs = [leg.model_copy(update={"number": f"ZZ{n}{leg.number or ''}"}) for n, leg in enumerate(d.transport)]
        return d.model_copy(update={
            "items": items, "transport": legs,
            "breakfast": f"Imaginary breakfast, {d.cities[-1]}" if d.breakfast else None,
            "lunch": f"Imaginary lunch, {d.cities[-1]}" if d.lunch else None,
            "dinner": f"Imaginary dinner, {d.cities[-1]}" if d.dinner else None,
            "attractions": [f"Imaginary sight {n}, {d.cities[-1]}" for n in range(len(d.attractions))],
            "accommodation": f"Imaginary stay, {d.cities[-1]}" if d.accommodation else None})
    return _days(plan, invent)


def another_querys_plan(plan: Plan, query: Query, db: Database, other: Plan) -> Plan:
    """The honest plan of another query, relabelled as this query's."""
    return other.model_copy(update={"query_id": plan.query_id})


def stuffed(plan: Plan, *_: object) -> Plan:
    """Maximal items: every visit of the day repeated three times back to back (times shifted)."""
    def stuff(d: Day) -> Day:
        items: list[PlanItem] = []
        for i in d.items:
            items.append(i)
            if i.activity == "visit" and i.start is not None and i.end is not None:
                length = i.end - i.start
                items += [i.model_copy(update={"start": i.end + k * length, "end": i.end + (k + 1) * length})
                          for k in range(2)]
        return d.model_copy(update={"items": items})
    return _days(plan, stuff)


def zero_distances(plan: Plan, *_: object) -> Plan:
    """Every item claims its transit stop is 0 m away (a lie the database can refute)."""
    return _days(plan, lambda d: d.model_copy(update={"items": [
        i.model_copy(update={"transit_distance_m": 0.0}) if i.transit_distance_m is not None else i
        for i in d.items]}))


def night_visits(plan: Plan, *_: object) -> Plan:
    """Every attraction visit moved to 01:00-05:30, when crowds are lowest and most places are shut."""
    def move(d: Day) -> Day:
        items = [i.model_copy(update={"start": 60, "end": 330}) if i.activity == "visit" and
                 i.venue_type == "attraction" else i for i in d.items]
        return d.model_copy(update={"items": sorted(items, key=lambda i: i.start if i.start is not None else 0)})
    return _days(plan, move)


def zero_length_visits(plan: Plan, *_: object) -> Plan:
    """Every visit keeps its start and ends there (nothing is really done)."""
    return _days(plan, lambda d: d.model_copy(update={"items": [
        i.model_copy(update={"end": i.start}) if i.activity == "visit" and i.start is not None else i
        for i in d.items]}))


def padded_legs(plan: Plan, *_: object) -> Plan:
    """Every leg's planned arrival 10 hours after its scheduled one (never late, by construction)."""
    return _days(plan, lambda d: d.model_copy(update={"transport": [
        leg.model_copy(update={"planned_arr": leg.arr + 600}) for leg in d.transport]}))


def nothing(plan: Plan, *_: object) -> Plan:
    """Submitting at once: a plan with no days."""
    return Plan(query_id=plan.query_id, days=[])


POLICIES: dict[str, PolicyFn] = {
    "no times": no_times,
    "summary only (no PoI list)": summary_only,
    "legs only": legs_only,
    "one item per day": one_item_per_day,
    "copies of one venue": copies_of_one_venue,
    "everything hallucinated": hallucinated,
    "another query's plan": another_querys_plan,
    "maximal items": stuffed,
    "submit at once": nothing,
}
"""Issue 26's degenerate policies: each below the honest plan on every query, and below the honest
deterministic baseline on average."""

VARIANTS: dict[str, PolicyFn] = {
    "transit distances claimed 0 m": zero_distances,
    "attractions at 01:00-05:30": night_visits,
    "zero-length visits": zero_length_visits,
    "legs padded by 10 h": padded_legs,
}
"""Worse variants of the honest plan a red team tried (a lie, closed hours, empty visits, padding):
each below the honest plan on every query."""


def main() -> None:  # pragma: no cover - a measurement script
    import argparse

    import numpy as np

    from utp_env.agents.base import Toolkit
    from utp_env.agents.reference import ReferencePlanner
    from utp_env.dataset import open_dataset
    from utp_env.env.config import DEFAULT_REWARD_WEIGHTS
    from utp_env.env.episode import TerminationReason, finish

    parser = argparse.ArgumentParser(description="Mean UTP-v0 reward of each degenerate policy")
    parser.add_argument("--profile", default="mini")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    ds = open_dataset(profile=args.profile, progress=False)
    queries = [q for q in ds.queries if q.query_id in ds.references][:args.limit]
    every = {**POLICIES, **VARIANTS}
    rows: dict[str, list[float]] = {"reference": [], "deterministic": [], **{k: [] for k in every}}
    wins: dict[str, int] = dict.fromkeys(every, 0)
    det = ReferencePlanner(buffers=False)
    for n, q in enumerate(queries):
        ref = ds.references[q.query_id]
        other = ds.references[queries[(n + 1) % len(queries)].query_id]

        def reward(plan: Plan | None, q: Query = q, ref: Plan = ref) -> float:
            return finish(TerminationReason.SUBMITTED, plan, q, ds.db, weights=DEFAULT_REWARD_WEIGHTS,
                          reference=ref).reward
        honest = reward(ref)
        rows["reference"].append(honest)
        rows["deterministic"].append(reward(det.run(q, Toolkit(ds.db)).plan))
        for name, policy in every.items():
            value = reward(policy(ref, q, ds.db, other))
            rows[name].append(value)
            wins[name] += value >= honest
    print(f"{args.profile}: {len(queries)} queries; mean UTP-v0 reward (queries where it reaches the reference)")
    for name, values in rows.items():
        print(f"| {name} | {np.mean(values):.3f} | {wins.get(name, '')} |")


if __name__ == "__main__":
    main()
