"""The `transportation` field: one leg per `;`-separated entry, in both directions.

Canonical entry (what `format_leg` writes and the paper uses):
`Flight Number: 6E-284, from Pune to Indore, Departure Time: 05:15, Arrival Time: 07:40 (scheduled 07:10)`.
A time past midnight carries the `+N day` note of `utp_env.tools.clock`.
The stated `Arrival Time` is the planner's arrival (it may include a buffer, paper Fig. 5) and
becomes `planned_arr`; the scheduled arrival `arr` comes from the `(scheduled HH:MM)` remark, else
from the database schedule, else equals the stated arrival.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from utp_env.itinerary import MAX_CLOCK_MINUTES, Mode, TransportLeg, unvalidated
from utp_env.plan_format.errors import PlanFormatError
from utp_env.plan_format.text import CLOCK, at_or_after, clock, split_top
from utp_env.tools.clock import MINUTES_PER_DAY, day_offset, format_day_offset, format_hhmm, format_stamp

FIELD = "transportation"
_MODES: dict[str, Mode] = {"flight": "flight", "train": "train", "bus": "bus", "cab": "cab", "taxi": "cab"}
_HEAD_RE = re.compile(
    r"^\s*(?P<mode>flight|train|bus|cab|taxi)\b\.?\s*+(?:(?:number|num|no|id)\b\.?|#)?\s*+[:#\-]?\s*+(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_ROUTE_RE = re.compile(r"^\s*(?:from\s+)?(?P<o>.*?\S)\s++(?:to|->|→)\s++(?P<d>.*\S)\s*$", re.IGNORECASE)
_FROM_RE = re.compile(r"\bfrom\s+", re.IGNORECASE)
_DEP_RE = re.compile(rf"^\s*(?:departure|departs?|dep)\b\.?\s*+(?:time)?\s*+[:\-]?\s*+(?P<t>{CLOCK})", re.IGNORECASE)
_ARR_RE = re.compile(rf"^\s*(?:arrival|arrives?|arr)\b\.?\s*+(?:time)?\s*+[:\-]?\s*+(?P<t>{CLOCK})", re.IGNORECASE)
_SCHEDULED_RE = re.compile(
    rf"\(\s*scheduled(?:\s+arrival)?\s*:?\s*(?P<t>{CLOCK})(?P<off>[^()]*)\)", re.IGNORECASE
)
_FLIGHT_NO_RE = re.compile(r"^(?P<a>[0-9A-Za-z]{2})\s*-?\s*(?P<n>\d{1,5})\b")
_TRAIN_NO_RE = re.compile(r"^(?P<n>\d{4,6})\b")
_LABEL = {"flight": "Flight Number: ", "train": "Train Number: ", "bus": "Bus: ", "cab": "Cab: "}
# The entry `format_leg` writes: `<Mode>[ Number]: <number>` or the bare mode, `from A to B`, both
# times as HH:MM, an optional `(+N day)` after the arrival and an optional `(scheduled HH:MM[ +N day])`;
# no comma or parenthesis in the number or the route. Then the general reading below finds the same
# scheduled remark (the only `(scheduled`), the same mode and number text (`_HEAD_RE`; the caller
# checks that the number holds no `from `), the same `,`-segments in the same order (the route, read
# by the same `_ROUTE_RE`, then the departure, then the arrival with its note) and the same times
# (nothing after them can extend them): parse_leg's general reading gives exactly the leg of its
# fast path (tests/plan_format/test_plan_format_fast.py compares the two on generated entries).
_CANONICAL_LEG_RE = re.compile(
    r"(?:(?P<word>Flight|Train|Bus|Cab)(?: Number)?: (?P<number>[^\s,():](?:[^,()]*[^\s,():])?)"
    r"|(?P<bare>Flight|Train|Bus|Cab)), (?P<route>from [^,()]*), Departure Time: (?P<dep>\d\d:\d\d), "
    r"Arrival Time: (?P<arr>\d\d:\d\d)(?P<planned> \(\+\d+ days?\))?"
    r"(?: \(scheduled (?P<scheduled>\d\d:\d\d)(?P<scheduled_note> \+\d+ days?)?\))?")

ScheduleLookup = Callable[[Mode, str | None, str, str], int | None]


def parse_leg(entry: str, day: int | str, lookup: ScheduleLookup | None = None) -> TransportLeg:
    """One transportation entry -> TransportLeg; PlanFormatError saying what is missing otherwise.

    `lookup(mode, number, origin, dest)` returns the database's scheduled arrival (minutes from
    the departure day's midnight) or None; it is used when the entry has no `(scheduled ...)` remark.
    """
    fast = _CANONICAL_LEG_RE.fullmatch(entry)
    if fast is not None:
        word, written_number, bare, route_text, dep_text, arr_written, planned_note, scheduled_text, scheduled_note = (
            fast.groups())
        route_match = _ROUTE_RE.match(route_text)
        if route_match is not None and (written_number is None or _FROM_RE.search(written_number) is None):
            # What the general reading below gives for this entry (see _CANONICAL_LEG_RE), in one match.
            fast_mode = _MODES[(word or bare).lower()]
            fast_dep = clock(dep_text, day=day, field=FIELD, snippet=entry)
            return _leg(entry, day, lookup, fast_mode, _number(fast_mode, written_number or ""),
                        (route_match["o"].strip(), route_match["d"].strip()), fast_dep, arr_written,
                        " " + (planned_note or ""),
                        None if scheduled_text is None else (scheduled_text, scheduled_note or ""))
    found = _SCHEDULED_RE.search(entry)
    head = _HEAD_RE.match(_SCHEDULED_RE.sub("", entry) if found else entry)
    if head is None:
        raise PlanFormatError("no recognisable mode (expected Flight, Train, Bus or Cab first)",
                              day=day, field=FIELD, snippet=entry)
    mode = _MODES[head["mode"].lower()]
    segments = split_top(head["rest"], ",")
    number_text, route_in_head = segments[0], None
    found_from = _FROM_RE.search(number_text)
    if found_from:  # `Cab from A to B, ...` or `Bus: X from A to B, ...`
        number_text, route_in_head = number_text[: found_from.start()], number_text[found_from.start():]
    number = _number(mode, number_text.strip(" :,"))
    route = dep = arr_text = None
    offset_text = ""
    for seg in ([route_in_head] if route_in_head else []) + segments[1:]:
        if (m := _DEP_RE.match(seg)) is not None:
            dep = dep if dep is not None else clock(m["t"], day=day, field=FIELD, snippet=entry)
        elif (m := _ARR_RE.match(seg)) is not None:
            arr_text = arr_text or m["t"]
            offset_text += " " + seg[m.end():]
        elif route is None and (m := _ROUTE_RE.match(seg)) is not None:
            route = (m["o"].strip(), m["d"].strip())
        else:
            offset_text += " " + seg
    return _leg(entry, day, lookup, mode, number, route, dep, arr_text, offset_text,
                None if found is None else (found["t"], found["off"]))


def _leg(entry: str, day: int | str, lookup: ScheduleLookup | None, mode: Mode, number: str | None,
         route: tuple[str, str] | None, dep: int | None, arr_text: str | None, offset_text: str,
         scheduled: tuple[str, str] | None) -> TransportLeg:
    """The leg of an entry read into its parts (the scheduled remark as its time and its note)."""
    if route is None or not route[0] or not route[1]:
        raise PlanFormatError("no route (expected 'from A to B')", day=day, field=FIELD, snippet=entry)
    if dep is None or arr_text is None:
        missing = "Departure Time" if dep is None else "Arrival Time"
        raise PlanFormatError(f"no {missing} (expected '{missing}: HH:MM')", day=day, field=FIELD, snippet=entry)
    planned = _arrival(clock(arr_text, day=day, field=FIELD, snippet=entry), dep, offset_text)
    if scheduled is not None:
        arr = _arrival(clock(scheduled[0], day=day, field=FIELD, snippet=entry), dep, scheduled[1])
    else:
        known = lookup(mode, number, *route) if lookup is not None else None
        arr = known if known is not None and known >= dep else planned
    if arr < dep:  # only reachable when an explicit remark contradicts the departure
        raise PlanFormatError("scheduled arrival before departure", day=day, field=FIELD, snippet=entry)
    values: dict[str, Any] = {"mode": mode, "number": number, "origin": route[0], "destination": route[1], "dep": dep,
                              "arr": arr, "planned_arr": planned}
    if arr <= MAX_CLOCK_MINUTES and planned <= MAX_CLOCK_MINUTES:
        # Every value is already what validation gives (a mode of the Literal, exact `str`s, clock
        # minutes >= 0 with arr >= dep): built without it, as parse._assembled builds the rest.
        return unvalidated(TransportLeg, values)
    return TransportLeg.model_validate(values)  # a time past MAX_CLOCK_MINUTES: refused with the model's message


def _number(mode: Mode, text: str) -> str | None:
    """The service number: `6E-284` (flights, `6E 284` normalised), `19711` (trains), the bus id."""
    if not text:
        return None
    if mode == "flight" and (m := _FLIGHT_NO_RE.match(text)):
        return f"{m['a'].upper()}-{m['n']}"
    if mode == "train" and (m := _TRAIN_NO_RE.match(text)):
        return m["n"]
    return text


def _arrival(clock_min: int, dep: int, notes: str) -> int:
    """An arrival in minutes from the departure day's midnight: `+N day` if stated, else not before dep."""
    offset = day_offset(notes)
    if offset is not None:
        return clock_min + MINUTES_PER_DAY * offset
    return at_or_after(clock_min, dep)


def format_leg(leg: TransportLeg) -> str:
    """The paper's transportation entry of one leg (see the module docstring)."""
    head = _LABEL[leg.mode] + leg.number if leg.number else leg.mode.capitalize()
    planned, planned_offset = leg.planned_arrival, format_day_offset(leg.planned_arrival)
    text = (f"{head}, from {leg.origin} to {leg.destination}, Departure Time: {format_hhmm(leg.dep)}, "
            f"Arrival Time: {format_hhmm(planned)}" + (f" ({planned_offset})" if planned_offset else ""))
    if planned != leg.arr:
        text += f" (scheduled {format_stamp(leg.arr)})"
    return text
