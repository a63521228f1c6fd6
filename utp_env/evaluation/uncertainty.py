"""BAS, CATS and TDAS (paper appendix B.1-B.3; docs/METRICS.md): each formula in one function.

All three share the deviation score Q of a buffer B from an expected range [a, b]
(`deviation`) and the aggregate 1 - mean(min(1, Q)) (`absorption_score`).
"""

from __future__ import annotations

from collections.abc import Sequence

from utp_env.config import MealWindow, RiskRange, UncertaintyConfig
from utp_env.evaluation.context import CrowdProfile, eval_index
from utp_env.tools.clock import MINUTES_PER_DAY
from utp_env.tools.database import Database


def deviation(buffer: float, low: float, high: float) -> float:
    """Q = 0 if low <= B <= high, else min(|B - low|, |B - high|) / max(high - low, 1) (eqs. 11-12, 29)."""
    if low <= buffer <= high:
        return 0.0
    to_low, to_high, width = abs(buffer - low), abs(buffer - high), high - low
    # min() and max() spelled out (they are most of this hot function's cost), ties and NaN as they resolve them
    return (to_high if to_high < to_low else to_low) / (1.0 if width < 1.0 else width)


def absorption_score(qs: Sequence[float]) -> float | None:
    """1 - mean(min(1, Q)) over the scored items (eqs. 13, 30); None when there are none."""
    if not qs:
        return None
    return 1.0 - sum([q if q < 1.0 else 1.0 for q in qs]) / len(qs)  # min(1, q), as min() resolves ties


def hour_in(hour: int, start_hour: int, end_hour: int) -> bool:
    """Whether `hour` lies in the inclusive window [start_hour, end_hour], which may wrap midnight."""
    if start_hour <= end_hour:
        return start_hour <= hour <= end_hour
    return hour >= start_hour or hour <= end_hour


def meal_of_hour(hour: int, meals: dict[str, MealWindow]) -> str | None:
    """The meal whose start-hour window contains `hour` (Table 9: 06-10 breakfast, 11-15 lunch, 16-05 dinner)."""
    for name, window in meals.items():
        if hour_in(hour % 24, window.start_hour, window.end_hour):
            return name
    return None


def restaurant_base_minutes(start: int, meals: dict[str, MealWindow]) -> float:
    """v of a restaurant visit from its start hour (Table 9); 0 if no meal window covers the hour."""
    meal = meal_of_hour(start // 60, meals)
    return meals[meal].base_minutes if meal is not None else 0.0


def base_visit_minutes(db: Database, table: str, row: int | None, start: int,
                       meals: dict[str, MealWindow]) -> float:
    """v of BAS: an attraction's visit_duration_hr x 60 (Table 7 means), a restaurant's meal base
    minutes by start hour (Table 9; the row is not needed, so unknown restaurants get it too)."""
    if table == "attractions":
        return float(eval_index(db).column("attractions", "visit_duration_hr")[row]) * 60.0  # type: ignore[index]
    return restaurant_base_minutes(start, meals)


def congestion(profile: CrowdProfile | None, start: int, factors: dict[str, float]) -> tuple[float, str | None]:
    """(Cf, tier): the tier of the crowd window containing the start hour; (1.0, None) without one."""
    if profile is None:
        return 1.0, None
    tier = profile.level_at((start // 60) % 24)
    return (factors[tier], tier) if tier is not None else (1.0, None)


def bas_range(v: float, cf: float, risk: RiskRange) -> tuple[float, float]:
    """Expected buffer range [low*v*Cf, high*v*Cf] (eqs. 9-10)."""
    return risk.low * v * cf, risk.high * v * cf


def hour_spans(start: int, end: int) -> tuple[int, list[tuple[int, int]]]:
    """How the interval [start, end) spreads over the clock: (whole days, [(hour 0-23, minutes), ...]),
    the whole days of 24 hours first, then the minutes of what remains in each clock hour it
    touches, in order (a remainder that wraps onto the hour it began in lists that hour twice).

    Minutes past 1440 fold onto the clock, so a visit 23:30-00:30 gives [(23, 30), (0, 30)].
    """
    full_days, rest = divmod(end - start if end > start else 0, MINUTES_PER_DAY)
    spans = []
    t, stop, hour = start, start + rest, start // 60
    while t < stop:
        hour += 1
        nxt = hour * 60 if hour * 60 < stop else stop  # the end of the hour, or of the interval
        spans.append(((hour - 1) % 24, nxt - t))
        t = nxt
    return full_days, spans


def hour_minutes(start: int, end: int) -> list[float]:
    """Minutes of the interval [start, end) falling in each hour of the day (0-23): `hour_spans`
    as a list, 60 for every whole day in every hour."""
    full_days, spans = hour_spans(start, end)
    out = [60.0 * full_days] * 24
    for hour, minutes in spans:
        out[hour] += minutes
    return out


def crowd_timing_score(profile: CrowdProfile, start: int, end: int,
                       intensities: dict[str, float]) -> tuple[float, float] | None:
    """CATS score of one visit and its intensity I (eqs. 14-20); None for a zero-length visit.

    I = sum_w overlap_w * intensity_w / duration; quiet = minutes in quiet hours / duration;
    peak = minutes in the peak window / duration; score = clip(1 - I + quiet(1 - I) - peak*I, 0, 1).
    Empty quiet hours give no bonus, no peak window no penalty (Table 13). The minutes in a set of
    hours are those `hour_minutes` gives each hour, summed from the few hours the visit touches
    (`hour_spans`, `CrowdProfile.windows_at`): whole minutes, so every sum is exact in any order.
    """
    duration = end - start
    if duration <= 0:
        return None
    full_days, spans = hour_spans(start, end)
    whole = 60 * full_days  # minutes in every hour from the whole days
    windows, quiet_hours, peak_hours = profile.windows, profile.quiet, profile.peak
    # minutes in each window, by its position in the profile
    in_window = [whole * len(hours) for hours, _ in windows] if whole else [0] * len(windows)
    quiet, peak = whole * len(quiet_hours), whole * len(peak_hours)
    windows_at = profile.windows_at
    for hour, minutes in spans:
        for w in windows_at[hour]:
            in_window[w] += minutes
        if hour in quiet_hours:
            quiet += minutes
        if hour in peak_hours:
            peak += minutes
    # Summed window by window, in the profile's order. (A window without minutes adds 0 x I, +-0.0 for a
    # finite I, which leaves the sum as it is: the sum never is -0.0, as it starts at +0.0.)
    weighted = 0.0
    for (_, level), minutes in zip(windows, in_window, strict=True):
        weighted += minutes * intensities[level]
    intensity = weighted / duration
    score = 1.0 - intensity + quiet / duration * (1.0 - intensity) - peak / duration * intensity
    return min(1.0, max(0.0, score)), intensity


def tdas_range(expected_delay: float, risk: RiskRange) -> tuple[float, float]:
    """Expected safe buffer range [low*E[D], high*E[D]] (eqs. 27-28)."""
    return risk.low * expected_delay, risk.high * expected_delay


def transport_buffer(dep: int, planned_arrival: int, hist_duration: float) -> float:
    """B_j = planned duration (planned arrival - departure) - historical duration (eq. 22)."""
    return (planned_arrival - dep) - hist_duration


def risk_range(config: UncertaintyConfig, profile: str) -> RiskRange:
    """The risk multipliers of a profile, with an error naming the known profiles."""
    try:
        return config.risk_multipliers[profile]
    except KeyError:
        raise ValueError(f"unknown risk profile {profile!r}; the config defines "
                         f"{', '.join(config.risk_multipliers)}") from None
