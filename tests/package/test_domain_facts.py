"""Each domain fact is defined once and every layer agrees on it.

The venue kind <-> table map and the service mode <-> table map (tools/schema.py), the
scheduled arrival and the weekday of a run_days bit (tools/schema.py, tools/clock.py), the
`+N day` time grammar (tools/clock.py), the absent markers (utp_env/plan_format/text.py), the
`current_city` rule (utp_env/itinerary.py) and the one venue search (utp_env/resolve.py).
"""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from utp_env.env.itinerary_tools import clock as tool_clock
from utp_env.env.itinerary_tools import minutes as tool_minutes
from utp_env.evaluation.context import build_context
from utp_env.itinerary import Day, Plan, PlanItem
from utp_env.plan_format import format_day, parse_plan
from utp_env.plan_format.text import ABSENT, ABSENT_MARKERS, is_absent
from utp_env.query import Persona, Query
from utp_env.resolve import CityKeys, VenueName, crowd_of, find_venue
from utp_env.tools import schema
from utp_env.tools.clock import (
    day_offset,
    format_day_offset,
    format_stamp,
    parse_stamp,
    stamp_minutes,
    weekday,
)
from utp_env.tools.database import Database
from utp_env.tools.toolkit import ToolError

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- maps and vocabularies


def test_venue_and_service_maps_are_inverse_and_name_real_tables() -> None:
    assert {v: k for k, v in schema.VENUE_TABLE.items()} == schema.VENUE_KIND
    assert set(schema.VENUE_TABLES) <= set(schema.TABLES)
    assert {v: k for k, v in schema.SERVICE_TABLE.items()} == schema.SERVICE_MODE
    assert set(schema.NUMBER_COLUMN) == set(schema.SERVICE_MODE) <= set(schema.TABLES)
    assert set(schema.CROWD_KINDS) == set(typing.get_args(schema.Crowd.model_fields["venue_type"].annotation))
    assert all(schema.is_venue_kind(k) for k in schema.CROWD_KINDS)
    assert not schema.is_venue_kind("transit") and not schema.is_venue_kind(None)


def test_vocabularies_keyed_by_a_literal_name_exactly_its_values() -> None:
    assert tuple(schema.ATTRACTION_CATEGORIES) == typing.get_args(schema.AttractionCategory)
    assert tuple(schema.HOUSE_RULE_FORBIDS) == typing.get_args(schema.HouseRuleNeed)
    assert schema.PRICE_TIERS == ("$", "$$", "$$$", "$$$$")
    assert schema.CROWD_LEVELS == ("L", "BA", "A", "AA", "H")


def test_no_second_copy_of_the_venue_or_service_map_in_the_package() -> None:
    """The dict form of the maps is written only in tools/schema.py."""
    copies = ('"attraction": "attractions"', '"restaurant": "restaurants"', '"flight": "flights"',
              '"flights": "flight"', '"attractions": "attraction",\n')
    found = [f"{p.relative_to(ROOT)}: {c}" for folder in ("utp_env", "tools", "agents")
             for p in (ROOT / folder).rglob("*.py") if p.name != "schema.py"
             for c in copies if c in p.read_text(encoding="utf-8")]
    assert found == []


def test_scheduled_arrival_and_runs_on() -> None:
    columns = {"arr_time": ["07:10", "06:45"], "arr_day_offset": [0, 1]}
    assert schema.scheduled_arrival(columns, 0) == 430
    assert schema.scheduled_arrival(columns, 1) == 1440 + 405
    assert weekday("2025-11-20") == 3  # a Thursday
    assert schema.runs_on("0001000", "2025-11-20") is True
    assert schema.runs_on("1110111", "2025-11-20") is False
    assert schema.runs_on("1111111", None) is None
    assert schema.runs_on("1111111", "20-11-2025") is None


# ---------------------------------------------------------------- the +N day grammar


@pytest.mark.parametrize(("text", "expected"), [
    ("07:40", (460, None)), ("7:40", (460, None)), ("07:40+1", (460, 1)), ("07:40 +1d", (460, 1)),
    ("07:40 +1 day", (460, 1)), ("07:40 (+1 day)", (460, 1)), ("07:40 (+2 days)", (460, 2)),
    ("07:40 +1 Day", (460, 1)), ("00:30(+1)", (30, 1)),
])
def test_stamp_grammar(text: str, expected: tuple[int, int | None]) -> None:
    assert parse_stamp(text) == expected


@pytest.mark.parametrize("text", ["", "7", "07:4", "25:00", "07:40 +", "07:40 -1", "07:40 +1 week", "+1 07:40"])
def test_stamp_grammar_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_stamp(text)


def test_day_offset_in_free_text_needs_its_unit() -> None:
    assert day_offset("Arr: 06:45 (+1 day, includes avg_delay_1month of 4 min)") == 1
    assert day_offset("+2 days later") == 2 and day_offset("06:45+1d") == 1
    assert day_offset("add +15 min for the crowd") is None
    assert day_offset("no offset") is None


def test_one_way_of_writing_a_time_past_midnight() -> None:
    assert format_day_offset(430) == "" and format_day_offset(1900) == "+1 day"
    assert format_stamp(430) == "07:10" and format_stamp(1900) == "07:40 +1 day"
    for minutes in (0, 59, 1439, 1440, 1900, 2 * 1440 + 5):
        assert stamp_minutes(format_stamp(minutes)) == minutes


def test_itinerary_tools_read_the_same_grammar() -> None:
    assert tool_clock("07:40", "start") == (460, None)
    assert tool_minutes("07:40 +1 day", "end") == 1900 == tool_minutes("07:40+1", "end")
    with pytest.raises(ToolError):
        tool_minutes("7.40", "start")


# ---------------------------------------------------------------- absent markers


def test_one_set_of_absent_markers() -> None:
    assert ABSENT == "-" and ABSENT in ABSENT_MARKERS
    for marker in ABSENT_MARKERS:
        assert is_absent(marker) and is_absent(f"  {marker.upper()} ")
    assert is_absent(None) and not is_absent("Hawa Mahal")


def _query() -> Query:
    return Query(query_id="q", org="Pune", dest="Indore", visiting_city_number=1, days=3,
                 dates=["2025-11-20", "2025-11-21", "2025-11-22"], people_number=1, budget_inr=10_000,
                 level="easy", persona=Persona(traveler_type="Adventure Seeker", purpose="Leisure",
                                               spending="Moderate", location_preference="Nature"),
                 risk_profile="optimized", text="test")


def test_the_evaluator_reads_every_absent_marker_as_nothing(mini_db: Database) -> None:
    """A plan built in code (not parsed) with a dash variant in a summary field has no venue there."""
    for marker in sorted(ABSENT_MARKERS):
        day = Day(day=1, cities=["Pune"], breakfast=marker, dinner=marker, accommodation=marker,
                  attractions=[marker], events=[marker])
        ctx = build_context(Plan(days=[day]), _query(), mini_db)
        assert ctx.days[0].visits == [], marker


# ---------------------------------------------------------------- current_city


def test_current_city_names_every_city_of_the_day_and_reads_back() -> None:
    one, two, three = (Day(day=1, cities=c) for c in (["Pune"], ["Pune", "Indore"], ["Pune", "Indore", "Bhopal"]))
    assert one.current_city == "Pune"
    assert two.current_city == "from Pune to Indore"
    assert three.current_city == "from Pune to Indore to Bhopal"
    assert format_day(three)["current_city"] == three.current_city
    assert parse_plan([format_day(three)]).days[0].cities == ["Pune", "Indore", "Bhopal"]


# ---------------------------------------------------------------- the venue search


def _some_attraction(db: Database) -> tuple[str, str]:
    cols = db.tables["attractions"].columns
    return str(cols["name"][0]), str(cols["city"][0])


def test_find_venue_plain_and_with_a_city_suffix(mini_db: Database) -> None:
    name, city = _some_attraction(mini_db)
    other = next(c for c in mini_db.tables["cities"].columns["city"] if c != city)
    ref = find_venue(mini_db, name.upper(), [city])
    assert ref is not None and (ref.table, ref.city, ref.venue_type) == ("attractions", city, "attraction")
    assert ref.name_key == name.casefold() and ref == find_venue(mini_db, name, CityKeys.of([city]))
    assert find_venue(mini_db, name, [city], tables=("restaurants",)) is None
    # `Name, City`: only plans use the suffix; a tool argument is a plain name.
    assert find_venue(mini_db, f"{name}, {city}", [other]) is None
    assert find_venue(mini_db, VenueName.of(f"{name}, {city}"), [other]) == ref
    assert find_venue(mini_db, VenueName.of(f"{name}, {other}"), [city]) == ref  # stated city first, then cities
    assert find_venue(mini_db, VenueName.of(name), [city]) == ref


def test_crowd_of_matches_the_database_crowd_index(mini_db: Database) -> None:
    crowd = mini_db.tables["crowd"].columns
    checked = 0
    for i in range(min(20, mini_db.tables["crowd"].n)):
        kind, city, name = crowd["venue_type"][i], crowd["city"][i], crowd["venue_name"][i]
        ref = find_venue(mini_db, name, [city], tables=(schema.VENUE_TABLE[kind],))
        assert ref is not None and crowd_of(mini_db, ref) == mini_db.crowd_row(city, kind, name) == i
        checked += 1
    assert checked


def test_simulation_and_evaluator_find_the_same_venue(mini_db: Database) -> None:
    name, city = _some_attraction(mini_db)
    item = PlanItem(name=f"{name}, {city}", activity="visit", start=600, end=720, venue_type="attraction")
    day = Day(day=1, date="2025-11-20", cities=[city], items=[item])
    visit = build_context(Plan(days=[day]), _query(), mini_db).days[0].visits[0]
    assert visit.ref == find_venue(mini_db, VenueName.of(item.name), day.cities, ("attractions",), day.date)
    assert visit.stated_city == city and visit.city_key == city.casefold()
