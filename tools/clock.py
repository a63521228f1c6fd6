"""Clock times: `HH:MM` text and minutes from midnight, the one conversion every layer uses."""

from __future__ import annotations

MINUTES_PER_DAY = 1440


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
