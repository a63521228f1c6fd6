"""The five TripCraft metrics (docs/METRICS.md; parameters in `TripCraftParams`).

Each returns a value in [0, 1] or None when there is nothing to judge; higher is better for all
five; inputs are plain values so the formulas can be tested by hand. Persona affinities come from
the keyword tables below (documented in docs/METRICS.md).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

from utp_env.config import MealGaussian

# --- temporal meal ---------------------------------------------------------------------------


def meal_score(midpoint_hour: float, duration_min: float, g: MealGaussian) -> float:
    """Bivariate Gaussian over (meal midpoint in hours, duration in minutes), 1 at the mean.

    exp(-q/2), q = (zx^2 - 2 rho zx zy + zy^2) / (1 - rho^2), zx = (h - mu_h)/sigma_h,
    zy = (d - mu_d)/sigma_d. The midpoint is taken as h, h + 24 or h - 24, whichever lies
    nearest the mean, so a dinner ending after midnight is not judged as a breakfast.
    """
    mu, rho = g.mu_hour, g.rho  # each read once (a model's attribute costs more than a local's)
    h = midpoint_hour - 24.0
    for shifted in (midpoint_hour + 0.0, midpoint_hour + 24.0):  # min(key=...) spelled out: the first nearest
        if abs(shifted - mu) < abs(h - mu):
            h = shifted
    zx = (h - mu) / g.sigma_hour
    zy = (duration_min - g.mu_minutes) / g.sigma_minutes
    q = (zx * zx - 2 * rho * zx * zy + zy * zy) / (1 - rho * rho)
    return math.exp(-q / 2)


# --- temporal attraction ---------------------------------------------------------------------
# TripCraft's formulation (its public evaluation code, evaluation/qualitative_metrics.py,
# calculate_temporal_score): per attraction, a Gaussian on the visit duration around a mean that
# depends on the persona and on the day's attraction count n, times the raw Poisson probability of
# n. Not normalised: the best possible value is the Poisson mode's probability (0.366 at
# lambda 1.11, 0.295 at lambda 1.82), and higher is better.

ATTRACTION_COUNT_CAP = 4  # TripCraft's mu_d_max: a non-adventurer's mean duration grows by k per attraction below 4


def is_adventurer(traveler_type: str) -> bool:
    """TripCraft's persona split: adventure seekers (keyword 'adventure') versus everyone else."""
    return "adventure" in traveler_type.casefold()


def attraction_mean_minutes(v_min: float, n: int, adventurer: bool, k: float,
                            cap: int = ATTRACTION_COUNT_CAP) -> float:
    """Expected duration of one visit: v - k*n for adventure seekers, v + k*(cap - n) otherwise."""
    return v_min - k * n if adventurer else v_min + k * (cap - n)


def attraction_duration_score(duration_min: float, mean_min: float, sigma: float) -> float:
    """exp(-(d - mean)^2 / (2 sigma^2))."""
    return math.exp(-((duration_min - mean_min) ** 2) / (2 * sigma * sigma))


def poisson_pmf(n: int, lam: float) -> float:
    """P(N = n) for N ~ Poisson(lam)."""
    return math.exp(n * math.log(lam) - lam - math.lgamma(n + 1))


def day_attraction_score(durations: Sequence[float], vs: Sequence[float], n_visits: int, adventurer: bool,
                         sigma: float, k: float, lam: float) -> float:
    """A day's score: mean over its timed attraction visits of duration score x Poisson(n_visits)."""
    g = [attraction_duration_score(d, attraction_mean_minutes(v, n_visits, adventurer, k), sigma)
         for d, v in zip(durations, vs, strict=True)]
    return sum(g) / len(g) * poisson_pmf(n_visits, lam)


# --- spatial ---------------------------------------------------------------------------------


def spatial_item_score(distance_m: float, near_m: float = 5000.0, decay_per_m: float = 0.0002) -> float:
    """d <= near: 1 - 0.5 d/near; else 0.5 exp(-decay (d - near)) (continuous at d = near)."""
    if distance_m <= near_m:
        return 1.0 - 0.5 * distance_m / near_m
    return 0.5 * math.exp(-decay_per_m * (distance_m - near_m))


def mean_of_day_means(days: Sequence[Sequence[float]]) -> float | None:
    """Mean over the days that have scores of each day's mean score (TripCraft's spatial
    aggregation); None when no day has one."""
    means = [sum(d) / len(d) for d in days if d]
    return sum(means) / len(means) if means else None


# --- ordering --------------------------------------------------------------------------------


# TripCraft's tokens (evaluation/qualitative_metrics.py, get_poi_sequence): x a stay, y a meal,
# z anything else (attractions, events, airports and stations, journeys).
ORDERING_TOKENS: dict[str, str] = {"accommodation": "x", "restaurant": "y"}


def ordering_token(kind: str) -> str:
    """The ordering token of an item kind: x accommodation, y restaurant, z otherwise."""
    return ORDERING_TOKENS.get(kind, "z")


def levenshtein(a: Sequence[str], b: Sequence[str]) -> int:
    """Edit distance (insertions, deletions, substitutions, each cost 1) between two sequences."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def sequence_similarity(a: Sequence[str], b: Sequence[str]) -> float:
    """1 - levenshtein(a, b) / max(len(a), len(b)); 1 when both are empty."""
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - levenshtein(a, b) / longest


def ordering_score(plan_days: Sequence[Sequence[str]], reference_days: Sequence[Sequence[str]]) -> float | None:
    """The day-by-day reading: mean day-i-with-day-i sequence similarity; a day missing on one
    side scores 0. None if no days."""
    n = max(len(plan_days), len(reference_days))
    if n == 0:
        return None
    total = sum(sequence_similarity(plan_days[i], reference_days[i])
                for i in range(min(len(plan_days), len(reference_days))))
    return total / n


def tripcraft_wed(a: Sequence[str], b: Sequence[str]) -> float:
    """TripCraft's `calculate_wed` (evaluation/qualitative_metrics.py): the recurrence
    dp[i][j] = cost(a_i, b_j) + min(dp[i-1][j], dp[i][j-1], dp[i-1][j-1]) from dp[0][0] = 0 with
    the rest of the border infinite, cost 0 for equal tokens and 1 otherwise. Despite its name it
    is a dynamic-time-warping distance (a token may match several), not Levenshtein's. TripCraft's
    value for an empty side is infinite; here it is the other side's length (every token unmatched)."""
    if not a or not b:
        return float(max(len(a), len(b)))
    previous = [0.0] + [math.inf] * len(b)
    for x in a:
        current = [math.inf]
        for j, y in enumerate(b, 1):
            current.append((x != y) + min(previous[j], current[j - 1], previous[j - 1]))
        previous = current
    return previous[-1]


def tripcraft_ordering_score(plan_days: Sequence[Sequence[str]],
                             reference_days: Sequence[Sequence[str]]) -> float | None:
    """O_ord as TripCraft's `calculate_ordering_score` computes it (written for 3-day plans).

    It sums `tripcraft_wed` over every pair of the first two days of the plan and of the reference
    (four pairs) plus day 3 with day 3, divides by (n - 1)^2 + 1 with n the plan's day count, and
    returns 1 - that mean / max(len) of the day-2 sequences (the variables its loop leaves behind).
    The denominator grows with n while the five pairs stay, which is why the paper's O_ord rises
    with trip length. Clamped to [0, 1] (the code's value can leave it only for pathological plans).
    None without days; 0 when either side has fewer than three days (TripCraft's code fails there).
    """
    if not plan_days and not reference_days:
        return None
    if len(plan_days) < 3 or len(reference_days) < 3:
        return 0.0
    total = sum(tripcraft_wed(reference_days[j], plan_days[i]) for i in range(2) for j in range(2))
    total += tripcraft_wed(reference_days[2], plan_days[2])
    n = len(plan_days)
    mean = total / ((n - 1) * (n - 1) + 1)
    longest = max(len(plan_days[1]), len(reference_days[1]))
    if longest == 0:
        return 1.0 if mean == 0 else 0.0
    return min(1.0, max(0.0, 1.0 - mean / longest))


# --- persona ---------------------------------------------------------------------------------

# Keyword (searched in the lower-cased persona field) -> attraction categories it favours.
LOCATION_CATEGORIES: dict[str, frozenset[str]] = {
    "beach": frozenset({"Boat Tours & Water Sports", "Water & Amusement Parks", "Nature & Parks",
                        "Outdoor Activities"}),
    "mountain": frozenset({"Nature & Parks", "Outdoor Activities"}),
    "histor": frozenset({"Sights & Landmarks", "Museums"}),
    "heritage": frozenset({"Sights & Landmarks", "Museums"}),
    "wildlife": frozenset({"Nature & Parks", "Zoos & Aquariums", "Outdoor Activities"}),
    "forest": frozenset({"Nature & Parks", "Zoos & Aquariums", "Outdoor Activities"}),
    "religio": frozenset({"Sights & Landmarks"}),
    "spiritual": frozenset({"Sights & Landmarks"}),
    "city": frozenset({"Shopping", "Nightlife", "Food & Drink", "Concerts & Shows", "Fun & Games",
                       "Casinos & Gambling", "Sights & Landmarks"}),
    "cities": frozenset({"Shopping", "Nightlife", "Food & Drink", "Concerts & Shows", "Fun & Games",
                         "Casinos & Gambling", "Sights & Landmarks"}),
    "urban": frozenset({"Shopping", "Nightlife", "Food & Drink", "Concerts & Shows", "Fun & Games"}),
    "lake": frozenset({"Boat Tours & Water Sports", "Nature & Parks"}),
    "river": frozenset({"Boat Tours & Water Sports", "Nature & Parks"}),
}
PURPOSE_CATEGORIES: dict[str, frozenset[str]] = {
    "relax": frozenset({"Spas & Wellness", "Nature & Parks", "Food & Drink"}),
    "unwind": frozenset({"Spas & Wellness", "Nature & Parks", "Food & Drink"}),
    "adventure": frozenset({"Outdoor Activities", "Boat Tours & Water Sports", "Water & Amusement Parks",
                            "Fun & Games"}),
    "thrill": frozenset({"Outdoor Activities", "Boat Tours & Water Sports", "Water & Amusement Parks",
                         "Fun & Games"}),
    "cultur": frozenset({"Museums", "Sights & Landmarks", "Concerts & Shows", "Classes & Workshops"}),
    "nature": frozenset({"Nature & Parks", "Zoos & Aquariums", "Outdoor Activities"}),
}
TRAVELER_CATEGORIES: dict[str, frozenset[str]] = {
    "adventure": frozenset({"Outdoor Activities", "Boat Tours & Water Sports", "Water & Amusement Parks"}),
    "laid": frozenset({"Spas & Wellness", "Nature & Parks", "Food & Drink"}),
    "cultur": frozenset({"Museums", "Sights & Landmarks"}),
    "food": frozenset({"Food & Drink"}),
    "nature": frozenset({"Nature & Parks", "Zoos & Aquariums"}),
}
# Spending keyword -> restaurant price tiers it favours.
SPENDING_TIERS: dict[str, frozenset[str]] = {
    "luxur": frozenset({"$$$", "$$$$"}),
    "econom": frozenset({"$", "$$"}),
    "budget": frozenset({"$", "$$"}),
    "moderate": frozenset({"$$", "$$$"}),
}


def _matches(text: str, table: dict[str, frozenset[str]]) -> frozenset[str]:
    low = text.casefold()
    out: frozenset[str] = frozenset()
    for key, values in table.items():
        if key in low:
            out |= values
    return out


@functools.lru_cache(maxsize=1024)  # a pure function of a persona's strings; every plan of a query asks again
def preferred_categories(location_preference: str, purpose: str, traveler_type: str) -> frozenset[str]:
    """Attraction categories the persona favours (union over the three keyword tables)."""
    return (_matches(location_preference, LOCATION_CATEGORIES) | _matches(purpose, PURPOSE_CATEGORIES)
            | _matches(traveler_type, TRAVELER_CATEGORIES))


@functools.lru_cache(maxsize=1024)
def preferred_tiers(spending: str) -> frozenset[str]:
    """Restaurant price tiers the persona's spending preference favours."""
    return _matches(spending, SPENDING_TIERS)


def persona_counts(attraction_categories: Sequence[Sequence[str]], restaurant_tiers: Sequence[str],
                   categories: frozenset[str], tiers: frozenset[str]) -> tuple[int, int]:
    """(matched, judged) visits: attractions sharing a favoured category, restaurants in a favoured
    price tier. Only sides with favoured values are judged."""
    judged = matched = 0
    if categories:
        judged += len(attraction_categories)
        matched += sum(1 for cats in attraction_categories if categories.intersection(cats))
    if tiers:
        judged += len(restaurant_tiers)
        matched += sum(1 for tier in restaurant_tiers if tier in tiers)
    return matched, judged


def persona_score(attraction_categories: Sequence[Sequence[str]], restaurant_tiers: Sequence[str],
                  categories: frozenset[str], tiers: frozenset[str]) -> float | None:
    """Fraction of judged visits matching the persona (`persona_counts`); None if none is judged."""
    matched, judged = persona_counts(attraction_categories, restaurant_tiers, categories, tiers)
    return matched / judged if judged else None


def embedding_persona_score(persona_vectors: Sequence[Sequence[float]],
                            poi_vectors: Sequence[Sequence[float]]) -> float | None:
    """TripCraft's P_persona (`compute_persona_score`): for each PoI, the mean over the persona's
    components of the cosine similarity of their embeddings; the mean over PoIs. None without PoIs
    (TripCraft's code returns 0 then; the evaluator applies `readings.empty_metrics`)."""
    import numpy as np

    if not len(poi_vectors) or not len(persona_vectors):
        return None
    personas = np.asarray(persona_vectors, dtype=np.float64)
    pois = np.asarray(poi_vectors, dtype=np.float64)
    personas = personas / np.maximum(np.linalg.norm(personas, axis=1, keepdims=True), 1e-12)
    pois = pois / np.maximum(np.linalg.norm(pois, axis=1, keepdims=True), 1e-12)
    return float((pois @ personas.T).mean(axis=1).mean())
