"""Venue tables: accommodations, attractions and restaurants, spread over cities by population.

Every city gets at least one stay, two attractions and three restaurants when the profile's
totals allow; major cities take real, well-known places first (`names.py`), then generated
names that are unique within the city.
"""

from __future__ import annotations

import numpy as np

from utp_env.tools.sandbox import names as nm
from utp_env.tools.sandbox.common import Columns, apportion, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile
from utp_env.tools.schema import ATTRACTION_CATEGORIES, CUISINES, HOUSE_RULES, HOUSE_TYPES, PRICE_TIERS

SPREAD_DEG = 0.025  # ~2.8 km: s.d. of venue positions around the city centre
AMENITIES = ("Free Wi-Fi", "Parking", "Restaurant", "Swimming Pool", "Gym", "Wellness Spa", "Airport Shuttle",
             "Air Conditioning", "Bar", "Business Centre", "Garden", "Kids Play Area")
SERVICES = ("Laundry", "Room Service", "Cleaning", "Concierge", "24-hour Front Desk", "Luggage Storage",
            "Doctor on Call", "Travel Desk")
CATEGORY_WEIGHT = {c: (6.0 if c == "Sights & Landmarks" else 3.0 if c in ("Nature & Parks", "Museums", "Shopping")
                       else 1.0) for c in ATTRACTION_CATEGORIES}
CUISINE_WEIGHT = {c: (10.0 if c == "Indian Subcontinent" else 3.0 if c in ("Bar/Pub/Cafe", "Asian") else
                      2.0 if c in ("Pizza/Italian Specialties", "Seafood/Steak/Grill", "International Fusion")
                      else 0.5) for c in CUISINES}
TIER_COST = {"$": (150, 350), "$$": (350, 800), "$$$": (800, 1600), "$$$$": (1600, 3500)}
ATTRACTION_HOURS = {"Nature & Parks": (6, 19), "Nightlife": (19, 1), "Museums": (10, 18), "Shopping": (11, 22),
                    "Water & Amusement Parks": (10, 19), "Zoos & Aquariums": (9, 17), "Casinos & Gambling": (12, 4),
                    "Concerts & Shows": (17, 23), "Food & Drink": (11, 23), "Spas & Wellness": (9, 21)}
RESTAURANT_HOURS = ((7, 23), (11, 23), (12, 0), (8, 22), (18, 1), (11, 0))
# Every Indian town has its tiffin centres and udupi halls open from the morning: at least this many
# restaurants of a city (all of a smaller city's) serve breakfast, enough for a week's stay there
# (Complete Information asks for breakfast on every day spent in one city).
BREAKFAST_PLACES_PER_CITY = 8
BREAKFAST_HOURS = (7, 23)


def per_city(cities: Cities, total: int, minimum: int) -> np.ndarray:
    """Venue counts per city, proportional to population^0.8, with a floor when the total allows."""
    floor = minimum if total >= minimum * cities.n else 0
    return apportion(total, cities.population.astype(float) ** 0.8, minimum=floor)


def _positions(cities: Cities, counts: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    idx = np.repeat(np.arange(cities.n), counts)
    lat = np.round(cities.lat[idx] + rng.normal(0, SPREAD_DEG, len(idx)), 5)
    lon = np.round(cities.lon[idx] + rng.normal(0, SPREAD_DEG, len(idx)), 5)
    return lat, lon


def _city_scale(cities: Cities) -> np.ndarray:
    """Price level of each city (big metros cost more), 0.8-1.6."""
    p = cities.population.astype(float)
    return 0.8 + 0.8 * (np.log(p) - np.log(p.min())) / max(np.log(p.max()) - np.log(p.min()), 1e-9)


def _pick(rng: np.random.Generator, weights: dict[str, float], k: int) -> list[str]:
    keys = list(weights)
    w = np.array(list(weights.values()))
    chosen = rng.choice(len(keys), k, replace=False, p=w / w.sum())
    return [keys[i] for i in sorted(chosen.tolist())]


def _hhmm(hour: int) -> str:
    return f"{hour % 24:02d}:00"


def attractions_table(cities: Cities, profile: SandboxProfile, seed: int) -> Columns:
    rng = stage_rng(seed, "attractions")
    counts = per_city(cities, profile.attractions, 2)
    lat, lon = _positions(cities, counts, rng)
    cols: Columns = {k: [] for k in ("name", "city", "categories", "visit_duration_hr", "rating",
                                     "entry_fee_inr", "open_time", "close_time")}
    for c, k in enumerate(counts.tolist()):
        city = cities.name[c]
        taken: set[str] = set()
        real = nm.REAL_ATTRACTIONS.get(city, [])[:k]
        for i in range(k):
            if i < len(real):
                name, cats = real[i][0], sorted(real[i][1])
                taken.add(name.casefold())
            else:
                cats = _pick(rng, CATEGORY_WEIGHT, 1 if rng.random() < 0.7 else 2)
                templates = nm.ATTRACTION_TEMPLATES[cats[0]]
                name = nm.unique_name(nm.fill(templates[rng.integers(len(templates))], city, rng), taken, rng)
            opening, closing = ATTRACTION_HOURS.get(cats[0], (9, 18))
            cols["name"].append(name)
            cols["city"].append(city)
            cols["categories"].append(cats)
            cols["visit_duration_hr"].append(round(float(np.mean([ATTRACTION_CATEGORIES[x] for x in cats])), 2))
            cols["rating"].append(round(float(rng.uniform(3.4, 4.9)), 1))
            fee = 0.0 if rng.random() < 0.4 else float(rng.choice([20, 30, 50, 100, 200, 300, 500, 1000]))
            cols["entry_fee_inr"].append(fee)
            cols["open_time"].append(_hhmm(opening))
            cols["close_time"].append(_hhmm(closing))
    return {"name": cols["name"], "city": cols["city"], "latitude": lat, "longitude": lon,
            **{k: v for k, v in cols.items() if k not in ("name", "city")}}


def restaurants_table(cities: Cities, profile: SandboxProfile, seed: int) -> Columns:
    rng = stage_rng(seed, "restaurants")
    counts = per_city(cities, profile.restaurants, 3)
    lat, lon = _positions(cities, counts, rng)
    scale = _city_scale(cities)
    cols: Columns = {k: [] for k in ("name", "city", "cuisines", "price_tier", "avg_cost_inr", "rating",
                                     "open_time", "close_time")}
    tier_p = np.array([0.35, 0.35, 0.2, 0.1])
    for c, k in enumerate(counts.tolist()):
        city = cities.name[c]
        taken: set[str] = set()
        real = nm.REAL_RESTAURANTS.get(city, [])[:k]
        for i in range(k):
            if i < len(real):
                name, cuisines = real[i][0], sorted(real[i][1])
                taken.add(name.casefold())
            else:
                cuisines = _pick(rng, CUISINE_WEIGHT, int(rng.choice([1, 1, 2, 2, 3])))
                main = cuisines[int(rng.integers(len(cuisines)))]
                templates = nm.RESTAURANT_TEMPLATES[main]
                name = nm.unique_name(nm.fill(templates[rng.integers(len(templates))], city, rng), taken, rng)
            tier = PRICE_TIERS[int(rng.choice(4, p=tier_p))]
            low, high = TIER_COST[tier]
            opening, closing = RESTAURANT_HOURS[int(rng.integers(len(RESTAURANT_HOURS)))]
            if "Bar/Pub/Cafe" in cuisines and rng.random() < 0.5:
                opening, closing = 18, 1
            cols["name"].append(name)
            cols["city"].append(city)
            cols["cuisines"].append(cuisines)
            cols["price_tier"].append(tier)
            cols["avg_cost_inr"].append(float(round(rng.uniform(low, high) * scale[c] / 10) * 10))
            cols["rating"].append(round(float(rng.uniform(3.3, 4.9)), 1))
            cols["open_time"].append(_hhmm(opening))
            cols["close_time"].append(_hhmm(closing))
        _open_for_breakfast(cols, len(cols["name"]) - k, k)
    return {"name": cols["name"], "city": cols["city"], "latitude": lat, "longitude": lon,
            **{k: v for k, v in cols.items() if k not in ("name", "city")}}


def _open_for_breakfast(cols: Columns, first: int, k: int) -> None:
    """Open the city's restaurants `first`..`first + k` from the morning (BREAKFAST_HOURS), in
    order (bars stay evening places), until BREAKFAST_PLACES_PER_CITY of them (or all) open by
    08:00; no random draw, so every other column is unchanged."""
    def opens_early(i: int) -> bool:
        return int(str(cols["open_time"][i])[:2]) <= 8 and int(str(cols["close_time"][i])[:2]) >= 12

    short = min(k, BREAKFAST_PLACES_PER_CITY) - sum(opens_early(i) for i in range(first, first + k))
    for i in range(first, first + k):
        if short <= 0:
            return
        if not opens_early(i) and "Bar/Pub/Cafe" not in cols["cuisines"][i]:
            cols["open_time"][i], cols["close_time"][i] = _hhmm(BREAKFAST_HOURS[0]), _hhmm(BREAKFAST_HOURS[1])
            short -= 1


def accommodations_table(cities: Cities, profile: SandboxProfile, seed: int) -> Columns:
    rng = stage_rng(seed, "accommodations")
    counts = per_city(cities, profile.accommodations, 1)
    lat, lon = _positions(cities, counts, rng)
    scale = _city_scale(cities)
    cols: Columns = {k: [] for k in ("name", "city", "house_type", "star_rating", "rating", "price_per_night_inr",
                                     "max_occupancy", "house_rules", "amenities", "services", "minimum_nights",
                                     "check_in", "check_out")}
    for c, k in enumerate(counts.tolist()):
        city = cities.name[c]
        taken: set[str] = set()
        real = nm.REAL_HOTELS.get(city, [])[:k]
        for i in range(k):
            if i < len(real):
                name, stars, house_type = real[i], 5, "Luxury Boutique"
                taken.add(name.casefold())
            else:
                template = nm.HOTEL_TEMPLATES[rng.integers(len(nm.HOTEL_TEMPLATES))]
                name = nm.unique_name(nm.fill(template, city, rng), taken, rng)
                stars = int(rng.choice([0, 1, 2, 3, 3, 4, 4, 5]))
                house_type = HOUSE_TYPES[int(rng.integers(len(HOUSE_TYPES)))]
            price = (900 + 1400 * stars ** 1.5) * scale[c] * rng.lognormal(0, 0.25)
            rules = sorted(rng.choice(len(HOUSE_RULES), int(rng.integers(0, 4)), replace=False).tolist())
            amen = sorted(rng.choice(len(AMENITIES), int(rng.integers(2, 3 + stars)), replace=False).tolist())
            serv = sorted(rng.choice(len(SERVICES), int(rng.integers(1, 2 + stars // 2 + 1)), replace=False).tolist())
            cols["name"].append(name)
            cols["city"].append(city)
            cols["house_type"].append(house_type)
            cols["star_rating"].append(stars)
            cols["rating"].append(round(float(rng.uniform(3.2, 4.9)), 1))
            cols["price_per_night_inr"].append(float(round(price / 50) * 50))
            cols["max_occupancy"].append(int(rng.choice([2, 2, 2, 3, 4])))
            cols["house_rules"].append([HOUSE_RULES[j] for j in rules])
            cols["amenities"].append([AMENITIES[j] for j in amen])
            cols["services"].append([SERVICES[j] for j in serv])
            cols["minimum_nights"].append(int(rng.choice([1, 1, 1, 1, 1, 1, 2, 3])))
            cols["check_in"].append(str(rng.choice(["12:00", "13:00", "14:00"])))
            cols["check_out"].append(str(rng.choice(["10:00", "11:00", "12:00"])))
    return {"name": cols["name"], "city": cols["city"], "latitude": lat, "longitude": lon,
            **{k: v for k, v in cols.items() if k not in ("name", "city")}}
