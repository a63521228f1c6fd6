"""CATS sums the minutes of each crowd window from the clock hours a visit touches
(`uncertainty.hour_spans`, `CrowdProfile.windows_at`) and adds only the windows the visit reaches when
every intensity is finite. It must give the same floats as the formula of docs/METRICS.md read
literally: the minutes of every hour (`hour_minutes`) summed over each window's hours, every window
added in the profile's order. Compared on random profiles (overlapping and wrapping windows, empty
quiet hours and peaks, levels missing from the intensities, infinite and NaN intensities) and
intervals (zero, negative, several days long).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from utp_env.evaluation import uncertainty as un
from utp_env.evaluation.context import CrowdProfile, window_hours
from utp_env.tools.clock import MINUTES_PER_DAY


def literal_score(profile: CrowdProfile, start: int, end: int,
                  intensities: dict[str, float]) -> tuple[float, float] | None:
    """docs/METRICS.md's CATS, word for word."""
    duration = end - start
    if duration <= 0:
        return None
    minutes_in = un.hour_minutes(start, end).__getitem__
    weighted = 0.0
    for hours, level in profile.windows:
        weighted += sum(map(minutes_in, hours)) * intensities[level]
    intensity = weighted / duration
    quiet = sum(map(minutes_in, profile.quiet)) / duration
    peak = sum(map(minutes_in, profile.peak)) / duration
    score = 1.0 - intensity + quiet * (1.0 - intensity) - peak * intensity
    return min(1.0, max(0.0, score)), intensity


def literal_hour_minutes(start: int, end: int) -> list[float]:
    """Minute by minute: each minute of [start, end) in its clock hour."""
    out = [0.0] * 24
    for minute in range(start, max(start, end)):
        out[(minute // 60) % 24] += 1
    return out


def outcome(score: object, *args: object) -> str:
    try:
        return repr(score(*args))  # type: ignore[operator]
    except KeyError as exc:
        return f"KeyError {exc}"


hour = st.integers(0, 23)
LEVELS = ["L", "BA", "A", "AA", "H", "X"]
profiles = st.builds(
    CrowdProfile,
    st.lists(st.tuples(st.builds(window_hours, hour, hour), st.sampled_from(LEVELS)), max_size=8).map(tuple),
    st.frozensets(hour, max_size=6),
    st.one_of(st.just(frozenset()), st.builds(window_hours, hour, hour)),
)
intensities = st.fixed_dictionaries(
    {}, optional={level: st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, 0.25, 0.5, 1.0])
                  for level in LEVELS})
starts = st.integers(0, 3 * MINUTES_PER_DAY)
lengths = st.integers(-30, 300) | st.integers(0, 4 * MINUTES_PER_DAY)


@settings(max_examples=3000, deadline=None)
@given(profiles, starts, lengths, intensities)
def test_crowd_score_is_the_literal_formula(profile: CrowdProfile, start: int, length: int,
                                            levels: dict[str, float]) -> None:
    assert outcome(un.crowd_timing_score, profile, start, start + length, levels) == \
        outcome(literal_score, profile, start, start + length, levels)


@settings(max_examples=500, deadline=None)
@given(starts, lengths)
def test_hour_minutes_counts_every_minute_in_its_hour(start: int, length: int) -> None:
    assert un.hour_minutes(start, start + length) == literal_hour_minutes(start, start + length)
