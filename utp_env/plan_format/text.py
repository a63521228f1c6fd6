"""Small text helpers shared by the transport and point-of-interest grammars.

They hold the rules that must exist once: what counts as an absent value (read by the parser
and the evaluator, `ABSENT_MARKERS`) and what is written for one (`ABSENT`), how a clock time is
read, how a clock time becomes minutes past the day's midnight (the past-midnight rule), how
`;`-lists are split without breaking parenthesised remarks, and how distances are read and written.
The `+N day` note is the grammar of `utp_env.tools.clock` (`day_offset`).
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal, InvalidOperation

from utp_env.plan_format.errors import PlanFormatError
from utp_env.tools.clock import MINUTES_PER_DAY, parse_hhmm
from utp_env.tools.memo import remember

# The paper writes `-` for a field with nothing in it ("The symbol '-' indicates that information is
# unnecessary"); planners and LLMs also write these. Compared after strip + casefold.
ABSENT = "-"
ABSENT_MARKERS = frozenset({"", ABSENT, "--", "–", "—", "none", "null", "n/a", "na", "nil"})
# A clock token as LLMs write it: `9:40`, `09:40`, `9:40 pm`. Digits are unbounded on purpose so
# that `125:00` is caught as a bad time instead of being read as `25:00`.
CLOCK = r"\d+\s*:\s*\d+(?:\s*[ap]\.?\s?m\b\.?)?"
_CLOCK_RE = re.compile(r"^\s*(?P<h>\d+)\s*:\s*(?P<m>\d+)\s*(?P<ampm>[ap])?\.?\s?m?\.?\s*$", re.IGNORECASE)
_DISTANCE_RE = re.compile(
    r"(?<![\d.])(?P<num>\d+(?:\.\d+)?)\s*+(?P<unit>kms?|kilomet(?:er|re)s?|m|mtrs?|met(?:er|re)s?)\b\.?(?:\s+away)?",
    re.IGNORECASE,
)
PAST_MIDNIGHT_SLACK = 720  # a start up to 12 h before the previous time is an overlap, not tomorrow


def is_absent(value: object) -> bool:
    """True for the markers the paper and LLMs use for 'nothing': `-`, empty, None, `null`."""
    return value is None or (isinstance(value, str) and is_absent_stripped(value.strip()))


_LONGEST_MARKER = max(map(len, ABSENT_MARKERS))


def is_absent_stripped(text: str) -> bool:
    """`is_absent` of a text that is already stripped (what `split_top` returns).

    A longer text is no marker: `casefold` never shortens a text, so it is not folded at all.
    """
    return len(text) <= _LONGEST_MARKER and text.casefold() in ABSENT_MARKERS


_CLOCKS: dict[str, int] = {}  # valid clock tokens already read (a pure function's memo, bounded)
_CLOCKS_MAX = 1 << 14


def clock(text: str, *, day: int | str | None, field: str, snippet: str) -> int:
    """Minutes from midnight of a clock token (`9:40`, `21:05`, `9:40 pm`); PlanFormatError if invalid."""
    hit = _CLOCKS.get(text)
    if hit is not None:
        return hit
    return remember(_CLOCKS, text, _clock(text, day=day, field=field, snippet=snippet), _CLOCKS_MAX)


def _clock(text: str, *, day: int | str | None, field: str, snippet: str) -> int:
    m = _CLOCK_RE.match(text)
    if m is None:
        raise PlanFormatError(f"{text.strip()!r} is not a HH:MM time", day=day, field=field, snippet=snippet)
    h, mins, ampm = int(m["h"]), m["m"], (m["ampm"] or "").lower()
    try:
        if len(mins) != 2:
            raise ValueError(text)
        if ampm:
            if not 1 <= h <= 12:
                raise ValueError(text)
            h = h % 12 + (12 if ampm == "p" else 0)
        return parse_hhmm(f"{h}:{mins}") % MINUTES_PER_DAY
    except ValueError:
        raise PlanFormatError(f"{text.strip()!r} is not a valid clock time (00:00-23:59)",
                              day=day, field=field, snippet=snippet) from None


def at_or_after(clock_min: int, ref: int | None, slack: int = 0) -> int:
    """The past-midnight rule: `clock_min` + 1440·k for the smallest k >= 0 not before `ref - slack`.

    An end earlier than its start (slack 0) is past midnight (`stay 22:15 to 07:00` -> 1860). A
    start is compared with the previous known time with a 12 h slack, so a late dinner followed by
    `00:45` moves to the next day while a small overlap (Fig. 9: 11:00-14:30 then 14:00) stays an
    overlap for the evaluator to flag.
    """
    if ref is None:
        return clock_min
    floor = ref - slack
    if clock_min >= floor:
        return clock_min
    return clock_min + MINUTES_PER_DAY * (-(-(floor - clock_min) // MINUTES_PER_DAY))


def split_top(text: str, sep: str) -> list[str]:
    """Split on `sep` (one character) outside parentheses (remarks may contain `;` or `,`), stripping each part.

    Unbalanced parentheses fall back to a plain split, so one stray `(` cannot swallow a list.
    """
    if sep not in text:  # one part, whatever the parentheses
        return [text.strip()]
    if "(" not in text and ")" not in text:
        return [p.strip() for p in text.split(sep)]
    parts, depth, start = [], 0, 0
    for m in _split_re(sep).finditer(text):  # only the parentheses and separators, not every character
        ch, i = m.group(), m.start()
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    if depth:
        parts = text.split(sep)
    return [p.strip() for p in parts]


@functools.cache
def _split_re(sep: str) -> re.Pattern[str]:
    if len(sep) != 1:
        raise ValueError(f"split_top splits on one character, not {sep!r}")
    return re.compile("[()" + re.escape(sep) + "]")


def unwrap(text: str) -> str:
    """`text` without surrounding spaces and `,;`, and without one enclosing pair of parentheses."""
    text = text.strip().strip(",;").strip()
    if text.startswith("(") and text.endswith(")") and _closes_at_end(text):
        text = text[1:-1].strip()
    return text


def _closes_at_end(text: str) -> bool:
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(text) - 1:
            return False
    return depth == 0


def find_distance(text: str) -> re.Match[str] | None:
    """The last distance (`0.5km`, `300 m away`) in `text`."""
    last = None
    for last in _DISTANCE_RE.finditer(text):  # noqa: B007 - keep the last match
        pass
    return last


def distance_m(m: re.Match[str]) -> float:
    """Metres of a distance match; decimal arithmetic so that `0.113km` is exactly 113.0."""
    return metres(m["num"], m["unit"][0] in "kK")


@functools.lru_cache(maxsize=1 << 14)  # distances repeat; a pure function's bounded memo
def metres(num: str, km: bool) -> float:
    """Metres of a distance number as written (digits, optional decimals) in km or in metres."""
    try:
        value = Decimal(num)
    except InvalidOperation:  # pragma: no cover - the regex admits only digits
        raise ValueError(num) from None
    if km:
        value *= 1000
    return float(value)


def format_km(metres: float) -> str:
    """`0.5km` for 500 m: the paper writes kilometres; exact for any float (round-trips)."""
    km = Decimal(repr(float(metres))) / 1000
    text = format(km.normalize(), "f")
    return f"{text}km"
