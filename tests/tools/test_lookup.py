"""The lookup tools on a tiny hand-made database whose expected answers are computed by hand,
plus every tool on the generated `mini` sandbox (hits, misses, bad arguments)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tiny_tables import tiny_tables, write_database

from utp_env.tools.database import Database
from utp_env.tools.lookup import LOOKUP, LOOKUP_TOOLS, ToolResult

# ---------------------------------------------------------------- a tiny database, by hand


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Database:
    return Database.open(write_database(tmp_path_factory.mktemp("tiny"), tiny_tables()))


def call(db: Database, tool: str, **args: Any) -> ToolResult:
    return LOOKUP.invoke(db, tool, args)


def numbers(result: ToolResult, column: str) -> list[str]:
    return [r[column] for r in result.rows]


# ---------------------------------------------------------------- hits, by hand


def test_flights_filter_by_weekday_and_show_expected_delay(db: Database) -> None:
    monday = call(db, "search_flights", origin="pune", destination=" Indore ", date="2025-11-17")
    assert monday.ok and numbers(monday, "flight_number") == ["6E-284", "AI-101"]
    assert "| 11.6" in monday.text.splitlines()[2]  # 6E-284 measured
    assert "7.3*" in monday.text and "median" in monday.text  # AI-101 falls back to the median
    thursday = call(db, "search_flights", origin="Pune", destination="Indore", date="2025-11-20")
    assert numbers(thursday, "flight_number") == ["6E-284"]
    by_price = call(db, "search_flights", origin="Pune", destination="Indore", date="2025-11-17", sort_by="price")
    assert numbers(by_price, "flight_number") == ["AI-101", "6E-284"]


def test_structured_rows_equal_database_rows(db: Database) -> None:
    result = call(db, "search_trains", origin="Pune", destination="Indore", date="2025-11-22")
    table = db.tables["trains"]
    # sorted by departure: 11111 at 07:00, then 12191 at 18:25
    assert result.rows == [table.row(table.find(n, "Pune", "Indore")) for n in ("11111", "12191")]
    assert "37.5" in result.text and "06:45 +1 day" in result.text  # the +N day grammar of utp_env.tools.clock
    stays = call(db, "search_stays", city="Pune")
    acc = db.tables["accommodations"]
    assert stays.rows == [acc.row(acc.find("Pune", n)) for n in ("Hotel Sunshine", "Koregaon Suites", "Conrad Pune")]


def test_results_are_capped_with_a_note(db: Database) -> None:
    result = call(db, "search_flights", origin="Pune", destination="Mumbai", date="2025-11-20")
    assert len(result.rows) == 20 and result.truncated == 5
    assert "… 5 more rows; " in result.text and "25 found, showing 20" in result.text
    assert len(result.text.splitlines()) == 2 + 20 + 1 + 1  # heading, header, rows, cut note, median note
    small = call(db, "search_flights", origin="Pune", destination="Mumbai", date="2025-11-20", limit=3)
    assert numbers(small, "flight_number") == ["6E-1000", "6E-1001", "6E-1002"] and small.truncated == 22
    full = call(db, "search_flights", origin="Pune", destination="Mumbai", date="2025-11-20", limit=100)
    assert len(full.rows) == 25 and full.truncated == 0 and "more rows" not in full.text


def test_buses_and_cab(db: Database) -> None:
    buses = call(db, "search_buses", origin="Pune", destination="Mumbai", date="2025-11-20", sort_by="price")
    assert numbers(buses, "bus_id") == ["B1", "B0"] and "| 40.0" in buses.text
    cab = call(db, "cab_route", origin="Pune", destination="Mumbai")
    assert cab.ok and cab.rows[0]["free_flow_min"] == 180.0 and cab.rows[0]["cab_fare_inr"] == 3600.0
    none = call(db, "cab_route", origin="Pune", destination="Indore")
    assert none.ok and none.rows == [] and "no cab is available" in none.text.lower()


def test_stay_filters(db: Database) -> None:
    def names(**kw: Any) -> list[str]:
        return numbers(call(db, "search_stays", city="Pune", **kw), "name")

    assert names(allows=["pets"]) == ["Hotel Sunshine", "Koregaon Suites"]
    assert names(allows=["pets", "smoking"]) == ["Koregaon Suites"]
    assert names(amenities=["wellness spa"], sort_by="rating") == ["Conrad Pune", "Koregaon Suites"]
    assert names(services=["Laundry"], max_price_per_night=5000) == ["Hotel Sunshine"]
    assert names(min_occupancy=3) == ["Hotel Sunshine"]
    assert names(house_type="luxury boutique") == ["Conrad Pune"]
    assert names(min_rating=4.5) == ["Conrad Pune"]
    empty = call(db, "search_stays", city="Pune", max_price_per_night=100)
    assert empty.ok and empty.rows == [] and "no results" in empty.text and "Relax" in empty.text


def test_venue_and_event_searches(db: Database) -> None:
    assert numbers(call(db, "search_attractions", city="Pune"), "name") == ["Aga Khan Palace", "Shaniwar Wada"]
    sights = call(db, "search_attractions", city="Pune", category="Sights & Landmarks")
    assert numbers(sights, "name") == ["Shaniwar Wada"] and "| yes" in sights.text
    assert numbers(call(db, "search_restaurants", city="Pune", cuisine="Asian"), "name") == ["Malaka Spice"]
    assert numbers(call(db, "search_restaurants", city="Pune", sort_by="cost"), "name") == ["Vaishali", "Malaka Spice"]
    assert numbers(call(db, "search_restaurants", city="Pune", price_tier="$"), "name") == ["Vaishali"]
    events = call(db, "search_events", city="Pune", start_date="2025-11-01", end_date="2025-12-31")
    assert numbers(events, "name") == ["Pune Comedy Night", "Sawai Gandharva"]
    music = call(db, "search_events", city="Pune", start_date="2025-11-01", end_date="2025-12-31", segment="Music")
    assert numbers(music, "name") == ["Sawai Gandharva"]
    assert call(db, "search_events", city="Mumbai", start_date="2025-11-01", end_date="2025-11-02").rows == []


def test_geography(db: Database) -> None:
    cities = call(db, "list_cities", state="maharashtra")
    assert numbers(cities, "city") == ["Mumbai", "Pune", "Nagpur"]  # most populous first
    d = call(db, "distance", origin="Pune", destination="Bhopal")
    assert d.rows[0]["distance_km"] == 600.0 and "600" in d.text


def test_crowd_profile_and_transit(db: Database) -> None:
    crowd = call(db, "crowd_profile", city="Pune", venue="shaniwar  wada")
    assert crowd.ok and crowd.rows == [db.tables["crowd"].row(0)]
    assert "11:00-16:59 | H | High" in crowd.text and "peak window: 12:00-15:59" in crowd.text
    assert "quiet hours: 08:00, 09:00" in crowd.text
    no_data = call(db, "crowd_profile", city="Pune", venue="Aga Khan Palace")
    assert no_data.ok and "no crowd data" in no_data.text
    transit = call(db, "nearest_transit", city="Pune", venue="Shaniwar Wada")
    assert transit.rows[0]["stop_name"] == "Mandai" and "0.45" in transit.text
    assert "no transit stop" in call(db, "nearest_transit", city="Pune", venue="Vaishali").text.lower()


def test_delay_stats(db: Database) -> None:
    f = call(db, "delay_stats", mode="flight", origin="Pune", destination="Indore", number="6e-284")
    assert f.rows[0]["expected_delay_min"] == pytest.approx(11.6) and f.rows[0]["measured"]
    assert f.rows[0]["otp_total"] == 100
    ai = call(db, "delay_stats", mode="flight", origin="Pune", destination="Indore", number="AI-101")
    assert ai.rows[0]["expected_delay_min"] == pytest.approx(7.3) and not ai.rows[0]["measured"]
    assert "median" in ai.text
    both = call(db, "delay_stats", mode="train", origin="Pune", destination="Indore")
    assert [r["expected_delay_min"] for r in both.rows] == [37.5, 37.5]
    assert [r["measured"] for r in both.rows] == [True, False]
    bus = call(db, "delay_stats", mode="bus", origin="Mumbai", destination="Pune")
    assert bus.rows[0]["expected_delay_min"] == 60.0 and bus.rows[0]["measured"]
    cab = call(db, "delay_stats", mode="cab", origin="Pune", destination="Indore")
    assert cab.rows[0]["expected_delay_min"] == 50.0 and not cab.rows[0]["measured"]


# ---------------------------------------------------------------- misses and bad arguments

MISSES = [
    ("search_flights", dict(origin="Pnue", destination="Indore", date="2025-11-20"), "origin", "Pune"),
    ("search_trains", dict(origin="Pune", destination="Indor", date="2025-11-20"), "destination", "Indore"),
    ("search_buses", dict(origin="Pune", destination="Pune", date="2025-11-20"), "destination", "different"),
    ("cab_route", dict(origin="Mumbay", destination="Pune"), "origin", "Mumbai"),
    ("distance", dict(origin="Pune", destination="Bhopl"), "destination", "Bhopal"),
    ("list_cities", dict(state="Maharastra"), "state", "Maharashtra"),
    ("search_stays", dict(city="Pune", amenities=["Wellness Spaa"]), "amenities", "Wellness Spa"),
    ("search_stays", dict(city="Pune", services=["Laundri"]), "services", "Laundry"),
    ("search_attractions", dict(city="Nagpr"), "city", "Nagpur"),
    ("search_restaurants", dict(city="Indoor"), "city", "Indore"),
    ("search_events", dict(city="Pune", start_date="2025-11-20", end_date="2025-11-01"), "end_date", "swap"),
    ("crowd_profile", dict(city="Pune", venue="Shaniwar Vada"), "venue", "Shaniwar Wada"),
    ("nearest_transit", dict(city="Pune", venue="Conrad"), "venue", "Conrad Pune"),
    ("delay_stats", dict(mode="flight", origin="Pune", destination="Indore", number="6E-248"), "number", "6E-284"),
    ("delay_stats", dict(mode="train", origin="Pune", destination="Indore", number="12911"), "number", "12191"),
]


@pytest.mark.parametrize(("tool", "args", "argument", "hint"), MISSES, ids=[f"{m[0]}-{m[2]}" for m in MISSES])
def test_unknown_names_get_suggestions(db: Database, tool: str, args: dict, argument: str, hint: str) -> None:
    result = call(db, tool, **args)
    assert not result.ok and result.error and result.rows == []
    assert f"argument '{argument}'" in result.error and hint in result.error
    assert result.text.startswith("Error: ")


NO_SERVICE = [("search_flights", "Pune", "Bhopal", "No flights"), ("search_trains", "Mumbai", "Pune", "No trains"),
              ("search_buses", "Indore", "Pune", "No buses"),
              ("search_trains", "Nagpur", "Bhopal", "none runs on a Wed")]


@pytest.mark.parametrize(("tool", "origin", "dest", "says"), NO_SERVICE)
def test_no_service_on_a_pair_says_so(db: Database, tool: str, origin: str, dest: str, says: str) -> None:
    result = call(db, tool, origin=origin, destination=dest, date="2025-11-19")
    assert result.ok and result.rows == [] and "no results" in result.text and says in result.text


BAD_ARGS = [
    ("search_flights", dict(origin="Pune", destination="Indore", date="20-11-2025"), "date", "pattern"),
    ("search_flights", dict(origin="Pune", destination="Indore", date="2025-02-30"), "date", "real calendar"),
    ("search_trains", dict(origin="Pune", date="2025-11-20"), "destination", "missing required"),
    ("search_buses", dict(origin="Pune", destination="Mumbai", date="2027-01-04"), "date", "outside the dates"),
    ("search_buses", dict(origin=5, destination="Pune", date="2025-11-20"), "origin", "string"),
    ("search_flights", dict(origin="Pune", destination="Indore", date="2025-11-20", limit=500), "limit", "100"),
    ("search_flights", dict(origin="Pune", destination="Indore", date="2025-11-20", limit=0), "limit", "1"),
    ("search_flights", dict(origin="Pune", destination="Indore", date="2025-11-20", sort_by="cheap"), "sort_by",
     "price"),
    ("search_stays", dict(city="Pune", allows="pets"), "allows", "list"),
    ("search_stays", dict(city="Pune", allows=["dogs"]), "allows.0", "pets"),
    ("search_stays", dict(city="Pune", min_rating=7), "min_rating", "5"),
    ("search_attractions", dict(city="Pune", category="Temples"), "category", "Museums"),
    ("search_restaurants", dict(city="Pune", price_tier="cheap"), "price_tier", "$$"),
    ("search_events", dict(city="Pune", start_date="2025-11-01"), "end_date", "missing required"),
    ("search_events", dict(city="Pune", start_date="2025-01-01", end_date="2025-12-31"), "end_date", "62"),
    ("delay_stats", dict(mode="plane", origin="Pune", destination="Indore"), "mode", "flight"),
    ("cab_route", dict(origin="Pune", destination="Mumbai", date="2025-11-20"), "date", "unknown argument"),
    ("list_cities", dict(), "state", "missing required"),
    ("crowd_profile", dict(city="Pune", venue=""), "venue", "at least 1"),
]


@pytest.mark.parametrize(("tool", "args", "argument", "says"), BAD_ARGS, ids=[f"{b[0]}-{b[2]}" for b in BAD_ARGS])
def test_bad_arguments_name_the_argument(db: Database, tool: str, args: dict, argument: str, says: str) -> None:
    result = call(db, tool, **args)
    assert not result.ok and result.error is not None
    assert f"'{argument}'" in result.error and says in result.error, result.error


def test_arguments_as_json_string_and_unknown_tool(db: Database) -> None:
    spec = LOOKUP_TOOLS["search_flights"]
    text = json.dumps(dict(origin="Pune", destination="Indore", date="2025-11-17"))
    assert spec.invoke(db, text).rows == call(db, "search_flights", origin="Pune", destination="Indore",
                                              date="2025-11-17").rows
    broken = spec.invoke(db, '{"origin": "Pune", ')
    assert not broken.ok and "not valid JSON" in broken.error
    assert "JSON object" in spec.invoke(db, "[1, 2]").error
    unknown = LOOKUP.invoke(db, "search_flight", {})
    assert not unknown.ok and "search_flights" in unknown.error


# ---------------------------------------------------------------- the generated mini sandbox


def _some(mini_db: Database, table: str) -> dict[str, Any]:
    t = mini_db.tables[table]
    return t.row(t.n // 2)


def test_every_tool_hits_on_the_mini_sandbox(mini_db: Database) -> None:
    """One real query per tool, built from rows of the generated sandbox; each returns that row."""
    f = _some(mini_db, "flights")
    weekday = f["run_days"].index("1")
    date = f"2025-11-{17 + weekday}"  # 2025-11-17 is a Monday
    got = call(mini_db, "search_flights", origin=f["origin_city"], destination=f["dest_city"], date=date, limit=100)
    assert got.ok and f in got.rows
    tr = _some(mini_db, "trains")
    date = f"2025-11-{17 + tr['run_days'].index('1')}"
    got = call(mini_db, "search_trains", origin=tr["origin_city"], destination=tr["dest_city"], date=date, limit=100)
    assert tr in got.rows
    b = _some(mini_db, "buses")
    date = f"2025-11-{17 + b['run_days'].index('1')}"
    assert b in call(mini_db, "search_buses", origin=b["origin_city"], destination=b["dest_city"], date=date,
                     limit=100).rows
    r = _some(mini_db, "road_routes")
    cab = call(mini_db, "cab_route", origin=r["origin_city"], destination=r["dest_city"])
    assert cab.rows[0]["historical_delay_min"] == r["historical_delay_min"]
    s = _some(mini_db, "accommodations")
    assert s in call(mini_db, "search_stays", city=s["city"], limit=100).rows
    a = _some(mini_db, "attractions")
    assert a in call(mini_db, "search_attractions", city=a["city"], category=a["categories"][0], limit=100).rows
    rs = _some(mini_db, "restaurants")
    assert rs in call(mini_db, "search_restaurants", city=rs["city"], cuisine=rs["cuisines"][0], limit=100).rows
    e = _some(mini_db, "events")
    assert e in call(mini_db, "search_events", city=e["city"], start_date=e["date"], end_date=e["date"],
                     limit=100).rows
    c = _some(mini_db, "crowd")
    crowd = call(mini_db, "crowd_profile", city=c["city"], venue=c["venue_name"], venue_type=c["venue_type"])
    assert crowd.rows == [c]
    listing = call(mini_db, f"search_{c['venue_type']}s", city=c["city"], limit=100)
    line = next(x for x in listing.text.splitlines() if x.startswith(c["venue_name"] + " | "))
    assert line.endswith("| yes")
    ts = _some(mini_db, "transit_stops")
    assert call(mini_db, "nearest_transit", city=ts["city"], venue=ts["poi_name"]).rows[0]["stop_name"] == ts[
        "stop_name"]
    ds = call(mini_db, "delay_stats", mode="flight", origin=f["origin_city"], destination=f["dest_city"],
              number=f["flight_number"])
    assert ds.rows[0]["number"] == f["flight_number"]
    state = mini_db.state_of(f["origin_city"])
    assert f["origin_city"] in numbers(call(mini_db, "list_cities", state=state, limit=100), "city")
    assert call(mini_db, "distance", origin=f["origin_city"], destination=f["dest_city"]).rows


def test_column_wise_rows_equal_cell_wise_rows(db: Database, mini_db: Database) -> None:
    """`Table.rows` (column-wise, what the tools return) equals `Table.row` cell by cell, types included."""
    for database in (db, mini_db):
        for name, table in database.tables.items():
            idx = list(range(0, table.n, max(1, table.n // 25)))[:25]
            fast, slow = table.rows(idx), [table.row(i) for i in idx]
            assert fast == slow, name
            assert [[type(v) for v in r.values()] for r in fast] == [[type(v) for v in r.values()] for r in slow]
    assert db.tables["flights"].rows([]) == []


def test_mini_sandbox_calendar_is_enforced(mini_db: Database) -> None:
    f = mini_db.tables["flights"].row(0)
    late = call(mini_db, "search_flights", origin=f["origin_city"], destination=f["dest_city"], date="2031-01-06")
    assert not late.ok and "outside the dates the database covers" in late.error


@pytest.mark.slow
def test_full_sandbox_lookups_match_pandas_scans() -> None:
    """On the full sandbox the indexed tools return exactly the rows of pandas boolean-mask scans
    (how much faster is measured by benchmarks/lookup.py, target >= 100x, not asserted here)."""
    import importlib.util
    import sys

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "lookup.py"
    spec = importlib.util.spec_from_file_location("lookup_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses of the script look their module up
    spec.loader.exec_module(module)
    summary = module.run("full", n=120, seed=1, repeat=2)
    assert summary["mismatches"] == 0


def test_tool_schemas_are_shared_and_immutable(mini_db_path) -> None:
    """One schema object per tool, reused by every reset; changing it raises, copies are plain."""
    import copy
    import pickle

    from utp_env.env.core import UTPEnv
    from utp_env.tools.lookup import LOOKUP_TOOLS
    from utp_env.tools.toolkit import FrozenDict, thaw

    spec = LOOKUP_TOOLS["search_flights"]
    schema = spec.openai_schema()
    assert schema is spec.openai_schema() and isinstance(schema, FrozenDict)
    with pytest.raises(TypeError, match="immutable"):
        schema["function"]["name"] = "x"
    with pytest.raises(TypeError, match="immutable"):
        schema["function"]["parameters"]["required"].append("x")
    with pytest.raises(TypeError, match="immutable"):
        schema.update(type="other")
    plain = copy.deepcopy(schema)
    assert plain == schema and type(plain) is dict and type(plain["function"]["parameters"]) is dict
    plain["function"]["name"] = "changed"  # a copy is mutable and leaves the shared schema alone
    assert schema["function"]["name"] == "search_flights"
    assert thaw(schema) == schema and json.loads(json.dumps(schema)) == schema
    assert pickle.loads(pickle.dumps(schema)) == schema

    env = UTPEnv(db_path=mini_db_path)
    _, first = env.reset(seed=0)
    _, second = env.reset(seed=1)
    assert all(a is b for a, b in zip(first["tools"], second["tools"], strict=True))
    assert first["tools"] is not second["tools"]


def test_row_memo_gives_the_same_answers_and_fresh_rows(mini_db: Database) -> None:
    """Lines rendered on first display and reused: same text and rows cold or warm; rows are copies."""
    from utp_env.tools.lookup.render import row_memo

    city = mini_db.cities[0]
    flights = mini_db.tables["flights"].columns
    pair = {"origin": flights["origin_city"][0], "destination": flights["dest_city"][0], "date": "2025-11-20",
            "limit": 100}
    calls = [("search_flights", pair), ("search_flights", {**pair, "sort_by": "price", "limit": 3}),
             ("search_stays", {"city": city}), ("search_attractions", {"city": city}),
             ("search_restaurants", {"city": city, "sort_by": "cost"})]
    memo = row_memo(mini_db)
    memo.clear()
    cold = [LOOKUP.invoke(mini_db, name, args) for name, args in calls]
    warm = [LOOKUP.invoke(mini_db, name, args) for name, args in calls]
    for (name, _), a, b in zip(calls, cold, warm, strict=True):
        assert a.ok and a.rows and a.text == b.text and a.rows == b.rows, name
        assert len(a.text.splitlines()) >= 2 + len(a.rows)
    first = LOOKUP.invoke(mini_db, "search_stays", {"city": city})
    first.rows[0]["name"] = "changed by the caller"
    assert LOOKUP.invoke(mini_db, "search_stays", {"city": city}).rows[0]["name"] != "changed by the caller"


def test_row_memo_is_bounded(mini_db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    from utp_env.tools.lookup.render import RowMemo, row_memo

    monkeypatch.setattr(RowMemo, "MAX_ROWS", 3)
    row_memo(mini_db).clear()
    city = mini_db.cities[0]
    want = LOOKUP.invoke(mini_db, "search_attractions", {"city": city, "limit": 2})
    again = [LOOKUP.invoke(mini_db, "search_attractions", {"city": city, "limit": n}) for n in (1, 3, 2)]
    assert len(want.rows) == 2 and again[2].text == want.text and again[2].rows == want.rows
    assert all(len(cache) <= 3 for cache in row_memo(mini_db)._lines.values())
