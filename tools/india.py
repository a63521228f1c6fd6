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


# Railways (tools/sandbox/rail.py). India's trunk railway lines (Indian Railways' Golden
# Quadrilateral and diagonals, the Konkan Railway, the main lines to Punjab, Jammu, the North East
# and Kerala, and the lines to the places travellers go to), each as its main junction cities in
# order with the line's route km from its first to its last city: Indian Railways' timetabled
# distances (public knowledge, rounded to 5 km; New Delhi-Mumbai Central 1,385, Howrah-Chennai
# Central 1,660, CSMT-Pune 190 over the Bhor Ghat). 0: no figure given, the line's km are its
# great-circle hops times the generator's default trunk detour. Real track is 1.1-1.6x the great
# circle between two cities (the trunk lines of the plains least, the ghat and hill lines most).
RAIL_LINES: tuple[tuple[tuple[str, ...], float], ...] = (
    (("Delhi", "Mathura", "Kota", "Ratlam", "Vadodara", "Surat", "Mumbai"), 1385.0),
    (("Delhi", "Aligarh", "Kanpur", "Prayagraj", "Varanasi", "Gaya", "Dhanbad", "Asansol", "Barddhaman", "Kolkata"),
     1460.0),
    (("Mumbai", "Kalyan", "Nashik", "Jalgaon", "Akola", "Amravati", "Nagpur", "Durg", "Raipur", "Bilaspur", "Rourkela",
      "Jamshedpur", "Kharagpur", "Kolkata"), 1970.0),
    (("Kolkata", "Kharagpur", "Cuttack", "Bhubaneswar", "Brahmapur", "Vizianagaram", "Visakhapatnam",
      "Eluru", "Vijayawada", "Ongole", "Nellore", "Chennai"), 1660.0),
    (("Delhi", "Agra", "Gwalior", "Jhansi", "Bhopal", "Itarsi", "Nagpur", "Ramgundam", "Warangal", "Vijayawada"),
     1750.0),
    (("Mumbai", "Pune"), 190.0),
    (("Pune", "Sholapur", "Kalaburagi", "Raichur", "Guntakal", "Tirupati", "Chennai"), 1110.0),
    (("Chennai", "Vellore", "Bengaluru"), 360.0),
    (("Bengaluru", "Anantapur", "Kurnool", "Mahbubnagar", "Hyderabad"), 615.0),
    (("Hyderabad", "Warangal"), 140.0),
    (("Delhi", "Panipat", "Ambala", "Ludhiana", "Jalandhar", "Amritsar"), 450.0),
    (("Ambala", "Chandigarh"), 45.0),
    (("Jalandhar", "Pathankot", "Jammu"), 215.0),
    (("Delhi", "Moradabad", "Bareilly", "Lucknow", "Gorakhpur", "Muzaffarpur", "Begusarai", "Katihar", "Siliguri",
      "Guwahati"), 0.0),
    (("Kanpur", "Lucknow"), 75.0),
    (("Varanasi", "Patna", "Begusarai"), 0.0),
    (("Delhi", "Gurugram", "Rewari", "Jaipur", "Ajmer", "Palanpur", "Mahesana", "Ahmedabad", "Vadodara"), 1035.0),
    (("Ahmedabad", "Rajkot", "Jamnagar"), 330.0),
    (("Chennai", "Vellore", "Salem", "Erode", "Tiruppur", "Coimbatore", "Palakkad", "Thrissur", "Kochi", "Alappuzha",
      "Kollam", "Thiruvananthapuram"), 900.0),
    (("Chennai", "Villupuram", "Tiruchirappalli", "Madurai", "Tirunelveli", "Nagercoil"), 725.0),
    (("Mumbai", "Panaji", "Madgaon", "Udupi", "Mangaluru", "Kozhikode", "Thrissur"), 1245.0),
    (("Bengaluru", "Tumkur", "Davangere", "Hubballi", "Belagavi", "Sangli", "Pune"), 1010.0),
    (("Bengaluru", "Mysuru"), 140.0),
    (("Jhansi", "Kanpur"), 220.0),
    (("Bhopal", "Ujjain", "Indore"), 265.0),
    (("Ratlam", "Ujjain"), 95.0),
    (("Itarsi", "Jabalpur", "Satna", "Prayagraj"), 0.0),
    (("Nagpur", "Wardha", "Akola"), 255.0),
    (("Kolkata", "Barddhaman", "Bhagalpur", "Patna"), 0.0),
    (("Dhanbad", "Bokaro", "Ranchi", "Rourkela"), 0.0),
    (("Raipur", "Vizianagaram"), 0.0),
    (("Guwahati", "Dimapur", "Dibrugarh"), 0.0),
    (("Ajmer", "Bhilwara", "Chittorgarh", "Udaipur"), 300.0),
    (("Delhi", "Meerut", "Muzaffarnagar", "Roorkee", "Haridwar", "Dehradun"), 305.0),
    (("Haridwar", "Rishikesh"), 0.0),
    (("Kharagpur", "Balasore", "Cuttack"), 295.0),
    (("Bhubaneswar", "Puri"), 65.0),
    (("Villupuram", "Puducherry"), 40.0),
    (("Siliguri", "Darjeeling"), 85.0),
    (("Ajmer", "Jodhpur", "Jaisalmer"), 0.0),
    (("Jhansi", "Mahoba", "Khajuraho"), 0.0),
)
# The lines cleared for 130 km/h (Indian Railways' "Mission Raftaar" upgrade of the Golden
# Quadrilateral's two busiest routes, New Delhi-Mumbai and New Delhi-Howrah), by their end cities:
# trains other than Passengers run faster on them (Mumbai and Howrah Rajdhanis average 85-90 km/h
# with stops, the Bengaluru Rajdhani about 70).
FAST_RAIL_LINES: frozenset[tuple[str, str]] = frozenset({("Delhi", "Mumbai"), ("Delhi", "Kolkata")})
# Sections where trains run slower than on the plains (speed factor), as (cities on one side, cities
# on the other, factor): every rail link between the two sides. The Western Ghats inclines (the Bhor
# Ghat between the Mumbai region and Pune, the Thal Ghat between the coast and Nashik), the Konkan
# line, the Himalayan foothill lines and the Darjeeling Himalayan Railway (a toy train at ~12 km/h).
_MUMBAI_SIDE = frozenset({"Mumbai", "Navi Mumbai", "Thane", "Kalyan", "Bhiwandi", "Virar", "Roha", "Panvel"})
SLOW_RAIL_SECTIONS: tuple[tuple[frozenset[str], frozenset[str], float], ...] = tuple(
    (frozenset(a), frozenset(b), f) for a, b, f in (
        (_MUMBAI_SIDE, ("Pune", "Pimpri-Chinchwad"), 0.8),
        (_MUMBAI_SIDE | {"Silvassa", "Vapi", "Valsad", "Daman"}, ("Nashik",), 0.7),
        (("Mumbai",), ("Panaji",), 0.8), (("Panaji",), ("Madgaon",), 0.8), (("Madgaon",), ("Udupi",), 0.8),
        (("Haridwar",), ("Dehradun", "Rishikesh"), 0.7), (("Pathankot",), ("Jammu",), 0.8),
        (("Siliguri",), ("Darjeeling",), 0.25), (("Guwahati",), ("Dimapur",), 0.8),
    )
)


def rail_section_speed(a: str, b: str) -> float:
    """Speed factor of the rail link between cities `a` and `b` (`SLOW_RAIL_SECTIONS`; 1 on the plains)."""
    return min((f for x, y, f in SLOW_RAIL_SECTIONS if (a in x and b in y) or (a in y and b in x)), default=1.0)
