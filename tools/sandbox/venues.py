"""Venue tables: accommodations, attractions and restaurants, spread over cities by population.

Every city gets at least one stay, two attractions and three restaurants when the profile's
totals allow; major cities take real, well-known places first (`names.py`), then generated
names that are unique within the city. Categories exist only where they may (no casinos outside
Goa, Sikkim and Daman, no bars, pubs or brewpubs in dry states: `utp_env.tools.india`); entry fees
follow the kind of place (`entry_fee`); stay prices follow star rating and city tier, restaurant
prices the price tier and city tier.
"""

from __future__ import annotations

import numpy as np

from utp_env.tools.india import FAMOUS_ATTRACTIONS, FamousAttraction, alcohol_allowed, casinos_allowed, city_tier
from utp_env.tools.sandbox import names as nm
from utp_env.tools.sandbox.common import Columns, apportion, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile
from utp_env.tools.schema import ATTRACTION_CATEGORIES, CUISINES, HOUSE_RULES, HOUSE_TYPES, PRICE_TIERS, days_mask

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
BAR_WORDS = ("bar", "pub", "brew", "brewpub", "lounge", "social", "brewery", "taproom")
# Entry fees by kind (Indian-citizen adult fees, ₹): (share free, fees to draw from). A bazaar, market
# or food street charges nothing; parks and beaches are mostly free; monuments follow the ASI's tiers
# (₹20-50, palaces and private forts ₹100-200); museums, shows and parks for fun charge more.
FEE_BY_CATEGORY: dict[str, tuple[float, tuple[int, ...]]] = {
    "Shopping": (1.0, (0,)), "Food & Drink": (1.0, (0,)),
    "Nature & Parks": (0.6, (10, 20, 30, 50)), "Sights & Landmarks": (0.3, (20, 25, 35, 50, 100, 200)),
    "Museums": (0.1, (10, 20, 50, 100, 200)), "Zoos & Aquariums": (0.0, (20, 50, 100, 200)),
    "Water & Amusement Parks": (0.0, (500, 800, 1000, 1200, 1500)), "Casinos & Gambling": (0.0, (2000, 3000, 4000)),
    "Nightlife": (0.5, (500, 1000, 1500)), "Concerts & Shows": (0.0, (100, 200, 300, 500, 1000)),
    "Boat Tours & Water Sports": (0.0, (100, 200, 300, 500, 1000)), "Outdoor Activities": (0.3, (50, 100, 200, 500)),
    "Fun & Games": (0.0, (200, 300, 500, 800)), "Classes & Workshops": (0.0, (500, 800, 1000, 1500)),
    "Spas & Wellness": (0.0, (1000, 1500, 2000, 3000)),
}
# Places of worship, ghats, beaches, streets, gates and markets are free to enter whatever their category.
FREE_WORDS = ("temple", "mandir", "masjid", "mosque", "dargah", "gurudwara", "sahib", "church", "basilica",
              "cathedral", "math", "ghat", "beach", "bazaar", "market", "chowk", "gate", "gateway", "drive",
              "street", "road", "causeway", "clock tower", "maidan", "deekshabhoomi", "riverfront", "bridge",
              "ashram", "haat")
# Famous attractions' Indian-citizen entry fees (₹, ASI and state listings, rounded): the tourist
# cities' (`FAMOUS_ATTRACTIONS`) and a few of other cities.
REAL_FEES: dict[str, float] = {
    "Sanchi Stupa": 40, "Bara Imambara": 50, "Dilli Haat": 30,
    **{a.name: float(a.fee_inr) for city in FAMOUS_ATTRACTIONS.values() for a in city if a.fee_inr is not None},
}
# Temples, mosques, gurudwaras and ghats open from dawn to late evening.
WORSHIP_WORDS = ("temple", "mandir", "masjid", "mosque", "dargah", "gurudwara", "sahib", "church", "basilica",
                 "ghat", "math")
WORSHIP_HOURS = (6, 21)
# Price level of a city tier (`utp_env.tools.india.CITY_TIERS`) for stays and restaurants.
STAY_TIER_FACTOR = {"metro": 1.35, "large": 1.1, "mid": 0.9, "town": 0.75}
RESTAURANT_TIER_FACTOR = {"metro": 1.3, "large": 1.1, "mid": 0.95, "town": 0.8}
# Median price of a night by star rating (₹) in a large city; 0 stars is a guest house or lodge.
STAY_BASE_BY_STARS = {0: 1000, 1: 1400, 2: 2200, 3: 3400, 4: 5800, 5: 10500}


def per_city(cities: Cities, total: int, minimum: int) -> np.ndarray:
    """Venue counts per city, proportional to its draw^0.8 (population, or for a tourist place the
    visitors its rank draws, `Cities.draw`), with a floor when the total allows."""
    floor = minimum if total >= minimum * cities.n else 0
    return apportion(total, cities.draw.astype(float) ** 0.8, minimum=floor)


def _positions(cities: Cities, counts: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    idx = np.repeat(np.arange(cities.n), counts)
    lat = np.round(cities.lat[idx] + rng.normal(0, SPREAD_DEG, len(idx)), 5)
    lon = np.round(cities.lon[idx] + rng.normal(0, SPREAD_DEG, len(idx)), 5)
    return lat, lon


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
                                     "entry_fee_inr", "open_time", "close_time", "open_days")}
    for c, k in enumerate(counts.tolist()):
        city = cities.name[c]
        weights = category_weights(city, cities.state[c])
        taken: set[str] = set()
        real = real_attractions(city)[:k]
        for i in range(k):
            hours: tuple[str, str] | None = None
            closed: tuple[str, ...] = ()
            if i < len(real):
                name, cats, hours, closed = real[i].name, sorted(real[i].categories), real[i].hours, real[i].closed
                taken.add(name.casefold())
            else:
                cats = _pick(rng, weights, 1 if rng.random() < 0.7 else 2)
                templates = nm.ATTRACTION_TEMPLATES[cats[0]]
                name = nm.unique_name(nm.fill(templates[rng.integers(len(templates))], city, rng), taken, rng)
            opening, closing = ATTRACTION_HOURS.get(cats[0], (9, 18))
            if _has_word(name, WORSHIP_WORDS):
                opening, closing = WORSHIP_HOURS
            open_time, close_time = hours or (_hhmm(opening), _hhmm(closing))
            cols["name"].append(name)
            cols["city"].append(city)
            cols["categories"].append(cats)
            cols["visit_duration_hr"].append(round(float(np.mean([ATTRACTION_CATEGORIES[x] for x in cats])), 2))
            cols["rating"].append(round(float(rng.uniform(3.4, 4.9)), 1))
            cols["entry_fee_inr"].append(entry_fee(name, cats, rng))
            cols["open_time"].append(open_time)
            cols["close_time"].append(close_time)
            cols["open_days"].append(open_days_of(closed))
    return {"name": cols["name"], "city": cols["city"], "latitude": lat, "longitude": lon,
            **{k: v for k, v in cols.items() if k not in ("name", "city")}}


def real_attractions(city: str) -> list[FamousAttraction]:
    """The real attractions of `city`, placed before its generated ones: a tourist city's famous
    attractions with their facts (`utp_env.tools.india.FAMOUS_ATTRACTIONS`), then the other
    well-known places of `names.REAL_ATTRACTIONS` (hours and fee by kind, open every day)."""
    famous = list(FAMOUS_ATTRACTIONS.get(city, ()))
    seen = {a.name for a in famous}
    return famous + [FamousAttraction(name, tuple(cats)) for name, cats in nm.REAL_ATTRACTIONS.get(city, [])
                     if name not in seen]


def open_days_of(closed: tuple[str, ...]) -> str:
    """The `open_days` mask of a venue closed on the weekdays `closed` (every day open when none):
    a famous attraction keeps its published closing days; a generated one is open daily (a made-up
    place has no real closing day, and a weekly closure of a city's only museum would make a
    museum request on that weekday unanswerable)."""
    return "".join("0" if bit == "1" else "1" for bit in days_mask(closed))


def category_weights(city: str, state: str) -> dict[str, float]:
    """CATEGORY_WEIGHT without the categories that cannot exist in `city`: casinos outside the states
    that allow them, nightlife (bars, pubs, brewpubs) in dry states."""
    out = dict(CATEGORY_WEIGHT)
    if not casinos_allowed(city, state):
        del out["Casinos & Gambling"]
    if not alcohol_allowed(state):
        del out["Nightlife"]
    return out


def _has_word(name: str, words: tuple[str, ...]) -> bool:
    tokens = name.casefold().replace("'", " ").replace(".", " ").split()
    text = " ".join(tokens)
    return any(w in tokens or (" " in w and w in text) for w in words)


def entry_fee(name: str, categories: list[str], rng: np.random.Generator) -> float:
    """An attraction's entry fee (₹) by its kind: a famous place's own fee (REAL_FEES), free for places
    of worship, ghats, beaches, streets and markets (FREE_WORDS) and for shopping and food streets,
    else drawn from its dearest category's tiers (FEE_BY_CATEGORY). One draw per call either way,
    so the attractions after it do not depend on which rule applied."""
    free_share, fees = max((FEE_BY_CATEGORY[c] for c in categories), key=lambda f: (max(f[1]), -f[0]))
    draw, pick = rng.random(), int(rng.integers(len(fees)))
    if name in REAL_FEES:
        return float(REAL_FEES[name])
    if _has_word(name, FREE_WORDS) or draw < free_share:
        return 0.0
    return float(fees[pick])


def restaurants_table(cities: Cities, profile: SandboxProfile, seed: int) -> Columns:
    rng = stage_rng(seed, "restaurants")
    counts = per_city(cities, profile.restaurants, 3)
    lat, lon = _positions(cities, counts, rng)
    scale = [RESTAURANT_TIER_FACTOR[city_tier(p)] for p in cities.population.tolist()]
    cols: Columns = {k: [] for k in ("name", "city", "cuisines", "price_tier", "avg_cost_inr", "rating",
                                     "open_time", "close_time")}
    tier_p = np.array([0.35, 0.35, 0.2, 0.1])
    for c, k in enumerate(counts.tolist()):
        city = cities.name[c]
        dry_ok = alcohol_allowed(cities.state[c])
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
                if not dry_ok:  # a dry state's "Bar/Pub/Cafe" is a cafe or coffee house
                    templates = tuple(t for t in templates if not _has_word(t, BAR_WORDS)) or templates
                name = nm.unique_name(nm.fill(templates[rng.integers(len(templates))], city, rng), taken, rng)
            tier = PRICE_TIERS[int(rng.choice(4, p=tier_p))]
            low, high = TIER_COST[tier]
            opening, closing = RESTAURANT_HOURS[int(rng.integers(len(RESTAURANT_HOURS)))]
            if "Bar/Pub/Cafe" in cuisines and rng.random() < 0.5 and dry_ok:
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
    scale = [STAY_TIER_FACTOR[city_tier(p)] for p in cities.population.tolist()]
    cols: Columns = {k: [] for k in ("name", "city", "house_type", "star_rating", "rating", "price_per_night_inr",
                                     "max_occupancy", "house_rules", "amenities", "services", "minimum_nights",
                                     "check_in", "check_out")}
    for c, k in enumerate(counts.tolist()):
        city = cities.name[c]
        dry_ok = alcohol_allowed(cities.state[c])
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
            price = STAY_BASE_BY_STARS[stars] * scale[c] * rng.lognormal(0, 0.25)
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
            cols["amenities"].append([AMENITIES[j] for j in amen if dry_ok or AMENITIES[j] != "Bar"])
            cols["services"].append([SERVICES[j] for j in serv])
            cols["minimum_nights"].append(int(rng.choice([1, 1, 1, 1, 1, 1, 2, 3])))
            cols["check_in"].append(str(rng.choice(["12:00", "13:00", "14:00"])))
            cols["check_out"].append(str(rng.choice(["10:00", "11:00", "12:00"])))
    return {"name": cols["name"], "city": cols["city"], "latitude": lat, "longitude": lon,
            **{k: v for k, v in cols.items() if k not in ("name", "city")}}
