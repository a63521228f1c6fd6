"""The five TripCraft metrics (docs/METRICS.md; parameters in `TripCraftParams`).

Each returns a value in [0, 1] or None when there is nothing to judge; inputs are plain values
so the formulas can be tested by hand. Persona affinities come from the keyword tables below
(documented in docs/METRICS.md).
"""

from __future__ import annotations

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
    h = min((midpoint_hour + shift for shift in (-24.0, 0.0, 24.0)), key=lambda x: abs(x - g.mu_hour))
    zx = (h - g.mu_hour) / g.sigma_hour
    zy = (duration_min - g.mu_minutes) / g.sigma_minutes
    q = (zx * zx - 2 * g.rho * zx * zy + zy * zy) / (1 - g.rho * g.rho)
    return math.exp(-q / 2)


# --- temporal attraction ---------------------------------------------------------------------


def persona_style(traveler_type: str) -> int:
    """+1 for adventure seekers, -1 for laid-back travellers, 0 otherwise (keyword match)."""
    text = traveler_type.casefold()
    if "adventure" in text:
        return 1
    if "laid" in text or "relax" in text:
        return -1
    return 0


def attraction_duration_score(duration_min: float, v_min: float, style: int, sigma: float, k: float) -> float:
    """exp(-(d - mu)^2 / (2 sigma^2)) with mu = v + style*k (persona-adjusted mean duration)."""
    mu = v_min + style * k
    return math.exp(-((duration_min - mu) ** 2) / (2 * sigma * sigma))


def poisson_count_score(n: int, lam: float) -> float:
    """Poisson(lam) pmf at n divided by its value at the mode floor(lam), so the mode scores 1."""
    def log_pmf(m: int) -> float:
        return m * math.log(lam) - lam - math.lgamma(m + 1)
    return math.exp(log_pmf(n) - log_pmf(math.floor(lam)))


def day_attraction_score(durations: Sequence[float], vs: Sequence[float], n_visits: int, style: int,
                         sigma: float, k: float, lam: float) -> float:
    """A day's score: mean duration score of its timed attraction visits x the count score."""
    g = [attraction_duration_score(d, v, style, sigma, k) for d, v in zip(durations, vs, strict=True)]
    return sum(g) / len(g) * poisson_count_score(n_visits, lam)


# --- spatial ---------------------------------------------------------------------------------


def spatial_item_score(distance_m: float, near_m: float = 5000.0, decay_per_m: float = 0.0002) -> float:
    """d <= near: 1 - 0.5 d/near; else 0.5 exp(-decay (d - near)) (continuous at d = near)."""
    if distance_m <= near_m:
        return 1.0 - 0.5 * distance_m / near_m
    return 0.5 * math.exp(-decay_per_m * (distance_m - near_m))


# --- ordering --------------------------------------------------------------------------------


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
    """Mean day-by-day sequence similarity; a day missing on one side scores 0. None if no days."""
    n = max(len(plan_days), len(reference_days))
    if n == 0:
        return None
    total = sum(sequence_similarity(plan_days[i], reference_days[i])
                for i in range(min(len(plan_days), len(reference_days))))
    return total / n


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


def preferred_categories(location_preference: str, purpose: str, traveler_type: str) -> frozenset[str]:
    """Attraction categories the persona favours (union over the three keyword tables)."""
    return (_matches(location_preference, LOCATION_CATEGORIES) | _matches(purpose, PURPOSE_CATEGORIES)
            | _matches(traveler_type, TRAVELER_CATEGORIES))


def preferred_tiers(spending: str) -> frozenset[str]:
    """Restaurant price tiers the persona's spending preference favours."""
    return _matches(spending, SPENDING_TIERS)


def persona_score(attraction_categories: Sequence[Sequence[str]], restaurant_tiers: Sequence[str],
                  categories: frozenset[str], tiers: frozenset[str]) -> float | None:
    """Fraction of judged visits matching the persona: attractions sharing a favoured category,
    restaurants in a favoured price tier. Only sides with favoured values are judged; None if none."""
    judged = matched = 0
    if categories:
        judged += len(attraction_categories)
        matched += sum(1 for cats in attraction_categories if categories.intersection(cats))
    if tiers:
        judged += len(restaurant_tiers)
        matched += sum(1 for tier in restaurant_tiers if tier in tiers)
    return matched / judged if judged else None
