"""Property tests of the plan format: the parser raises nothing but PlanFormatError on any input,
and every plan in canonical form survives format -> parse unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg
from utp_env.plan_format import PlanFormatError, format_plan, parse_plan, plan_to_json

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DEFENSIVE = "cannot read the plan"  # parse_plan's last-resort wrapper: a grammar gap if ever hit


def parses_or_reports(data: object) -> None:
    """`parse_plan(data)` returns a Plan or raises a located PlanFormatError, never anything else."""
    try:
        plan = parse_plan(data)
    except PlanFormatError as exc:
        assert not str(exc).startswith(DEFENSIVE), exc
        return
    assert isinstance(plan, Plan) and plan.days


# ---------------------------------------------------------------- arbitrary input

JSON_LIKE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
FRAGMENTS = [
    "from", " to ", "Flight Number: ", "Train ", "Bus: ", "Cab", "Taxi", "6E-284", "19711", "Pune", "Surat",
    "Departure Time: ", "Arrival Time: ", "Dep: ", "Arr: ", "06:45", "9:40", "23:59", "25:99", "7:5", "12:00 pm",
    "(", ")", "()", ";", ",", ".", " ", "nearest transit: ", "0.5km", "300 m", "away", "+1 day", "+2 days",
    "(scheduled 07:10)", "visit", "stay", "check-in", "checkout", "arrive", "rest", "travel", "Board ", "-",
    "from () to ()", "’", "\n", "{", "}", "[", "]", '"',
]
GRAMMARISH = st.lists(st.sampled_from(FRAGMENTS), max_size=25).map("".join)
DAY_KEYS = ["days", "day", "current_city", "transportation", "breakfast", "attraction", "lunch", "dinner",
            "accommodation", "event", "point_of_interest_list", "point_of_interest", "Current City"]
DAY_LIKE = st.dictionaries(st.sampled_from(DAY_KEYS),
                           GRAMMARISH | st.integers(-2, 9) | st.none() | st.lists(GRAMMARISH, max_size=3),
                           max_size=len(DAY_KEYS))


@SETTINGS
@given(st.text(max_size=300))
def test_arbitrary_text_gives_plan_or_plan_format_error(text: str) -> None:
    parses_or_reports(text)


@SETTINGS
@given(JSON_LIKE)
def test_arbitrary_json_like_objects(value: object) -> None:
    parses_or_reports(value)
    parses_or_reports(json.dumps(value))


@SETTINGS
@given(st.lists(DAY_LIKE, min_size=1, max_size=3))
def test_grammar_like_day_objects(days: list[dict]) -> None:
    parses_or_reports(days)
    parses_or_reports({"plan": days})


# ---------------------------------------------------------------- canonical plans

# Venue, stop and operator names with the hazards of real ones: activity words inside names
# ("Rest House Inn"), digits, `&`, curly quotes, a trailing `Jn.`, parentheses, commas.
NAMES = ["Amber Fort", "Rest House Inn", "Stay Inn Hotel", "Visit Cafe", "Board Room Spa", "Levvel 5 Terrace",
         "Taste Of India", "Dadi ki rasoi", "22nd Parallel", "Vadodara ’C’ Cabin", "Vishvamitri Jn.",
         "Vishvamitri Jn. (NG)", "Le Prive World Cuisine & Pizzeria", "Hotel Bhagyaraj Palace, Civil Lines",
         "Exotica Banjara Hills- North Indian Rooftop Restaurant", "Brahmavart Ghat", "Kumar Pacific Mall",
         "Flight 6E-5432", "Train 19711", "Surat Airport", "Jaipur Railway Station", "Conrad Pune"]
NOTES = ["15 min buffer for above avg crowd in late hours", "+1 day, avg_delay_1month of 4 min incorporated",
         "3.5 hr recovery buffer; Risk Averse profile", "walk 1.5 km", "added 40 min buffer", "quick"]
CITIES = ["Pune", "Surat", "Kanpur", "Bhopal", "Navi Mumbai", "Port Blair", "Thiruvananthapuram"]
# Strategies are built once here: building them inside the composites dominated the run time.
names = st.sampled_from(NAMES)
city = st.sampled_from(CITIES)
maybe_name = st.none() | names
ids = st.sampled_from([n for n in NAMES if "," not in n])  # a comma would end the transport segment
maybe_note = st.none() | st.sampled_from(NOTES)
distance = st.none() | st.floats(min_value=0, max_value=1e5, allow_nan=False, allow_infinity=False)
shift = st.none() | st.integers(-720, 719)  # a start relative to the previous time (None: unknown)
length = st.none() | st.integers(0, 1439)
mode = st.sampled_from(["flight", "train", "bus", "cab"])
NUMBERS = {"flight": st.builds("{}-{}".format, st.sampled_from(["6E", "AI", "IX", "SG", "QP", "UK"]),
                               st.integers(1, 9999)),
           "train": st.integers(10000, 99999).map(str), "bus": ids, "cab": ids}
clock = st.integers(0, 1439)
journey = st.integers(0, 4000)
buffer = st.integers(0, 4300)
KINDS = [("stay", "accommodation", None), ("check-in", "accommodation", None), ("checkout", "accommodation", None),
         ("arrive", "transit", None), ("travel", "transport", None), ("visit", None, None),
         ("visit", "restaurant", "breakfast"), ("visit", "restaurant", "lunch"), ("visit", "restaurant", "dinner"),
         ("visit", "attraction", None), ("event", "event", None), ("rest", "accommodation", None)]
kind = st.sampled_from(KINDS)
MEALS = ("breakfast", "lunch", "dinner")


@st.composite
def legs(draw: st.DrawFn) -> TransportLeg:
    """A leg in canonical form: planned arrival set and not before the departure."""
    m = draw(mode)
    dep = draw(clock)
    arr = dep + draw(journey)
    planned = min(dep + draw(buffer), arr + 300)
    return TransportLeg(mode=m, number=draw(st.none() | NUMBERS[m]), origin=draw(city), destination=draw(city),
                        dep=dep, arr=arr, planned_arr=planned)


@st.composite
def days(draw: st.DrawFn, number: int) -> Day:
    """A day in canonical form: summary fields `Name, City`, items whose venue type and meal follow
    from those fields, times obeying the past-midnight rule (start within 12 h of the previous time,
    end at most 23:59 after its start)."""
    pool = draw(st.permutations(NAMES))[:9]  # distinct names: 0-2 meals, 3-4 attractions, 5 event, 6 stay
    here = draw(st.lists(city, min_size=1, max_size=3))
    field = {m: f"{pool[i]}, {draw(city)}" for i, m in enumerate(MEALS) if draw(st.booleans())}
    attractions, events = pool[3:3 + draw(st.integers(0, 2))], pool[5:5 + draw(st.integers(0, 1))]
    stay = pool[6] if draw(st.booleans()) else None
    items, ref = [], 0
    for _ in range(draw(st.integers(0, 6))):
        activity, venue_type, meal = draw(kind)
        usable = {"restaurant": meal in field, "attraction": bool(attractions), "event": bool(events)}
        if not usable.get(venue_type or "", True) or (activity == "rest" and not stay):
            activity, venue_type, meal = "visit", None, None
        if venue_type == "restaurant":
            name = pool[MEALS.index(meal)]
        elif venue_type == "attraction":
            name = draw(st.sampled_from(attractions))
        elif venue_type == "event":
            name = events[0]
        elif activity == "rest":
            name = stay
        elif venue_type is None:
            name = pool[8]  # in no summary field: the parser cannot type it without a database
        else:
            name = draw(names)
        offset, duration = draw(shift), draw(length)
        start = None if offset is None else max(0, ref + offset)
        if duration is None:
            end = None
        elif start is None:
            end = max(0, ref + duration - 720)
        else:
            end = start + duration
        ref = next((t for t in (end, start) if t is not None), ref)
        items.append(PlanItem(name=name, activity=activity, start=start, end=end, venue_type=venue_type,
                              meal=meal, transit_stop=draw(maybe_name), transit_distance_m=draw(distance),
                              note=draw(maybe_note)))
    return Day(day=number, cities=here, transport=draw(st.lists(legs(), max_size=2)),
               breakfast=field.get("breakfast"), lunch=field.get("lunch"), dinner=field.get("dinner"),
               attractions=[f"{a}, {draw(city)}" for a in attractions],
               accommodation=f"{stay}, {here[-1]}" if stay else None,
               events=[f"{e}, {here[0]}" for e in events], items=items)


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    numbers = draw(st.lists(st.integers(1, 9), min_size=1, max_size=3, unique=True))
    return Plan(days=[draw(days(n)) for n in numbers])


@SETTINGS
@given(plans())
def test_round_trip(plan: Plan) -> None:
    assert parse_plan(format_plan(plan)) == plan
    assert parse_plan(plan_to_json(plan, indent=None)) == plan


PAPER = Path(__file__).resolve().parents[1] / "support" / "data" / "paper_plans"
PLAN_TEXTS = [json.dumps(json.loads(p.read_text(encoding="utf-8"))["plan"], ensure_ascii=False)
              for p in sorted(PAPER.glob("*.json"))]


@SETTINGS
@given(st.sampled_from(PLAN_TEXTS), st.data())
def test_damaged_plan_text_gives_plan_or_plan_format_error(text: str, data: st.DataObject) -> None:
    for _ in range(3):
        cut = data.draw(st.integers(0, len(text)))
        junk = data.draw(st.sampled_from(["", "(", ")", ";", "25:99", '"', "}", " to ", ",", "from () to ()"]))
        text = text[:cut] + junk + text[cut + data.draw(st.integers(0, 5)):]
    parses_or_reports(text)


@given(pre=st.sampled_from([",", ", ", ",  ", " ,"]),
       stop=st.text(alphabet="ab ,:;-()transitneaSTOP0.5km away\n", max_size=14),
       sep=st.sampled_from([",", ", ", " ,", ",  "]),
       num=st.sampled_from(["0.5", "1", "12.25", "3.", ".5", "0.113"]),
       tail=st.sampled_from(["km away", "km away ", "km  away", "m away", "km"]))
def test_canonical_transit_tail_fast_path_equals_the_general_reading(pre: str, stop: str, sep: str, num: str,
                                                                      tail: str) -> None:
    """`poi._split_transit` reads `format_item`'s tail with one match; the result is the general path's."""
    import re

    from utp_env.plan_format import poi

    rest = f"{pre}nearest transit:{stop}{sep}{num}{tail}"
    fast = poi._split_transit(rest)
    saved = poi._CANONICAL_TAIL_RE
    poi._CANONICAL_TAIL_RE = re.compile(r"(?!)")  # never matches: the general path only
    try:
        general = poi._split_transit(rest)
    finally:
        poi._CANONICAL_TAIL_RE = saved
    assert (poi._note(fast[0]), fast[1], fast[2]) == (poi._note(general[0]), general[1], general[2])
