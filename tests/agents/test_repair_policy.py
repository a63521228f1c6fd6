"""The reference planner's repair policy (agents/reference/repair.py) in the closed-loop env.

The day's layout is checked on hand-made steps (what is moved, what gives way, what is left to a
rebooking); the whole policy on the mini sandbox: a missed departure is rebooked on the same day,
within the budget, through tool calls the env accepts, and the repair never makes a trip worse
than no repair on the episodes tried."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from utp_env.agents.base import Toolkit
from utp_env.agents.reference import ReferencePlanner, RepairPolicy
from utp_env.agents.reference.repair import EVENT_VALUE, REQUIRED_VALUE, Step
from utp_env.agents.reference.schedule import LATEST_END, TRANSFER
from utp_env.config import load_uncertainty
from utp_env.env.config import query_pool
from utp_env.env.replan import UTPReplanEnv
from utp_env.itinerary import Plan, PlanItem, TransportLeg
from utp_env.runs.replan_episode import live_trip
from utp_env.tools.database import Database

CONFIG = load_uncertainty()
POLICY = RepairPolicy(CONFIG)


def visit(start: int, end: int, base: float, value: float = 1.5, meal: str | None = None) -> Step:
    item = PlanItem(name=f"V{start}", activity="visit", start=start, end=end,
                    venue_type="restaurant" if meal else "attraction", meal=meal)  # type: ignore[arg-type]
    return Step("visit", 1, start, end, item=item, base=base, value=value)


def fixed(activity: str, start: int, end: int, value: float = float("inf")) -> Step:
    item = PlanItem(name=activity, activity=activity, start=start, end=end)  # type: ignore[arg-type]
    kind = "elastic" if activity in ("stay", "event") else "fixed"
    return Step(kind, 1, start, end, item=item, value=value)


def leg(dep: int, arr: int, mode: str = "train") -> Step:
    return Step("leg", 1, dep, arr, leg=TransportLeg(mode=mode, number="1", origin="A", destination="B",  # type: ignore[arg-type]
                                                     dep=dep, arr=arr))


# ---------------------------------------------------------------- laying the day out again


def test_a_visit_that_would_be_lost_is_moved_after_the_traveller_arrives() -> None:
    a = visit(600, 660, 60)
    laid = POLICY._lay_out([a], clock=700, meal_end=None)
    assert laid.drop is None and laid.missed is None and laid.moves == [(a, (700, 760))]


def test_a_moved_visit_keeps_to_the_room_before_the_next_departure_and_at_least_its_base() -> None:
    a = visit(600, 700, 60)
    steps = [a, fixed("arrive", 800, 810), leg(830, 1000)]
    laid = POLICY._lay_out(steps, clock=720, meal_end=None)
    assert laid.moves == [(a, (720, 800 - TRANSFER))]
    too_late = POLICY._lay_out(steps, clock=750, meal_end=None)  # 35 minutes of room < its 60: lost, not moved
    assert too_late.moves == [] and too_late.drop is None and too_late.missed is None


def test_a_visit_still_reached_before_its_end_is_left_to_the_engine() -> None:
    assert POLICY._lay_out([visit(600, 700, 60)], clock=650, meal_end=None).moves == []


def test_the_lowest_value_visit_gives_way_to_a_departure() -> None:
    margin = int(CONFIG.simulation.boarding_margin_min["train"])
    dep = 830
    cheap, meal = visit(600, 700, 90, value=1.5), visit(720, 800, 60, value=10.0, meal="lunch")
    tail = [fixed("arrive", dep - margin - 10, dep - margin), leg(dep, 1100)]
    assert POLICY._lay_out([cheap, meal, *tail], clock=650, meal_end=None).drop is None  # in time
    laid = POLICY._lay_out([cheap, meal, *tail], clock=680, meal_end=None)  # at the point at 830: too late
    assert laid.drop is cheap and laid.missed is None
    assert POLICY._lay_out([meal, *tail], clock=680, meal_end=None).drop is None  # without it, in time
    assert POLICY._lay_out([meal, *tail], clock=780, meal_end=None).drop is meal  # nothing cheaper left


def test_a_departure_that_no_drop_can_save_is_left_to_a_rebooking() -> None:
    margin = int(CONFIG.simulation.boarding_margin_min["train"])
    steps = [visit(600, 700, 60), fixed("arrive", 890, 900), leg(900, 1100)]  # at the point only at 890
    laid = POLICY._lay_out(steps, clock=650, meal_end=None)
    assert laid.drop is None and laid.missed is steps[2].leg and laid.ready == 890
    assert 900 - margin < 890
    missed = POLICY._lay_out([leg(900, 1100)], clock=895, meal_end=None)  # a missed-departure pause
    assert missed.missed is not None and missed.ready == 895


def test_a_visit_gives_way_to_an_event_but_a_required_one_does_not() -> None:
    event = fixed("event", 1000, 1100, value=EVENT_VALUE)
    optional = visit(800, 990, 90)
    assert POLICY._lay_out([optional, event], clock=920, meal_end=None).drop is None  # at it 10 minutes late
    assert POLICY._lay_out([optional, event], clock=950, meal_end=None).drop is optional  # 40 minutes late
    required = visit(800, 990, 90, value=REQUIRED_VALUE)
    assert POLICY._lay_out([required, event], clock=950, meal_end=None).drop is None


def test_a_meal_keeps_four_hours_after_the_last_and_the_night_stay_follows_it() -> None:
    dinner = visit(900, 975, 60, value=10.0, meal="dinner")
    stay = fixed("stay", 1000, 1860)
    laid = POLICY._lay_out([dinner, stay], clock=800, meal_end=700)
    assert laid.moves == [(dinner, (940, 1015)), (stay, (1015, 1860))]
    assert POLICY._lay_out([dinner, stay], clock=800, meal_end=600).moves == []  # 300 minutes: nothing to do


def test_a_late_visit_after_a_moved_one_is_started_after_it_so_the_trip_keeps_their_order() -> None:
    """The trip plays steps by start time: the lunch moved to 17:32 would come after a market
    planned for 16:57 and be lost behind it, so the market is started when the lunch ends."""
    lunch, market = visit(848, 1002, 90, value=10.0, meal="lunch"), visit(1017, 1276, 60)
    laid = POLICY._lay_out([lunch, market], clock=1052, meal_end=None)
    assert laid.moves == [(lunch, (1052, 1206)), (market, (1206, 1276))]


def test_a_meal_that_cannot_be_kept_goes_to_another_restaurant() -> None:
    """A dinner reached after its restaurant closes moves to another one (the `Swap`); a meal that
    alone covers a required cuisine does not."""
    dinner = visit(1140, 1253, 75, value=10.0, meal="dinner")
    dinner.close = 1290
    stay = fixed("stay", 1268, 1860)
    asked: list[tuple[int, int]] = []

    def swap(step: Step, earliest: int, latest: int, taken: set[str]) -> tuple[str, int, int] | None:
        asked.append((earliest, latest))
        return ("Late Diner", earliest, earliest + 80) if step.value < REQUIRED_VALUE else None

    laid = POLICY._lay_out([dinner, stay], clock=1282, meal_end=None, swap=swap)
    assert laid.swaps == [(dinner, "Late Diner", 1282, 1362)] and asked == [(1282, LATEST_END)]
    assert laid.moves == [(stay, (1362, 1860))]  # the night's stay after the new dinner
    dinner.value = REQUIRED_VALUE
    assert POLICY._lay_out([dinner, stay], clock=1282, meal_end=None, swap=swap).swaps == []


# ---------------------------------------------------------------- the whole policy in the env


def _late_to_the_last_departure(plan: Plan) -> Plan | None:
    """`plan` with the traveller reaching the last day's first departure point at departure time
    (the arrival item moved there), so that the leg is missed; None when the plan has no such leg."""
    out = plan.model_copy(deep=True)
    last = out.days[-1]
    if not last.transport or last.transport[0].mode == "cab":
        return None
    arrive = next((item for item in last.items if item.activity == "arrive"), None)
    if arrive is None:
        return None
    dep = last.transport[0].dep
    arrive.start, arrive.end = dep - 5, dep + 5
    return out


@pytest.fixture(scope="module")
def env(mini_db_path: Path) -> UTPReplanEnv:
    return UTPReplanEnv(db_path=mini_db_path)


@pytest.fixture(scope="module")
def rebooked(env: UTPReplanEnv, mini_db: Database) -> tuple[Any, Plan, dict[str, Any], dict[str, Any], int]:
    """The first mini query whose forced missed departure the policy rebooks: (query, plan, info
    without repair, info with repair, seed)."""
    planner = ReferencePlanner()
    for query in query_pool(mini_db):
        result = planner.run(query, Toolkit(mini_db))
        plan = _late_to_the_last_departure(result.plan) if result.plan is not None else None
        if plan is None:
            continue
        _, bare, _, _ = live_trip(env, query, plan, 0, None)
        _, fixed_up, _, error = live_trip(env, query, plan, 0, planner.repair)
        assert error is None
        if any(leg not in plan.days[-1].transport for leg in env.episode.plan.days[-1].transport):  # type: ignore[union-attr]
            return query, plan, bare, fixed_up, 0
    pytest.fail("no mini query's missed last departure was rebooked")


def test_a_missed_departure_is_rebooked_on_the_same_day_and_pays_off(rebooked: Any) -> None:
    _, plan, bare, repaired, _ = rebooked
    missed = plan.days[-1].transport[0]
    assert bare["realised_terms"]["rebookings"] == 1  # without repair: the same service a day later
    assert repaired["realised_terms"]["rebookings"] == 1
    new_legs = [leg for leg in Plan.model_validate(repaired["plan"]).days[-1].transport if leg != missed]
    assert new_legs and all(leg.dep > missed.dep - 60 for leg in new_legs)
    assert repaired["realised_terms"]["late_minutes"] < bare["realised_terms"]["late_minutes"]
    assert repaired["reward"] > bare["reward"]
    assert repaired["realised_terms"]["hard_checks"]["budget"]["passed"] is not False


def test_common_random_numbers_hold_for_the_services_both_trips_took(rebooked: Any) -> None:
    """The repaired trip took another service, which drew its own delay; every leg both trips took
    kept its delay although the draws were asked for in another order."""
    *_, bare, repaired, _ = rebooked

    def legs(info: dict[str, Any]) -> dict[tuple[int, str], float]:
        return {(s["day_index"], s["name"]): s["delay"] for s in info["realised"]["steps"] if s["element"] == "leg"}

    a, b = legs(bare), legs(repaired)
    shared = set(a) & set(b)
    assert len(shared) >= 1 and set(a) != set(b)
    assert all(a[k] == b[k] for k in shared)


def test_a_rebooking_keeps_the_budget(env: UTPReplanEnv, rebooked: Any) -> None:
    """With no money left the policy books only a service no dearer than the missed one (whose fare
    is paid again without a repair), or none: the trip never costs more than without the repair."""
    query, plan, _, _, seed = rebooked
    from utp_env.evaluation.context import build_context
    from utp_env.evaluation.hard import trip_cost

    broke = query.model_copy(update={"budget_inr": trip_cost(build_context(plan, query, env.db)).total})
    _, bare, _, _ = live_trip(env, broke, plan, seed, None)
    _, repaired, _, error = live_trip(env, broke, plan, seed, ReferencePlanner().repair)
    assert error is None and env.episode is not None and env.episode.query.budget_inr == broke.budget_inr
    assert repaired["realised_terms"]["cost"] <= bare["realised_terms"]["cost"] + 1e-6


def test_every_repair_call_is_accepted_and_repair_never_loses_on_these_trips(env: UTPReplanEnv,
                                                                             mini_db: Database) -> None:
    """Deterministic plans (no buffers) on 24 queries x 2 seeds: the env refuses none of the
    policy's tool calls (nothing locked is touched), and the realised score is never lower."""
    planner = ReferencePlanner(buffers=False)
    repairs = 0
    for query in query_pool(mini_db)[:24]:
        plan = planner.run(query, Toolkit(mini_db)).plan
        if plan is None:
            continue
        for seed in (0, 1):
            bare, _, _, _ = live_trip(env, query, plan, seed, None)
            reward, _, steps, error = live_trip(env, query, plan, seed, planner.repair)
            assert error is None
            assert env.episode is not None
            refused = [t for t in env.episode.trace if not t.ok]
            assert not refused, [(t.tool, t.args, t.text) for t in refused]
            assert reward >= bare - 1e-9, (query.query_id, seed)
            repairs += steps
    assert repairs > 0
