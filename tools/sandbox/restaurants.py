"""The restaurants table: each city's famous restaurants and breakfast places first, then generated ones.

A generated restaurant's kind is drawn from its region's breakfast places and from the meal places
that may exist in the city (`_kind_allowed`: pubs, brewpubs and lounges only where alcohol is sold
and in a big or tourist city, Irani cafes in their cities, seafood on the coast); the kind sets its
name (`restaurant_template`), hours, cuisines and price tier, and the city's tier its prices. Every
city has breakfast places open by 08:00 for a week's stay (`BREAKFAST_PLACES_PER_CITY`; all of a
smaller city's restaurants), and a tourist town at least ten places to eat. Real restaurants are
rated above generated ones.
"""

from __future__ import annotations

import numpy as np

from utp_env.tools.clock import opening_hours, parse_hhmm
from utp_env.tools.india import COASTAL_CITIES, TOURIST_CITIES, alcohol_allowed, city_tier
from utp_env.tools.india import venue_facts as vf
from utp_env.tools.sandbox import names as nm
from utp_env.tools.sandbox.common import Columns, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile
from utp_env.tools.sandbox.venues import (
    has_beach,
    is_big,
    naming_places,
    per_city,
    pick_one,
    pick_weighted,
    real_rating,
    venue_positions,
)
from utp_env.tools.schema import CUISINES

TIER_COST = {"$": (150, 350), "$$": (350, 800), "$$$": (800, 1600), "$$$$": (1600, 3500)}
# Hours of each kind: (openings, closings) to draw from. Breakfast kinds open 06:00-08:00; pizzerias,
# Chinese corners, grills and the like at lunch; pubs and lounges at noon or in the evening; chaat
# corners in the late afternoon.
KIND_OPENING: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "tiffin": (("06:30", "07:00", "07:30"), ("21:30", "22:00", "22:30")),
    "cafe": (("07:30", "08:00", "09:00"), ("22:00", "23:00")),
    "irani_cafe": (("06:00", "06:30", "07:00"), ("21:00", "22:00", "23:00")),
    "bakery": (("07:00", "07:30", "08:00"), ("20:30", "21:30")),
    "sweet_shop": (("07:00", "07:30", "08:00"), ("22:00", "22:30")),
    "nasta": (("06:30", "07:00", "07:30"), ("21:00", "22:00")),
    "misal": (("07:30", "08:00"), ("21:00", "21:30")),
    "dhaba": (("06:30", "07:00"), ("23:00", "23:30")),
    "paratha": (("07:00", "07:30", "08:00"), ("22:00", "22:30")),
    "mess": (("11:00", "11:30"), ("22:00", "22:30")),
    "bhojanalaya": (("11:00", "11:30"), ("22:00", "22:30")),
    "biryani": (("11:30", "12:00"), ("23:30", "00:00")),
    "kebab": (("12:00", "17:00", "18:00"), ("00:00", "01:00")),
    "chaat": (("15:30", "16:00", "16:30"), ("22:00", "22:30")),
    "family": (("11:00", "11:30", "12:00"), ("22:30", "23:00", "23:30")),
    "chinese": (("11:30", "12:00"), ("23:00",)),
    "momo": (("10:30", "11:00"), ("21:00", "21:30")),
    "pizzeria": (("11:30", "12:00"), ("23:00", "23:30")),
    "grill": (("12:00", "12:30", "18:30"), ("23:30",)),
    "seafood": (("11:30", "12:00"), ("23:00", "23:30")),
    "fine_dining": (("12:30",), ("23:30",)),
    "bistro": (("12:00",), ("23:30",)),
    "continental": (("11:00", "12:00"), ("23:00",)),
    "burger": (("11:00", "11:30"), ("23:00",)),
    "shawarma": (("12:00", "13:00"), ("00:00", "01:00")),
    "cantina": (("12:00",), ("23:30",)),
    "pub": (("12:00", "17:00"), ("00:00", "01:00")),
    "brewpub": (("12:00",), ("00:00", "01:00")),
    "lounge": (("18:00", "19:00"), ("01:00",)),
    "food_market": (("19:00", "20:00"), ("01:00", "02:00")),
}
# Cuisine groups (Table 8) of each kind: the first always, the others each with probability 0.4.
KIND_CUISINES: dict[str, tuple[str, ...]] = {
    "tiffin": ("Indian Subcontinent",), "cafe": ("Bar/Pub/Cafe", "International Fusion"),
    "irani_cafe": ("Bar/Pub/Cafe", "Indian Subcontinent"), "bakery": ("Bar/Pub/Cafe", "European"),
    "sweet_shop": ("Indian Subcontinent",), "nasta": ("Indian Subcontinent",), "misal": ("Indian Subcontinent",),
    "dhaba": ("Indian Subcontinent",), "paratha": ("Indian Subcontinent",), "mess": ("Indian Subcontinent",),
    "bhojanalaya": ("Indian Subcontinent",), "biryani": ("Indian Subcontinent",), "kebab": ("Indian Subcontinent",),
    "chaat": ("Indian Subcontinent",), "family": ("Indian Subcontinent", "Asian", "European"),
    "chinese": ("Asian",), "momo": ("Asian",), "pizzeria": ("Pizza/Italian Specialties", "American"),
    "grill": ("Seafood/Steak/Grill", "Indian Subcontinent"), "seafood": ("Seafood/Steak/Grill", "Indian Subcontinent"),
    "fine_dining": ("Indian Subcontinent",), "bistro": ("International Fusion", "European"),
    "continental": ("European",), "burger": ("American",),
    "shawarma": ("Mediterranean/Middle Eastern",), "cantina": ("Latin/South American",),
    "pub": ("Bar/Pub/Cafe", "International Fusion"), "brewpub": ("Bar/Pub/Cafe", "International Fusion"),
    "lounge": ("Bar/Pub/Cafe",), "food_market": ("Indian Subcontinent",),
}
# Price tiers of each kind with their weights.
KIND_TIERS: dict[str, tuple[tuple[str, float], ...]] = {
    **{k: (("$", 0.8), ("$$", 0.2)) for k in ("tiffin", "sweet_shop", "nasta", "misal", "dhaba", "paratha", "chaat",
                                              "mess", "momo", "irani_cafe")},
    **{k: (("$", 0.4), ("$$", 0.6)) for k in ("bhojanalaya", "bakery")},
    **{k: (("$", 0.3), ("$$", 0.6), ("$$$", 0.1)) for k in ("biryani", "kebab", "burger", "shawarma", "chinese")},
    **{k: (("$$", 0.6), ("$$$", 0.35), ("$$$$", 0.05)) for k in ("family", "cafe", "pizzeria", "grill", "seafood")},
    **{k: (("$$", 0.2), ("$$$", 0.6), ("$$$$", 0.2)) for k in ("bistro", "continental", "cantina", "pub", "brewpub",
                                                               "lounge")},
    "fine_dining": (("$$$$", 1.0),), "food_market": (("$", 1.0),),
}
# Name templates of each generated kind; "@tiffin", "@sweet_shop", "@meals" are the region's own.
# No template is another table's ("Hotel {word}" is a stay, "{word} Lounge" a nightlife attraction),
# so that a city's restaurant, attraction and stay never share a name.
KIND_TEMPLATES: dict[str, tuple[str, ...]] = {
    "tiffin": ("@tiffin",), "cafe": ("Cafe {word}", "{word} Coffee House"),
    "irani_cafe": ("Cafe {irani}", "{irani} Cafe and Bakery"), "bakery": ("{word} Bakery",),
    "sweet_shop": ("@sweet_shop", "{surname} Sweets"), "nasta": ("{word} Nasta House", "{word} Farsan"),
    "misal": ("{word} Misal",), "dhaba": ("{word} Dhaba", "{word} Punjabi Dhaba"),
    "paratha": ("{word} Paratha House", "{word} Kulcha House"), "mess": ("@meals",), "bhojanalaya": ("@meals",),
    "biryani": ("{word} Biryani House", "{word} Biryani"), "kebab": ("{word} Kabab Corner", "{word} Kebab House"),
    "chaat": ("{word} Chaat Bhandar", "{locality} Chaat Corner"),
    "family": ("{word} Restaurant", "{word} Family Restaurant", "Hotel {word} Restaurant"),
    "chinese": ("{word} Chinese Corner", "{word} Wok"), "momo": ("{word} Momo House", "{word} Tibetan Kitchen"),
    "pizzeria": ("{word} Pizzeria", "{word} Pizza Co."), "grill": ("{word} Grill", "{word} Barbeque"),
    "seafood": ("{word} Fish Curry House", "{word} Seafood"), "bistro": ("The {word} Kitchen", "{word} Bistro"),
    "continental": ("{word} Continental",), "burger": ("{word} Burger Co.", "{word} Diner"),
    "shawarma": ("{word} Shawarma", "{word} Arabian Mandi"), "cantina": ("{word} Cantina",),
    "pub": ("The {word} Pub", "{word} Bar and Kitchen"), "brewpub": ("{word} Brewing Company",),
    "lounge": ("{word} Rooftop Lounge",),
}
# Breakfast places of each region with their weights: what opens in the morning in its towns.
BREAKFAST_WEIGHTS: dict[str, dict[str, float]] = {
    "hindi": {"sweet_shop": 3, "dhaba": 2, "paratha": 2, "tiffin": 1, "cafe": 1},
    "rajasthani": {"sweet_shop": 3, "dhaba": 2, "tiffin": 1, "cafe": 1},
    "punjabi": {"dhaba": 3, "paratha": 3, "sweet_shop": 2, "cafe": 1},
    "marathi": {"tiffin": 2, "misal": 2, "sweet_shop": 1, "cafe": 1, "irani_cafe": 1},
    "gujarati": {"nasta": 4, "sweet_shop": 2, "cafe": 1},
    "konkani": {"tiffin": 2, "bakery": 2, "cafe": 2},
    "kannada": {"tiffin": 6, "bakery": 1, "cafe": 1},
    "tamil": {"tiffin": 6, "sweet_shop": 1, "cafe": 1},
    "telugu": {"tiffin": 5, "irani_cafe": 1, "sweet_shop": 1, "cafe": 1},
    "malayalam": {"tiffin": 3, "bakery": 3, "cafe": 1},
    "bengali": {"sweet_shop": 4, "tiffin": 1, "cafe": 1},
    "odia": {"tiffin": 3, "sweet_shop": 2, "cafe": 1},
    "assamese": {"tiffin": 2, "sweet_shop": 1, "cafe": 1},
    "northeast": {"cafe": 3, "bakery": 2, "tiffin": 1},
    "himalayan": {"cafe": 3, "bakery": 2, "tiffin": 1},
    "pahari": {"cafe": 2, "bakery": 1, "dhaba": 2, "tiffin": 1},
    "kashmiri": {"bakery": 3, "cafe": 1, "tiffin": 1},
}
# Lunch and dinner places with their weights everywhere they may be (`_kind_allowed`).
MEAL_WEIGHTS: dict[str, float] = {
    "family": 4, "bhojanalaya": 2, "mess": 2, "biryani": 1.5, "kebab": 1, "chaat": 1, "chinese": 2, "momo": 1.5,
    "pizzeria": 1, "grill": 1, "seafood": 2, "bistro": 0.5, "continental": 0.3, "burger": 0.5, "shawarma": 0.5,
    "cantina": 0.1, "pub": 1, "brewpub": 0.3, "lounge": 0.3,
}
MEALS_KIND_BY_REGION = {"hindi": "bhojanalaya", "rajasthani": "bhojanalaya", "punjabi": "bhojanalaya",
                        "marathi": "bhojanalaya", "gujarati": "bhojanalaya", "bengali": "bhojanalaya",
                        "odia": "bhojanalaya", "assamese": "bhojanalaya", "pahari": "bhojanalaya"}
MOMO_REGIONS = frozenset({"northeast", "himalayan", "pahari", "bengali", "assamese", "kashmiri"})
KEBAB_REGIONS = frozenset({"hindi", "punjabi", "kashmiri", "telugu", "rajasthani"})
SHAWARMA_REGIONS = frozenset({"malayalam", "telugu"})
# Every Indian town has its tiffin rooms, sweet shops and dhabas open from the morning: at least
# this many restaurants of a city (all of a smaller city's) open by 08:00, enough for a week's stay
# (Complete Information asks for breakfast on every day spent in one city).
BREAKFAST_PLACES_PER_CITY = 8
BREAKFAST_BY = "08:00"
REAL_RESTAURANT_RATING = (4.7, 4.3)
GENERATED_RESTAURANT_RATING = (3.3, 4.2)
RESTAURANT_TIER_FACTOR = {"metro": 1.3, "large": 1.1, "mid": 0.95, "town": 0.8}


def opens_for_breakfast(open_time: str, close_time: str) -> bool:
    """Whether a restaurant open `open_time`-`close_time` opens by 08:00 and stays open to noon."""
    opening, closing = opening_hours(open_time, close_time)
    return opening <= parse_hhmm(BREAKFAST_BY) and closing >= 12 * 60


def _kind_allowed(kind: str, city: str, state: str, population: float) -> bool:
    region = nm.region_key(state)
    big_or_tourist = is_big(population) or city in TOURIST_CITIES
    if kind in ("pub", "brewpub", "lounge"):
        return alcohol_allowed(state) and big_or_tourist
    return {"irani_cafe": city in vf.IRANI_CAFE_CITIES,
            "seafood": city in COASTAL_CITIES or has_beach(city),
            "momo": region in MOMO_REGIONS or is_big(population),
            "kebab": region in KEBAB_REGIONS or is_big(population),
            "shawarma": region in SHAWARMA_REGIONS or is_big(population),
            "bistro": big_or_tourist, "continental": big_or_tourist, "cantina": is_big(population),
            }.get(kind, True)


def restaurant_template(kind: str, state: str, rng: np.random.Generator) -> str:
    """A name template of a generated restaurant of `kind` in `state`'s region."""
    region = nm.region_of(state)
    template = str(pick_one(rng, KIND_TEMPLATES[kind]))
    if template.startswith("@"):
        own = getattr(region, template[1:])
        template = str(pick_one(rng, own)) if isinstance(own, tuple) else own
    return template


TOURIST_TOWN_RESTAURANTS = 10  # a tourist town has its breakfast places and ten places to eat at least


def restaurant_floors(cities: Cities) -> np.ndarray:
    """Each city's least restaurant rows: its real restaurants and one generated, at least 3, and at
    least `TOURIST_TOWN_RESTAURANTS` in a destination of `TOURIST_CITIES`."""
    facts = vf.real_restaurants()
    tourist = set(TOURIST_CITIES)
    return np.array([max(3, len(facts.get(c, ())) + 1, TOURIST_TOWN_RESTAURANTS if c in tourist else 0)
                     for c in cities.name], dtype=np.int64)


def restaurants_table(cities: Cities, profile: SandboxProfile, seed: int) -> Columns:
    rng = stage_rng(seed, "restaurants")
    counts = per_city(cities, profile.restaurants, restaurant_floors(cities))
    lat, lon = venue_positions(cities, counts, rng)
    cols: Columns = {k: [] for k in ("name", "city", "cuisines", "price_tier", "avg_cost_inr", "rating",
                                     "open_time", "close_time")}
    for c, k in enumerate(counts.tolist()):
        city, state, pop = cities.name[c], cities.state[c], float(cities.population[c])
        region = nm.region_key(state)
        scale = RESTAURANT_TIER_FACTOR[city_tier(pop)]
        breakfast = {kind: w for kind, w in BREAKFAST_WEIGHTS[region].items()
                     if _kind_allowed(kind, city, state, pop)}
        meals = {kind: w for kind, w in MEAL_WEIGHTS.items() if _kind_allowed(kind, city, state, pop)
                 and (kind not in ("bhojanalaya", "mess") or kind == MEALS_KIND_BY_REGION.get(region, "mess"))}
        anytime = {**{kind: 0.5 * w for kind, w in breakfast.items()}, **meals}
        taken: set[str] = set()
        real = vf.real_restaurants().get(city, ())[:k]
        early = sum(opens_for_breakfast(*(r.hours or _default_hours(r.kind))) for r in real)
        need = max(0, min(k, BREAKFAST_PLACES_PER_CITY) - early)
        for i in range(k):
            if i < len(real):
                r = real[i]
                name, cuisines, tier, cost = r.name, sorted(r.cuisines), r.price_tier, r.avg_cost_inr
                opening, closing = r.hours or _default_hours(r.kind)
                rating = real_rating(i, *REAL_RESTAURANT_RATING)
                taken.add(name.casefold())
            else:
                morning = i - len(real) < need
                kind = pick_weighted(rng, breakfast if morning else anytime)
                template = restaurant_template(kind, state, rng)
                places = naming_places(city, state)
                name = nm.unique_name(nm.fill(template, city, state, rng, places), city, state, taken, rng, places)
                cuisines = _cuisines(kind, rng, city in COASTAL_CITIES or has_beach(city))
                tiers = KIND_TIERS[kind]
                tier = tiers[int(rng.choice(len(tiers), p=[w for _, w in tiers]))][0]
                low, high = TIER_COST[tier]
                cost = float(round(rng.uniform(low, high) * scale / 10) * 10)
                openings, closings = KIND_OPENING[kind]
                if morning:
                    openings = tuple(t for t in openings if t <= BREAKFAST_BY)
                opening, closing = str(pick_one(rng, openings)), str(pick_one(rng, closings))
                rating = round(float(rng.uniform(*GENERATED_RESTAURANT_RATING)), 1)
            cols["name"].append(name)
            cols["city"].append(city)
            cols["cuisines"].append(cuisines)
            cols["price_tier"].append(tier)
            cols["avg_cost_inr"].append(float(cost))
            cols["rating"].append(rating)
            cols["open_time"].append(opening)
            cols["close_time"].append(closing)
    return {"name": cols["name"], "city": cols["city"], "latitude": lat, "longitude": lon,
            **{k: v for k, v in cols.items() if k not in ("name", "city")}}


def _default_hours(kind: str) -> tuple[str, str]:
    """The hours a real restaurant without listed ones keeps: its kind's first opening and last closing."""
    openings, closings = KIND_OPENING[kind]
    return openings[0], closings[-1]


# On the coast a meals place serves the day's catch too (a Malvani or Gomantak thali in Mumbai and
# Goa, a fish meal in Kerala, Mangaluru or Chennai).
COASTAL_SEAFOOD_KINDS = frozenset({"mess", "bhojanalaya", "family"})
COASTAL_SEAFOOD_SHARE = 0.5


def _cuisines(kind: str, rng: np.random.Generator, coastal: bool = False) -> list[str]:
    first, *more = KIND_CUISINES[kind]
    draws = rng.random(len(more) + 1)
    out = {first, *(c for c, d in zip(more, draws[1:].tolist(), strict=True) if d < 0.4)}
    if coastal and kind in COASTAL_SEAFOOD_KINDS and draws[0] < COASTAL_SEAFOOD_SHARE:
        out.add("Seafood/Steak/Grill")
    return sorted(out, key=CUISINES.index)
