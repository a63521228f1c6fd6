"""The agent protocol and the reference planner: timing formulas by hand, plans that pass the
evaluation, parse back from the paper's format, and beat the deterministic baseline."""

from __future__ import annotations

import math
import statistics

import pytest

from utp_env.agents.base import Agent, AgentResult, Toolkit
from utp_env.agents.reference import ReferencePlanner
from utp_env.agents.reference.timing import TRAVELLER_MEAL_MINUTES, Timing, Venue
from utp_env.config import UncertaintyConfig
from utp_env.evaluation import evaluate
from utp_env.evaluation.context import CrowdProfile, build_context
from utp_env.evaluation.hard import trip_cost
from utp_env.plan_format import format_plan, parse_plan
from utp_env.queries import cheapest_trip, generate_queries
from utp_env.queries.options import LegOption
from utp_env.query import Query
from utp_env.simulation import simulate
from utp_env.tools.database import Database

N = 27  # one query per horizon x level x risk cell


@pytest.fixture(scope="module")
def queries(mini_db: Database) -> list[Query]:
    return generate_queries(mini_db, N, seed=3)


@pytest.fixture(scope="module")
def runs(mini_db: Database, queries: list[Query]) -> dict[str, list[AgentResult]]:
    return {name: [agent.run(q, Toolkit(mini_db)) for q in queries]
            for name, agent in (("reference", ReferencePlanner()), ("deterministic", ReferencePlanner(buffers=False)))}


@pytest.fixture(scope="module")
def reports(mini_db: Database, queries: list[Query], runs: dict[str, list[AgentResult]]) -> dict[str, list]:
    return {name: [evaluate(r.plan, q, mini_db) for r, q in zip(results, queries, strict=True)]
            for name, results in runs.items()}


def _mean(values: list[float | None]) -> float:
    return statistics.fmean(v for v in values if v is not None)


def _attraction_bas(reports: list) -> float:
    """BAS over the attraction visits of `reports` (1 - mean of min(1, Q))."""
    return 1.0 - statistics.fmean(min(1.0, p.q) for r in reports for p in r.pois if p.venue_type == "attraction")


def _full_meal_buffers(reports: list, risk: dict[str, str]) -> float:
    """Share of the meals of `reports` booked as the traveller's meal plus the full buffer BAS asks,
    low x v x Cf (within a minute of rounding)."""
    low = UncertaintyConfig().risk_multipliers
    meal_of_v = {m.base_minutes: name for name, m in UncertaintyConfig().restaurant_meals.items()}
    full = [abs((p.end - p.start) - TRAVELLER_MEAL_MINUTES[meal_of_v[p.v]] - low[risk[r.query_id]].low * p.v * p.cf) < 1
            for r in reports for p in r.pois if p.venue_type == "restaurant"]
    return sum(full) / len(full)


# ---------------------------------------------------------------- timing by hand


def test_visit_length_is_the_base_plus_the_shortest_buffer_of_the_risk_range(mini_db: Database) -> None:
    """A meal is the traveller's meal (breakfast 30, lunch 45, dinner 60 min) plus the buffer BAS asks
    of its v (Table 9: 50 / 60 / 75), low * v * Cf; an attraction is v plus low * v * Cf."""
    config = UncertaintyConfig()
    restaurant = Venue("restaurants", 0, "X", "Y", 0, 1440, None)  # no crowd data: Cf = 1
    # averse (1.25-2.0), breakfast at 09:00: 30 + 1.25 * 50 = 92.5 -> 93 minutes
    assert Timing(mini_db, config, "averse", True).length(restaurant, 9 * 60) == 93
    # tolerant (0.5-1.0), breakfast at 08:00: 30 + 0.5 * 50 = 55, a traveller's breakfast
    assert Timing(mini_db, config, "tolerant", True).length(restaurant, 8 * 60) == 55
    # tolerant, dinner at 20:00: 60 + 0.5 * 75 = 97.5 -> 98
    assert Timing(mini_db, config, "tolerant", True).length(restaurant, 20 * 60) == 98
    # optimized (1.0-1.25), lunch at 13:00: 45 + 1.0 * 60 = 105; without buffers the traveller's 45
    assert Timing(mini_db, config, "optimized", True).length(restaurant, 13 * 60) == 105
    assert Timing(mini_db, config, "optimized", False).length(restaurant, 13 * 60) == 45
    assert Timing(mini_db, config, "optimized", True).bas_minutes(restaurant, 13 * 60) == 60  # BAS's v is kept
    # a crowd window at tier AA (Cf 1.75) from 12:00: 45 + 1.0 * 60 * 1.75 = 150
    crowded = Venue("restaurants", 0, "X", "Y", 0, 1440, CrowdProfile(((frozenset(range(12, 15)), "AA"),),
                                                                      frozenset(), frozenset()))
    assert Timing(mini_db, config, "optimized", True).length(crowded, 13 * 60) == 150
    assert Timing(mini_db, config, "optimized", True).length(crowded, 11 * 60) == 105  # 11:00 has no window
    # an attraction: v (its visit duration) plus low * v * Cf, as before
    row = 0
    v = float(mini_db.tables["attractions"].columns["visit_duration_hr"][row]) * 60.0
    sight = Venue("attractions", row, "S", "Y", 0, 1440, None)
    assert Timing(mini_db, config, "averse", True).length(sight, 10 * 60) == math.ceil(v + 1.25 * v - 1e-9)
    assert Timing(mini_db, config, "averse", False).length(sight, 10 * 60) == math.ceil(v - 1e-9)


def test_planned_arrival_adds_the_multiplier_times_e_d_to_the_historical_duration() -> None:
    leg = LegOption("train", "12345", "A", "B", 0, dep=600, arr=720, fare=1.0, expected_delay=40.0,
                    hist_duration=120.0)
    assert leg.planned_arrival(1.25) == 600 + 120 + 50  # averse's low end: E[D] 40 x 1.25 = 50
    assert leg.planned_arrival(0.0) == 720
    bus = LegOption("bus", "B1", "A", "B", 0, dep=600, arr=900, fare=1.0, expected_delay=10.0, hist_duration=200.0)
    assert bus.planned_arrival(1.0) == 900  # never before the timetable's arrival


# ---------------------------------------------------------------- protocol


def test_reference_planner_satisfies_the_agent_protocol(mini_db: Database, queries: list[Query],
                                                        runs: dict[str, list[AgentResult]]) -> None:
    assert isinstance(ReferencePlanner(), Agent)
    result = runs["reference"][0]
    assert result.error is None and result.plan is not None and result.plan.source == "planner-made"
    trace = result.trace
    assert trace.tool_calls == sum(s.kind == "tool_call" for s in trace.steps) > 0
    assert {"search_stays", "search_restaurants", "nearest_transit"} <= {s.name for s in trace.steps}
    assert trace.model_calls == 0
    assert trace.input_tokens is None and trace.output_tokens is None and trace.cost_usd is None


def test_toolkit_records_failed_calls_without_raising(mini_db: Database) -> None:
    kit = Toolkit(mini_db)
    result = kit.call("search_nothing", {})
    assert not result.ok and "unknown tool" in result.error
    bad = kit.call("search_stays", {"city": "Atlantis"})
    assert not bad.ok
    assert [s.ok for s in kit.trace.steps] == [False, False] and kit.trace.tool_calls == 2


def test_infeasible_query_gives_an_error_result(mini_db: Database, queries: list[Query]) -> None:
    q = queries[0].model_copy(update={"local_constraint": queries[0].local_constraint.model_copy(
        update={"cuisine": ["Martian"]})})
    result = ReferencePlanner().run(q, Toolkit(mini_db))
    assert result.plan is None and "Martian" in (result.error or "")


# ---------------------------------------------------------------- plans


def test_plans_cover_every_horizon_and_parse_back(mini_db: Database, queries: list[Query],
                                                  runs: dict[str, list[AgentResult]], reports: dict) -> None:
    assert {q.days for q in queries} == {3, 5, 7}
    for q, result, report in zip(queries, runs["reference"], reports["reference"], strict=True):
        plan = result.plan
        assert plan is not None and len(plan.days) == q.days
        back = parse_plan(format_plan(plan), query=q, db=mini_db)
        again = evaluate(back, q, mini_db)
        assert again.final_pass == report.final_pass
        assert again.bas == pytest.approx(report.bas) and again.tdas == pytest.approx(report.tdas)


def test_reference_plans_pass_and_score_high(reports: dict, queries: list[Query]) -> None:
    ref = reports["reference"]
    failed = [(r.query_id, {k: c.reason for k, c in {**r.commonsense, **r.hard}.items() if c.passed is False})
              for r in ref if not r.final_pass]
    assert len(failed) <= 0.05 * len(ref), failed
    # BAS: the tolerant and optimized ranges fit a day of an attraction and three meals 4 h apart;
    # the averse range (>= 2.25 x v) often does not where every attraction of a city lasts 3 h or more
    # (mini's Nagpur and Vadodara), so it gets a lower bar (docs/PAPER.md, Table 3).
    # The bars are for this 27-query sample of the mini sandbox, whose 1,000-query population has a
    # non-averse BAS mean of 0.91 (long attractions in its few cities): the sample's mean moves by a few
    # points when the generator changes; the full set's bar is in test_every_full_reference_plan_passes.
    # Meals are a traveller's meal plus the buffer BAS asks (docs/PAPER.md, "BAS and a traveller's
    # meal"): BAS measures that buffer from the meal's longer v and scores meals low, so the bars are
    # on the attractions' BAS, and every meal must carry its profile's full buffer unless squeezed.
    risk = {q.query_id: q.risk_profile for q in queries}
    assert _attraction_bas([r for r in ref if risk[r.query_id] != "averse"]) >= 0.85
    assert _attraction_bas([r for r in ref if risk[r.query_id] == "averse"]) >= 0.75
    assert _full_meal_buffers(ref, risk) >= 0.9
    assert _mean([r.tdas for r in ref]) >= 0.9
    # CATS: crowds follow the kind of place (forts, palaces and museums busiest 11:00-15:00, temples at
    # the aarti, dinner at its peak), so the day's sights cannot all be seen in quiet hours: this
    # sample's mean is about 0.67, the full set's 0.67-0.71 by risk profile (was 0.70-0.79 when every
    # attraction peaked mid-afternoon alike).
    assert _mean([r.cats for r in ref]) >= 0.6


def test_reference_books_the_shortest_buffer_inside_the_range(reports: dict, runs: dict) -> None:
    """A visit or leg inside its range sits at the range's low end (within the minute of rounding):
    nothing is stretched to the far end of the range."""
    inside = [(p.buffer, p.range_low) for r in reports["reference"] for p in r.pois if p.q == 0]
    assert inside
    assert all(buffer - low < 1.0 for buffer, low in inside), max(b - lo for b, lo in inside)
    # a leg's planned arrival is departure + historical duration + low x E[D], unless the timetable's
    # arrival is later still (then the planner writes the timetable's)
    for r, result in zip(reports["reference"], runs["reference"], strict=True):
        scheduled = {(d.day, leg.number): leg.arr - leg.dep for d in result.plan.days for leg in d.transport}
        for g in r.legs:
            if g.q == 0 and g.planned_duration > scheduled[(g.day, g.number)]:
                assert g.buffer - g.range_low < 1.0, (r.query_id, g)


def test_deterministic_baseline_scores_lower(mini_db: Database, queries: list[Query],
                                             runs: dict[str, list[AgentResult]], reports: dict) -> None:
    ref, det = reports["reference"], reports["deterministic"]
    assert _mean([r.bas for r in det]) < _mean([r.bas for r in ref]) - 0.5
    assert _mean([r.tdas for r in det]) < _mean([r.tdas for r in ref]) - 0.5
    # Same choices: the same venues, only the timing differs; unless the unbuffered plan went over the
    # budget (other restaurants fit its shorter bookings) and was rebuilt with the cheapest choices.
    compared = 0
    for a, b in zip(runs["reference"], runs["deterministic"], strict=True):
        notes = [step.result for step in b.trace.steps if step.kind == "note"]
        if any(str(n).startswith("cheapest plan costs") for n in notes):
            continue
        compared += 1
        assert [d.accommodation for d in a.plan.days] == [d.accommodation for d in b.plan.days]
        assert [leg.number for _, leg in a.plan.legs] == [leg.number for _, leg in b.plan.legs]
    assert compared >= N // 2
    sample = range(0, N, 3)
    hold = {name: statistics.fmean(simulate(runs[name][i].plan, queries[i], mini_db, n=400, seed=i).hold_rate
                                   for i in sample) for name in runs}
    # the reference books the SHORTEST buffer inside each range, so its margin over the no-buffer
    # baseline is smaller than a mid-range buffer would give (about 0.11 on this sample)
    assert hold["deterministic"] < hold["reference"] - 0.05, hold


def test_plans_keep_within_a_budget_below_the_quote(mini_db: Database, queries: list[Query]) -> None:
    """With the budget cut to the quote's legs, stays and events plus half its meals and entry fees,
    both planners still fit it and pass: the restaurants and attractions the query does not require
    give way under a falling price cap (agents/reference/planner.py)."""
    for q in queries:
        quote = cheapest_trip(q, mini_db)
        assert not isinstance(quote, str), q.query_id
        spare = quote.costs["meals"] + quote.costs["attractions"]
        tight = q.model_copy(update={"budget_inr": float(quote.total - spare / 2)})
        for agent in (ReferencePlanner(), ReferencePlanner(buffers=False)):
            plan = agent.run(tight, Toolkit(mini_db)).plan
            assert plan is not None, q.query_id
            report = evaluate(plan, tight, mini_db)
            assert trip_cost(build_context(plan, tight, mini_db)).total <= tight.budget_inr, (agent.name, q.query_id)
            assert report.final_pass, (agent.name, q.query_id)


# ---------------------------------------------------------------- full scale


@pytest.mark.slow
def test_full_sandbox_validation_targets() -> None:
    """60 validation queries on the full sandbox: pass rate, BAS/TDAS/CATS targets, baseline lower."""
    from utp_env.tools.sandbox import open_sandbox

    db = open_sandbox("full")
    qs = [q for q in generate_queries(db, 400, seed=0) if q.split == "validation"][:60]
    assert len(qs) == 60
    scores: dict[str, dict[str, list]] = {}
    for name, agent in (("reference", ReferencePlanner()), ("deterministic", ReferencePlanner(buffers=False))):
        rows: dict[str, list] = {"final": [], "bas": [], "tdas": [], "cats": [], "hold": []}
        for i, q in enumerate(qs):
            plan = agent.run(q, Toolkit(db)).plan
            assert plan is not None, q.query_id
            report = evaluate(plan, q, db)
            for key in ("bas", "tdas", "cats"):
                rows[key].append(getattr(report, key))
            rows["final"].append(float(report.final_pass))
            if i % 4 == 0:
                rows["hold"].append(simulate(plan, q, db, n=500, seed=i).hold_rate)
        scores[name] = {k: _mean(v) for k, v in rows.items()}
    ref, det = scores["reference"], scores["deterministic"]
    # CATS about 0.64 on the real sights (generator 11): a city's top sight is booked on every full
    # day, and the famous sights are crowded at the hours they are open (docs/PAPER.md).
    # BAS about 0.65: meals are a traveller's meal plus the buffer BAS asks, scored from the meal's v
    assert ref["final"] >= 0.95 and ref["bas"] >= 0.55 and ref["tdas"] >= 0.9 and ref["cats"] >= 0.58, ref
    assert ref["cats"] > det["cats"], scores
    assert det["bas"] < ref["bas"] - 0.5 and det["tdas"] < ref["tdas"] - 0.5, scores
    assert det["hold"] < ref["hold"] - 0.05, scores


@pytest.mark.slow
def test_every_full_reference_plan_passes() -> None:
    """The stored reference plans of all 1,000 full queries pass (Complete
    Information as TripCraft's, every day in one city with an attraction and three meals, including
    the days with an evening show or a venue that opens at night that need the planner's later tries),
    and every visit lies in its venue's opening hours on a day it opens (the Taj Mahal never on a Friday)."""
    from utp_env.dataset import open_dataset

    ds = open_dataset(profile="full", progress=False)
    assert len(ds.queries) == 1000
    failed = []
    bas: dict[str, list[float]] = {"tolerant": [], "optimized": [], "averse": []}
    risk = {q.query_id: q.risk_profile for q in ds.queries}
    reports = {}
    for q in ds.queries:
        plan = ds.references.get(q.query_id)
        report = evaluate(plan, q, ds.db) if plan is not None else None
        if report is None or not report.final_pass or report.extra["open_hours"].passed is False:
            failed.append(q.query_id)  # open_hours: within opening hours, never on a closing day
        elif report.bas is not None:
            bas[q.risk_profile].append(report.bas)
            reports[q.query_id] = report
    assert failed == []
    # BAS as docs/PAPER.md reports it for the full set on generator 12 (tolerant / optimized / averse
    # 0.721 / 0.463 / 0.737): a meal is a traveller's meal plus the buffer BAS asks, which BAS, measuring
    # from the meal's longer v, scores low (meals 0.52 / 0.12 / 0.62). The attractions keep their BAS
    # (0.985 / 0.934 / 0.900): days end by 23:30 and hold the city's top sight, so the optimized and
    # averse ranges, which ask a visit for 2-3 times its base length, fit less often.
    assert _mean(bas["tolerant"]) >= 0.7 and _mean(bas["optimized"]) >= 0.44 and _mean(bas["averse"]) >= 0.71
    by_risk = {r: [rep for q, rep in reports.items() if risk[q] == r] for r in ("tolerant", "optimized", "averse")}
    assert _attraction_bas(by_risk["tolerant"]) >= 0.98 and _attraction_bas(by_risk["optimized"]) >= 0.9
    assert _attraction_bas(by_risk["averse"]) >= 0.86
    assert _full_meal_buffers(list(reports.values()), risk) >= 0.95


def _closed_day_bookings(db: Database, queries: list[Query]) -> tuple[int, int]:
    """(visits on an open day, visits on a closing day) of attractions with a weekly closing day in
    the reference plans of `queries`."""
    from utp_env.evaluation.context import VenueName
    from utp_env.queries.options import opens_on

    a = db.tables["attractions"].columns
    closable = {(VenueName.of(f"{n}, {c}").key, c): i for i, (n, c, d) in
                enumerate(zip(a["name"], a["city"], a["open_days"], strict=True)) if d != "1111111"}
    on_open = on_closed = 0
    for q in queries:
        plan = ReferencePlanner().run(q, Toolkit(db)).plan
        for day in plan.days if plan is not None else []:
            for item in day.items:
                city = item.name.rsplit(", ", 1)[-1]
                row = closable.get((VenueName.of(item.name).key, city))
                if row is not None:
                    if opens_on(db, "attractions", row, day.date):
                        on_open += 1
                    else:
                        on_closed += 1
    return on_open, on_closed


def test_the_planner_books_no_attraction_on_its_closing_day(mini_db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """With every attraction that has a closing day (Elephanta Caves on Mondays, Ellora on Tuesdays
    ...) first in its city's order, the planner books them on their open days only; without the
    closing-day rule (`opens_on` always true) it books some on their closing day, so the rule is
    what keeps them out."""
    import utp_env.agents.reference.planner as planner_module
    import utp_env.agents.reference.schedule as schedule_module

    days = mini_db.tables["attractions"].columns["open_days"]
    closable = {i for i, d in enumerate(days) if d != "1111111"}
    original = planner_module.attraction_order
    monkeypatch.setattr(planner_module, "attraction_order", lambda db, city, policy, query: sorted(
        original(db, city, policy, query), key=lambda r: r not in closable))
    crowd = set(mini_db.tables["attractions"].columns["city"][i] for i in closable)
    queries = [q for q in generate_queries(mini_db, 80, seed=23) if q.dest in crowd][:25]
    on_open, on_closed = _closed_day_bookings(mini_db, queries)
    assert on_closed == 0 and on_open > 0, (on_open, on_closed)
    monkeypatch.setattr(schedule_module, "opens_on", lambda *args, **kw: True)
    assert _closed_day_bookings(mini_db, queries)[1] > 0
