"""The attractions table: each city's real sights first, then generated places for the long tail.

Real sights (`venue_facts.sights`) keep their fees, hours, closing days and typical visits; a day
trip from its base is a sight of the base, its hours widened by the journey (`sight_hours`), and a
listing that did not settle a fee gets the least its kind may charge (`least_fee`). A generated
attraction takes a name template of its category that fits the city (`attraction_templates`), and
its kind (`venues.attraction_kind`) sets what the generator does not know: opening hours, typical
visit, entry fee. Real sights outrank generated attractions in rating (4.4-4.8 by their rank,
generated ones at most 4.3), so a planner that prefers better rated places goes to the Taj Mahal
before a generated park. Categories exist only where they may (no casinos outside Goa, Sikkim and
Daman, no nightlife in dry states, no beach inland).
"""

from __future__ import annotations

import numpy as np

from utp_env.tools.clock import opening_hours, parse_hhmm
from utp_env.tools.india import (
    COASTAL_CITIES,
    HILL_CITIES,
    TOURIST_CITIES,
    WILDLIFE_CITIES,
    alcohol_allowed,
    casinos_allowed,
)
from utp_env.tools.india import venue_facts as vf
from utp_env.tools.sandbox import names as nm
from utp_env.tools.sandbox.common import Columns, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile
from utp_env.tools.sandbox.venues import (
    BIG_CITY,
    attraction_kind,
    has_beach,
    is_big,
    naming_places,
    per_city,
    pick_one,
    real_rating,
    venue_positions,
)
from utp_env.tools.schema import ATTRACTION_CATEGORIES, days_mask

CATEGORY_WEIGHT = {c: (6.0 if c == "Sights & Landmarks" else 3.0 if c in ("Nature & Parks", "Museums", "Shopping")
                       else 1.0) for c in ATTRACTION_CATEGORIES}
# Opening hours of each kind (a real sight without listed hours takes its kind's): places of
# worship from dawn to late evening, ghats, beaches and promenades from dawn to late evening,
# monuments on the ASI's day hours, museums 10-17, markets 10:30-21:30, food streets and shows in
# the evening, nightlife and casinos past midnight (00:00-00:00: round the clock).
KIND_HOURS: dict[str, tuple[str, str]] = {
    "temple": ("06:00", "21:00"), "gurudwara": ("04:00", "22:00"), "mosque": ("06:00", "20:00"),
    "church": ("08:00", "18:00"), "monastery": ("06:00", "18:00"), "ghat": ("05:00", "21:00"),
    "fort": ("09:00", "17:30"), "palace": ("09:30", "17:30"), "monument": ("08:00", "18:00"),
    "cave": ("09:00", "17:30"), "museum": ("10:00", "17:00"), "garden": ("06:00", "19:00"),
    "park": ("06:00", "19:00"), "lake": ("06:00", "20:00"), "beach": ("05:00", "21:00"),
    "promenade": ("05:00", "23:00"), "viewpoint": ("06:00", "19:00"), "waterfall": ("08:00", "17:30"),
    "zoo": ("09:00", "17:00"), "wildlife": ("06:30", "17:30"), "market": ("10:30", "21:30"),
    "food_street": ("17:00", "23:30"), "show": ("18:00", "21:30"), "amusement_park": ("10:00", "19:00"),
    "water_park": ("10:00", "18:00"), "boat": ("09:00", "18:00"), "adventure": ("08:00", "17:00"),
    "snow": ("09:00", "17:00"), "dunes": ("15:00", "20:00"), "spa": ("09:00", "21:00"),
    "nightlife": ("19:00", "01:00"), "casino": ("00:00", "00:00"), "workshop": ("10:00", "18:00"),
    "games": ("11:00", "22:00"),
}
# Typical visit of each kind, hours (state tourism itineraries: a temple or a viewpoint within the
# hour, a museum or a beach 1.5 h, a fort 2 h, a water park or a safari half a day).
KIND_VISIT_HR: dict[str, float] = {
    "temple": 1.0, "gurudwara": 1.0, "mosque": 0.5, "church": 0.5, "monastery": 1.0, "ghat": 1.0, "fort": 2.0,
    "palace": 1.5, "monument": 1.0, "cave": 1.5, "museum": 1.5, "garden": 1.0, "park": 1.0, "lake": 1.0,
    "beach": 1.5, "promenade": 1.0, "viewpoint": 0.75, "waterfall": 1.0, "zoo": 2.0, "wildlife": 3.5,
    "market": 1.5, "food_street": 1.5, "show": 1.5, "amusement_park": 4.5, "water_park": 4.5, "boat": 1.5,
    "adventure": 3.0, "snow": 3.0, "dunes": 3.0, "spa": 2.0, "nightlife": 2.0, "casino": 2.5, "workshop": 1.5,
    "games": 1.5,
}
# Kinds that charge no entry: places of worship, ghats, beaches, promenades, viewpoints, markets
# and food streets.
FREE_KINDS = frozenset({"temple", "gurudwara", "mosque", "church", "monastery", "ghat", "beach", "promenade",
                        "viewpoint", "market", "food_street"})
# Entry fees by category (Indian-citizen adult fees, INR): (share free, fees to draw from), for the
# kinds that charge: parks mostly free; monuments the ASI's tiers (INR 20-50, palaces and private
# forts 100-200); museums, shows and parks for fun more.
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
# Generated attractions by category: (name template, where). Where: "any"; "coastal" (a city on the
# sea whose real beaches are not listed); "hill" (a hill station); "big" (a city of a million or
# more); "tourist" (a TOURIST_CITIES destination); "christian" (Goa, Kerala, Tamil Nadu, the North
# East, or a big city). "@lake",
# "@park", "@food_street", "@stage" are the region's own patterns (`names.Region`).
ATTRACTION_TEMPLATES: dict[str, tuple[tuple[str, str], ...]] = {
    "Sights & Landmarks": (("{temple}", "any"), ("{temple}", "any"), ("{temple}", "any"), ("{person} Memorial", "any"),
                           ("{locality} Masjid", "any"), ("St. {saint}'s Church", "christian")),
    "Museums": (("{person} Memorial Museum", "any"), ("Government Museum {city}", "any"),
                ("{word} Art Gallery", "big")),
    "Nature & Parks": (("{person} Park", "any"), ("@park", "any"), ("@lake", "any"), ("{city} Beach", "coastal"),
                       ("{word} Point", "hill"), ("{word} Falls", "hill")),
    "Shopping": (("{locality} Market", "any"), ("{locality} Bazaar", "any"), ("{word} Mall", "big")),
    "Food & Drink": (("@food_street", "any"),),
    "Zoos & Aquariums": (("{person} Zoological Park", "big"), ("{word} Deer Park", "any")),
    "Water & Amusement Parks": (("{word} Water Park", "any"), ("{word} Amusement Park", "big")),
    "Boat Tours & Water Sports": (("{word} Boat Club", "any"), ("{word} Water Sports", "coastal")),
    "Outdoor Activities": (("{word} Adventure Park", "any"), ("{word} Trek", "hill")),
    "Fun & Games": (("{word} Fun Zone", "any"), ("{word} Bowling Alley", "big")),
    "Classes & Workshops": (("{word} Cooking Class", "tourist"), ("{word} Pottery Studio", "big"),
                            ("{word} Art Workshop", "any")),
    "Concerts & Shows": (("{person} Auditorium", "any"), ("@stage", "any")),
    "Spas & Wellness": (("{word} Ayurveda Centre", "any"), ("{word} Spa", "big"), ("{word} Yoga Centre", "any")),
    "Nightlife": (("{word} Lounge", "big"), ("The {word} Club", "big")),
    "Casinos & Gambling": (("Casino {word}", "any"),),
}
# The second category a generated place of a kind may also carry (drawn with probability
# `SECOND_CATEGORY_SHARE`): a lake with boating, a fort with a museum, a food street in a market.
KIND_SECOND_CATEGORY: dict[str, str] = {
    "lake": "Boat Tours & Water Sports", "beach": "Boat Tours & Water Sports", "fort": "Museums",
    "palace": "Museums", "zoo": "Nature & Parks", "amusement_park": "Fun & Games", "water_park": "Fun & Games",
    "food_street": "Shopping", "market": "Food & Drink", "adventure": "Nature & Parks",
    "viewpoint": "Outdoor Activities", "waterfall": "Outdoor Activities", "spa": "Classes & Workshops",
}
SECOND_CATEGORY_SHARE = 0.3
CHRISTIAN_REGIONS = frozenset({"konkani", "malayalam", "tamil", "northeast"})
GENERATED_ATTRACTION_RATING = (3.4, 4.3)


def entry_fee(kind: str, categories: list[str] | tuple[str, ...], rng: np.random.Generator) -> float:
    """The entry fee (INR) of an attraction without a listed one, by its kind: nothing at a place of
    worship, ghat, beach, promenade, viewpoint, market or food street (`FREE_KINDS`), else drawn from
    its dearest category's tiers (`FEE_BY_CATEGORY`). One draw per call either way, so the
    attractions after it do not depend on which rule applied."""
    free_share, fees = max((FEE_BY_CATEGORY[c] for c in categories), key=lambda f: (max(f[1]), -f[0]))
    draw, pick = rng.random(), int(rng.integers(len(fees)))
    if kind in FREE_KINDS or draw < free_share:
        return 0.0
    return float(fees[pick])


def least_fee(kind: str, categories: list[str] | tuple[str, ...]) -> float:
    """The fee (INR) of a real sight whose listing did not settle one: nothing at a free kind
    (`FREE_KINDS`), else the lowest fee of its dearest category's tiers (government, trust and ASI
    sites charge little: a museum INR 10, a monument 20, a zoo 20)."""
    if kind in FREE_KINDS:
        return 0.0
    _, fees = max((FEE_BY_CATEGORY[c] for c in categories), key=lambda f: (max(f[1]), -f[0]))
    return float(min((f for f in fees if f > 0), default=0))


def _clock(minutes: int) -> str:
    return f"{minutes // 60 % 24:02d}:{minutes % 60:02d}"


DAY_TRIP_WINDOW = ("05:00", "22:00")  # a day trip leaves the base after 05:00 and is back by 22:00


def sight_hours(sight: vf.Sight) -> tuple[str, str]:
    """The opening hours a real sight's row carries: its listed hours, else its kind's; a day trip's
    widened by the journey at each end (leave the base that much before the site opens, be back that
    much after it closes), within `DAY_TRIP_WINDOW`; round the clock stays so."""
    opening, closing = sight.hours or KIND_HOURS[sight.kind]
    if sight.day_trip_hr is None or opening == closing:
        return opening, closing
    journey = round(sight.day_trip_hr * 4) * 15
    opens, closes = opening_hours(opening, closing)
    start = max(opens - journey, parse_hhmm(DAY_TRIP_WINDOW[0]))
    end = min(closes + journey, parse_hhmm(DAY_TRIP_WINDOW[1]))
    return _clock(start), _clock(end)


def _pick(rng: np.random.Generator, weights: dict[str, float], k: int) -> list[str]:
    keys = list(weights)
    w = np.array(list(weights.values()))
    chosen = rng.choice(len(keys), k, replace=False, p=w / w.sum())
    return [keys[i] for i in sorted(chosen.tolist())]


def _where_ok(where: str, city: str, state: str, population: float) -> bool:
    region = nm.region_key(state)
    return {"any": True, "coastal": city in COASTAL_CITIES and not has_beach(city), "hill": _hill(city),
            "big": is_big(population), "tourist": city in TOURIST_CITIES,
            "christian": region in CHRISTIAN_REGIONS or is_big(population)}[where]


def _hill(city: str) -> bool:
    return city in HILL_CITIES or (vf.resort_area(city) and city not in COASTAL_CITIES and not has_beach(city)
                                   and city not in WILDLIFE_CITIES and city != "Jaisalmer")


def attraction_templates(city: str, state: str, population: float) -> dict[str, tuple[str, ...]]:
    """Category -> the generated-name templates `city` may use: only those whose place may exist there
    (a beach on the coast, a falls in the hills, a mall in a big city), without casinos where they
    are illegal and nightlife in dry states; a category with none left is not drawn."""
    region = nm.region_of(state)
    out: dict[str, tuple[str, ...]] = {}
    for category, options in ATTRACTION_TEMPLATES.items():
        if category == "Casinos & Gambling" and not casinos_allowed(city, state):
            continue
        if category == "Nightlife" and not alcohol_allowed(state):
            continue
        kept = tuple(getattr(region, t[1:]) if t.startswith("@") else t for t, where in options
                     if _where_ok(where, city, state, population))
        if kept:
            out[category] = kept
    return out


def category_weights(city: str, state: str, population: float = BIG_CITY) -> dict[str, float]:
    """CATEGORY_WEIGHT over the categories `city` has generated names for (`attraction_templates`):
    no casinos outside the states that allow them, no nightlife in dry states."""
    allowed = attraction_templates(city, state, population)
    return {c: w for c, w in CATEGORY_WEIGHT.items() if c in allowed}


def generated_visit_hr(kind: str, categories: list[str], rng: np.random.Generator) -> float:
    """A generated attraction's typical visit: its kind's (`KIND_VISIT_HR`) within +-20 %, in
    quarter hours, never longer than the mean of its categories' durations in the paper's Table 7
    and never under half an hour."""
    table7 = float(np.mean([ATTRACTION_CATEGORIES[c] for c in categories]))
    hours = KIND_VISIT_HR[kind] * float(rng.uniform(0.8, 1.2))
    return max(0.5, min(round(hours * 4) / 4, table7))


def attraction_floors(cities: Cities) -> np.ndarray:
    """Each city's least attraction rows: its real sights and one generated place, at least 2."""
    facts = vf.sights()
    return np.array([max(2, len(facts.get(c, ())) + 1) for c in cities.name], dtype=np.int64)


def attractions_table(cities: Cities, profile: SandboxProfile, seed: int) -> Columns:
    rng = stage_rng(seed, "attractions")
    counts = per_city(cities, profile.attractions, attraction_floors(cities))
    lat, lon = venue_positions(cities, counts, rng)
    cols: Columns = {k: [] for k in ("name", "city", "categories", "visit_duration_hr", "rating",
                                     "entry_fee_inr", "open_time", "close_time", "open_days")}
    for c, k in enumerate(counts.tolist()):
        city, state, pop = cities.name[c], cities.state[c], float(cities.population[c])
        templates = attraction_templates(city, state, pop)
        weights = {cat: w for cat, w in CATEGORY_WEIGHT.items() if cat in templates}
        taken: set[str] = set()
        real = vf.sights().get(city, ())[:k]
        for i in range(k):
            if i < len(real):
                sight = real[i]
                name, cats, kind = sight.name, sorted(sight.categories), sight.kind
                taken.add(name.casefold())
                visit = sight.visit_hr
                fee = float(sight.fee_inr) if sight.fee_inr is not None else least_fee(kind, cats)
                open_time, close_time = sight_hours(sight)
                rating = real_rating(i)
                closed = sight.closed
            else:
                main = _pick(rng, weights, 1)[0]
                template = str(pick_one(rng, templates[main]))
                places = naming_places(city, state)
                name = nm.unique_name(nm.fill(template, city, state, rng, places), city, state, taken, rng, places)
                kind = attraction_kind(city, name, [main])
                second = KIND_SECOND_CATEGORY.get(kind)
                cats = sorted({main, second}) if second and rng.random() < SECOND_CATEGORY_SHARE else [main]
                visit = generated_visit_hr(kind, cats, rng)
                fee = entry_fee(kind, cats, rng)
                open_time, close_time = KIND_HOURS[kind]
                rating = round(float(rng.uniform(*GENERATED_ATTRACTION_RATING)), 1)
                closed = ()
            cols["name"].append(name)
            cols["city"].append(city)
            cols["categories"].append(cats)
            cols["visit_duration_hr"].append(visit)
            cols["rating"].append(rating)
            cols["entry_fee_inr"].append(fee)
            cols["open_time"].append(open_time)
            cols["close_time"].append(close_time)
            cols["open_days"].append(open_days_of(closed))
    return {"name": cols["name"], "city": cols["city"], "latitude": lat, "longitude": lon,
            **{k: v for k, v in cols.items() if k not in ("name", "city")}}


def open_days_of(closed: tuple[str, ...]) -> str:
    """The `open_days` mask of a venue closed on the weekdays `closed` (every day open when none):
    a real sight keeps its published closing days; a generated one is open daily (a made-up place
    has no real closing day, and a weekly closure of a city's only museum would make a museum
    request on that weekday unanswerable)."""
    return "".join("0" if bit == "1" else "1" for bit in days_mask(closed))
