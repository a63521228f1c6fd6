"""The parser's fast paths read exactly what its general (tolerant) reading reads.

`utp_env/plan_format/poi.py` reads the entries `format_item` writes with one match
(`_CANONICAL_ENTRY_RE`, `_CANONICAL_TAIL_RE`) and falls back to the general grammar otherwise. A fast
path must never become a second grammar: here both readings are run on generated canonical and
near-canonical entries (activity words inside names in any letter case, separators, parentheses,
digits in stops, bad times, remarks) and must give the same RawItem or the same PlanFormatError.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utp_env.itinerary import Plan, PlanItem
from utp_env.plan_format import PlanFormatError, legs, parse_plan, plan_to_json, poi
from utp_env.plan_format.text import ABSENT_MARKERS, is_absent, is_absent_stripped

NEVER = re.compile(r"(?!)")


@contextlib.contextmanager
def general_reading_only() -> Iterator[None]:
    """parse_entry and parse_leg without their fast paths: the general grammar alone."""
    saved = poi._CANONICAL_ENTRY_RE, poi._CANONICAL_TAIL_RE, legs._CANONICAL_LEG_RE
    poi._CANONICAL_ENTRY_RE = poi._CANONICAL_TAIL_RE = legs._CANONICAL_LEG_RE = NEVER
    try:
        yield
    finally:
        poi._CANONICAL_ENTRY_RE, poi._CANONICAL_TAIL_RE, legs._CANONICAL_LEG_RE = saved


def reading(entry: str) -> object:
    try:
        return poi.parse_entry(entry, 3)
    except PlanFormatError as exc:
        return ("error", str(exc), exc.day, exc.field, exc.snippet)


def both_readings(entry: str) -> tuple[object, object]:
    fast = reading(entry)
    with general_reading_only():
        general = reading(entry)
    return fast, general


# Name pieces: ordinary ones, and the hazards of real names and of LLM output: activity words in any
# letter case (also the characters that IGNORECASE matches to ASCII letters: dotless ı, long ſ, the
# Kelvin sign), words that only contain one, separators, parentheses, digits, times, placeholders.
SAFE_PIECES = ["Hotel", "Sunrise Grand", " ", "Ajmer", ", ", "Forest", "Interstay", "eventful", "12", "6E-284",
               "(NG)", "Jn.", "&", "’", "\u212aerala", "Sector 5", "-"]
HAZARD_PIECES = [
    "Rest", "rest", "REST", "Visit", "vısit", "ſtay", "Stay Inn", "Check in", "check-in", "Checkout", "Arrival",
    "arrive", "Board", "boarding", "attend", "Event", "Travel", "(", ")", ",", " ,", ";", "  ", "\n", "\t",
    "from", "to", "10:00", "am", "?", "tbd", "n/a", "\u00a0", "\u2003",
]
ACTS = ["stay", "visit", "check-in", "checkout", "arrive", "travel", "rest", "event"]  # as format_item writes them
TIMES = ["10:00", "09:05", "23:59", "00:00"]
STOP_PIECES = ["Old City Bus Stop", "Sector 12", "(NG)", "Stop", ",", ", ", " ", "-", "5km away", "0.3", "km",
               "nearest transit:", "m", "(", ")", "\n", "’"]
NUMBERS = ["0.315", "1", "12.25", "0", "007"]
# Near-canonical replacements of one part of an entry (what LLMs write and the general grammar reads).
VARIANTS = {
    "sep": [",", " , ", ",  ", " ", ";", ", ,", ",\n"],
    "act": ["Visit", "VISIT", "check in", "Check-In", "arrival", "board", "attend", "stay:", "vısit", "reſt"],
    "word": [" From ", " ", " from  ", "from ", " from\t"],
    "start": ["24:00", "25:99", "9:40", "09:40 pm", "()", "-", "?", "1000", "10 :00"],
    "to": [" - ", "-", " until ", " to  ", " till ", "to"],
    "end": ["24:00", "25:99", "9:40", "09:40 pm", "09:40pm", "()", "-", "10:005", "10:00 am"],
    "tail_lead": [",nearest transit:", ",  nearest transit:", ", Nearest transit:", ", nearest transit stop:",
                  ", transit:", " nearest transit:"],
    "tail_sep": [",", ",  ", " ,", " "],
    "number": ["3.", ".5", "1e3", "1,5"],
    "unit": ["km away ", "km  away", "km", "m away", "kms away", "km Away", "kmaway"],
    "remark": [" (15 min buffer)", " (a; b)", " pm", " am", "5", ".", " ", ",", ", ", " (", ")"],
}
ORDER = ["name", "sep", "act", "word", "start", "to", "end", "tail_lead", "stop", "tail_sep", "number", "unit",
         "remark"]

# An activity word and times inside a name: where the general grammar could take its activity
# earlier than the fast path (the spellings IGNORECASE matches include ı, ſ and the Kelvin sign).
TRAP_WORDS = ["visit", "Rest", "STAY", "vısit", "reſt", "chec\u212a-in", "check in", "arrival", "boarding", "event"]
trap = st.builds("{}{}{}{}{}{}".format, st.sampled_from(["", " ", ", ", ",", " ,"]), st.sampled_from(TRAP_WORDS),
                 st.sampled_from([" from ", " ", ": ", ":", " from  "]), st.sampled_from(TIMES + VARIANTS["start"]),
                 st.sampled_from([" to ", "-", " until "]), st.sampled_from(TIMES + VARIANTS["end"]))
piece = st.one_of(st.sampled_from(SAFE_PIECES), st.sampled_from(SAFE_PIECES), st.sampled_from(SAFE_PIECES),
                  st.sampled_from(HAZARD_PIECES))
plain = st.lists(piece, min_size=1, max_size=4).map("".join)
name = st.lists(st.one_of(plain, plain, plain, trap), min_size=1, max_size=3).map("".join).flatmap(
    lambda n: st.sampled_from([n] * 6 + [f"({n})", f"({n}) ", f"(x){n}", f"({n}", f"{n})"]))
stop = st.lists(st.sampled_from(STOP_PIECES), max_size=4).map(" ".join)


@st.composite
def entries(draw: st.DrawFn) -> str:
    """An entry as format_item writes it, with at most two of its parts replaced by a near-canonical variant."""
    parts = {"name": draw(name), "sep": ", ", "act": draw(st.sampled_from(ACTS)), "word": " from ",
             "start": draw(st.sampled_from(TIMES)), "to": " to ", "end": draw(st.sampled_from(TIMES)),
             "tail_lead": ", nearest transit:", "stop": draw(stop), "tail_sep": ", ",
             "number": draw(st.sampled_from(NUMBERS)), "unit": "km away", "remark": ""}
    for part in draw(st.lists(st.sampled_from(sorted(VARIANTS)), max_size=2, unique=True)):
        parts[part] = draw(st.sampled_from(VARIANTS[part]))
    if draw(st.booleans()):  # no transit tail
        for part in ("tail_lead", "stop", "tail_sep", "number", "unit"):
            parts[part] = ""
    return "".join(parts[part] for part in ORDER)


@settings(max_examples=1500)
@given(entries())
def test_fast_entry_reading_equals_the_general_reading(entry: str) -> None:
    fast, general = both_readings(entry)
    assert fast == general, entry


@settings(max_examples=500)
@given(st.text(alphabet="aeiostvynrkchl ,;:()-0123456789\n", max_size=60))
def test_fast_entry_reading_equals_the_general_reading_on_any_text(entry: str) -> None:
    fast, general = both_readings(entry)
    assert fast == general, entry


WRITTEN = [
    PlanItem(name="Hotel Sunrise Grand, Ajmer", activity="check-in", start=798, end=813,
             transit_stop="Old City Bus Stop", transit_distance_m=315.0),
    PlanItem(name="Hisar Cantonment, Hisar", activity="arrive", start=340, end=350),
    PlanItem(name="Vishvamitri Jn. (NG)", activity="visit", start=0, end=1439, transit_stop="Sector 12 Bus Stop",
             transit_distance_m=1525.0),
    PlanItem(name="Le Prive World Cuisine & Pizzeria", activity="checkout", start=450, end=465, transit_stop=None,
             transit_distance_m=2500.0),
]


def test_entries_as_written_take_the_fast_path_and_read_back() -> None:
    """What format_item writes (no remark, no activity word in the name) is read by the one match, and
    reads back to the item's fields; a name with an activity word takes the general reading."""
    for item in WRITTEN:
        entry = poi.format_item(item)
        fast = poi._CANONICAL_ENTRY_RE.fullmatch(entry)
        assert fast is not None and not poi._holds_activity_word(fast["name"]), entry
        raw = poi.parse_entry(entry, 1)
        assert (raw.name, raw.activity, raw.start, raw.end, raw.transit_stop, raw.transit_distance_m, raw.note) == (
            item.name, item.activity, item.start, item.end, item.transit_stop, item.transit_distance_m, None)
    for entry in ("Rest House Inn, visit from 10:00 to 11:00", "Hotel, visit from 10:00 to 11:00, visit"):
        fast = poi._CANONICAL_ENTRY_RE.fullmatch(entry)
        assert fast is None or poi._holds_activity_word(fast["name"]), entry
        assert both_readings(entry)[0] == both_readings(entry)[1]


def test_bad_time_in_a_canonical_entry_gives_the_general_error() -> None:
    entry = "Hotel, visit from 25:99 to 11:00"
    assert poi._CANONICAL_ENTRY_RE.fullmatch(entry) is not None
    fast, general = both_readings(entry)
    assert fast == general and fast[0] == "error" and "'25:99' is not a valid clock time" in fast[1]


# ---------------------------------------------------------------- transportation entries

def leg_reading(entry: str) -> object:
    try:
        return legs.parse_leg(entry, 2, scheduled_lookup)
    except PlanFormatError as exc:
        return ("error", str(exc), exc.day, exc.field, exc.snippet)


def scheduled_lookup(mode: str, number: str | None, origin: str, dest: str) -> int | None:
    """A timetable that knows some services (so the lookup branch is reached), keyed on what was read."""
    return None if number is None or len(number) % 2 else 600 + len(origin) + len(dest)


def both_leg_readings(entry: str) -> tuple[object, object]:
    fast = leg_reading(entry)
    with general_reading_only():
        general = leg_reading(entry)
    return fast, general


LEG_VARIANTS = {
    "head": ["Flight Number: ", "Train Number: ", "Bus: ", "Flight: ", "Cab: ", "Train No. ", "flight number: ",
             "Bus #", "Taxi: ", "Flight Number:", "Train Number:  "],
    "number": ["6E-284", "6e 284", "19711", "BUS022004", "X from Y", "from", "No 5", "ID 5", "Number 7", "#5",
               "-5", ":5", "5:", " 5", "5 ", "a(b)", "a(b, c)", "x (scheduled 01:00)", "",
               "Flight 6E-1"],
    "route": ["from Pune to Indore", "from Navi Mumbai to Port Blair", "from A -> B", "from A → B",
              "from A to B to C", "from A To B", "from  A  to  B", "from from A to B", "from A", "from A to ",
              "from A to B ", "from Departure Time: 05:00 to B", "from A to B Arrival Time: 09:00"],
    "dep": ["05:15", "00:00", "23:59", "25:99", "5:15", "05:15 pm", "24:00"],
    "arr": ["07:40", "00:00", "23:59", "25:99", "7:40", "07:40 am", "04:00"],
    "planned": ["", " (+1 day)", " (+2 days)", " (+1)", " (next day)", " (+15 min)"],
    "scheduled": ["", " (scheduled 07:10)", " (scheduled 07:10 +1 day)", " (scheduled 03:00)", " (Scheduled 07:10)",
                  " (scheduled arrival: 07:10)", " (scheduled 7:10)", " (scheduled 99:00)", " (scheduled 07:10 pm)"],
}


@st.composite
def leg_entries(draw: st.DrawFn) -> str:
    """A transportation entry as format_leg writes it, its parts drawn from canonical and near-canonical forms."""
    part = {key: draw(st.sampled_from(values[:3]) | st.sampled_from(values)) for key, values in LEG_VARIANTS.items()}
    head = "Cab" if draw(st.booleans()) and not part["number"] else part["head"] + part["number"]
    return (f"{head}, {part['route']}, Departure Time: {part['dep']}, Arrival Time: {part['arr']}"
            f"{part['planned']}{part['scheduled']}")


@settings(max_examples=1500)
@given(leg_entries())
def test_fast_leg_reading_equals_the_general_reading(entry: str) -> None:
    fast, general = both_leg_readings(entry)
    assert fast == general, entry


def test_legs_as_written_take_the_fast_path() -> None:
    from utp_env.itinerary import TransportLeg

    for leg in (TransportLeg(mode="flight", number="6E-284", origin="Pune", destination="Indore", dep=315, arr=430,
                             planned_arr=460),
                TransportLeg(mode="train", number="19711", origin="Jaipur", destination="Bhopal", dep=1105,
                             arr=1841, planned_arr=1845),
                TransportLeg(mode="cab", origin="Navi Mumbai", destination="Pune", dep=480, arr=700, planned_arr=700)):
        entry = legs.format_leg(leg)
        assert legs._CANONICAL_LEG_RE.fullmatch(entry) is not None, entry
        assert legs.parse_leg(entry, 1) == leg
        assert both_leg_readings(entry)[0] == both_leg_readings(entry)[1]


PAPER = Path(__file__).resolve().parents[1] / "support" / "data" / "paper_plans"


def test_whole_plans_parse_the_same_without_the_fast_paths() -> None:
    """The paper's plans and their canonical rewrites give the same Plan with and without the fast paths."""
    for path in sorted(PAPER.glob("*.json")):
        days = json.loads(path.read_text(encoding="utf-8"))["plan"]
        fast = parse_plan(days)
        text = plan_to_json(fast)
        with general_reading_only():
            assert parse_plan(days) == fast, path.name
            general_rewrite = parse_plan(text)
        assert parse_plan(text) == general_rewrite == fast, path.name
        assert isinstance(fast, Plan)


@given(st.text(max_size=8) | st.sampled_from(sorted(ABSENT_MARKERS)).map(lambda m: f" {m.upper()}\t"))
def test_is_absent_stripped_is_is_absent_of_stripped_text(text: str) -> None:
    assert is_absent_stripped(text.strip()) == is_absent(text)


def test_a_day_the_model_rejects_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan is validated in one call; a day it rejects (unreachable from the grammar, which only
    builds valid days) is still reported with its number, as when each day was validated alone."""
    from utp_env.plan_format import parse as parse_module

    real = parse_module._cities
    monkeypatch.setattr(parse_module, "_cities",
                        lambda value, number, db: [] if number == 3 else real(value, number, db))
    with pytest.raises(PlanFormatError, match=r"^day 3: invalid day: List should have at least 1 item"):
        parse_plan([{"days": 1, "current_city": "A"}, {"days": 3, "current_city": "B"}])


def test_a_current_city_read_before_gives_the_same_cities_in_a_list_of_its_own(dataset: object) -> None:
    """`_cities` answers a text it read before from its memo: the same canonical cities, in a new list
    (a Day owns its list), and a bad text still fails with its day named, however often it is read."""
    db = dataset.db  # type: ignore[attr-defined]
    city = db.cities[0]
    day = {"days": 1, "current_city": f"from {city.upper()} to {city.lower()}", "transportation": "-"}
    first, second = (parse_plan([day], db=db).days[0] for _ in range(2))
    assert first.cities == second.cities == [city, city]
    assert first.cities is not second.cities
    first.cities.append("Elsewhere")
    assert parse_plan([day], db=db).days[0].cities == [city, city]
    for number in (1, 2):
        bad = [{"days": d, "current_city": "Pune" if d < number else "from  to Pune"} for d in range(1, number + 1)]
        with pytest.raises(PlanFormatError, match=f"day {number}"):
            parse_plan(bad, db=db)
