"""Property: on random plans of valid shape, `evaluate` never raises and every metric is in [0, 1] or None."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp_env.evaluation import EvaluationReport, evaluate
from utp_env.evaluation.aggregate import summarize
from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg
from utp_env.query import LocalConstraint, Persona, Query
from utp_env.tools.database import Database
from utp_env.tools.schema import ATTRACTION_CATEGORIES, CUISINES, EVENT_SEGMENTS, HOUSE_TYPES

ACTIVITIES = ["stay", "visit", "check-in", "checkout", "arrive", "travel", "rest", "event"]
VENUE_TYPES = [None, "accommodation", "attraction", "restaurant", "event", "transit", "transport"]
TIME = st.one_of(st.none(), st.integers(min_value=0, max_value=3 * 1440))


def names(db: Database) -> list[str]:
    """Real venue names, bare and in the paper's `Name, City` form (spread over the table)."""
    out = []
    for table in ("attractions", "restaurants", "accommodations", "events"):
        cols = db.tables[table].columns
        step = max(1, db.tables[table].n // 30)
        out += [n for n in cols["name"][::step]]
        out += [f"{n}, {c}" for n, c in zip(cols["name"][::step], cols["city"][::step], strict=True)]
    return out


@st.composite
def plans_and_queries(draw: st.DrawFn, db: Database) -> tuple[Plan, Query]:
    cities = list(db.tables["cities"].columns["city"])
    venue = st.one_of(st.sampled_from(names(db)), st.text(max_size=12))
    city = st.one_of(st.sampled_from(cities), st.text(min_size=1, max_size=8))
    n_days = draw(st.integers(min_value=0, max_value=7))
    days = []
    for i in range(n_days):
        day_cities = draw(st.lists(city, min_size=1, max_size=2))
        legs = []
        for _ in range(draw(st.integers(min_value=0, max_value=2))):
            dep = draw(st.integers(min_value=0, max_value=1439))
            arr = dep + draw(st.integers(min_value=0, max_value=2000))
            legs.append(TransportLeg(
                mode=draw(st.sampled_from(["flight", "train", "bus", "cab"])),
                number=draw(st.one_of(st.none(), st.sampled_from(["6E-101", "12901", "X"]),
                                      st.sampled_from(list(db.tables["flights"].columns["flight_number"][:20])))),
                origin=draw(city), destination=draw(city), dep=dep, arr=arr,
                planned_arr=draw(st.one_of(st.none(), st.integers(min_value=0, max_value=4000)))))
        items = [PlanItem(name=draw(venue), activity=draw(st.sampled_from(ACTIVITIES)), start=draw(TIME),
                          end=draw(TIME), venue_type=draw(st.sampled_from(VENUE_TYPES)),
                          meal=draw(st.sampled_from([None, "breakfast", "lunch", "dinner"])),
                          transit_distance_m=draw(st.one_of(st.none(), st.floats(0, 1e6))))
                 for _ in range(draw(st.integers(min_value=0, max_value=8)))]
        days.append(Day(day=i + 1, date=draw(st.sampled_from([None, "2025-11-24", "not a date"])), cities=day_cities,
                        transport=legs, items=items, breakfast=draw(st.one_of(st.none(), venue)),
                        lunch=draw(st.one_of(st.none(), venue)), dinner=draw(st.one_of(st.none(), venue)),
                        attractions=draw(st.lists(venue, max_size=2)), events=draw(st.lists(venue, max_size=1)),
                        accommodation=draw(st.one_of(st.none(), st.just("-"), venue))))
    horizon = draw(st.sampled_from([3, 5, 7]))
    constraint = LocalConstraint(
        house_rule=draw(st.sampled_from([None, "pets", "smoking", "No children", "Safety Conduct"])),
        house_type=draw(st.sampled_from([None, *HOUSE_TYPES])),
        amenities=draw(st.lists(st.sampled_from(["Free WiFi", "Wellness Spa"]), max_size=1)),
        cuisine=draw(st.lists(st.sampled_from(CUISINES), max_size=2)),
        transportation=draw(st.sampled_from([None, "no flight", "no cab"])),
        event_types=draw(st.lists(st.sampled_from(EVENT_SEGMENTS), max_size=1)),
        attraction_categories=draw(st.lists(st.sampled_from(list(ATTRACTION_CATEGORIES)), max_size=1)))
    query = Query(query_id="h", org=draw(st.sampled_from(cities)), dest=draw(st.sampled_from(cities)),
                  visiting_city_number=draw(st.integers(1, 3)), days=horizon,
                  dates=[f"2025-11-{24 + i}" for i in range(horizon)], people_number=draw(st.integers(1, 8)),
                  budget_inr=draw(st.floats(1, 1e6)), level="easy",
                  persona=Persona(traveler_type=draw(st.sampled_from(["Adventure Seeker", "Laidback Traveler", "x"])),
                                  purpose=draw(st.sampled_from(["Relaxation", "Adventure", ""])),
                                  spending=draw(st.sampled_from(["Luxury Traveler", "Economical Traveler"])),
                                  location_preference=draw(st.sampled_from(["Historical Sites", "Beaches", ""]))),
                  risk_profile=draw(st.sampled_from(["tolerant", "optimized", "averse"])),
                  local_constraint=constraint, text="t")
    return Plan(days=days), query


def check_report(report: EvaluationReport) -> None:
    EvaluationReport.model_validate(report.model_dump())     # the constructed report obeys its schema
    for name, value in report.metrics().items():
        assert value is None or (0.0 <= value <= 1.0 and not math.isnan(value)), (name, value)
    for check in [*report.commonsense.values(), *report.hard.values()]:
        assert check.passed in (True, False, None)
        assert check.passed is not False or check.reason
    for poi in report.pois:
        assert poi.q >= 0 and poi.range_low <= poi.range_high
        assert poi.crowd_score is None or 0 <= poi.crowd_score <= 1
    assert all(leg.q >= 0 for leg in report.legs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_plans_never_raise_and_stay_in_range(mini_db: Database, data: st.DataObject) -> None:
    plan, query = data.draw(plans_and_queries(mini_db))
    report = evaluate(plan, query, mini_db, reference=data.draw(st.sampled_from([None, plan])))
    check_report(report)
    summary = summarize([(query, report), (query, None)])
    for group in summary.groups.values():
        rates = [group.delivery_rate, group.commonsense_micro, group.commonsense_macro, group.hard_micro,
                 group.hard_macro, group.final_pass_rate]
        assert all(r is None or 0 <= r <= 1 for r in rates)
    assert summary.to_text() and summary.to_markdown()
