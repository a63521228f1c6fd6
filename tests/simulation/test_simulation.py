"""Monte Carlo robustness: determinism, engine == loop baseline, buffers, missed connections."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from delay_tables import tiny_rows, write_db
from hypothesis import given, settings
from hypothesis import strategies as st

from utp_env.config import UncertaintyConfig
from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg, parse_hhmm
from utp_env.simulation import compile_for, draw_delays, simulate, simulate_once
from utp_env.simulation.compile import CAB, ELASTIC, FIXED, LEG, VISIT
from utp_env.simulation.engine import run
from utp_env.simulation.loop import run_loop
from utp_env.simulation.robustness import QUANTILES
from utp_env.tools.database import Database

# ------------------------------------------------------------------ a tiny hand-made database


@pytest.fixture(scope="module")
def tiny_db(tmp_path_factory: pytest.TempPathFactory) -> Database:
    return write_db(tmp_path_factory.mktemp("tinydb"), tiny_rows())


# ------------------------------------------------------------------ plans


def item(name: str, activity: str, start: str | None, end: str | None, venue_type: str | None = None,
         next_day: bool = False) -> PlanItem:
    s = parse_hhmm(start) if start else None
    e = parse_hhmm(end) + (1440 if next_day else 0) if end else None
    return PlanItem(name=name, activity=activity, start=s, end=e, venue_type=venue_type)  # type: ignore[arg-type]


def two_day_plan(fort_end: str = "18:30", dinner: tuple[str, str] = ("19:00", "20:30")) -> Plan:
    """Fly Alpha->Beta on day 1, visit, stay, fly back on day 2."""
    day1 = Day(day=1, date="2025-11-03", cities=["Alpha", "Beta"],
               transport=[TransportLeg(mode="flight", number="6E-100", origin="Alpha", destination="Beta",
                                       dep=480, arr=600, planned_arr=660)],
               items=[item("Alpha Airport", "arrive", "06:30", "07:00"),
                      item("Hotel Beta", "check-in", "11:00", "11:30", "accommodation"),
                      item("Spice Cafe", "visit", "12:00", "13:15", "restaurant"),
                      item("Old Fort", "visit", "13:30", fort_end, "attraction"),
                      item("Spice Cafe", "visit", *dinner, "restaurant"),
                      item("Hotel Beta", "stay", "21:00", "08:00", "accommodation", next_day=True)])
    day2 = Day(day=2, date="2025-11-04", cities=["Beta", "Alpha"],
               transport=[TransportLeg(mode="flight", number="6E-102", origin="Beta", destination="Alpha",
                                       dep=1080, arr=1200)],
               items=[item("Hotel Beta", "stay", "08:00", "09:00", "accommodation"),
                      item("Rose Garden", "visit", "10:00", "12:30", "attraction"),
                      item("Hotel Beta", "checkout", "13:00", "13:30", "accommodation"),
                      item("Beta Airport", "arrive", "16:00", "16:30")])
    return Plan(query_id="q-test", days=[day1, day2])


def connection_plan(slack: int) -> Plan:
    """Flight 6E-100 arrives 10:00; the train 12345 leaves Beta at 16:00 - no: a flight at 14:00.

    The traveller goes straight from the arrival to the connecting flight 6E-103 (14:00), so the
    connection is missed iff 10:00 + delay > 14:00 - margin; `slack` shifts nothing but labels.
    """
    del slack
    day = Day(day=1, date="2025-11-03", cities=["Alpha", "Beta", "Gamma"],
              transport=[TransportLeg(mode="flight", number="6E-100", origin="Alpha", destination="Beta",
                                      dep=480, arr=600),
                         TransportLeg(mode="flight", number="6E-103", origin="Beta", destination="Gamma",
                                      dep=840, arr=900)])
    return Plan(days=[day])


CONFIG = UncertaintyConfig()


# ------------------------------------------------------------------ compile


def test_compile_orders_steps_and_classifies_them(tiny_db: Database) -> None:
    compiled, _ = compile_for(two_day_plan(), None, tiny_db, CONFIG)
    kinds = compiled.kind.tolist()
    assert kinds == [FIXED, LEG, FIXED, VISIT, VISIT, VISIT, ELASTIC, ELASTIC, VISIT, FIXED, FIXED, LEG]
    assert np.all(np.diff(compiled.start) >= 0)
    # day-2 times are offset by one day; the overnight stay ends at 08:00 of day 2
    assert compiled.start[7] == 1440 + 480 and compiled.end[6] == 1440 + 480
    # base durations: lunch 60 (11:00-15:59), Old Fort 3.0 h, dinner 75 (16:00-05:59), Rose Garden 1.5 h
    assert compiled.base[[3, 4, 5, 8]].tolist() == [60.0, 180.0, 75.0, 90.0]
    # the leg's planned end is its stated planned arrival (buffer of 60 min past the 10:00 schedule)
    assert compiled.end[1] == 660 and compiled.sched_arr[1] == 600 and compiled.margin[1] == 45


def test_overrun_follows_crowd_tier(tiny_db: Database) -> None:
    compiled, _ = compile_for(two_day_plan(), None, tiny_db, CONFIG)
    fort = compiled.models[compiled.draw[4]]
    # Old Fort at 13:00 sits in its H window: mean overrun 0.30 x 180 min
    assert fort.mean() == pytest.approx(0.30 * 180)
    # no crowd data (Spice Cafe, Rose Garden): tier L, no overrun
    assert compiled.models[compiled.draw[3]].mean() == 0.0
    assert compiled.models[compiled.draw[8]].mean() == 0.0


def test_untimed_items_are_skipped_and_listed(tiny_db: Database) -> None:
    plan = two_day_plan()
    plan.days[0].items.insert(3, item("Rose Garden", "visit", None, None, "attraction"))
    report = simulate(plan, None, tiny_db, n=200, seed=1, config=CONFIG)
    assert report.skipped_untimed == ["day 1: Rose Garden (visit)"]
    assert len(report.steps) == 12


def test_empty_plan(tiny_db: Database) -> None:
    report = simulate(Plan(days=[]), None, tiny_db, n=100, seed=0, config=CONFIG)
    assert report.hold_rate == 1.0 and report.steps == [] and report.missed_legs == []
    assert report.trip_end_lateness.mean == 0.0
    once = simulate_once(Plan(days=[]), None, tiny_db, np.random.default_rng(0), CONFIG)
    assert once.held and once.steps == []


def test_bad_rollout_count(tiny_db: Database) -> None:
    with pytest.raises(ValueError, match="rollouts"):
        simulate(two_day_plan(), None, tiny_db, n=0)


# ------------------------------------------------------------------ determinism and equivalence


def test_same_seed_same_bytes_different_seed_differs(tiny_db: Database) -> None:
    a = simulate(two_day_plan(), None, tiny_db, n=2000, seed=7, config=CONFIG).model_dump_json()
    b = simulate(two_day_plan(), None, tiny_db, n=2000, seed=7, config=CONFIG).model_dump_json()
    c = simulate(two_day_plan(), None, tiny_db, n=2000, seed=8, config=CONFIG).model_dump_json()
    assert a == b
    assert a != c


@pytest.mark.parametrize("skip", [True, False])
def test_engine_equals_loop_on_same_draws(tiny_db: Database, skip: bool) -> None:
    plan = two_day_plan(fort_end="16:30")
    plan.days[1].transport.append(connection_plan(0).days[0].transport[1])  # a tight leg that is often missed
    compiled, _ = compile_for(plan, None, tiny_db, CONFIG)
    delays = draw_delays(compiled, np.random.default_rng(3), 3000)
    fast, slow = run(compiled, delays, skip), run_loop(compiled, delays, skip)
    np.testing.assert_allclose(fast.start, slow.start, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fast.end, slow.end, rtol=0, atol=1e-9)
    assert np.array_equal(fast.lost, slow.lost) and np.array_equal(fast.missed, slow.missed)
    assert fast.lost.any() == skip and fast.missed.any()


def test_engine_semantics_by_hand(tiny_db: Database) -> None:
    """Hand-computed walk with fixed delays: the flight lands 200 min late (13:20)."""
    compiled, _ = compile_for(two_day_plan(), None, tiny_db, CONFIG)
    delays = np.zeros((1, compiled.delays.k))
    delays[0, compiled.draw[1]] = 200.0  # flight: 10:00 + 200 = 13:20
    delays[0, compiled.draw[4]] = 120.0  # Old Fort overrun
    r = run(compiled, delays)
    start, end = r.start[0], r.end[0]
    assert end[1] == 800  # arrival 13:20
    assert start[2] == 800 and end[2] == 830  # check-in keeps its 30 min: 13:20-13:50
    assert start[3] == 830 and r.lost[0, 3] is np.True_  # lunch 12:00-13:15 already over: lost
    assert start[4] == 830 and end[4] == 830 + 180 + 120  # fort: 3 h + 2 h overrun -> 18:50, past 18:30
    assert start[5] == 1140  # dinner at its planned 19:00 (the 30 min gap absorbs the 20 min)
    assert end[5] == 1230 and not r.lost[0, 5]
    assert end[6] == 1440 + 480  # the stay ends at its planned 08:00


# ------------------------------------------------------------------ behaviour


def test_buffers_make_plans_hold_more_often(tiny_db: Database) -> None:
    generous = two_day_plan(fort_end="18:30", dinner=("19:00", "20:30"))
    tight = two_day_plan(fort_end="16:30", dinner=("16:30", "17:45"))
    tight.days[0].transport[0] = tight.days[0].transport[0].model_copy(update={"planned_arr": 600})
    tight.days[0].items[1] = item("Hotel Beta", "check-in", "10:00", "10:30", "accommodation")
    tight.days[0].items[2] = item("Spice Cafe", "visit", "11:00", "12:00", "restaurant")
    tight.days[0].items[3] = item("Old Fort", "visit", "12:00", "15:00", "attraction")
    g = simulate(generous, None, tiny_db, n=5000, seed=11, config=CONFIG)
    t = simulate(tight, None, tiny_db, n=5000, seed=11, config=CONFIG)
    assert g.hold_rate > t.hold_rate + 0.1
    assert g.item_start_lateness.mean < t.item_start_lateness.mean


def test_missed_connection_matches_analytic_probability(tiny_db: Database) -> None:
    """6E-100 lands 10:00; 6E-103 leaves 14:00 with a 45 min margin: slack s = 240 - 45 = 195 min.

    P(miss) = P(D > 195) = p_dis + p_late * (1 - Phi((ln 195 - log_mu) / log_sd)) with Dmax = 300,
    p_dis = 10/200, p_late = 40/200 and the log-normal moment-matched to mean 40, s.d. 30.
    """
    p_dis, p_late = 10 / 200, 40 / 200
    log_var = math.log1p((30 / 40) ** 2)
    log_mu, log_sd = math.log(40) - log_var / 2, math.sqrt(log_var)
    tail = 1 - 0.5 * (1 + math.erf((math.log(195) - log_mu) / log_sd / math.sqrt(2)))
    expected = p_dis + p_late * tail
    n = 40_000
    report = simulate(connection_plan(195), None, tiny_db, n=n, seed=5, config=CONFIG)
    got = report.missed_legs[1].missed_probability
    se = math.sqrt(expected * (1 - expected) / n)
    assert abs(got - expected) < 3 * se, (got, expected, se)
    assert report.missed_legs[0].missed_probability == 0.0


def test_missed_leg_is_rebooked_next_day(tiny_db: Database) -> None:
    compiled, _ = compile_for(connection_plan(0), None, tiny_db, CONFIG)
    delays = np.zeros((1, compiled.delays.k))
    delays[0, compiled.draw[0]] = 300.0  # disrupted: lands 15:00, after 14:00 - 45
    r = run(compiled, delays)
    assert r.missed[0, 1] and r.start[0, 1] == 840 + 1440 and r.end[0, 1] == 900 + 1440


def test_cab_waits_for_the_traveller(tiny_db: Database) -> None:
    day = Day(day=1, cities=["Beta", "Gamma"],
              transport=[TransportLeg(mode="cab", origin="Beta", destination="Gamma", dep=720, arr=960)],
              items=[item("Old Fort", "visit", "08:00", "11:30", "attraction")])
    compiled, _ = compile_for(Plan(days=[day]), None, tiny_db, CONFIG)
    assert compiled.kind.tolist() == [VISIT, CAB]
    delays = np.zeros((1, compiled.delays.k))
    delays[0, compiled.draw[0]] = 120.0  # 08:00 + 180 + 120 = 13:00 (tier L: normally 0, forced here)
    delays[0, compiled.draw[1]] = 10.0
    r = run(compiled, delays)
    assert not r.missed.any() and r.start[0, 1] == 780 and r.end[0, 1] == 780 + 240 + 10


def test_simulate_once_reports_what_was_lost(tiny_db: Database) -> None:
    rng = np.random.default_rng(0)
    outcomes = [simulate_once(connection_plan(0), None, tiny_db, rng, CONFIG) for _ in range(300)]
    missed = [o for o in outcomes if o.missed_legs]
    assert missed and len(missed) < len(outcomes)
    assert all(not o.held and "6E-103" in o.missed_legs[0] for o in missed)
    assert all(o.trip_end_lateness >= 1440 - 60 for o in missed)
    held = simulate_once(two_day_plan(), None, tiny_db, np.random.default_rng(1), CONFIG)
    assert [s.planned_start for s in held.steps][:2] == [390.0, 480.0]


def test_report_is_consistent(tiny_db: Database) -> None:
    r = simulate(two_day_plan(), None, tiny_db, n=3000, seed=2, config=CONFIG)
    assert 0 <= r.hold_rate <= 1 - r.any_missed_leg_probability + 1e-12
    for s in r.steps:
        assert 0 <= s.start_lateness.p50 <= s.start_lateness.p95
        assert s.absorbed_mean >= 0 and s.passed_on_mean >= 0
    # the overnight stay absorbs all of the evening's lateness
    stay = next(s for s in r.steps if "stay 21:00" in s.label)
    assert stay.passed_on_mean == 0.0
    assert [leg.label.split(":")[0] for leg in r.missed_legs] == ["day 1", "day 2"]


# ------------------------------------------------------------------ CLI, plot, the sandbox


def _cli(argv: list[str]) -> int:
    from utp_env.cli import main

    return main(argv)


def _query(query_id: str = "q-test") -> dict:
    return {"query_id": query_id, "org": "Alpha", "dest": "Beta", "visiting_city_number": 1, "days": 3,
            "dates": ["2025-11-03", "2025-11-04", "2025-11-05"], "people_number": 2, "budget_inr": 50000,
            "level": "easy", "persona": {"traveler_type": "Laidback Traveler", "purpose": "Relaxation",
                                         "spending": "Economical Traveler", "location_preference": "Museums"},
            "risk_profile": "averse", "text": "A test trip."}


def test_cli_prints_table_and_writes_plot(tiny_db: Database, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(two_day_plan().model_dump_json())
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps(_query()) + "\n")
    png = tmp_path / "timeline.png"
    argv = ["simulate", "--plan", str(plan_file), "--query-id", "q-test", "--queries", str(queries),
            "--db", str(tiny_db.path), "--rollouts", "500", "--seed", "3", "--plot", str(png)]
    assert _cli(argv) == 0
    out = capsys.readouterr().out
    assert "hold rate" in out and "Flight 6E-100" in out and "Old Fort" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _cli([*argv[:-2], "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    expected = simulate(two_day_plan(), None, tiny_db, n=500, seed=3, config=CONFIG)
    assert data["hold_rate"] == expected.hold_rate and data["n"] == 500


def test_cli_plot_title_states_the_hold_rate_once(tiny_db: Database, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import utp_env.simulation.plot as plot

    titles: list[str] = []
    original = plot.timeline_figure

    def recording(*args: Any, **kwargs: Any) -> Any:
        fig = original(*args, **kwargs)
        titles.append(fig.axes[0].get_title())
        return fig

    monkeypatch.setattr(plot, "timeline_figure", recording)
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(two_day_plan().model_dump_json())
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps(_query()) + "\n")
    argv = ["simulate", "--plan", str(plan_file), "--query-id", "q-test", "--queries", str(queries),
            "--db", str(tiny_db.path), "--rollouts", "50", "--plot", str(tmp_path / "t.png")]
    assert _cli(argv) == 0
    assert len(titles) == 1 and titles[0].startswith("q-test: hold rate ")
    assert titles[0].count("hold rate") == 1 and titles[0].count("rollouts") == 1, titles[0]


def test_cli_warns_about_a_plan_the_database_does_not_know(tiny_db: Database, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A plan made on another database (here: a flight and a sight the tiny database lacks), given
    without --query-id, still gets a hold rate, with one warning line that says why it says little."""
    plan = two_day_plan()
    plan.query_id = None
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(plan.model_dump_json())
    base = ["simulate", "--db", str(tiny_db.path), "--rollouts", "50"]
    assert _cli([*base, "--plan", str(plan_file)]) == 0
    assert "warning" not in capsys.readouterr().err  # every leg and visit is known: no warning
    plan.days[0].transport[0].number = "ZZ-999"
    plan.days[1].items[1].name = "Atlantis Palace"
    plan_file.write_text(plan.model_dump_json())
    assert _cli([*base, "--plan", str(plan_file)]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if "warning" in line]
    assert len(warnings) == 1, captured.err
    assert "2 leg(s)/visit(s) of the plan are not in this database" in warnings[0]
    assert "ZZ-999" in warnings[0] and "--query-id" in warnings[0]
    assert "hold rate" in captured.out  # still reported


def test_reference_plans_are_known_to_their_database(mini_db: Database) -> None:
    from utp_env.dataset import dataset_of

    dataset = dataset_of(mini_db)
    queries = {q.query_id: q for q in dataset.queries}
    for query_id, plan in list(dataset.references.items())[:100]:
        compiled, _ = compile_for(plan, queries[query_id], mini_db, CONFIG)
        assert compiled.unknown == [], (query_id, compiled.unknown[:3])


def test_cli_bad_input_names_the_problem(tiny_db: Database, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(two_day_plan().model_dump_json())
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps(_query()) + "\n")
    base = ["simulate", "--plan", str(plan_file), "--db", str(tiny_db.path), "--queries", str(queries)]
    assert _cli([*base, "--query-id", "q-tset"]) == 2
    assert "q-test" in capsys.readouterr().err  # the suggestion
    assert _cli([*base, "--rollouts", "0"]) == 2
    assert "--rollouts" in capsys.readouterr().err
    assert _cli([*base, "--rollouts", "1000000000"]) == 2
    assert "--rollouts must be <= 100,000,000" in capsys.readouterr().err
    assert _cli([*base, "--seed", "-1"]) == 2
    assert capsys.readouterr().err.strip() == ("utp-env simulate: error: --seed -1: must be a non-negative integer; "
                                               "e.g. --seed 0")
    assert _cli(["simulate", "--plan", str(tmp_path / "nope.json"), "--db", str(tiny_db.path)]) == 2
    assert "nope.json" in capsys.readouterr().err


def _week_plan(db: Database) -> Plan:
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "simulate.py"
    spec = importlib.util.spec_from_file_location("bench_simulate", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.week_plan(db)


def test_week_plan_on_the_mini_sandbox(mini_db: Database) -> None:
    plan = _week_plan(mini_db)
    compiled, _ = compile_for(plan, None, mini_db, CONFIG)
    assert len(plan.days) == 7 and len(compiled.leg_steps) == 3
    delays = draw_delays(compiled, np.random.default_rng(0), 2000)
    fast, slow = run(compiled, delays), run_loop(compiled, delays)
    np.testing.assert_allclose(fast.end, slow.end, rtol=0, atol=1e-9)
    report = simulate(plan, None, mini_db, n=2000, seed=0, config=CONFIG)
    assert 0 < report.hold_rate < 1  # crowded visits overrun sometimes, buffers absorb most of it
    assert report == simulate(plan, None, mini_db, n=2000, seed=0, config=CONFIG)


@pytest.mark.slow
def test_week_plan_on_the_full_sandbox() -> None:
    """10,000 rollouts of a week plan on the full sandbox; how fast is measured by
    benchmarks/simulate.py (target < 100 ms, >= 30x the per-rollout loop), not asserted here."""
    from utp_env.tools.sandbox import open_sandbox

    db = open_sandbox("full")
    plan = _week_plan(db)
    report = simulate(plan, None, db, n=10_000, seed=1, config=CONFIG)
    assert report.n == 10_000 and len(report.missed_legs) == 3
    assert 0 <= report.hold_rate <= 1


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 60), block=st.integers(1, 64), zero_share=st.floats(0, 1), seed=st.integers(0, 2**32 - 1))
def test_report_quantiles_equal_numpy_on_rounded_lateness(tiny_db: Database, n: int, block: int, zero_share: float,
                                                          seed: int) -> None:
    """Histogram quantiles == np.quantile of the rounded values, whatever the block size."""
    from utp_env.simulation.engine import Rollouts
    from utp_env.simulation.robustness import build_report

    compiled, _ = compile_for(two_day_plan(), None, tiny_db, CONFIG)
    rng = np.random.default_rng(seed)
    steps = compiled.n_steps
    late = rng.exponential(30.0, (n, steps)) * (rng.random((n, steps)) >= zero_share)
    start = compiled.start + late
    r = Rollouts(start, np.maximum(start, compiled.end), np.zeros((n, steps), bool), np.zeros((n, steps), bool))
    report = build_report(compiled, r, 0, 30.0, block=block)
    want = np.quantile(np.rint(late), QUANTILES, axis=0)
    got = np.array([[s.start_lateness.p50 for s in report.steps], [s.start_lateness.p95 for s in report.steps]])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    if block >= n:  # one block either way: the same bytes
        assert build_report(compiled, r, 0, 30.0, block=n).model_dump_json() == report.model_dump_json()


@pytest.mark.parametrize(("arrive_at", "missed"), [("07:00", False), ("07:15", False), ("07:16", True)])
def test_at_the_departure_point_from_the_start_of_an_arrive_item(tiny_db: Database, arrive_at: str,
                                                                  missed: bool) -> None:
    """The paper's pattern: `Airport, arrive from 07:00 to 07:30` before an 08:00 flight (margin 45 min)."""
    day = Day(day=1, cities=["Alpha", "Beta"],
              transport=[TransportLeg(mode="flight", number="6E-100", origin="Alpha", destination="Beta",
                                      dep=480, arr=600)],
              items=[item("Alpha Airport", "arrive", arrive_at, "07:45")])
    compiled, _ = compile_for(Plan(days=[day]), None, tiny_db, CONFIG)
    r = run(compiled, np.zeros((1, compiled.delays.k)))
    assert bool(r.missed[0, 1]) is missed


def test_days_numbered_from_a_later_day(tiny_db: Database) -> None:
    """A plan excerpt starting at day 2 (as in the paper's figures) is timed from its first day."""
    plan = two_day_plan()
    plan.days = [d.model_copy(update={"day": d.day + 1}) for d in plan.days]
    report = simulate(plan, None, tiny_db, n=300, seed=0, config=CONFIG)
    assert report.steps[0].label.startswith("day 2:") and report.steps[0].planned_start == "06:30"
    assert report.steps[0].day == 2
    reference = simulate(two_day_plan(), None, tiny_db, n=300, seed=0, config=CONFIG)
    assert report.hold_rate == reference.hold_rate


def test_travel_items_are_modelled_by_their_leg(tiny_db: Database) -> None:
    plan = connection_plan(0)
    plan.days[0].items.append(PlanItem(name="Flight 6E-100", activity="travel", start=480, end=600,
                                       venue_type="transport"))
    compiled, _ = compile_for(plan, None, tiny_db, CONFIG)
    assert compiled.kind.tolist() == [LEG, LEG] and compiled.skipped == []


def test_report_aggregates_match_the_rollouts(tiny_db: Database) -> None:
    from utp_env.simulation.robustness import build_report

    plan = two_day_plan(fort_end="16:30")
    compiled, _ = compile_for(plan, None, tiny_db, CONFIG)
    rollouts = run(compiled, draw_delays(compiled, np.random.default_rng(9), 4000))
    report = build_report(compiled, rollouts, 9, 30.0, block=1000)
    lost_minutes = (rollouts.lost * (compiled.end - compiled.start)).sum(axis=1)
    assert rollouts.lost.any()
    assert report.expected_lost_minutes == pytest.approx(lost_minutes.mean(), rel=1e-12)
    assert report.expected_lost_items == pytest.approx(rollouts.lost.sum(axis=1).mean(), rel=1e-12)
    start_late = rollouts.start - compiled.start
    items = (compiled.kind != LEG) & (compiled.kind != CAB)
    held = ~(rollouts.missed.any(axis=1) | rollouts.lost.any(axis=1) | (start_late[:, items] > 30).any(axis=1))
    assert report.hold_rate == pytest.approx(held.mean(), rel=1e-12)
    fort = report.steps[4]
    # quantiles are those of lateness rounded to whole minutes; means are exact
    assert fort.start_lateness.p95 == pytest.approx(np.quantile(np.rint(start_late[:, 4]), 0.95), rel=1e-12)
    assert fort.start_lateness.mean == pytest.approx(start_late[:, 4].mean(), rel=1e-12)
    out = np.maximum(rollouts.end - compiled.end, 0.0)
    assert report.trip_end_lateness.p50 == pytest.approx(np.quantile(np.rint(out[:, -1]), 0.5), rel=1e-12)
    assert report.item_start_lateness.p95 == pytest.approx(np.quantile(np.rint(start_late[:, items]), 0.95),
                                                           rel=1e-12)
    assert report.item_start_lateness.mean == pytest.approx(start_late[:, items].mean(), rel=1e-12)


def test_quantiles_count_lateness_beyond_the_dense_histogram(tiny_db: Database) -> None:
    """Values past HIST_MINUTES go to the sparse overflow and still give exact quantiles."""
    from utp_env.simulation.engine import Rollouts
    from utp_env.simulation.robustness import HIST_MINUTES, build_report

    compiled, _ = compile_for(two_day_plan(), None, tiny_db, CONFIG)
    rng = np.random.default_rng(4)
    n, steps = 999, compiled.n_steps
    late = np.where(rng.random((n, steps)) < 0.2, rng.uniform(0, 3 * HIST_MINUTES, (n, steps)), 0.0)
    start = compiled.start + late
    r = Rollouts(start, np.maximum(start, compiled.end), np.zeros((n, steps), bool), np.zeros((n, steps), bool))
    report = build_report(compiled, r, 0, 30.0, block=100)
    for j in range(steps):
        want = np.quantile(np.rint(late[:, j]), [0.5, 0.95])
        got = report.steps[j].start_lateness
        assert (got.p50, got.p95) == pytest.approx(tuple(want), rel=1e-12)


def test_chunked_rollouts_equal_one_chunk(tiny_db: Database) -> None:
    """n spanning several blocks, summarised block by block, equals the same draws summarised at once."""
    from utp_env.simulation import draw_block_delays, simulate_compiled
    from utp_env.simulation.robustness import build_report

    plan = two_day_plan(fort_end="16:30")
    compiled, _ = compile_for(plan, None, tiny_db, CONFIG)
    n, block = 3500, 1000  # three full blocks and a short one
    chunked = simulate_compiled(compiled, CONFIG, n, seed=5, block=block)
    delays = draw_block_delays(compiled, 5, n, block)
    assert delays.shape == (n, compiled.delays.k)
    once = build_report(compiled, run(compiled, delays), 5, CONFIG.simulation.late_tolerance_min, block=block)
    assert chunked.model_dump_json() == once.model_dump_json()
    # the blocks draw different numbers: block 0 is default_rng(seed), the others its spawned children
    assert not np.array_equal(delays[:1000], delays[1000:2000])
    np.testing.assert_array_equal(delays[:1000], draw_delays(compiled, np.random.default_rng(5), 1000))
    # whole blocks are shared by runs of different n (a short last block draws its own numbers)
    np.testing.assert_array_equal(draw_block_delays(compiled, 5, 5000, block)[:3000], delays[:3000])
    # and statistics agree with plain numpy over all rollouts
    rollouts = run(compiled, delays)
    held = chunked.hold_rate * n
    assert held == pytest.approx(round(held)) and chunked.n == n
    late = rollouts.start - compiled.start
    for j, step in enumerate(chunked.steps):
        assert step.start_lateness.mean == pytest.approx(late[:, j].mean(), rel=1e-12, abs=1e-12)
        assert step.start_lateness.p95 == pytest.approx(np.quantile(np.rint(late[:, j]), 0.95), rel=1e-12)
    # within one block the report is that of simulate() with the same seed
    assert simulate(plan, None, tiny_db, n=900, seed=5, config=CONFIG).model_dump_json() == \
        simulate_compiled(compiled, CONFIG, 900, seed=5, block=1000).model_dump_json()


@pytest.mark.parametrize("n", [0, -3, 100_000_001, 10**12])
def test_rollout_bound_is_a_clear_error(tiny_db: Database, n: int) -> None:
    from utp_env.simulation import MAX_ROLLOUTS

    with pytest.raises(ValueError, match=r"rollouts.*(>= 1|<= 100,000,000)"):
        simulate(two_day_plan(), None, tiny_db, n=n, config=CONFIG)
    assert MAX_ROLLOUTS == 100_000_000


def test_run_config_rollouts_share_the_bound() -> None:
    from pydantic import ValidationError

    from utp_env.runs.config import RunConfig
    from utp_env.simulation import MAX_ROLLOUTS

    assert RunConfig(rollouts=MAX_ROLLOUTS).rollouts == MAX_ROLLOUTS
    assert RunConfig(rollouts=0).rollouts == 0  # 0 disables the simulation
    with pytest.raises(ValidationError, match="less than or equal to 100000000"):
        RunConfig(rollouts=MAX_ROLLOUTS + 1)


def test_simulate_reuses_the_shipped_config(tiny_db: Database) -> None:
    """Without a config, simulate() uses configs/uncertainty.yaml, loaded once and cached."""
    from utp_env.config import load_uncertainty

    assert load_uncertainty() is load_uncertainty()
    a = simulate(two_day_plan(), None, tiny_db, n=300, seed=1)
    b = simulate(two_day_plan(), None, tiny_db, n=300, seed=1, config=load_uncertainty())
    assert a == b
