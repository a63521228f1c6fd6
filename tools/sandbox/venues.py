"""What the venue tables share: the kinds of place, counts per city, positions, real venues' ratings.

The attractions, restaurants and stays tables (`attractions.py`, `restaurants.py`, `stays.py`) each
start a city's rows with its real venues (`utp_env.tools.india.venue_facts`: the sights a traveller
goes for, famous restaurants and breakfast places, flagship hotels), then generated ones for the long
tail, named as places of the city's language region are (`names.py`; `naming_places` keeps out the
localities whose words would name a kind). Every venue has a kind (`attraction_kind`,
`restaurant_kind`: the fact's kind for a real venue, the words of its name for a generated one), and
the kind sets what the generator does not know: opening hours, typical visit, entry fee, price tier,
crowd profile (`crowd.py`). The kinds live here, beside the helpers the three tables draw with,
because one rule serves the generator, the crowd profiles, the events (`events.py`) and the traveller
figures (`traveller/venues.py`). A city's real venues are rated above its generated ones by their
rank (`real_rating`).

Counts per city follow max(population, tourist draw)^0.8 (`geography.Cities.draw`: a tourist place
counts as the destination it is), with a floor of the city's real venues plus one, and sum to the
profile's totals (`per_city`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import TypeVar

import numpy as np

from utp_env.tools.india import venue_facts as vf
from utp_env.tools.sandbox import names as nm
from utp_env.tools.sandbox.common import apportion, power
from utp_env.tools.sandbox.geography import Cities

T = TypeVar("T")
SPREAD_DEG = 0.025  # ~2.8 km: s.d. of venue positions around the city centre
BIG_CITY = 1_000_000  # cities this large have malls, bowling alleys, bistros and lounges
REAL_RATING_TOP, REAL_RATING_FLOOR, RATING_STEP = 4.8, 4.4, 0.1

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


def _text(name: str) -> str:
    """`name` folded to lower-case words between spaces, for whole-word search."""
    return " " + " ".join(re.sub(r"[^a-z0-9]+", " ", name.casefold()).split()) + " "


def _has(text: str, words: tuple[str, ...]) -> bool:
    return any(f" {w} " in text for w in words)


def kind_from_words(name: str, table: tuple[tuple[str, tuple[str, ...]], ...]) -> str | None:
    """The first kind of `table` whose words `name` holds as whole words (case-insensitive), or None."""
    text = _text(name)
    return next((kind for kind, words in table if _has(text, words)), None)


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


@cache
def naming_places(city: str, state: str) -> tuple[str, ...]:
    """The localities generated venue names of `city` use (`names.city_localities`) without those
    holding a word that names a kind of place ("Fort Road", "Temple Street", "Hanuman Ghat"), so that
    a generated name's kind is what its own words say (`attraction_kind`, `restaurant_kind`)."""
    words = [w for _, ws in (*ATTRACTION_KIND_WORDS, *RESTAURANT_KIND_WORDS) for w in ws]
    places = tuple(p for p in nm.city_localities(city, state) if not _has(_text(p), tuple(words)))
    return places or nm.PAN_INDIAN_LOCALITIES[:1]


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
    weight = power(np.maximum(cities.population, cities.draw), 0.8)
    return floors + apportion(total - int(floors.sum()), weight)


def venue_positions(cities: Cities, counts: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Latitudes and longitudes of `counts[i]` venues around each city i, scattered by SPREAD_DEG."""
    idx = np.repeat(np.arange(cities.n), counts)
    lat = np.round(cities.lat[idx] + rng.normal(0, SPREAD_DEG, len(idx)), 5)
    lon = np.round(cities.lon[idx] + rng.normal(0, SPREAD_DEG, len(idx)), 5)
    return lat, lon


def pick_one(rng: np.random.Generator, options: Sequence[T]) -> T:
    """One of `options`, uniformly, drawn from `rng` (never the global random)."""
    return options[int(rng.integers(len(options)))]


def pick_weighted(rng: np.random.Generator, weights: dict[str, float]) -> str:
    """One key of `weights`, drawn with probability proportional to its weight."""
    keys = list(weights)
    w = np.array([weights[k] for k in keys], float)
    return keys[int(rng.choice(len(keys), p=w / w.sum()))]


def is_big(population: float) -> bool:
    return population >= BIG_CITY


def has_beach(city: str) -> bool:
    """Whether the curated sights of `city` include a beach (tools/india/venue_facts.py)."""
    return any(s.kind == "beach" for s in vf.sights().get(city, ()))
