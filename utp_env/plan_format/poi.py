"""The `point_of_interest_list` field: one item per `;`-separated entry, in both directions.

Canonical entry: `Name, <activity> from HH:MM to HH:MM[ (remark)][, nearest transit: Stop, 0.5km away]`.
Tolerated: `Board Train 19711 from 18:10 to 18:25`, `Flight 6E-5432, travel from ...`, `9:40`,
`9:40 pm`, `10:00-11:00`, `from () to ()` (unknown times -> None), `m`/`km` distances with or
without `away`, a missing or `-` transit stop, remarks anywhere after the times (kept in `note`).
"""

from __future__ import annotations

import functools
import re
import typing
from dataclasses import dataclass

from utp_env.itinerary import Activity, PlanItem, format_hhmm
from utp_env.plan_format.errors import PlanFormatError
from utp_env.plan_format.text import (
    CLOCK,
    PAST_MIDNIGHT_SLACK,
    at_or_after,
    clock,
    distance_m,
    find_distance,
    format_km,
    is_absent,
    metres,
    unwrap,
)
from utp_env.tools.memo import remember

FIELD = "point_of_interest_list"
ACTIVITY_WORDS: dict[str, Activity] = {
    "stay": "stay", "visit": "visit", "checkin": "check-in", "checkout": "checkout", "arrive": "arrive",
    "arrival": "arrive", "rest": "rest", "travel": "travel", "board": "travel", "boarding": "travel",
    "attend": "event", "event": "event",
}
_ACT = r"stay|visit|check[\s-]?in|check[\s-]?out|arrive|arrival|rest|travel|boarding|board|attend|event"
_TIME = rf"{CLOCK}|\(\s*\)|-{{1,2}}|\?+|tbd|n/?a"
_RANGE = rf"(?:from\s+)?(?P<start>{_TIME})\s*(?:to|until|till|-|–)\s*(?P<end>{_TIME})"
_FLAGS = re.IGNORECASE | re.DOTALL
# Every lazy name part ends at a position a lookbehind checks in O(1) (never `.*?` followed by an
# overlapping `[\s,]*`), so that adversarial text such as 15,000 characters of `, , ,` parses
# in linear time instead of backtracking for minutes.
_AFTER_SEP = r"(?<![^\s,])"  # at the start, or after whitespace or a comma
_ITEM_RE = re.compile(rf"^(?P<name>.*?){_AFTER_SEP}(?P<act>{_ACT})\b[\s:]*+{_RANGE}(?P<rest>.*)$", _FLAGS)
_BOARD_RE = re.compile(rf"^\s*(?P<act>boarding|board)\s++(?P<name>.*?\S)\s++{_RANGE}(?P<rest>.*)$", _FLAGS)
_BARE_RE = re.compile(rf"^(?P<name>.*?)(?<![\w:?\-]){_RANGE}(?P<rest>.*)$", _FLAGS)
_NO_TIME_RE = re.compile(rf"^(?P<name>.*?){_AFTER_SEP}(?P<act>{_ACT})\b(?P<rest>.*)$", _FLAGS)
_TRANSIT_RE = re.compile(r"(?:nearest\s++)?(?<![\w-])transit(?:\s++stop)?\s*+:", re.IGNORECASE)
_CLOCK_RE = re.compile(rf"(?<!\d){CLOCK}", re.IGNORECASE)  # lookbehind: linear on digit runs
_TRANSPORT_NAME_RE = re.compile(r"^\s*(?:flight|train|bus|cab|taxi)\b", re.IGNORECASE)


@dataclass(slots=True)
class RawItem:
    """An entry as written: clock times (minutes, no day offset yet) and an optional activity."""

    name: str
    activity: Activity | None
    start: int | None
    end: int | None
    transit_stop: str | None
    transit_distance_m: float | None
    note: str | None


def parse_entry(entry: str, day: int | str) -> RawItem:
    """One POI entry -> RawItem; PlanFormatError for a bad time or a nameless entry."""
    fast = _CANONICAL_ENTRY_RE.fullmatch(entry)
    if fast is not None:
        name, act, start_text, end_text, stop, num, _ = fast.groups()
        if not _holds_activity_word(name):
            # What the general reading below gives for this entry (see _CANONICAL_ENTRY_RE), in one match;
            # the memos of `_time` and `_activity` read here first (every entry of every plan comes here).
            start, end = _TIMES.get(start_text, _UNREAD), _TIMES.get(end_text, _UNREAD)
            if start is _UNREAD:
                start = _time(start_text, day, entry)
            if end is _UNREAD:
                end = _time(end_text, day, entry)
            known = _ACTIVITIES.get(act) or _activity(act)
            if num is None:
                return RawItem(name, known, start, end, None, None, None)
            return RawItem(name, known, start, end, _canonical_stop(stop), metres(num, True), None)
    m = _ITEM_RE.match(entry) or _BOARD_RE.match(entry) or _BARE_RE.match(entry)
    if m is not None:
        start, end = (_time(m[k], day, entry) for k in ("start", "end"))
        rest = m["rest"]
    else:
        m = _NO_TIME_RE.match(entry)
        rest = m["rest"] if m is not None else entry
        start = end = None
        if _CLOCK_RE.search(_TRANSIT_RE.split(rest, maxsplit=1)[0]):
            raise PlanFormatError("times must read 'from HH:MM to HH:MM'", day=day, field=FIELD, snippet=entry)
    if m is None:  # neither activity nor times: `Name[, nearest transit: ...]`
        transit = _TRANSIT_RE.search(entry)
        cut = transit.start() if transit else len(entry)
        name, act, rest = unwrap(entry[:cut]), None, entry[cut:]
    else:
        name, act = unwrap(m["name"]), (m["act"] if "act" in m.re.groupindex else None)
    if not name:
        raise PlanFormatError("entry without a name", day=day, field=FIELD, snippet=entry)
    activity = _activity(act) if act else None
    if activity is None and _TRANSPORT_NAME_RE.match(name):
        activity = "travel"
    remark, stop, distance = _split_transit(rest)
    return RawItem(name, activity, start, end, stop, distance, _note(remark))


def _activity(word: str) -> Activity:
    """The activity of an activity word as written (`Check-in`, `check in`, `BOARD`)."""
    hit = _ACTIVITIES.get(word)
    if hit is None:
        key = _ACT_SEP_RE.sub("", word)
        hit = ACTIVITY_WORDS.get(key.lower())
        if hit is None:  # letters IGNORECASE equates with ASCII ones: dotless ı, long ſ, the Kelvin sign
            hit = next((a for k, a in ACTIVITY_WORDS.items() if re.fullmatch(k, key, re.IGNORECASE)), None)
        if hit is None:
            raise ValueError(f"{word!r} is not one of the activity words {sorted(ACTIVITY_WORDS)}")
        _ACTIVITIES[word] = hit
    return hit


_ACTIVITIES: dict[str, Activity] = {}  # bounded: the words are _ACT's spellings in any letter case
_ACT_SEP_RE = re.compile(r"[\s-]")
_TIMES: dict[str, int | None] = {}  # time tokens already read (a pure function's memo, bounded)
_TIMES_MAX = 1 << 14
_UNREAD: typing.Any = object()  # a token not in _TIMES (None there means "a placeholder")


def _time(token: str, day: int | str, entry: str) -> int | None:
    """A clock token, or None for the placeholders `()`, `-`, `?`, `TBD`, `N/A`."""
    value = _TIMES.get(token, _UNREAD)
    if value is _UNREAD:
        value = clock(token, day=day, field=FIELD, snippet=entry) if _CLOCK_RE.fullmatch(token.strip()) else None
        remember(_TIMES, token, value, _TIMES_MAX)
    return value


# The tail `format_item` writes, `, nearest transit: Stop, 0.5km away`. Its distance ends the text, so
# it is the last one `find_distance` sees (a distance inside the stop cannot reach across the comma),
# and the general path below gives exactly (no remark, unwrap(stop), metres); this reads it with one
# match (tests/plan_format/test_plan_format_hypothesis.py compares the two). The stop is matched comma group by
# comma group (the same shortest stop as `.*?`, with fewer steps).
_CANONICAL_TAIL = (r",[ ]*nearest transit:(?P<stop>[^,]*+(?:,[^,]*+)*?),[ ]*(?P<num>\d+(?:\.\d+)?)(?P<unit>km)"
                   r" away[ ]*")
_CANONICAL_TAIL_RE = re.compile(_CANONICAL_TAIL)
# The whole entry `format_item` writes without a remark, `Name, <activity> from HH:MM to HH:MM` and the
# optional canonical tail; the name is matched comma group by comma group and ends before the first
# `, <activity> ` (a name holding one would fail the check below anyway, so this loses no entry and
# keeps the match linear: one place to try the rest, never one per activity word). When the name
# holds no activity word where `_ITEM_RE` could take one (`_ACT_WORD_RE`: at its start or after a
# space or comma, any letter case), `_ITEM_RE` matches the entry with the name group `Name, ` (its
# first possible activity is this one), the same activity word and time tokens (nothing after the
# end time can extend it) and the tail as its rest, and `unwrap` leaves the name as it is (no space,
# `,` or `;` at its ends, no `(` first): parse_entry's general reading gives exactly the RawItem of
# its fast path (tests/plan_format/test_plan_format_fast.py compares the two on generated entries).
_CANONICAL_ACT = "|".join(typing.get_args(Activity))
_CANONICAL_ENTRY_RE = re.compile(
    rf"(?P<name>[^\s,;(][^,]*+(?:,(?! (?:{_CANONICAL_ACT}) )[^,]*+)*+)(?<![\s,;]), (?P<act>{_CANONICAL_ACT}) "
    rf"from (?P<start>\d\d:\d\d) to (?P<end>\d\d:\d\d)(?:{_CANONICAL_TAIL})?")
_ACT_WORD_RE = re.compile(rf"{_AFTER_SEP}(?:{_ACT})\b", _FLAGS)


@functools.lru_cache(maxsize=1 << 14)  # names repeat within and across plans; a pure function's bounded memo
def _holds_activity_word(name: str) -> bool:
    """True if `_ITEM_RE` could take an activity word inside `name` (so the fast path does not apply)."""
    return _ACT_WORD_RE.search(name) is not None


@functools.lru_cache(maxsize=1 << 14)  # stop names repeat; a pure function's bounded memo
def _canonical_stop(text: str) -> str | None:
    """The stop of a match of `_CANONICAL_TAIL` (its `stop` group), None for `-`."""
    stop = unwrap(text + ", ")
    return None if is_absent(stop) else stop


def _split_transit(rest: str) -> tuple[str, str | None, float | None]:
    """(remark text, stop, metres) of the text after the times."""
    fast = _CANONICAL_TAIL_RE.fullmatch(rest)
    if fast is not None:
        return "", _canonical_stop(fast["stop"]), distance_m(fast)
    m = _TRANSIT_RE.search(rest)
    if m is None:
        return rest, None, None
    remark, after = rest[: m.start()], rest[m.end():]
    dist = find_distance(after)
    if dist is None:
        stop_text, distance = after, None
    else:
        stop_text, distance = after[: dist.start()], distance_m(dist)
        remark += " " + after[dist.end():]
    stop = unwrap(stop_text)
    return remark, None if is_absent(stop) else stop, distance


def _note(text: str) -> str | None:
    note = unwrap(" ".join(text.split()))
    return note or None


def place(raw: list[RawItem]) -> list[tuple[int | None, int | None]]:
    """Minutes from the day's midnight of every item's start and end (the past-midnight rule).

    An end before its start is past midnight; a start more than 12 h before the previous known
    time is the next day; unknown times stay None and do not move the reference.
    """
    out, ref = [], None
    for item in raw:
        start = None if item.start is None else at_or_after(item.start, ref, PAST_MIDNIGHT_SLACK)
        if start is not None:
            ref = start
        slack = 0 if start is not None else PAST_MIDNIGHT_SLACK
        end = None if item.end is None else at_or_after(item.end, ref, slack)
        if end is not None:
            ref = end
        out.append((start, end))
    return out


def format_item(item: PlanItem) -> str:
    """The paper's POI entry of one item (see the module docstring)."""
    times = " to ".join("()" if t is None else format_hhmm(t) for t in (item.start, item.end))
    text = f"{item.name}, {item.activity} from {times}"
    if item.note:
        text += f" ({item.note})"
    if item.transit_stop is not None or item.transit_distance_m is not None:
        text += f", nearest transit: {item.transit_stop or '-'}"
        if item.transit_distance_m is not None:
            text += f", {format_km(item.transit_distance_m)} away"
    return text
