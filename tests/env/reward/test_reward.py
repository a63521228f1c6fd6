"""The reward package (utp_env/env/reward/): its table gives the defaults, the YAML and the docs;
what counts and what does not; each of its own checks on the bad input it exists for; a plan in
which nothing counts scores 0; stays against the spending persona; the closed loop's end lateness.

Cases are found by searching the mini query set (never named by id), so they hold on another
sandbox too."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from utp_env.dataset import Dataset, open_dataset
from utp_env.env.config import ENV_CONFIG_PATH, EnvConfig
from utp_env.env.replan import REPLAN_CONFIG_PATH, ReplanConfig
from utp_env.env.reward import (
    DEFAULT_REALISED_WEIGHTS,
    DEFAULT_REWARD_WEIGHTS,
    PASS_RATES,
    PLAN_TERMS,
    REALISED_TERM_NAMES,
    REALISED_TERMS,
    checks_table,
    expected_content,
    required_units,
    reward_note,
    score_plan,
    terms_table,
)
from utp_env.env.reward.checks import FOLDED_INTO, OWN_CHECKS, reward_checks
from utp_env.env.reward.counted import counted_context, knows_something
from utp_env.env.reward.measures import read_plan, stay_stars
from utp_env.evaluation import evaluate
from utp_env.evaluation.context import build_context
from utp_env.evaluation.report import METRICS, CheckResult, EvaluationReport
from utp_env.itinerary import Day, Plan, PlanItem
from utp_env.query import Query

ROOT = Path(__file__).resolve().parents[3]


@functools.cache
def mini() -> Dataset:
    return open_dataset(profile="mini", progress=False)


def honest(limit: int = 40) -> list[tuple[Query, Plan]]:
    ds = mini()
    queries = sorted((q for q in ds.queries if q.query_id in ds.references), key=lambda q: q.query_id)[:limit]
    return [(q, ds.references[q.query_id]) for q in queries]


def first(predicate: Callable[[Query, Plan], bool]) -> tuple[Query, Plan]:
    """The first mini query (in id order) with a reference plan for which `predicate` holds."""
    return next((q, p) for q, p in honest(1000) if predicate(q, p))


def reward(plan: Plan, query: Query) -> float:
    return score_plan(plan, query, mini().db, weights=DEFAULT_REWARD_WEIGHTS,
                      reference=mini().references.get(query.query_id)).reward


def own(plan: Plan, query: Query, name: str) -> CheckResult:
    return OWN_CHECKS[name](build_context(plan, query, mini().db))


def with_day(plan: Plan, index: int, **update: object) -> Plan:
    days = list(plan.days)
    days[index] = days[index].model_copy(update=update)
    return plan.model_copy(update={"days": days})


# ---------------------------------------------------------------- the table


def test_the_table_gives_every_default_weight_and_the_term_order() -> None:
    assert list(DEFAULT_REWARD_WEIGHTS) == [*PASS_RATES, *METRICS] == [t.name for t in PLAN_TERMS]
    assert DEFAULT_REWARD_WEIGHTS == {t.name: t.weight for t in PLAN_TERMS} == EnvConfig().reward_weights
    assert DEFAULT_REALISED_WEIGHTS == {t.name: t.weight for t in REALISED_TERMS} == ReplanConfig().reward_weights
    assert REALISED_TERM_NAMES == ("completion", "hard", "punctuality", "commonsense")
    assert all(t.measure is not None for t in PLAN_TERMS if t.name in METRICS)
    assert all(t.measure is None for t in PLAN_TERMS if t.name in PASS_RATES)


def test_the_shipped_yaml_names_no_weight_so_the_table_is_the_one_definition() -> None:
    for path in (ENV_CONFIG_PATH, REPLAN_CONFIG_PATH):
        assert "reward_weights" not in (yaml.safe_load(path.read_text()) or {}), path


def test_a_partial_weight_changes_only_the_terms_it_names_and_an_unknown_term_is_refused() -> None:
    config = EnvConfig(reward_weights={"bas": 3.0})
    assert config.reward_weights == {**DEFAULT_REWARD_WEIGHTS, "bas": 3.0}
    with pytest.raises(ValueError, match="unknown term"):
        EnvConfig(reward_weights={"bsa": 1.0})


def test_docs_env_md_shows_the_tables_the_module_holds() -> None:
    text = (ROOT / "docs" / "ENV.md").read_text(encoding="utf-8")
    for table in (terms_table(PLAN_TERMS), terms_table(REALISED_TERMS), checks_table()):
        assert table in text, f"docs/ENV.md lacks this table (paste it from utp_env/env/reward/__init__.py):\n{table}"


def test_every_own_check_folds_into_a_check_of_the_paper_and_the_task_text_states_it() -> None:
    from utp_env.env.core import UTPEnv
    from utp_env.evaluation.report import COMMONSENSE_CHECKS

    assert set(OWN_CHECKS) <= set(FOLDED_INTO) and set(FOLDED_INTO.values()) <= set(COMMONSENSE_CHECKS)
    note = reward_note()
    for check in OWN_CHECKS.values():
        assert " ".join((check.__doc__ or "").split()) in note
    env = UTPEnv(profile="mini")
    observation, _ = env.reset(seed=0)
    assert note in observation


# ---------------------------------------------------------------- what counts


def check_honest_plans_count_whole(limit: int) -> None:
    """Every element of the first `limit` reference plans counts (but journey items: the legs are the
    journey) and no rule of the reward fails on them."""
    db = mini().db
    for query, plan in honest(limit):
        ctx = build_context(plan, query, db)
        counted = counted_context(ctx)
        assert len(counted.legs) == len(ctx.legs), query.query_id
        assert [v.name for v in counted.visits] == [v.name for v in ctx.visits if v.kind != "transport"]
        failed = {name: c.reason for name, c in ((n, check(ctx)) for n, check in OWN_CHECKS.items())
                  if c.passed is False}
        assert not failed, (query.query_id, failed)


def test_an_honest_plan_counts_whole_and_passes_every_rule_of_the_reward() -> None:
    check_honest_plans_count_whole(40)


@pytest.mark.slow
def test_every_honest_plan_counts_whole_and_passes_every_rule_of_the_reward() -> None:
    check_honest_plans_count_whole(1000)


def test_what_the_schedule_lacks_or_repeats_or_the_database_does_not_know_there_does_not_count() -> None:
    from degenerate_policies import duplicate_visit, forged_leg, summary_only_name, unrelated_leg, zero_length_copy

    db = mini().db
    query, plan = first(lambda q, p: q.days == 3)
    whole = counted_context(build_context(plan, query, db))
    for edit in (summary_only_name, duplicate_visit, zero_length_copy, unrelated_leg):
        edited = edit(plan, query, db, 3)
        assert edited is not None
        counted = counted_context(build_context(edited, query, db))
        assert [v.name for v in counted.visits] == [v.name for v in whole.visits], edit.__name__
        assert len(counted.legs) == len(whole.legs), edit.__name__
    forged = forged_leg(plan, query, db, 0)
    assert forged is not None and len(counted_context(build_context(forged, query, db)).legs) == len(whole.legs) - 1


def test_a_visit_when_the_venue_is_closed_does_not_count() -> None:
    from degenerate_policies import night_visits

    db = mini().db
    query, plan = first(lambda q, p: any(i.venue_type == "attraction" for d in p.days for i in d.items))
    counted = counted_context(build_context(night_visits(plan), query, db))
    assert not counted.of_kind("attraction")


def test_an_invented_plan_scores_zero_and_one_real_element_lifts_it() -> None:
    from degenerate_policies import hallucinated

    db = mini().db
    query, plan = first(lambda q, p: all(leg.mode != "cab" for d in p.days for leg in d.transport))
    invented = hallucinated(plan)
    assert not knows_something(counted_context(build_context(invented, query, db)))
    assert reward(invented, query) == 0.0
    real_leg = with_day(invented, 0, transport=plan.days[0].transport)
    assert knows_something(counted_context(build_context(real_leg, query, db)))
    assert reward(real_leg, query) > 0.0


def test_a_copy_of_the_prompts_example_plan_scores_zero_on_another_trip() -> None:
    """A model that copies the one-shot example of the LLM prompts (a Mumbai -> Indore trip) onto
    another query's trip holds nothing the database knows where the plan puts it."""
    from utp_env.agents.llm.prompts import example_plan

    def elsewhere(query: Query, plan: Plan) -> bool:
        places = {query.org, query.dest}
        return not places & {"Mumbai", "Indore", "Maharashtra", "Madhya Pradesh"}
    query, _ = first(elsewhere)
    for style in ("paper", "metric_aware"):
        copy = example_plan(style).model_copy(update={"query_id": query.query_id})  # type: ignore[arg-type]
        assert reward(copy, query) == 0.0, style


def test_a_leg_between_two_other_cities_earns_less_than_the_trips_first_leg() -> None:
    from degenerate_policies import unrelated_leg

    db = mini().db
    query, plan = first(lambda q, p: bool(p.days and p.days[0].transport))
    day = plan.days[0]
    first_leg = Plan(query_id=plan.query_id, days=[Day(day=1, date=day.date, cities=day.cities,
                                                       transport=day.transport[:1])])
    other = unrelated_leg(first_leg.model_copy(update={"days": [first_leg.days[0].model_copy(update={
        "transport": []})]}), query, db, 0)
    assert other is not None
    elsewhere = other.model_copy(update={"days": [other.days[0].model_copy(update={
        "cities": [other.days[0].transport[0].origin, other.days[0].transport[0].destination]})]})
    assert reward(elsewhere, query) < reward(first_leg, query)
    assert own(elsewhere, query, "legs_form_the_trip").passed is False


# ---------------------------------------------------------------- each rule, on the input it exists for


def test_a_name_only_in_the_summary_fails_and_so_does_a_scheduled_venue_the_summary_lacks() -> None:
    from degenerate_policies import summary_only_name

    db = mini().db
    query, plan = first(lambda q, p: any(d.attractions for d in p.days))
    added = summary_only_name(plan, query, db, 0)
    assert added is not None
    check = own(added, query, "summary_matches_schedule")
    assert check.passed is False and "in the summary fields but not scheduled" in str(check.reason)
    d = next(i for i, day in enumerate(plan.days) if day.attractions)
    missing = with_day(plan, d, attractions=plan.days[d].attractions[1:])
    check = own(missing, query, "summary_matches_schedule")
    assert check.passed is False and "scheduled but not in the summary fields" in str(check.reason)


def test_a_stay_that_is_no_night_of_the_trip_fails_and_so_does_a_night_after_its_last_day() -> None:
    from degenerate_policies import lateness_sink, night_after_trip

    db = mini().db
    query, plan = first(lambda q, p: lateness_sink(p, q, mini().db) is not None)
    sink = lateness_sink(plan, query, db)
    assert sink is not None
    check = own(sink, query, "summary_matches_schedule")
    assert check.passed is False and "neither that night's accommodation nor the previous night's" in str(check.reason)
    late = night_after_trip(plan, query, db, 0)
    assert late is not None
    check = own(late, query, "summary_matches_schedule")
    assert check.passed is False and "after the trip's last day" in str(check.reason)


def test_a_stay_at_another_branch_of_the_nights_hotel_is_no_night_of_the_trip() -> None:
    """A rest after the flight home at `<the last night's hotel name>, <origin>` (a chain's branch at
    home, or no such branch) is not the previous night's stay, which was in another city."""
    query, plan = first(lambda q, p: len(p.days) >= 2 and bool(p.days[-2].accommodation)
                        and bool(p.days[-1].transport))
    hotel = str(plan.days[-2].accommodation).rsplit(", ", 1)[0]
    last = plan.days[-1]
    arrival = max(leg.planned_arrival for leg in last.transport)
    rest = PlanItem(name=f"{hotel}, {query.org}", activity="rest", start=arrival + 15, end=arrival + 495,
                    venue_type="accommodation")
    sink = with_day(plan, len(plan.days) - 1, items=[*last.items, rest])
    check = own(sink, query, "summary_matches_schedule")
    assert check.passed is False and "neither that night's accommodation" in str(check.reason)


def test_a_zero_length_item_fails() -> None:
    from degenerate_policies import zero_length_retime

    query, plan = honest(1)[0]
    check = own(zero_length_retime(plan, query, mini().db, 0), query, "items_have_length")  # type: ignore[arg-type]
    assert check.passed is False and "starts and ends at" in str(check.reason)


def test_an_arrival_at_no_departure_point_fails_and_so_does_a_second_one_for_the_same_leg() -> None:
    from degenerate_policies import invented_stop

    db = mini().db
    query, plan = first(lambda q, p: all(leg.mode != "cab" for d in p.days for leg in d.transport))
    check = own(invented_stop(plan, query, db, 5), query, "known_departure_points")  # type: ignore[arg-type]
    assert check.passed is False and "is the departure point of no leg" in str(check.reason)
    d, i = next((d, i) for d, day in enumerate(plan.days) for i, item in enumerate(day.items)
                if item.activity == "arrive")
    arrival = plan.days[d].items[i]
    twice = with_day(plan, d, items=[*plan.days[d].items[:i], arrival.model_copy(update={
        "start": arrival.start - 20, "end": arrival.start - 10}), *plan.days[d].items[i:]])  # type: ignore[operator]
    assert own(twice, query, "known_departure_points").passed is False


def test_days_out_of_order_or_on_other_dates_fail() -> None:
    from degenerate_policies import redated_day, renumbered_day

    db = mini().db
    query, plan = first(lambda q, p: len(p.days) >= 3)
    check = own(renumbered_day(plan, query, db, 0), query, "days_in_order")  # type: ignore[arg-type]
    assert check.passed is False and "is numbered" in str(check.reason)
    check = own(redated_day(plan, query, db, 0), query, "days_in_order")  # type: ignore[arg-type]
    assert check.passed is False and "is dated" in str(check.reason)


@pytest.mark.parametrize("how,why", [(0, "departs"), (7, "takes"), (14, "before its scheduled arrival")])
def test_a_service_off_its_timetable_fails(how: int, why: str) -> None:
    from degenerate_policies import forged_leg

    db = mini().db
    query, plan = first(lambda q, p: any(leg.mode != "cab" and leg.arr - leg.dep >= 60
                                         for d in p.days for leg in d.transport))
    pick = next(p for p in range(how, 400, 21)
                if (f := forged_leg(plan, query, db, p)) is not None and f != plan)
    check = own(forged_leg(plan, query, db, pick), query, "services_as_scheduled")  # type: ignore[arg-type]
    assert check.passed is False and why in str(check.reason)


def test_a_service_on_a_day_it_does_not_run_fails() -> None:
    from utp_env.tools.schema import runs_on

    db = mini().db

    def off_day(query: Query, plan: Plan) -> bool:
        return any(leg.mode == "train" and other != day.date
                   and runs_on(db.tables["trains"].columns["run_days"][row], other) is False
                   for day in plan.days for leg in day.transport if leg.number
                   for row in db.services("trains", leg.origin, leg.destination, leg.number)[:1]
                   for other in query.dates)
    query, plan = first(off_day)
    d, date = next((d, other) for d, day in enumerate(plan.days) for leg in day.transport
                        if leg.mode == "train" for other in query.dates if other != day.date
                        and runs_on(db.tables["trains"].columns["run_days"][
                            db.services("trains", leg.origin, leg.destination, leg.number)[0]], other) is False)
    moved = with_day(plan, d, date=date)
    check = own(moved, query, "services_as_scheduled")
    assert check.passed is False and "does not run on" in str(check.reason)


def test_legs_that_do_not_return_home_fail() -> None:
    query, plan = first(lambda q, p: bool(p.days[-1].transport))
    home = with_day(plan, len(plan.days) - 1, transport=[])
    check = own(home, query, "legs_form_the_trip")
    assert check.passed is False and "not back in" in str(check.reason)


def test_a_broken_rule_fails_the_paper_check_it_folds_into_and_costs_reward() -> None:
    from degenerate_policies import invented_stop

    db = mini().db
    query, plan = first(lambda q, p: all(leg.mode != "cab" for d in p.days for leg in d.transport))
    bad = invented_stop(plan, query, db, 5)
    assert bad is not None
    checks = reward_checks(evaluate(bad, query, db), build_context(bad, query, db))
    assert checks["within_sandbox"].passed is False and "known departure points" in str(checks["within_sandbox"].reason)
    scored = score_plan(bad, query, db, weights=DEFAULT_REWARD_WEIGHTS, reference=mini().references[query.query_id])
    assert scored.terms["hard_pass_rate"] == 0.0  # within sandbox gates the hard constraints
    assert scored.reward < reward(plan, query)


# ---------------------------------------------------------------- terms


def test_stays_are_judged_against_the_spending_persona() -> None:
    """A luxury traveller's stay of four or five stars fits the persona; the same plan with a stay of
    at most three stars in the same city fits it one venue less."""
    assert stay_stars("Luxury Traveler") == {4, 5} and 0 in stay_stars("Economical Traveler")
    db = mini().db
    cols = db.tables["accommodations"].columns

    def stays(query: Query, plan: Plan) -> set[int]:
        return {v.ref.row for v in build_context(plan, query, db).of_kind("accommodation") if v.ref is not None}

    def cheaper_stay(row: int) -> int | None:
        return next((int(r) for r in db.city_rows("accommodations", cols["city"][row])
                     if int(cols["star_rating"][int(r)]) <= 3), None)

    def fits(query: Query, plan: Plan) -> bool:
        rows = stays(query, plan)
        return ("luxur" in query.persona.spending.casefold() and len(rows) == 1
                and int(cols["star_rating"][min(rows)]) >= 4 and cheaper_stay(min(rows)) is not None)
    query, plan = first(fits)
    row = min(stays(query, plan))
    other = cheaper_stay(row)
    assert other is not None
    old, new = f"{cols['name'][row]}, {cols['city'][row]}", f"{cols['name'][other]}, {cols['city'][other]}"
    swapped = plan.model_copy(update={"days": [d.model_copy(update={
        "accommodation": new if d.accommodation == old else d.accommodation,
        "items": [i.model_copy(update={"name": new}) if i.name == old else i for i in d.items]})
        for d in plan.days]})
    persona = next(t.measure for t in PLAN_TERMS if t.name == "persona")
    assert persona is not None
    high, low = (persona(read_plan(build_context(p, query, db))) for p in (plan, swapped))
    assert high.have == low.have and high.total is not None and low.total is not None
    assert high.total - low.total == pytest.approx(1.0)


def test_what_a_query_calls_for_without_a_reference_is_the_least_complete_information_asks() -> None:
    query, _ = honest(1)[0]
    assert expected_content(query, mini().db, None).units == required_units(query)
    assert expected_content(query, mini().db, None).reference is None


def test_what_a_query_calls_for_is_remembered_and_follows_a_changed_reference() -> None:
    query, plan = first(lambda q, p: len(p.days) >= 3)
    db = mini().db
    once = expected_content(query, db, plan)
    assert expected_content(query, db, plan.model_copy(deep=True)) is once  # the same inputs: the memo's answer
    shorter = plan.model_copy(update={"days": plan.days[:-1]})
    assert expected_content(query, db, shorter).units != once.units


def test_a_report_written_with_the_reward_counts_of_old_still_reads() -> None:
    query, plan = honest(1)[0]
    data = evaluate(plan, query, mini().db).model_dump(mode="json")
    old = {**data, "units": {"bas": 3}, "unit_sums": {"bas": 2.5}}
    assert EvaluationReport.model_validate(old).model_dump(mode="json") == data


def test_check_plan_names_the_rule_a_plan_breaks() -> None:
    from degenerate_policies import summary_only_name

    from utp_env.env.core import UTPEnv

    env = UTPEnv(profile="mini")
    query, plan = first(lambda q, p: any(d.attractions for d in p.days))
    env.reset(seed=0, options={"query_id": query.query_id})
    env.unwrapped.episode.plan = summary_only_name(plan, query, env.db, 0)  # type: ignore[union-attr]
    text = env.step({"tool": "check_plan"})[0]
    assert "FAILED valid_poi_list" in text and "summary matches schedule" in text


def test_a_required_cuisine_covered_in_the_summary_only_fails_the_rewards_hard_check() -> None:
    from degenerate_policies import cuisine_in_summary

    from utp_env.env.core import UTPEnv

    db = mini().db
    query, plan = first(lambda q, p: cuisine_in_summary(p, q, mini().db, p) is not None)
    tricked = cuisine_in_summary(plan, query, db, plan)
    assert tricked is not None
    assert evaluate(tricked, query, db).hard["cuisine"].passed is True  # the paper reads the summary fields
    scored = score_plan(tricked, query, db, weights=DEFAULT_REWARD_WEIGHTS, reference=plan)
    assert scored.terms["hard_pass_rate"] is not None and scored.terms["hard_pass_rate"] < 1.0
    env = UTPEnv(profile="mini")
    env.reset(seed=0, options={"query_id": query.query_id})
    env.unwrapped.episode.plan = tricked  # type: ignore[union-attr]
    assert "FAILED cuisine" in env.step({"tool": "check_plan"})[0]


# ---------------------------------------------------------------- the closed loop's end


def test_the_trip_ends_at_its_last_committed_step_not_at_a_rest_that_absorbs_the_delay() -> None:
    from utp_env.evaluation.realised import late_minutes
    from utp_env.simulation.trip_steps import ExecutedStep

    def step(kind: str, element: str, planned: tuple[float, float], actual: tuple[float, float]) -> ExecutedStep:
        return ExecutedStep(label=kind, name=kind, day=3, day_index=2, kind=kind, element=element, key=kind,
                            planned_start=planned[0], planned_end=planned[1], actual_start=actual[0],
                            actual_end=actual[1])
    home = step("leg", "leg", (3600, 3700), (3600, 3760))  # the flight home lands 60 minutes late
    rest = step("elastic", "item", (3715, 4195), (3775, 4195))  # a rest after it ends when planned
    assert late_minutes([home, rest], set(), 3700) == 60.0
    assert late_minutes([home], set(), 3700) == 60.0
