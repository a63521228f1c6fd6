"""Venue tables: attractions, restaurants and stays, real ones first, generated ones for the long tail.

Each city's rows start with its real venues (`utp_env.tools.india.venue_facts`: the sights a
traveller goes for with their fees, hours, closing days and typical visits, day trips from their
base; famous restaurants and breakfast places; flagship hotels at their prices), then generated
ones, named as places of the city's language region are (`names.py`). Every venue has a kind
(`attraction_kind`, `restaurant_kind`: the fact's kind for a real venue, the words of its name for
a generated one), and the kind sets what the generator does not know: opening hours, typical visit,
entry fee, price tier, crowd profile (`crowd.py`). Real sights outrank generated attractions in
rating (4.4-4.8 by their rank, generated ones at most 4.3), so a planner that prefers better rated
places goes to the Taj Mahal before a generated park. Categories exist only where they may (no
casinos outside Goa, Sikkim and Daman, no bars in dry states, no beach inland, no resort stay
outside a resort area).

Counts per city follow max(population, tourist draw)^0.8 (`geography.Cities.draw`: a tourist place
counts as the destination it is), with a floor of the city's real venues plus one, and sum to the
profile's totals.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import TypeVar

import numpy as np

from utp_env.tools.india import (
    COASTAL_CITIES,
    HILL_CITIES,
    TOURIST_CITIES,
    WILDLIFE_CITIES,
    alcohol_allowed,
    casinos_allowed,
    city_tier,
)
from utp_env.tools.india import venue_facts as vf
from utp_env.tools.sandbox import names as nm
from utp_env.tools.sandbox.common import Columns, apportion, stage_rng
from utp_env.tools.sandbox.geography import Cities
from utp_env.tools.sandbox.profiles import SandboxProfile
from utp_env.tools.schema import ATTRACTION_CATEGORIES, CUISINES, HOUSE_RULES, days_mask

T = TypeVar("T")
SPREAD_DEG = 0.025  # ~2.8 km: s.d. of venue positions around the city centre
AMENITIES = ("Free Wi-Fi", "Parking", "Restaurant", "Swimming Pool", "Gym", "Wellness Spa", "Airport Shuttle",
             "Air Conditioning", "Bar", "Business Centre", "Garden", "Kids Play Area")
SERVICES = ("Laundry", "Room Service", "Cleaning", "Concierge", "24-hour Front Desk", "Luggage Storage",
            "Doctor on Call", "Travel Desk")
CATEGORY_WEIGHT = {c: (6.0 if c == "Sights & Landmarks" else 3.0 if c in ("Nature & Parks", "Museums", "Shopping")
                       else 1.0) for c in ATTRACTION_CATEGORIES}
TIER_COST = {"$": (150, 350), "$$": (350, 800), "$$$": (800, 1600), "$$$$": (1600, 3500)}
BIG_CITY = 1_000_000  # cities this large have malls, bowling alleys, bistros and lounges

# ------------------------------------------------------------------------------- attraction kinds

# The words that name each kind of attraction, tried in this order (a "Memorial Museum" is a
# museum, an "Amusement Park" no park, a "Deer Park" a zoo).
ATTRACTION_KIND_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("casino", ("casino",)),
    ("gurudwara", ("gurudwara", "sahib")),
    ("mosque", ("masjid", "mosque", "dargah", "masajid")),
    ("church", ("church", "cathedral", "basilica", "chapel")),
    ("monastery", ("monastery", "gompa")),
    ("ghat", ("ghat",)),
    ("museum", ("museum", "gallery", "science centre", "science city")),
    ("water_park", ("water park",)),
    ("amusement_park", ("amusement park", "fun world")),
    ("adventure", ("adventure", "trek", "rafting")),
    ("zoo", ("zoo", "zoological", "deer park")),
    ("temple", ("temple", "mandir", "kovil", "kali bari", "namghar")),
    ("fort", ("fort", "qila")),
    ("palace", ("palace", "mahal", "haveli")),
    ("cave", ("cave", "caves")),
    ("beach", ("beach",)),
    ("waterfall", ("falls", "waterfall")),
    ("viewpoint", ("point", "viewpoint")),
    ("boat", ("boat club", "boating", "water sports", "cruise")),
    ("lake", ("lake", "sagar", "talav", "talao", "talab", "kere", "cheruvu", "eri", "dighi", "kayal", "pokhari",
              "beel", "tal", "sarovar")),
    ("food_street", ("food street", "khau galli", "khau gali", "chaat gali", "eat street", "food court",
                     "thattukada street", "khabar gali")),
    ("market", ("market", "bazaar", "bazar", "mall", "emporium")),
    ("garden", ("garden", "gardens", "udyan", "baug", "bagh")),
    ("park", ("park",)),
    ("spa", ("spa", "ayurveda", "wellness", "yoga")),
    ("nightlife", ("lounge", "club", "pub")),
    ("workshop", ("class", "classes", "studio", "workshop")),
    ("games", ("bowling", "gaming", "fun zone")),
    ("show", ("auditorium", "rangmanch", "sabhagar", "natyagruha", "town hall", "kalamandira", "kalaiarangam",
              "kalakshetram", "kalakshetra", "mandap", "hall", "bhavan")),
    ("monument", ("memorial", "tomb", "minar", "stepwell", "gate")),
)
# The kind of an attraction whose name says nothing, by its first category.
CATEGORY_KIND: dict[str, str] = {
    "Sights & Landmarks": "monument", "Museums": "museum", "Nature & Parks": "park", "Shopping": "market",
    "Food & Drink": "food_street", "Zoos & Aquariums": "zoo", "Water & Amusement Parks": "amusement_park",
    "Boat Tours & Water Sports": "boat", "Outdoor Activities": "adventure", "Fun & Games": "games",
    "Classes & Workshops": "workshop", "Concerts & Shows": "show", "Spas & Wellness": "spa",
    "Nightlife": "nightlife", "Casinos & Gambling": "casino",
}
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
REAL_RATING_TOP, REAL_RATING_FLOOR, RATING_STEP = 4.8, 4.4, 0.1
GENERATED_ATTRACTION_RATING = (3.4, 4.3)


def _text(name: str) -> str:
    """`name` folded to lower-case words between spaces, for whole-word search."""
    return " " + " ".join(re.sub(r"[^a-z0-9]+", " ", name.casefold()).split()) + " "


def _has(text: str, words: tuple[str, ...]) -> bool:
    return any(f" {w} " in text for w in words)


def sight_of(city: str, name: str) -> vf.Sight | None:
    """The real sight `name` of `city` (`venue_facts.sights`), or None for a generated attraction."""
    return vf.sight_index().get((city, name.casefold()))


def attraction_kind(city: str, name: str, categories: list[str] | tuple[str, ...]) -> str:
    """The kind of an attraction (`venue_facts.ATTRACTION_KINDS`): a real sight's listed kind, else
    the first kind whose words its name holds (`ATTRACTION_KIND_WORDS`), else its first category's
    (`CATEGORY_KIND`). One rule for the generator, the crowd profiles and the traveller figures."""
    sight = sight_of(city, name)
    if sight is not None:
        return sight.kind
    return kind_from_words(name, ATTRACTION_KIND_WORDS) or (CATEGORY_KIND[categories[0]] if categories else "monument")


def kind_from_words(name: str, table: tuple[tuple[str, tuple[str, ...]], ...]) -> str | None:
    """The first kind of `table` whose words `name` holds as whole words (case-insensitive), or None."""
    text = _text(name)
    return next((kind for kind, words in table if _has(text, words)), None)


@cache
def naming_places(city: str, state: str) -> tuple[str, ...]:
    """The localities generated venue names of `city` use (`names.city_localities`) without those
    holding a word that names a kind of place ("Fort Road", "Temple Street", "Hanuman Ghat"), so that
    a generated name's kind is what its own words say (`attraction_kind`, `restaurant_kind`)."""
    words = [w for _, ws in (*ATTRACTION_KIND_WORDS, *RESTAURANT_KIND_WORDS) for w in ws]
    places = tuple(p for p in nm.city_localities(city, state) if not _has(_text(p), tuple(words)))
    return places or nm.PAN_INDIAN_LOCALITIES[:1]


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


def _minutes(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:5])


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
    start = max(_minutes(opening) - journey, _minutes(DAY_TRIP_WINDOW[0]))
    end_minutes = _minutes(closing) if _minutes(closing) > _minutes(opening) else _minutes(closing) + 1440
    end = min(end_minutes + journey, _minutes(DAY_TRIP_WINDOW[1]))
    return _clock(start), _clock(end)


def real_rating(rank: int, top: float = REAL_RATING_TOP, floor: float = REAL_RATING_FLOOR) -> float:
    """The rating of a city's real venue of 0-based `rank` (most visited first): `top`, one step
    lower per rank, never under `floor`, which is above every generated venue's rating."""
    return round(max(floor, top - RATING_STEP * rank), 1)


def per_city(cities: Cities, total: int, floors: np.ndarray) -> np.ndarray:
    """Venue counts per city summing to `total`: each city's floor, the rest proportional to
    max(population, draw)^0.8. When the floors exceed the total (a small profile), each city's floor
    is capped at the largest value that fits, so every city keeps its first real venues."""
    floors = np.asarray(floors, dtype=np.int64)
    base = int(floors.min()) if floors.size else 0
    cap = int(floors.max(initial=0))
    while cap > base and int(np.minimum(floors, cap).sum()) > total:
        cap -= 1
    floors = np.minimum(floors, cap)
    if int(floors.sum()) > total:
        raise ValueError(f"cannot give each of {cities.n} cities its {base} venues from a total of {total}")
    weight = np.maximum(cities.population, cities.draw).astype(float) ** 0.8
    return floors + apportion(total - int(floors.sum()), weight)


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


def _choice(rng: np.random.Generator, options: Sequence[T]) -> T:
    return options[int(rng.integers(len(options)))]


def is_big(population: float) -> bool:
    return population >= BIG_CITY


def _where_ok(where: str, city: str, state: str, population: float) -> bool:
    region = nm.region_key(state)
    return {"any": True, "coastal": city in COASTAL_CITIES and not _has_beach(city), "hill": _hill(city),
            "big": is_big(population), "tourist": city in TOURIST_CITIES,
            "christian": region in CHRISTIAN_REGIONS or is_big(population)}[where]


def _has_beach(city: str) -> bool:
    return any(s.kind == "beach" for s in vf.sights().get(city, ()))


def _hill(city: str) -> bool:
    return city in HILL_CITIES or (vf.resort_area(city) and city not in COASTAL_CITIES and not _has_beach(city)
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
    lat, lon = _positions(cities, counts, rng)
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
                template = str(_choice(rng, templates[main]))
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


# ------------------------------------------------------------------------------- restaurants

# The words that name each kind of restaurant, tried in this order.
RESTAURANT_KIND_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("brewpub", ("brewing", "brewery", "brewpub")),
    ("pub", ("pub", "bar", "tavern")),
    ("lounge", ("lounge",)),
    ("irani_cafe", tuple(w.casefold() for w in nm.IRANI_WORDS)),
    ("bakery", ("bakery", "bakers")),
    ("chaat", ("chaat", "phuchka")),
    ("sweet_shop", ("sweets", "mishthan", "mishtanna", "sweet mart", "kachori")),
    ("nasta", ("nasta", "farsan")),
    ("misal", ("misal",)),
    ("paratha", ("paratha", "parathe", "kulcha")),
    ("dhaba", ("dhaba",)),
    ("tiffin", ("tiffin", "tiffins", "darshini", "udupi", "bhavan", "nashta", "cabin", "tea stall", "tea shop",
                "puttu", "idli")),
    ("cafe", ("cafe", "coffee")),
    ("bhojanalaya", ("bhojanalaya", "thali", "khanaval", "pice hotel", "bhojan griha")),
    ("mess", ("mess", "military hotel", "meals", "bhojanam", "eatery", "wazwan")),
    ("biryani", ("biryani",)),
    ("kebab", ("kabab", "kebab")),
    ("momo", ("momo", "tibetan")),
    ("chinese", ("chinese", "wok")),
    ("pizzeria", ("pizzeria", "pizza")),
    ("grill", ("grill", "barbeque")),
    ("seafood", ("fish", "seafood", "shack")),
    ("bistro", ("bistro", "kitchen")),
    ("continental", ("continental",)),
    ("burger", ("burger", "diner")),
    ("shawarma", ("shawarma", "arabian", "mandi")),
    ("cantina", ("cantina", "tacos")),
    ("family", ("restaurant", "hotel")),
)
CUISINE_KIND: dict[str, str] = {
    "Bar/Pub/Cafe": "cafe", "Asian": "chinese", "Pizza/Italian Specialties": "pizzeria",
    "Seafood/Steak/Grill": "grill", "International Fusion": "bistro", "European": "continental",
    "American": "burger", "Mediterranean/Middle Eastern": "shawarma", "Latin/South American": "cantina",
}
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


def restaurant_kind(city: str, name: str, cuisines: list[str] | tuple[str, ...]) -> str:
    """The kind of a restaurant (`venue_facts.RESTAURANT_KINDS`): a real one's listed kind, else the
    first kind whose words its name holds (`RESTAURANT_KIND_WORDS`), else its first cuisine's
    (`CUISINE_KIND`; an Indian place is a family restaurant). One rule for the generator, the crowd
    profiles and the traveller figures."""
    real = vf.restaurant_index().get((city, name.casefold()))
    if real is not None:
        return real.kind
    named = kind_from_words(name, RESTAURANT_KIND_WORDS)
    if named is not None:
        return named
    if "Indian Subcontinent" in cuisines:
        return "family"
    return next((CUISINE_KIND[c] for c in cuisines if c in CUISINE_KIND), "family")


def opens_for_breakfast(open_time: str, close_time: str) -> bool:
    """Whether a restaurant open `open_time`-`close_time` opens by 08:00 and stays open to noon."""
    closing = _minutes(close_time) if _minutes(close_time) > _minutes(open_time) else _minutes(close_time) + 1440
    return _minutes(open_time) <= _minutes(BREAKFAST_BY) and closing >= 12 * 60


def _kind_allowed(kind: str, city: str, state: str, population: float) -> bool:
    region = nm.region_key(state)
    big_or_tourist = is_big(population) or city in TOURIST_CITIES
    if kind in ("pub", "brewpub", "lounge"):
        return alcohol_allowed(state) and big_or_tourist
    return {"irani_cafe": city in vf.IRANI_CAFE_CITIES,
            "seafood": city in COASTAL_CITIES or _has_beach(city),
            "momo": region in MOMO_REGIONS or is_big(population),
            "kebab": region in KEBAB_REGIONS or is_big(population),
            "shawarma": region in SHAWARMA_REGIONS or is_big(population),
            "bistro": big_or_tourist, "continental": big_or_tourist, "cantina": is_big(population),
            }.get(kind, True)


def restaurant_template(kind: str, state: str, rng: np.random.Generator) -> str:
    """A name template of a generated restaurant of `kind` in `state`'s region."""
    region = nm.region_of(state)
    template = str(_choice(rng, KIND_TEMPLATES[kind]))
    if template.startswith("@"):
        own = getattr(region, template[1:])
        template = str(_choice(rng, own)) if isinstance(own, tuple) else own
    return template


def _weighted(rng: np.random.Generator, weights: dict[str, float]) -> str:
    keys = list(weights)
    w = np.array([weights[k] for k in keys], float)
    return keys[int(rng.choice(len(keys), p=w / w.sum()))]


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
    lat, lon = _positions(cities, counts, rng)
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
                kind = _weighted(rng, breakfast if morning else anytime)
                template = restaurant_template(kind, state, rng)
                places = naming_places(city, state)
                name = nm.unique_name(nm.fill(template, city, state, rng, places), city, state, taken, rng, places)
                cuisines = _cuisines(kind, rng, city in COASTAL_CITIES or _has_beach(city))
                tiers = KIND_TIERS[kind]
                tier = tiers[int(rng.choice(len(tiers), p=[w for _, w in tiers]))][0]
                low, high = TIER_COST[tier]
                cost = float(round(rng.uniform(low, high) * scale / 10) * 10)
                openings, closings = KIND_OPENING[kind]
                if morning:
                    openings = tuple(t for t in openings if t <= BREAKFAST_BY)
                opening, closing = str(_choice(rng, openings)), str(_choice(rng, closings))
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


# ------------------------------------------------------------------------------- stays

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
    if city in COASTAL_CITIES or _has_beach(city):
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
    lat, lon = _positions(cities, counts, rng)
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
                house_type = _weighted(rng, types)
                stars = int(_choice(rng, HOUSE_TYPE_DRAW[house_type][2]))
                template = str(_choice(rng, stay_templates(house_type, city, state, stars)))
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

