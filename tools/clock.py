"""Clock times and dates: the one conversion and the one `+N day` grammar every layer uses.

- `HH:MM` text <-> minutes from midnight (`parse_hhmm`, `format_hhmm`); a venue's hours as minutes, a close at or
  before the opening being the next day's (`opening_hours`).
- A time past the day's midnight is written as its clock time plus a day offset, the paper's
  `06:45 (+1 day)`. The grammar, read by the env's itinerary tools, the plan-format parser and
  nothing else: after a clock time `+N`, `+Nd`, `+N day`, `+N days`, optionally in parentheses
  (`07:40+1`, `07:40 (+1 day)`); inside free text such as a remark the unit is required, so that
  `+15 min` is not read as fifteen days. It is written one way, `+N day` (`format_day_offset`).
- Weekdays: `weekday` (Mon = 0) and their short names `WEEKDAYS`, what the `run_days` bits of
  `utp_env/tools/schema.py` index.
"""

from __future__ import annotations

import datetime as dt
import re

MINUTES_PER_DAY = 1440
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")

_OFFSET = r"\+\s*(?P<days>\d{1,2})\s*"
_UNIT = r"(?:days?|d)\b"
_IN_TEXT_RE = re.compile(_OFFSET + _UNIT, re.IGNORECASE)
_STAMP_RE = re.compile(rf"^\s*(?P<clock>\d{{1,2}}:\d{{2}})\s*(?:\(?\s*{_OFFSET}(?:{_UNIT})?\s*\)?)?\s*$",
                       re.IGNORECASE)


def format_hhmm(minutes: int) -> str:
    """`HH:MM` of a minute count, wrapped to the clock (1500 -> '01:00')."""
    minutes = int(minutes) % MINUTES_PER_DAY
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def parse_hhmm(text: str) -> int:
    """Minutes from midnight of an `H:MM`/`HH:MM` clock time; ValueError otherwise."""
    hours, _, mins = text.strip().partition(":")
    if not (hours.isdigit() and mins.isdigit() and len(mins) == 2):
        raise ValueError(f"not a HH:MM time: {text!r}")
    h, m = int(hours), int(mins)
    if h > 24 or m > 59 or (h == 24 and m):
        raise ValueError(f"not a clock time: {text!r}")
    return h * 60 + m


def opening_hours(open_time: str, close_time: str) -> tuple[int, int]:
    """(open, close) in minutes of a venue's `HH:MM` hours; a close at or before the opening (00:00 = midnight) is
    the next day's."""
    opening, closing = parse_hhmm(open_time), parse_hhmm(close_time)
    return opening, closing + MINUTES_PER_DAY if closing <= opening else closing


def day_offset(text: str) -> int | None:
    """The N of a `+N day` / `+Nd` note anywhere in free text, or None if there is none."""
    m = _IN_TEXT_RE.search(text)
    return int(m["days"]) if m else None


def parse_stamp(text: str) -> tuple[int, int | None]:
    """(minutes of the clock time, the stated day offset or None) of `HH:MM[ +N[ day]]`.

    `'07:40'` -> (460, None); `'07:40+1'`, `'07:40 +1d'`, `'07:40 (+1 day)'` -> (460, 1).
    ValueError for anything else.
    """
    m = _STAMP_RE.match(text)
    if m is None:
        raise ValueError(f"not a HH:MM time with an optional '+N day': {text!r}")
    return parse_hhmm(m["clock"]), (int(m["days"]) if m["days"] is not None else None)


def stamp_minutes(text: str) -> int:
    """Minutes from the day's midnight of `HH:MM[ +N[ day]]` (`'07:40 +1 day'` -> 1900); ValueError otherwise."""
    clock, days = parse_stamp(text)
    return clock + MINUTES_PER_DAY * (days or 0)


def format_day_offset(minutes: int) -> str:
    """The `+N day` note of a time `minutes` past the day's midnight; '' on the same day."""
    days = int(minutes) // MINUTES_PER_DAY
    return f"+{days} day" if days > 0 else ""


def format_stamp(minutes: int) -> str:
    """`HH:MM`, followed by ` +N day` when `minutes` lies past the day's midnight (1900 -> '07:40 +1 day')."""
    offset = format_day_offset(minutes)
    return f"{format_hhmm(minutes)} {offset}" if offset else format_hhmm(minutes)


def weekday(date: str) -> int:
    """Weekday index (Mon = 0 .. Sun = 6) of an ISO `YYYY-MM-DD` date; ValueError if it is not one."""
    return dt.date.fromisoformat(date).weekday()
