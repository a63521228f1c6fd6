"""BAS, CATS and TDAS: formulas and whole plans, every expected number computed by hand."""

from __future__ import annotations

import json

import pytest
from tiny_world import PAPER, build_tiny_db, good_plan, item, make_query

from utp_env.config import RiskRange, UncertaintyConfig
from utp_env.evaluation import evaluate
from utp_env.evaluation import uncertainty as un
from utp_env.evaluation.context import CrowdProfile, window_hours
from utp_env.itinerary import Day, Plan, TransportLeg
from utp_env.tools.database import Database

CONFIG = UncertaintyConfig()
INTENSITY = CONFIG.crowd_intensity


@pytest.fixture(scope="module")
def tiny_db(tmp_path_factory: pytest.TempPathFactory) -> Database:
    return build_tiny_db(tmp_path_factory.mktemp("tiny_uncertainty_db"))


def profile(windows: list[tuple[int, int, str]], quiet: list[int] = (), peak: tuple[int, int] | None = None
            ) -> CrowdProfile:
    return CrowdProfile(tuple((window_hours(s, e), lv) for s, e, lv in windows), frozenset(quiet),
                        window_hours(*peak) if peak else frozenset())


# --- shared pieces -----------------------------------------------------------------------------


def test_deviation_and_score() -> None:
    assert un.deviation(80, 62.5, 100) == 0
    assert un.deviation(50, 62.5, 100) == pytest.approx(12.5 / 37.5)   # below: |50-62.5| / 37.5
    assert un.deviation(130, 62.5, 100) == pytest.approx(30 / 37.5)    # above: |130-100| / 37.5
    assert un.deviation(10, 0, 0) == 10                                 # width max(0, 1) = 1
    assert un.deviation(0, 0, 0) == 0
    assert un.absorption_score([0, 0.5, 3]) == pytest.approx(0.5)       # 1 - (0 + 0.5 + 1)/3
    assert un.absorption_score([]) is None


def test_window_hours_wrap() -> None:
    assert window_hours(22, 1) == {22, 23, 0, 1}
    assert window_hours(11, 16) == {11, 12, 13, 14, 15, 16}
    assert un.hour_in(0, 16, 5) and un.hour_in(16, 16, 5) and not un.hour_in(6, 16, 5)


def test_hour_minutes_across_midnight() -> None:
    minutes = un.hour_minutes(23 * 60 + 30, 24 * 60 + 30)  # 23:30 -> 00:30 next day
    assert minutes[23] == 30 and minutes[0] == 30 and sum(minutes) == 60
    long = un.hour_minutes(600, 600 + 2 * 1440 + 30)  # two whole days and 30 minutes
    assert long[10] == 150 and long[9] == 120 and sum(long) == 2 * 1440 + 30


# --- BAS -----------------------------------------------------------------------------------------


def test_restaurant_base_minutes_by_start_hour() -> None:
    meals = CONFIG.restaurant_meals
    assert un.restaurant_base_minutes(10 * 60 + 59, meals) == 50    # breakfast 06:00-10:59
    assert un.restaurant_base_minutes(11 * 60, meals) == 60         # lunch 11:00-15:59
    assert un.restaurant_base_minutes(16 * 60, meals) == 75         # dinner 16:00-05:59
    assert un.restaurant_base_minutes(24 * 60 + 30, meals) == 75    # 00:30 the next day: dinner


def test_congestion_factor_from_start_hour() -> None:
    p = profile([(9, 9, "L"), (10, 11, "BA"), (12, 15, "AA")])
    assert un.congestion(p, 10 * 60 + 30, CONFIG.congestion_factor) == (1.25, "BA")
    assert un.congestion(p, 8 * 60, CONFIG.congestion_factor) == (1.0, None)   # no window holds 08
    assert un.congestion(None, 600, CONFIG.congestion_factor) == (1.0, None)   # no crowd data
    assert un.bas_range(60, 1.5, RiskRange(low=0.5, high=1.0)) == (45, 90)


def test_bas_whole_plan(tiny_db: Database) -> None:
    report = evaluate(good_plan(), make_query(risk="tolerant"), tiny_db)
    pois = {p.name: p for p in report.pois}
    museum = pois["Maharaja Fatesingh Museum"]   # 09:00-13:00, v 180, hour 9 in [9,9] L: Cf 1
    assert (museum.v, museum.cf, museum.tier, museum.buffer) == (180, 1.0, "L", 60)
    assert (museum.range_low, museum.range_high) == (90, 180)
    assert museum.q == pytest.approx(30 / 90)
    lunch = pois["22nd Parallel"]                # 13:30-14:40 lunch v 60, hour 13 in [11,14] A: Cf 1.5
    assert (lunch.v, lunch.cf, lunch.buffer, lunch.range_low, lunch.range_high) == (60, 1.5, 10, 45, 90)
    assert lunch.q == pytest.approx(35 / 45)
    dinner = pois["Le Prive World Cuisine & Pizzeria"]  # 19:00-20:30 dinner v 75, [18,19] A: Cf 1.5
    assert dinner.q == pytest.approx(41.25 / 56.25)     # B 15 below [56.25, 112.5]
    garden = pois["Sayaji Garden"]               # no crowd data: Cf 1; B 120 below [135, 270]
    assert (garden.cf, garden.tier, garden.crowd_score) == (1.0, None, None)
    assert garden.q == pytest.approx(15 / 135)
    assert pois["Candle Light Date N Dinner & Rooftop Restaurant"].q == 1.0  # B 0, [37.5, 75]: 37.5/37.5
    assert "Garba Night" not in pois             # events are not BAS visits
    # BAS = 1 - (1/3 + 7/9 + 11/15 + 1/9 + 1)/5 = 1 - 133/225 = 92/225
    assert report.bas == pytest.approx(92 / 225)


def test_fig8_buffer_inside_range_and_excessive_buffer_lowers_bas(tiny_db: Database) -> None:
    from utp_env.plan_format import parse_plan
    data = json.loads((PAPER / "fig8_excessive_buffer.json").read_text(encoding="utf-8"))
    plan = parse_plan(data["plan"])
    report = evaluate(plan, make_query(risk="tolerant"), tiny_db)
    museum = next(p for p in report.pois if p.name == "Maharaja Fatesingh Museum")
    # 10:30-16:30 = 360 min, v = 180, hour 10 in [10,11] BA: Cf 1.25, range [112.5, 225]: B 180 inside.
    # (The paper calls this buffer excessive, but under its own formula it is inside every profile's range.)
    assert (museum.v, museum.cf, museum.tier, museum.buffer, museum.q) == (180, 1.25, "BA", 180, 0)
    # breakfast 09:20-10:10 (B 0 vs [31.25, 62.5]), dinner at 16:50 (B -25 vs [37.5, 75]),
    # dinner 20:00-21:15 in H (B 0 vs [75, 150]): Q = 1 each; BAS = 1 - 3/4
    assert report.bas == pytest.approx(0.25)
    inflated = plan.model_copy(deep=True)
    visit = next(i for i in inflated.days[0].items if i.name == "Maharaja Fatesingh Museum")
    visit.end = 19 * 60 + 30                      # 9 h: B 360, Q = (360 - 225)/112.5 = 1.2 -> 1
    worse = evaluate(inflated, make_query(risk="tolerant"), tiny_db)
    assert next(p for p in worse.pois if p.name == "Maharaja Fatesingh Museum").q == pytest.approx(1.2)
    assert worse.bas == pytest.approx(0.0)
    assert worse.bas < report.bas


# --- CATS ----------------------------------------------------------------------------------------


def test_cats_full_profile_with_quiet_bonus() -> None:
    p = profile([(9, 9, "L"), (10, 11, "BA"), (12, 15, "AA"), (16, 17, "A")], quiet=[9], peak=(13, 15))
    score, intensity = un.crowd_timing_score(p, 9 * 60, 13 * 60, INTENSITY)
    # I = (60*0 + 120*0.25 + 60*0.75)/240 = 0.3125; quiet 60/240; no peak minutes
    assert intensity == pytest.approx(0.3125)
    assert score == pytest.approx(1 - 0.3125 + 0.25 * 0.6875)    # 0.859375


def test_cats_wrapping_window_crossing_midnight_with_peak_only() -> None:
    p = profile([(18, 19, "A"), (20, 21, "H"), (22, 1, "AA")], peak=(20, 21))
    score, intensity = un.crowd_timing_score(p, 21 * 60 + 30, 24 * 60 + 30, INTENSITY)
    # hours 21:30 (H), 22, 23, 0:30 (AA, the window wraps): I = (30*1 + 150*0.75)/180
    i = (30 + 112.5) / 180
    assert intensity == pytest.approx(i)
    assert score == pytest.approx(1 - i - (30 / 180) * i)         # peak 30/180, no quiet hours


def test_cats_no_quiet_no_peak_and_quiet_only() -> None:
    cw_only = profile([(8, 10, "BA"), (11, 14, "A")])
    assert un.crowd_timing_score(cw_only, 13 * 60 + 30, 14 * 60 + 40, INTENSITY)[0] == pytest.approx(0.5)
    quiet_only = profile([(7, 9, "L"), (10, 12, "A")], quiet=[7, 8])
    # 08:45-10:45: 15 min in 8 (L, quiet), 60 in 9 (L), 45 in 10 (A): I = 22.5/120, quiet 15/120
    i = 22.5 / 120
    assert un.crowd_timing_score(quiet_only, 8 * 60 + 45, 10 * 60 + 45, INTENSITY)[0] == pytest.approx(
        1 - i + 0.125 * (1 - i))
    # 08:30-09:30 is all low and half quiet: 1 + 0.5 -> clipped to 1
    assert un.crowd_timing_score(quiet_only, 8 * 60 + 30, 9 * 60 + 30, INTENSITY)[0] == 1.0
    assert un.crowd_timing_score(quiet_only, 600, 600, INTENSITY) is None     # zero-length: skipped
    # outside every window: intensity 0, score 1
    assert un.crowd_timing_score(quiet_only, 14 * 60, 15 * 60, INTENSITY) == (1.0, 0.0)


def test_cats_whole_plan_skips_venues_without_crowd_data(tiny_db: Database) -> None:
    report = evaluate(good_plan(), make_query(), tiny_db)
    # museum 0.859375; lunch 0.5; dinner 19:00-20:30: I = (60*0.5 + 30*1)/90 = 2/3, peak 30/90:
    # 1 - 2/3 - (1/3)(2/3) = 1/9. Sayaji Garden and Candle Light have no crowd rows: skipped.
    assert report.cats == pytest.approx((0.859375 + 0.5 + 1 / 9) / 3)
    assert sum(p.crowd_score is not None for p in report.pois) == 3


# --- TDAS ----------------------------------------------------------------------------------------


def test_tdas_flights_measured_and_median_fallback(tiny_db: Database) -> None:
    report = evaluate(good_plan(), make_query(risk="tolerant"), tiny_db)
    first, back = report.legs
    # 6E-101: E[D] = 20/100*(30+10) + 2/100*200 = 12; B = (460-360) - 90 = 10 in [6, 12]
    assert (first.expected_delay, first.measured, first.buffer, first.q) == (12, True, 10, 0)
    # 6E-102 has no statistics: E[D] = median(12, 3) = 7.5; B = 98 - 90 = 8 vs [3.75, 7.5]
    assert (back.expected_delay, back.measured, back.buffer) == (7.5, False, 8)
    assert back.q == pytest.approx(0.5 / 3.75)
    assert report.tdas == pytest.approx(1 - (0.5 / 3.75) / 2)


def _legs_plan(legs: list[TransportLeg]) -> Plan:
    return Plan(days=[Day(day=i + 1, cities=[leg.origin, leg.destination], transport=[leg])
                      for i, leg in enumerate(legs)])


def test_tdas_train_bus_cab_unknown_and_zero_expected_delay(tiny_db: Database) -> None:
    legs = [
        # train E[D] = 350/16 = 21.875; B = 150 - 120 = 30 in averse [27.34375, 43.75]
        TransportLeg(mode="train", number="12901", origin="Vadodara", destination="Surat", dep=480, arr=600,
                     planned_arr=630),
        # bus: hist = the bus's scheduled 180 (slower than the road's free flow 150), E[D] = road delay 30;
        # planned 210: B = 210 - 180 = 30 vs [37.5, 60]: Q = 7.5/22.5
        TransportLeg(mode="bus", number="GSRTC-1", origin="Vadodara", destination="Surat", dep=840, arr=1020,
                     planned_arr=1050),
        # cab Surat->Vadodara: E[D] = 0 (measured), range [0, 0]; B = 170 - 160 = 10: Q = 10/max(0, 1) -> 1
        TransportLeg(mode="cab", origin="Surat", destination="Vadodara", dep=600, arr=770),
        # overnight train without statistics: E[D] = train median 21.875; B = (1560 - 1380) - 150 = 30: inside
        TransportLeg(mode="train", number="12903", origin="Surat", destination="Vadodara", dep=1380, arr=1530,
                     planned_arr=1560),
        # unknown flight: hist = stated 90, E[D] = flight median 7.5; B = 0 vs [9.375, 15]: Q = 9.375/5.625
        TransportLeg(mode="flight", number="6E-999", origin="Pune", destination="Vadodara", dep=360, arr=450),
    ]
    report = evaluate(_legs_plan(legs), make_query(risk="averse"), tiny_db)
    train, bus, cab, night, unknown = report.legs
    assert (train.expected_delay, train.q) == (21.875, 0)
    assert (bus.hist_duration, bus.expected_delay, bus.buffer) == (180, 30, 30)
    assert bus.q == pytest.approx(7.5 / 22.5)
    assert (cab.expected_delay, cab.measured, cab.range_low, cab.range_high, cab.q) == (0, True, 0, 0, 10)
    assert (night.measured, night.expected_delay, night.buffer, night.q) == (False, 21.875, 30, 0)
    assert (unknown.found, unknown.hist_source, unknown.hist_duration) == (False, "stated schedule", 90)
    assert unknown.q == pytest.approx(9.375 / 5.625)
    # TDAS = 1 - (0 + 1/3 + 1 + 0 + 1)/5
    assert report.tdas == pytest.approx(1 - (1 / 3 + 2) / 5)


def test_one_day_plan_and_no_legs(tiny_db: Database) -> None:
    day = Day(day=1, cities=["Vadodara"], items=[item("Sayaji Garden", "visit", "09:00", "16:00")])
    report = evaluate(Plan(days=[day]), make_query(risk="optimized"), tiny_db)
    # v 270, Cf 1, B 150 vs optimized [270, 337.5]: Q = 120/67.5 -> 1; BAS 0; no crowd, no legs
    assert report.pois[0].q == pytest.approx(120 / 67.5)
    assert report.bas == 0
    assert report.cats is None and report.tdas is None


def test_unknown_attractions_are_skipped_and_untimed_visits_lose_the_most(tiny_db: Database) -> None:
    """An unknown attraction has no v: BAS skips it. A known one without times has no readable buffer:
    it counts Q = 1 (`UNTIMED_Q`), so deleting a visit's times never raises BAS."""
    unknown = Day(day=1, cities=["Vadodara"], items=[item("Nowhere Fort", "visit", "10:00", "11:00")])
    report = evaluate(Plan(days=[unknown]), make_query(), tiny_db)
    assert report.pois == [] and report.bas is None
    day = Day(day=1, cities=["Vadodara"], items=[item("Sayaji Garden", "visit", None, None),
                                                  item("Nowhere Fort", "visit", "10:00", "11:00")])
    report = evaluate(Plan(days=[day]), make_query(), tiny_db)
    assert report.pois == [] and report.bas == 0.0


def test_deleting_times_never_raises_bas_or_cats(tiny_db: Database) -> None:
    """The degenerate move a table invites: drop the times of the worst-buffered visit. BAS and CATS
    count the untimed visit as lost (Q = 1, crowd score 0), so the plan scores lower, never higher."""
    good = item("Sayaji Garden", "visit", "08:00", "15:00")  # v 270, B 150: inside the tolerant [135, 270], Q = 0
    bad = item("Sayaji Garden", "visit", "15:30", "16:30")  # far too short for its v: Q = 1
    timed = evaluate(Plan(days=[Day(day=1, cities=["Vadodara"], items=[good, bad])]), make_query(), tiny_db)
    untimed = evaluate(Plan(days=[Day(day=1, cities=["Vadodara"], items=[good, item("Sayaji Garden", "visit", None,
                                                                                    None)])]), make_query(), tiny_db)
    assert timed.pois[0].q == 0.0 and timed.pois[1].q >= 1.0 and timed.bas == 0.5
    assert untimed.bas == timed.bas  # (left out of the mean, the untimed visit would have given BAS 1)
    if timed.cats is not None:
        assert untimed.cats is not None and untimed.cats <= timed.cats


def test_a_visit_of_no_length_at_a_crowded_venue_scores_0_in_cats(mini_db: Database) -> None:
    """The other way to leave a visit out of CATS: end it when it starts (`crowd_timing_score` has nothing to
    score). It counts 0, as an untimed one does, so it cannot raise the plan's CATS."""
    from utp_env.dataset import dataset_of

    ds = dataset_of(mini_db)
    raised = 0
    for query in ds.queries[:20]:
        plan = ds.references[query.query_id]
        report = evaluate(plan, query, mini_db)
        crowded = [(p.crowd_score, d, i) for d, day in enumerate(plan.days) for i, item in enumerate(day.items)
                   for p in report.pois if p.day == d + 1 and p.name == item.name and p.start == item.start
                   and p.crowd_score is not None]
        if not crowded:
            continue
        _, d, i = min(crowded)
        days = [day.model_copy(deep=True) for day in plan.days]
        days[d].items[i] = days[d].items[i].model_copy(update={"end": days[d].items[i].start})
        cut = evaluate(plan.model_copy(update={"days": days}), query, mini_db)
        assert report.cats is not None and cut.cats is not None and cut.cats <= report.cats
        raised += 1
    assert raised >= 5  # enough plans had a crowded visit to try


def test_a_summary_spelling_the_timed_restaurant_otherwise_costs_nothing(mini_db: Database) -> None:
    """A lunch field naming the timed lunch's restaurant another way is a venue the database does not know,
    only a summary names: it is not counted as a second, untimed meal (`untimed_scored_visits`)."""
    from utp_env.dataset import dataset_of

    ds = dataset_of(mini_db)
    tried = 0
    for query in ds.queries[:10]:
        plan = ds.references[query.query_id]
        report = evaluate(plan, query, mini_db)
        days = [day.model_copy(deep=True) for day in plan.days]
        for day in days:
            if day.lunch:
                day.lunch = day.lunch.replace(",", " (") + ")"  # `Name, City` -> `Name ( City)`
                tried += 1
        respelled = evaluate(plan.model_copy(update={"days": days}), query, mini_db)
        assert respelled.bas == report.bas and respelled.cats == report.cats
    assert tried >= 5
