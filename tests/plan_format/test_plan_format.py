"""The paper's JSON day format <-> Plan: the paper's own plans, LLM variants, errors, round trips.

Every expected number below was read off the plan text by hand (minutes = 60·h + m, +1440 for
times past midnight).
"""

from __future__ import annotations

import contextlib
import csv
import json
from pathlib import Path

import pytest

from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg
from utp_env.plan_format import PlanFormatError, format_plan, parse_plan, plan_to_json
from utp_env.query import Persona, Query
from utp_env.tools.database import Database
from utp_env.tools.schema import TABLES

PAPER = Path(__file__).resolve().parents[1] / "support" / "data" / "paper_plans"
PAPER_FILES = sorted(PAPER.glob("*.json"))


def paper(name: str) -> Plan:
    return parse_plan(json.loads((PAPER / f"{name}.json").read_text(encoding="utf-8"))["plan"])


def item(day: Day, name: str, nth: int = 0) -> PlanItem:
    return [i for i in day.items if i.name == name][nth]


# ---------------------------------------------------------------- the paper's plans


def test_paper_files_are_present_with_query_text() -> None:
    assert {p.stem for p in PAPER_FILES} == {
        "c2_uncertainty_7day", "c4_without_uncertainty_7day", "fig4_good_bas", "fig5_good_tdas",
        "fig6_missing_times", "fig7_missing_buffers", "fig8_excessive_buffer", "fig9_overlap"}
    for path in PAPER_FILES:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["query"].startswith("Plan a"), path.name
        assert parse_plan(data["plan"]).days, path.name


def test_c2_seven_day_example() -> None:
    plan = paper("c2_uncertainty_7day")
    assert [d.day for d in plan.days] == [1, 2, 3, 4, 5, 6, 7]
    assert [d.cities for d in plan.days] == [["Bhopal", "Kanpur"], ["Kanpur"], ["Kanpur", "Surat"], ["Surat"],
                                              ["Surat", "Pune"], ["Pune"], ["Pune", "Bhopal"]]
    assert plan.days[0].transport == [TransportLeg(mode="train", number="12191", origin="Bhopal",
                                                   destination="Kanpur", dep=390, arr=915, planned_arr=915)]
    d4 = plan.days[3]
    assert d4.breakfast == "Taste Of India Restaurant, Surat"
    assert d4.attractions == ["ISKCON Temple, Surat"]
    assert d4.events == []
    stay = d4.items[-1]  # "stay from 22:15 to 07:00"
    assert (stay.activity, stay.start, stay.end, stay.venue_type) == ("stay", 1335, 1860, "accommodation")
    assert (stay.transit_stop, stay.transit_distance_m) == ("Surat Railway Station", 4000.0)
    assert [(i.meal, i.venue_type) for i in d4.items[1:5]] == [
        ("breakfast", "restaurant"), (None, "attraction"), ("lunch", "restaurant"), ("dinner", "restaurant")]
    d7 = plan.days[6]
    assert d7.accommodation is None and d7.lunch is None
    assert item(d7, "Kumar Pacific Mall").meal == "breakfast"
    assert (item(d7, "Pune Airport").activity, item(d7, "Pune Airport").venue_type) == ("arrive", "transit")
    flight = item(d7, "Flight 6E-5432")
    assert (flight.activity, flight.venue_type, flight.start, flight.end) == ("travel", "transport", 660, 750)
    assert flight.transit_stop is None and flight.transit_distance_m is None
    assert item(plan.days[1], "Brahmavart Ghat").transit_distance_m == 200.0


def test_c4_is_the_c2_trip_in_the_other_wrapping() -> None:
    """C.4 wraps the same plan as {"plan": [...]}, with `day` and `point_of_interest_list`; it
    differs from C.2 only in two transit distances (11km and 6km)."""
    c2, c4 = paper("c2_uncertainty_7day"), paper("c4_without_uncertainty_7day")
    assert item(c4.days[0], "Hotel Bhagyaraj Palace").transit_distance_m == 11000.0
    assert item(c4.days[1], "Dadi ki rasoi").transit_distance_m == 6000.0
    item(c4.days[0], "Hotel Bhagyaraj Palace").transit_distance_m = 3000.0
    item(c4.days[1], "Dadi ki rasoi").transit_distance_m = 1500.0
    assert c4 == c2


def test_fig4_rest_block_and_remarks() -> None:
    (day,) = paper("fig4_good_bas").days
    assert day.day == 2 and day.events == []
    park = item(day, "Nana Rao Smarak Park")
    assert (park.start, park.end, park.venue_type) == (670, 820, "attraction")
    assert park.note == "150 min, generous buffer within Risk Averse range"
    rest = item(day, "The Landmark Towers", 1)
    assert (rest.activity, rest.start, rest.end, rest.venue_type) == ("rest", 945, 1130, "accommodation")
    assert (day.items[-1].start, day.items[-1].end) == (1240, 1890)  # 20:40 -> 07:30 next day
    assert item(day, "Dadi ki Rasoi").meal == "lunch"


def test_fig5_free_train_line_gives_planned_arrival_next_day() -> None:
    (day,) = paper("fig5_good_tdas").days
    (leg,) = day.transport
    assert (leg.mode, leg.number, leg.origin, leg.destination) == ("train", "19711", "Jaipur", "Bhopal")
    assert (leg.dep, leg.planned_arr, leg.arr) == (1105, 1845, 1845)  # 18:25 -> 06:45 (+1 day)
    board = day.items[-1]
    assert (board.name, board.activity, board.venue_type, board.start, board.end) == (
        "Train 19711", "travel", "transport", 1090, 1105)
    assert board.note == "+1 day, avg_delay_1month of 4 min incorporated"
    assert day.breakfast is None and item(day, "Monarch Restaurant").venue_type is None
    assert item(day, "Govindam Retreat").meal == "lunch"
    assert item(day, "Jaipur Railway Station").note == "45 min predeparture buffer absorbing delay"


def test_fig6_unfilled_times_are_none() -> None:
    (day,) = paper("fig6_missing_times").days
    park = item(day, "Lumbini Park")
    assert (park.start, park.end, park.venue_type) == (None, None, "attraction")
    assert (park.transit_stop, park.transit_distance_m) == ("Secretariat Bus Stop", 154.0)
    assert (item(day, "Hyderabad Airport").start, item(day, "Hyderabad Airport").end) == (700, 730)
    assert item(day, "Hyderabad Airport").transit_stop is None
    assert day.transport[0].number == "IX-2819" and day.transport[0].planned_arr == 895
    assert item(day, "Flight IX-2819").note == "added 40 min buffer for possible delay"
    assert item(day, "The Park Hyderabad").transit_distance_m == 113.0


def test_fig7_and_fig8_transit_variants() -> None:
    (d7,) = paper("fig7_missing_buffers").days
    assert (item(d7, "Pakka Local").transit_stop, item(d7, "Pakka Local").transit_distance_m) == ("Kacheguda", 317.0)
    assert item(d7, "Exotica Banjara Hills- North Indian Rooftop Restaurant").meal == "dinner"
    assert d7.transport[0].dep == 295 and d7.transport[0].planned_arr == 375
    (d8,) = paper("fig8_excessive_buffer").days
    museum = item(d8, "Maharaja Fatesingh Museum")
    assert (museum.start, museum.end) == (630, 990)
    assert (museum.transit_stop, museum.transit_distance_m) == ("Vishvamitri Jn. (NG)", 1369.0)
    assert museum.note == "includes 2-hour buffer for Above Average crowd"
    assert d8.items[0].transit_stop == "Vadodara ’C’ Cabin"


def test_fig9_overlap_is_kept_for_the_evaluator() -> None:
    (day,) = paper("fig9_overlap").days
    sagar, haveli = item(day, "Maharana Pratap Sagar"), item(day, "Haveli Restaurant")
    assert (sagar.start, sagar.end, haveli.start, haveli.end) == (660, 870, 840, 920)
    assert sagar.transit_stop is None and haveli.transit_stop is None  # "nearest transit: -,"


# ---------------------------------------------------------------- wrappings LLMs produce

DAY = {"days": 1, "current_city": "Pune", "transportation": "-", "breakfast": "-", "attraction": "-",
       "lunch": "-", "dinner": "-", "accommodation": "Conrad Pune, Pune", "event": "-",
       "point_of_interest_list": "Conrad Pune, stay from 22:15 to 08:00."}


@pytest.mark.parametrize("wrap", [
    lambda d: json.dumps([d]),
    lambda d: "```json\n" + json.dumps([d], indent=2) + "\n```",
    lambda d: "Here is your plan:\n" + json.dumps({"plan": [d]}) + "\nEnjoy the trip!",
    lambda d: json.dumps(d),  # JSONL of one object
    lambda d: json.dumps({"days": [d]}),
    lambda d: json.dumps({"plan": json.dumps([d])}),
    lambda d: json.dumps([d])[:-1] + ",]",  # trailing comma
    lambda d: [d],
    lambda d: {"plan": [d]},
    lambda d: d,
    lambda d: json.dumps([d]).encode(),
])
def test_accepted_wrappings(wrap) -> None:
    plan = parse_plan(wrap(DAY))
    assert len(plan.days) == 1 and plan.days[0].items[0].end == 1920


def test_jsonl_with_several_days_and_prose() -> None:
    text = "Plan:\n" + json.dumps(DAY) + "\n" + json.dumps({**DAY, "days": 2}) + "\nDone."
    assert [d.day for d in parse_plan(text).days] == [1, 2]


def test_key_variants_and_day_strings() -> None:
    raw = {"Day": "Day 3", "Current City": "from Pune to Nagpur to Bhopal", "Transportation": "-",
           "point_of_interest": "A, visit from 9:40 to 10:30;"}
    (day,) = parse_plan([raw]).days
    assert (day.day, day.cities, day.items[0].start) == (3, ["Pune", "Nagpur", "Bhopal"], 580)


def test_query_gives_dates_and_id() -> None:
    query = Query(query_id="q1", org="Bhopal", dest="Pune", visiting_city_number=1, days=3,
                  dates=["2025-11-06", "2025-11-07", "2025-11-08"], people_number=1, budget_inr=1000,
                  level="easy", persona=Persona(traveler_type="t", purpose="p", spending="s",
                                                location_preference="l"),
                  risk_profile="averse", text="Plan a trip")
    plan = parse_plan([{**DAY, "days": 2}], query=query)
    assert plan.query_id == "q1" and plan.days[0].date == "2025-11-07"


# ---------------------------------------------------------------- transportation entries


def legs(text: str) -> list[TransportLeg]:
    return parse_plan([{**DAY, "transportation": text}]).days[0].transport


def test_transport_variants() -> None:
    assert legs("Cab from Pune to Mumbai, Departure Time: 9:05, Arrival Time: 13:10") == [
        TransportLeg(mode="cab", number=None, origin="Pune", destination="Mumbai", dep=545, arr=790,
                     planned_arr=790)]
    (bus,) = legs("Bus: VRL Travels SL-22, from Pune to Goa, Departure Time: 21:30, Arrival Time: 07:15")
    assert (bus.number, bus.dep, bus.arr) == ("VRL Travels SL-22", 1290, 1875)  # earlier -> next day
    (taxi,) = legs("Taxi, Pune to Mumbai, Dep: 10:00, Arr: 13:00")
    assert taxi.mode == "cab"
    (flight,) = legs("Flight 6E 284, from Pune to Indore, Departure: 05:15, Arrival: 07:40 (scheduled 07:10)")
    assert (flight.number, flight.arr, flight.planned_arr) == ("6E-284", 430, 460)
    (train,) = legs("Train Number: 12627, from Bangalore to Delhi, Departure Time: 20:00, "
                    "Arrival Time: 07:00 (+2 days) (scheduled 06:20 +2 day)")
    assert (train.arr, train.planned_arr) == (380 + 2880, 420 + 2880)
    (early,) = legs("(scheduled 07:10) Flight 6E-1, from A to B, Dep: 06:00, Arr: 07:30")
    assert (early.arr, early.planned_arr) == (430, 450)
    two = legs("Flight Number: AI-1, from A to B, Departure Time: 06:00, Arrival Time: 08:00; "
               "Cab, from B to C, Departure Time: 09:00, Arrival Time: 11:30;")
    assert [(leg.mode, leg.origin, leg.destination) for leg in two] == [("flight", "A", "B"), ("cab", "B", "C")]


@pytest.mark.parametrize("text, why", [
    ("Rocket 1, from A to B, Departure Time: 06:00, Arrival Time: 08:00", "no recognisable mode"),
    ("Flight Number: AI-1, Departure Time: 06:00, Arrival Time: 08:00", "no route"),
    ("Flight Number: AI-1, from A to B, Arrival Time: 08:00", "no Departure Time"),
    ("Flight Number: AI-1, from A to B, Departure Time: 25:99, Arrival Time: 08:00", "not a valid clock time"),
])
def test_transport_errors_say_where_and_why(text: str, why: str) -> None:
    with pytest.raises(PlanFormatError, match=why) as err:
        legs(text)
    assert err.value.day == 1 and err.value.field == "transportation"
    assert "day 1, field 'transportation'" in str(err.value) and text[:20] in str(err.value)


# ---------------------------------------------------------------- point-of-interest entries


def items(text: str, **fields: str) -> list[PlanItem]:
    return parse_plan([{**DAY, **fields, "point_of_interest_list": text}]).days[0].items


def test_poi_variants() -> None:
    a, b, c = items("A, visit from 10:00-11:00, nearest transit: X, 300 m away; "
                    "B, visit from 1:15 pm to 2:05 PM, nearest transit: Y; "
                    "C, visit from 1:00 to 1:30 (quick) , nearest transit: Z, 1.5 km")
    assert (a.start, a.end, a.transit_stop, a.transit_distance_m) == (600, 660, "X", 300.0)
    assert (b.start, b.end, b.transit_stop, b.transit_distance_m) == (795, 845, "Y", None)
    # 01:00 is more than 12 h before 14:05, so it is past midnight
    assert (c.start, c.end, c.note, c.transit_distance_m) == (1500, 1530, "quick", 1500.0)
    (nameless_times,) = items("Lumbini Park, visit, nearest transit: S, 0.2km away")
    assert (nameless_times.start, nameless_times.end, nameless_times.activity) == (None, None, "visit")
    (empty,) = items("Lumbini Park, visit ()")
    assert (empty.start, empty.end, empty.note) == (None, None, None)
    (named,) = items("Lumbini Park, nearest transit: S, 0.2km away (closed Mondays)")
    assert (named.name, named.activity, named.transit_stop, named.transit_distance_m, named.note) == (
        "Lumbini Park", "visit", "S", 200.0, "closed Mondays")
    (bare,) = items("Conrad Pune")
    assert (bare.activity, bare.venue_type) == ("stay", "accommodation")


def test_past_midnight_rule() -> None:
    late = items("Dinner Place, visit from 23:00 to 00:30; Conrad Pune, stay from 00:45 to 07:00")
    assert [(i.start, i.end) for i in late] == [(1380, 1470), (1485, 1860)]


def test_meals_match_exact_names_in_order() -> None:
    got = items("Cafe Coffee Day, visit from 09:00 to 09:30; Cafe, visit from 09:40 to 10:30; "
                "Cafe, visit from 20:00 to 21:00", breakfast="Cafe, Pune", dinner="cafe,  Pune")
    assert [(i.meal, i.venue_type) for i in got] == [(None, None), ("breakfast", "restaurant"),
                                                     ("dinner", "restaurant")]
    (event,) = items("Sunburn, visit from 18:00 to 22:00", event="Sunburn, Pune")
    assert event.venue_type == "event"


def test_items_written_name_city_match_the_summary_fields() -> None:
    """Reference plans (and many models) write items as `Name, City`, like the summary fields: the
    item still gets its meal and venue type (it used to match nothing: `meal` stayed None)."""
    got = items("Cafe, Pune, visit from 09:00 to 09:30; Shaniwar Wada, Pune, visit from 10:00 to 11:00; "
                "Sunburn, Pune, visit from 18:00 to 22:00; Conrad, Pune, stay from 23:00 to 07:00",
                breakfast="Cafe, Pune", attraction="Shaniwar Wada, Pune;", event="Sunburn, Pune",
                accommodation="Conrad, Pune")
    assert [(i.name, i.meal, i.venue_type) for i in got] == [
        ("Cafe, Pune", "breakfast", "restaurant"), ("Shaniwar Wada, Pune", None, "attraction"),
        ("Sunburn, Pune", None, "event"), ("Conrad, Pune", None, "accommodation")]
    (bare,) = items("Conrad, Pune", accommodation="Conrad, Pune")
    assert (bare.activity, bare.venue_type) == ("stay", "accommodation")


@pytest.mark.parametrize("data, field, why", [
    ("no plan here", None, "no JSON object or array"),
    ("[1, 2]", None, "expected a day object"),
    ('{"foo": 1}', None, "no plan found"),
    ([{"days": 1, "transportation": "-"}], "current_city", "missing current_city"),
    ([{**DAY, "current_city": "from Pune"}], "current_city", "from A to B"),
    ([{**DAY, "point_of_interest_list": "A, visit from 25:99 to 10:00"}], "point_of_interest_list", "25:99"),
    ([{**DAY, "point_of_interest_list": "A, visit at 10:00"}], "point_of_interest_list", "from HH:MM to HH:MM"),
    ([{**DAY, "point_of_interest_list": ", visit from 09:00 to 10:00"}], "point_of_interest_list", "without a name"),
    ([DAY, DAY], "days", "repeated"),
    ([{**DAY, "days": 0}], "days", "positive integer"),
    ([{**DAY, "breakfast": 3}], "breakfast", "expected text"),
])
def test_errors(data, field, why) -> None:
    with pytest.raises(PlanFormatError, match=why) as err:
        parse_plan(data)
    assert err.value.field == field


# ---------------------------------------------------------------- writing and round trips


def hand_plan() -> Plan:
    leg = TransportLeg(mode="train", number="19711", origin="Jaipur", destination="Bhopal", dep=1105, arr=1841,
                       planned_arr=1845)
    return Plan(days=[
        Day(day=1, cities=["Bhopal", "Jaipur"],
            transport=[TransportLeg(mode="flight", number="6E-284", origin="Bhopal", destination="Jaipur",
                                    dep=315, arr=430, planned_arr=470)],
            lunch="Govindam Retreat, Jaipur", attractions=["Amber Fort, Jaipur", "Hawa Mahal, Jaipur"],
            accommodation="Trident Jaipur, Jaipur", events=["Jaipur Lit Fest, Jaipur"],
            items=[PlanItem(name="Bhopal Airport", activity="arrive", start=240, end=270, venue_type="transit"),
                   PlanItem(name="Flight 6E-284", activity="travel", start=315, end=470, venue_type="transport",
                            note="40 min buffer"),
                   PlanItem(name="Amber Fort", activity="visit", start=540, end=None, venue_type="attraction",
                            transit_stop="Amer", transit_distance_m=113.0),
                   PlanItem(name="Govindam Retreat", activity="visit", start=None, end=None,
                            venue_type="restaurant", meal="lunch", transit_distance_m=2500.0),
                   PlanItem(name="Jaipur Lit Fest", activity="visit", start=1080, end=1200, venue_type="event"),
                   PlanItem(name="Trident Jaipur", activity="stay", start=1335, end=1860,
                            venue_type="accommodation", transit_stop="Jaipur Junction")]),
        Day(day=2, cities=["Jaipur", "Bhopal"], transport=[leg],
            items=[PlanItem(name="Train 19711", activity="travel", start=1090, end=1105, venue_type="transport")]),
    ])


def test_format_plan_writes_the_paper_format() -> None:
    days = format_plan(hand_plan())
    assert list(days[0]) == ["days", "current_city", "transportation", "breakfast", "attraction", "lunch",
                             "dinner", "accommodation", "event", "point_of_interest_list"]
    assert days[0]["current_city"] == "from Bhopal to Jaipur"
    assert days[0]["transportation"] == ("Flight Number: 6E-284, from Bhopal to Jaipur, Departure Time: 05:15, "
                                         "Arrival Time: 07:50 (scheduled 07:10)")
    assert days[1]["transportation"] == ("Train Number: 19711, from Jaipur to Bhopal, Departure Time: 18:25, "
                                         "Arrival Time: 06:45 (+1 day) (scheduled 06:41 +1 day)")
    assert days[0]["breakfast"] == "-" and days[1]["accommodation"] == "-"
    assert days[0]["attraction"] == "Amber Fort, Jaipur; Hawa Mahal, Jaipur"
    poi = days[0]["point_of_interest_list"]
    assert poi.startswith("Bhopal Airport, arrive from 04:00 to 04:30; Flight 6E-284, travel from 05:15 to "
                          "07:50 (40 min buffer); Amber Fort, visit from 09:00 to (), nearest transit: Amer, "
                          "0.113km away; Govindam Retreat, visit from () to (), nearest transit: -, 2.5km away;")
    assert poi.endswith("Trident Jaipur, stay from 22:15 to 07:00, nearest transit: Jaipur Junction.")
    assert json.loads(plan_to_json(hand_plan())) == days


def test_round_trip_hand_built_and_paper_plans() -> None:
    plan = hand_plan()
    assert parse_plan(format_plan(plan)) == plan
    assert parse_plan(plan_to_json(plan)) == plan
    for path in PAPER_FILES:
        parsed = parse_plan(json.loads(path.read_text(encoding="utf-8"))["plan"])
        assert parse_plan(format_plan(parsed)) == parsed, path.name


# ---------------------------------------------------------------- with a database


def _write_db(path: Path) -> Database:
    """A three-city database: one flight with a schedule, one restaurant, one attraction."""
    rows: dict[str, list[dict]] = {name: [] for name in TABLES}
    for city, lat in (("Pune", 18.5), ("Indore", 22.7), ("Bhopal", 23.2)):
        rows["cities"].append({"city": city, "state": "S", "latitude": lat, "longitude": 75.0,
                               "population": 1000, "has_crowd_data": "false"})
    rows["flights"].append({"flight_number": "6E-284", "airline": "IndiGo", "origin_city": "Pune",
                            "dest_city": "Indore", "origin_airport": "PNQ", "dest_airport": "IDR",
                            "dep_time": "05:15", "arr_time": "07:10", "arr_day_offset": 0, "duration_min": 115,
                            "run_days": "1111111", "price_inr": 4000})
    common = {"city": "Indore", "latitude": 22.7, "longitude": 75.8, "rating": 4.0, "open_time": "08:00",
              "close_time": "22:00"}
    rows["restaurants"].append({**common, "name": "Sarafa Bazaar", "cuisines": '["Indian Subcontinent"]',
                                "price_tier": "$", "avg_cost_inr": 300})
    rows["attractions"].append({**common, "name": "Rajwada Palace", "categories": '["Museums"]',
                                "visit_duration_hr": 3.0, "entry_fee_inr": 50, "open_days": "1111111"})
    for name, spec in TABLES.items():
        with (path / f"{name}.csv").open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(spec.model.model_fields))
            writer.writeheader()
            writer.writerows(rows[name])
    empty = [name for name in TABLES if not rows[name]]  # a table with no rows must be declared
    (path / "manifest.json").write_text(json.dumps({"empty_tables": empty}), encoding="utf-8")
    return Database.open(path)


def test_database_gives_schedule_canonical_cities_and_venue_types(tmp_path: Path) -> None:
    db = _write_db(tmp_path)
    raw = [{"days": 1, "current_city": "from pune to INDORE",
            "transportation": "Flight Number: 6E-284, from pune to indore, Departure Time: 05:15, "
                              "Arrival Time: 07:50",
            "point_of_interest_list": "Rajwada Palace, visit from 09:00 to 12:00; Sarafa Bazaar, visit from "
                                      "20:00 to 21:00; Unknown Spot, visit from 21:10 to 21:20"}]
    (day,) = parse_plan(raw, db=db).days
    assert day.cities == ["Pune", "Indore"]
    (leg,) = day.transport
    assert (leg.origin, leg.destination, leg.dep, leg.arr, leg.planned_arr) == ("Pune", "Indore", 315, 430, 470)
    assert [i.venue_type for i in day.items] == ["attraction", "restaurant", None]
    assert parse_plan(raw).days[0].transport[0].arr == 470  # without the database: the stated arrival


# ---------------------------------------------------------------- adversarial input is parsed or rejected
# How fast (linear in the length) is measured by benchmarks/plan_format.py, not asserted here.

_K = 20_000
_S = " " * _K


def _one_day(**fields: str) -> str:
    return json.dumps([{"days": 1, "current_city": "P", **fields}])


@pytest.mark.parametrize("text", [
    _one_day(point_of_interest_list=", , ," * (_K // 5) + "stay from 10:00"),  # took 157 s before the fix
    _one_day(point_of_interest_list="a" + _S + "stay" + _S + "from" + _S + "x"),
    _one_day(point_of_interest_list="Board" + _S + "x" + _S + "y"),  # took 29 s before the fix
    _one_day(point_of_interest_list="a " + "?" * _K),
    _one_day(point_of_interest_list="a, visit " + "1" * _K),
    _one_day(point_of_interest_list="a, visit from 10:00 to 11:00, nearest transit: s, " + "1" * _K),
    _one_day(point_of_interest_list="a, visit from " * (_K // 14)),
    _one_day(current_city="from a" + _S + "to" + _S),
    _one_day(transportation="Flight, from A to B, Departure" + _S + "x"),
    _one_day(transportation="Flight, a to" + _S),
    "```" * _K,
    "{a} [b] " * _K,
    # Shapes of the fast paths (poi._CANONICAL_ENTRY_RE, legs._CANONICAL_LEG_RE); the first was quadratic
    # before the entry's name stopped at its first `, <activity> `.
    _one_day(point_of_interest_list=", ".join(["a, visit from 10:00 to 10:00, nearest transit: s"] * (_K // 50))),
    _one_day(point_of_interest_list="a" + ", a" * (_K // 3) + ", visit from 10:00 to 10:0"),
    _one_day(point_of_interest_list="a, visit from 10:00 to 11:00, nearest transit: s" + ", 1" * (_K // 3) + "x"),
    _one_day(transportation="Flight Number: " + "6" * _K + ", from A to B, Departure Time: 05:00, Arrival Time: 06:0"),
    _one_day(transportation="Bus: X, from A" + " to A" * (_K // 5) + ", Departure Time: 05:00, Arrival Time: 06:00"),
], ids=range(17))
def test_adversarial_text_is_parsed_or_rejected_cleanly(text: str) -> None:
    with contextlib.suppress(PlanFormatError):
        plan = parse_plan(text)
        assert isinstance(plan, Plan)


@pytest.mark.parametrize(("word", "activity"), [("vısit", "visit"), ("reſt", "rest"), ("chec\u212aout", "checkout"),
                                                ("CHECK-IN", "check-in")])
def test_activity_words_with_letters_the_grammar_folds_read_as_that_activity(word: str, activity: str) -> None:
    """The grammar matches activity words ignoring case, which also equates the dotless ı, the long ſ
    and the Kelvin sign with i, s and k; such a word is that activity (it used to fail as 'cannot read
    the plan')."""
    entry = f"Hawa Mahal, {word} from 10:00 to 11:00, nearest transit: X, 100m away"
    text = json.dumps([{"days": 1, "current_city": "Jaipur", "point_of_interest_list": entry}])
    assert parse_plan(text).days[0].items[0].activity == activity
