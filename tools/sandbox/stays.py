"""The accommodations table: each city's flagship hotels first at their prices, then generated stays.

A generated stay's house type is drawn by where the city is (resorts only in a resort area,
`venue_facts.resort_area`, and fewer of them in a big city), its name by its setting and region
(`stay_templates`: beach resorts, jungle lodges, a desert camp, havelis and palaces, homestays,
lodges for the unrated), its price from its stars and the city's tier. No stay has a bar in a dry
state.
"""

from __future__ import annotations

import numpy as np

from utp_env.tools.india import COASTAL_CITIES, WILDLIFE_CITIES, alcohol_allowed, city_tier
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
from utp_env.tools.schema import HOUSE_RULES

AMENITIES = ("Free Wi-Fi", "Parking", "Restaurant", "Swimming Pool", "Gym", "Wellness Spa", "Airport Shuttle",
             "Air Conditioning", "Bar", "Business Centre", "Garden", "Kids Play Area")
SERVICES = ("Laundry", "Room Service", "Cleaning", "Concierge", "24-hour Front Desk", "Luggage Storage",
            "Doctor on Call", "Travel Desk")

# Price level of a city tier (`utp_env.tools.india.CITY_TIERS`) for stays.
STAY_TIER_FACTOR = {"metro": 1.35, "large": 1.1, "mid": 0.9, "town": 0.75}
# Median price of a night by star rating (INR) in a large city; 0 stars is a guest house or lodge.
STAY_BASE_BY_STARS = {0: 1000, 1: 1400, 2: 2200, 3: 3400, 4: 5800, 5: 10500}
# Generated stays by house type: (weight in a resort area, weight elsewhere, stars to draw from);
# a big city in a resort area (Mumbai, Chennai, Kochi) has a third of the resorts' weight.
BIG_CITY_RESORT_FACTOR = 1 / 3
HOUSE_TYPE_DRAW: dict[str, tuple[float, float, tuple[int, ...]]] = {
    "Family Friendly": (4.0, 5.0, (0, 1, 2, 3, 3, 4)),
    "Apartment Extended": (1.0, 2.0, (2, 3, 3, 4)),
    "Luxury Boutique": (1.0, 1.0, (3, 4, 4, 5)),
    "Resort/Beach": (3.0, 0.0, (3, 3, 4, 4, 5)),
}
HOUSE_TYPE_TEMPLATES: dict[str, tuple[str, ...]] = {
    "Family Friendly": ("Hotel {word}", "{word} Residency", "{word} Inn", "{word} Comforts"),
    "Apartment Extended": ("{word} Serviced Apartments", "{word} Suites"),
    "Luxury Boutique": ("{word} Boutique Hotel", "The {word} House", "{word} Heritage"),
}
HERITAGE_REGIONS = frozenset({"rajasthani", "gujarati", "hindi"})
HOMESTAY_REGIONS = frozenset({"konkani", "malayalam", "northeast", "himalayan", "pahari", "kashmiri"})
REAL_HOTEL_RATING = (4.9, 4.5)


def resort_templates(city: str) -> tuple[str, ...]:
    """Names of a generated resort of `city` by its setting: a beach resort on the coast, a jungle
    lodge at a wildlife gateway, a desert camp at Jaisalmer, a hill resort elsewhere."""
    if city in COASTAL_CITIES or has_beach(city):
        return ("{word} Beach Resort", "{word} Resort")
    if city in WILDLIFE_CITIES:
        return ("{word} Jungle Lodge", "{word} Resort")
    if city == "Jaisalmer":
        return ("{word} Desert Camp", "{word} Resort")
    return ("{word} Hill Resort", "{word} Resort", "{word} Cottages")


BUDGET_TEMPLATES = ("{word} Lodge", "{word} Guest House", "Hotel {word}")  # 0-1 star family stays


def stay_templates(house_type: str, city: str, state: str, stars: int = 3) -> tuple[str, ...]:
    """Generated names of a stay of `house_type` and `stars` in `city`: resorts by setting, havelis
    and palaces where they are (Rajasthan, Gujarat, the Hindi belt), homestays in Goa, Kerala and
    the hills, lodges and guest houses for the unrated and one-star."""
    if house_type == "Resort/Beach":
        return resort_templates(city)
    region = nm.region_key(state)
    out = BUDGET_TEMPLATES if house_type == "Family Friendly" and stars <= 1 else HOUSE_TYPE_TEMPLATES[house_type]
    if house_type == "Luxury Boutique" and region in HERITAGE_REGIONS:
        out = (*out, "The {word} Haveli", "{word} Palace")
    if house_type == "Family Friendly" and region in HOMESTAY_REGIONS:
        out = (*out, "{word} Homestay")
    return out


def stay_floors(cities: Cities) -> np.ndarray:
    """Each city's least stay rows: its real hotels and one generated, at least 1."""
    facts = vf.real_hotels()
    return np.array([len(facts[c]) + 1 if c in facts else 1 for c in cities.name], dtype=np.int64)


def accommodations_table(cities: Cities, profile: SandboxProfile, seed: int) -> Columns:
    rng = stage_rng(seed, "accommodations")
    counts = per_city(cities, profile.accommodations, stay_floors(cities))
    lat, lon = venue_positions(cities, counts, rng)
    cols: Columns = {k: [] for k in ("name", "city", "house_type", "star_rating", "rating", "price_per_night_inr",
                                     "max_occupancy", "house_rules", "amenities", "services", "minimum_nights",
                                     "check_in", "check_out")}
    for c, k in enumerate(counts.tolist()):
        city, state, pop = cities.name[c], cities.state[c], float(cities.population[c])
        scale = STAY_TIER_FACTOR[city_tier(pop)]
        dry_ok = alcohol_allowed(state)
        resort = vf.resort_area(city)
        types = {t: (a if resort else b) for t, (a, b, _) in HOUSE_TYPE_DRAW.items() if (a if resort else b) > 0}
        if resort and is_big(pop):
            types["Resort/Beach"] *= BIG_CITY_RESORT_FACTOR
        taken: set[str] = set()
        real = vf.real_hotels().get(city, ())[:k]
        for i in range(k):
            draw = float(rng.lognormal(0, 0.25))
            if i < len(real):
                hotel = real[i]
                name, stars, house_type, price = hotel.name, hotel.stars, hotel.house_type, hotel.price_inr
                rating = real_rating(i, *REAL_HOTEL_RATING)
                taken.add(name.casefold())
            else:
                house_type = pick_weighted(rng, types)
                stars = int(pick_one(rng, HOUSE_TYPE_DRAW[house_type][2]))
                template = str(pick_one(rng, stay_templates(house_type, city, state, stars)))
                places = naming_places(city, state)
                name = nm.unique_name(nm.fill(template, city, state, rng, places), city, state, taken, rng, places)
                price = float(round(STAY_BASE_BY_STARS[stars] * scale * draw / 50) * 50)
                rating = round(float(rng.uniform(3.2, 4.8)), 1)
            rules = sorted(rng.choice(len(HOUSE_RULES), int(rng.integers(0, 4)), replace=False).tolist())
            amen = sorted(rng.choice(len(AMENITIES), int(rng.integers(2, 3 + stars)), replace=False).tolist())
            serv = sorted(rng.choice(len(SERVICES), int(rng.integers(1, 2 + stars // 2 + 1)), replace=False).tolist())
            cols["name"].append(name)
            cols["city"].append(city)
            cols["house_type"].append(house_type)
            cols["star_rating"].append(stars)
            cols["rating"].append(rating)
            cols["price_per_night_inr"].append(float(price))
            cols["max_occupancy"].append(int(rng.choice([2, 2, 2, 3, 4])))
            cols["house_rules"].append([HOUSE_RULES[j] for j in rules])
            cols["amenities"].append([AMENITIES[j] for j in amen if dry_ok or AMENITIES[j] != "Bar"])
            cols["services"].append([SERVICES[j] for j in serv])
            cols["minimum_nights"].append(int(rng.choice([1, 1, 1, 1, 1, 1, 2, 3])))
            cols["check_in"].append(str(rng.choice(["12:00", "13:00", "14:00"])))
            cols["check_out"].append(str(rng.choice(["10:00", "11:00", "12:00"])))
    return {"name": cols["name"], "city": cols["city"], "latitude": lat, "longitude": lon,
            **{k: v for k, v in cols.items() if k not in ("name", "city")}}
