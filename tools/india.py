"""Facts about India that the sandbox generator and the query generator share (one place for each).

From public knowledge (state excise and gaming laws, coastal geography, the hill stations, national
parks and pilgrimage towns a traveller in India knows); docs/DATA.md names the kind of source.
City names are those of the sandbox's cities table; a name absent from a database is ignored.
"""

from __future__ import annotations

# Casinos are legal (on land or offshore) only in Goa, Sikkim and Daman (Daman and Diu, now part of
# the union territory "Dadra and Nagar Haveli and Daman and Diu", whose Silvassa has none).
CASINO_STATES: frozenset[str] = frozenset({"Goa", "Sikkim"})
CASINO_CITIES: frozenset[str] = frozenset({"Daman", "Diu"})
# States under alcohol prohibition: no bars, pubs or brewpubs (Gujarat since 1960, Nagaland since
# 1989, Bihar since 2016, Mizoram again since 2019).
DRY_STATES: frozenset[str] = frozenset({"Gujarat", "Bihar", "Nagaland", "Mizoram"})


def casinos_allowed(city: str, state: str) -> bool:
    """Whether a casino may operate in `city` of `state`."""
    return state in CASINO_STATES or city in CASINO_CITIES


def alcohol_allowed(state: str) -> bool:
    """Whether bars, pubs and brewpubs may operate in `state`."""
    return state not in DRY_STATES


# City tiers by population (the tiers hotel and restaurant prices follow): a metro of 4 million
# or more, a large city of 1 million or more, a mid-sized city of 300,000 or more, else a town.
CITY_TIERS: tuple[tuple[str, int], ...] = (("metro", 4_000_000), ("large", 1_000_000), ("mid", 300_000),
                                           ("town", 0))


def city_tier(population: float) -> str:
    """The tier (`CITY_TIERS`) of a city of `population` people."""
    return next(name for name, floor in CITY_TIERS if population >= floor)


# Cities on the sea with beaches (a beach holiday's destinations).
COASTAL_CITIES: frozenset[str] = frozenset({
    "Mumbai", "Navi Mumbai", "Virar", "Panaji", "Madgaon", "Mormugao", "Mangaluru", "Udupi", "Kochi", "Kozhikode",
    "Kollam", "Alappuzha", "Thiruvananthapuram", "Kanhangad", "Tellicherry", "Ponnani", "Neyyattinkara",
    "Chennai", "Puducherry", "Karaikal", "Cuddalore", "Nagapattinam", "Thoothukudi", "Nagercoil",
    "Visakhapatnam", "Kakinada", "Machilipatnam", "Chirala", "Puri", "Paradip Garh", "Contai", "Balasore",
    "Surat", "Porbandar", "Veraval", "Mahuva", "Valsad", "Navsari", "Daman", "Diu", "Haldia",
})
# Hill stations and mountain towns (a mountain holiday's destinations).
HILL_CITIES: frozenset[str] = frozenset({
    "Shimla", "Manali", "Leh", "Srinagar", "Anantnag", "Darjeeling", "Gangtok", "Shillong", "Ooty", "Valparai",
    "Chikmagalur", "Dehradun", "Rishikesh", "Kohima", "Aizawl", "Haldwani", "Mount Abu", "Nainital", "Mussoorie",
})
# Gateway towns of national parks and tiger reserves (a wildlife holiday's destinations).
WILDLIFE_CITIES: frozenset[str] = frozenset({
    "Sawai Madhopur", "Khajuraho", "Bharatpur", "Jorhat", "Nagaon", "Mysuru", "Ooty", "Jabalpur", "Seoni",
    "Shahdol", "Nagpur", "Chanda", "Dehradun", "Haridwar", "Kashipur", "Jagdalpur", "Valparai", "Pollachi",
    "Jalpaiguri", "Siliguri", "Bhuj", "Junagadh", "Veraval", "Pilibhit", "Bahraigh", "Bagaha", "Hazaribagh",
    "Basirhat City", "Baripada", "Dibrugarh", "Tinsukia",
})
# Pilgrimage towns (a religious trip's destinations).
PILGRIMAGE_CITIES: frozenset[str] = frozenset({
    "Varanasi", "Haridwar", "Rishikesh", "Prayagraj", "Mathura", "Fyzabad", "Puri", "Tirupati", "Amritsar",
    "Ujjain", "Gaya", "Deoghar", "Madurai", "Kanchipuram", "Tiruvannamalai", "Kumbakonam", "Thanjavur",
    "Pandharpur", "Nashik", "Ajmer", "Veraval", "Kushinagar", "Jammu", "Nanded", "Parli Vaijnath",
    "Bhubaneswar", "Guwahati", "Nagapattinam", "Udupi", "Patna", "Bodh Gaya", "Dwarka", "Shirdi",
})
# A query persona's location preference -> the cities that honour it (preferences not listed here,
# such as "Cities" or "Historical Sites", are honoured anywhere).
PREFERENCE_CITIES: dict[str, frozenset[str]] = {
    "Beaches": COASTAL_CITIES, "Mountains": HILL_CITIES, "Wildlife": WILDLIFE_CITIES,
    "Religious Sites": PILGRIMAGE_CITIES,
}
# Parts of one metropolitan area: a trip does not visit two of them as separate destinations.
METRO_AREAS: tuple[frozenset[str], ...] = (
    frozenset({"Mumbai", "Navi Mumbai", "Thane", "Kalyan", "Bhiwandi", "Virar"}),
    frozenset({"Delhi", "Noida", "Greater Noida", "Ghaziabad", "Gurugram", "Faridabad"}),
    frozenset({"Kolkata", "Howrah", "Bhatpara"}),
    frozenset({"Pune", "Pimpri-Chinchwad"}),
    frozenset({"Chandigarh", "Mohali", "Panchkula"}),
    frozenset({"Hyderabad", "Secunderabad"}),
    frozenset({"Bhilai", "Durg"}),
    frozenset({"Ahmedabad", "Gandhinagar"}),
)


def metro_of(city: str) -> int | None:
    """Index of the metropolitan area (`METRO_AREAS`) that `city` is part of, or None."""
    return next((i for i, area in enumerate(METRO_AREAS) if city in area), None)


def same_metro(cities: list[str] | tuple[str, ...]) -> bool:
    """Whether two of `cities` are parts of one metropolitan area."""
    seen = [m for m in (metro_of(c) for c in cities) if m is not None]
    return len(seen) != len(set(seen))
