"""Facts about India that the sandbox generator and the query generator share (one place for each).

From public knowledge (state excise and gaming laws, coastal geography, the hill stations, national
parks and pilgrimage towns a traveller in India knows); docs/DATA.md names the kind of source.
City names are those of the sandbox's cities table; a name absent from a database is ignored.
"""

from __future__ import annotations

from typing import NamedTuple

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


class FamousAttraction(NamedTuple):
    """A famous attraction of a tourist city with its facts: categories (the paper's Table 7),
    Indian-citizen adult entry fee (₹; None: drawn by kind like a generated one), opening hours
    (HH:MM, None: by kind) and the weekdays it is closed (`utp_env.tools.clock.WEEKDAYS` names)."""

    name: str
    categories: tuple[str, ...]
    fee_inr: float | None = None
    hours: tuple[str, str] | None = None
    closed: tuple[str, ...] = ()


_S, _M, _N, _SH = "Sights & Landmarks", "Museums", "Nature & Parks", "Shopping"
_A = FamousAttraction
# A handful of the best-known attractions of each tourist city, first the one every visitor goes to
# (ASI, state tourism and the venues' own listings, 2024-25; fees rounded; "sunrise to sunset" as
# 06:00-18:00). Closing days as published: the Taj Mahal on Fridays (the mosque's prayers), the Red
# Fort, Elephanta, Ajanta and Kolkata's museums on Mondays, Hyderabad's Salar Jung Museum,
# Chowmahalla Palace and Qutb Shahi Tombs, Chennai's museums and Kochi's Mattancherry Palace on
# Fridays, Ellora on Tuesdays, Darjeeling's zoo on Thursdays, Mysuru's zoo on Tuesdays, Ahmedabad's
# Calico Museum on Wednesdays.
FAMOUS_ATTRACTIONS: dict[str, tuple[FamousAttraction, ...]] = {
    "Delhi": (_A("Red Fort", (_S, _M), 35, ("09:30", "16:30"), ("Mon",)),
              _A("Qutub Minar", (_S,), 35, ("07:00", "18:00")),
              _A("Humayun's Tomb", (_S,), 35, ("06:00", "18:00")),
              _A("India Gate", (_S,), 0),
              _A("Akshardham Temple", (_S,), 0, ("10:00", "18:30"), ("Mon",)),
              _A("Lotus Temple", (_S,), 0, ("09:00", "17:30"), ("Mon",)),
              _A("National Museum", (_M,), 20, ("10:00", "18:00"), ("Mon",)),
              _A("Jama Masjid", (_S,), 0, ("07:00", "18:30"))),
    "Agra": (_A("Taj Mahal", (_S,), 50, ("06:00", "18:30"), ("Fri",)),
             _A("Agra Fort", (_S,), 50, ("06:00", "18:00")),
             _A("Fatehpur Sikri", (_S,), 50, ("06:00", "18:00")),
             _A("Itimad-ud-Daulah's Tomb", (_S,), 30, ("06:00", "18:00")),
             _A("Mehtab Bagh", (_N,), 30, ("06:00", "18:00"))),
    "Jaipur": (_A("Amber Fort", (_S,), 100, ("08:00", "17:30")),
               _A("Hawa Mahal", (_S,), 50, ("09:00", "16:30")),
               _A("City Palace Jaipur", (_S, _M), 200, ("09:30", "17:00")),
               _A("Jantar Mantar Jaipur", (_S,), 50, ("09:00", "16:30")),
               _A("Nahargarh Fort", (_S,), 50, ("10:00", "17:30")),
               _A("Albert Hall Museum", (_M,), 40, ("09:00", "17:00"))),
    "Mumbai": (_A("Gateway of India", (_S,), 0),
               _A("Elephanta Caves", (_S, "Boat Tours & Water Sports"), 40, ("09:00", "17:30"), ("Mon",)),
               _A("Chhatrapati Shivaji Maharaj Vastu Sangrahalaya", (_M,), 100, ("10:00", "18:00")),
               _A("Chhatrapati Shivaji Maharaj Terminus", (_S,), 0),
               _A("Haji Ali Dargah", (_S,), 0, ("05:30", "22:00")),
               _A("Dr. Bhau Daji Lad Museum", (_M,), 20, ("10:00", "18:00"), ("Wed",))),
    "Panaji": (_A("Basilica of Bom Jesus", (_S,), 0, ("09:00", "18:30")),
               _A("Calangute Beach", (_N,), 0),
               _A("Our Lady of the Immaculate Conception Church", (_S,), 0),
               _A("Miramar Beach", (_N,), 0)),
    "Varanasi": (_A("Dashashwamedh Ghat", (_S,), 0, ("05:00", "21:00")),
                 _A("Kashi Vishwanath Temple", (_S,), 0, ("04:00", "23:00")),
                 _A("Sarnath", (_S,), 25, ("06:00", "18:00")),
                 _A("Sarnath Museum", (_M,), None, ("09:00", "17:00"), ("Fri",)),
                 _A("Assi Ghat", (_S,), 0, ("05:00", "21:00"))),
    "Udaipur": (_A("City Palace Udaipur", (_S, _M), 300, ("09:00", "17:30")),
                _A("Lake Pichola", (_N, "Boat Tours & Water Sports"), 0),
                _A("Jagdish Temple", (_S,), 0),
                _A("Saheliyon-ki-Bari", (_N,), 10, ("09:00", "19:00"))),
    "Kochi": (_A("Chinese Fishing Nets", (_S,), 0),
              _A("Mattancherry Palace", (_S, _M), 5, ("10:00", "17:00"), ("Fri",)),
              _A("Paradesi Synagogue", (_S,), 5, ("10:00", "17:00"), ("Fri", "Sat")),
              _A("St. Francis Church", (_S,), 0)),
    "Amritsar": (_A("Golden Temple", (_S,), 0, ("04:00", "23:00")),
                 _A("Jallianwala Bagh", (_S,), 0, ("06:30", "19:30")),
                 _A("Wagah Border", (_S, "Concerts & Shows"), 0, ("14:00", "18:00")),
                 _A("Partition Museum", (_M,), 10, ("10:00", "18:00"), ("Mon",))),
    "Bengaluru": (_A("Lalbagh Botanical Garden", (_N,), 30, ("06:00", "19:00")),
                  _A("Bangalore Palace", (_S,), 230, ("10:00", "17:30")),
                  _A("Cubbon Park", (_N,), 0, ("06:00", "18:00")),
                  _A("Tipu Sultan's Summer Palace", (_S, _M), 25, ("08:30", "17:30"))),
    "Chennai": (_A("Marina Beach", (_N,), 0),
                _A("Kapaleeshwarar Temple", (_S,), 0),
                _A("Fort St. George", (_S, _M), 15, ("09:00", "17:00"), ("Fri",)),
                _A("Government Museum Chennai", (_M,), 15, ("09:30", "17:00"), ("Fri",)),
                _A("San Thome Basilica", (_S,), 0)),
    "Kolkata": (_A("Victoria Memorial", (_S, _M), 50, ("10:00", "17:00"), ("Mon",)),
                _A("Howrah Bridge", (_S,), 0),
                _A("Indian Museum", (_M,), 50, ("10:00", "17:00"), ("Mon",)),
                _A("Dakshineswar Kali Temple", (_S,), 0),
                _A("Belur Math", (_S,), 0)),
    "Hyderabad": (_A("Charminar", (_S,), 25, ("09:30", "17:30")),
                  _A("Golconda Fort", (_S,), 25, ("08:00", "17:30")),
                  _A("Salar Jung Museum", (_M,), 50, ("10:00", "17:00"), ("Fri",)),
                  _A("Chowmahalla Palace", (_S, _M), 80, ("10:00", "17:00"), ("Fri",)),
                  _A("Qutb Shahi Tombs", (_S,), 20, ("09:30", "16:30"), ("Fri",))),
    "Mysuru": (_A("Mysore Palace", (_S, _M), 120, ("10:00", "17:30")),
               _A("Chamundeshwari Temple", (_S,), 0),
               _A("Brindavan Gardens", (_N,), 50, ("06:30", "21:00")),
               _A("Mysore Zoo", ("Zoos & Aquariums",), 100, ("08:30", "17:30"), ("Tue",))),
    "Rishikesh": (_A("Triveni Ghat", (_S,), 0, ("05:00", "21:00")),
                  _A("Lakshman Jhula", (_S,), 0),
                  _A("Parmarth Niketan", (_S,), 0),
                  _A("Beatles Ashram", (_S,), 150, ("09:00", "16:00"))),
    "Jodhpur": (_A("Mehrangarh Fort", (_S, _M), 200, ("09:00", "17:00")),
                _A("Umaid Bhawan Palace Museum", (_M,), 100, ("10:00", "16:30")),
                _A("Jaswant Thada", (_S,), 30, ("09:00", "17:00")),
                _A("Sardar Market", (_SH,), 0)),
    "Jaisalmer": (_A("Jaisalmer Fort", (_S,), 0),
                  _A("Patwon Ki Haveli", (_S, _M), 100, ("09:00", "18:00")),
                  _A("Sam Sand Dunes", ("Outdoor Activities", _N), 0),
                  _A("Gadisar Lake", (_N,), 0)),
    "Darjeeling": (_A("Padmaja Naidu Himalayan Zoological Park", ("Zoos & Aquariums",), 100, ("08:30", "16:00"),
                      ("Thu",)),
                   _A("Batasia Loop", (_S,), 20),
                   _A("Happy Valley Tea Estate", (_N,), 0)),
    "Leh": (_A("Shanti Stupa", (_S,), 0),
            _A("Leh Palace", (_S,), 25, ("07:00", "18:00")),
            _A("Thiksey Monastery", (_S,), 30, ("07:00", "19:00"))),
    "Puri": (_A("Jagannath Temple", (_S,), 0),
             _A("Puri Beach", (_N,), 0),
             _A("Konark Sun Temple", (_S,), 40, ("06:00", "20:00"))),
    "Ahmedabad": (_A("Sabarmati Ashram", (_S, _M), 0, ("08:30", "18:30")),
                  _A("Adalaj Stepwell", (_S,), 0, ("06:00", "18:00")),
                  _A("Sidi Saiyyed Mosque", (_S,), 0),
                  _A("Calico Museum of Textiles", (_M,), 0, ("10:30", "17:00"), ("Wed",))),
    "Pune": (_A("Shaniwar Wada", (_S,), 25, ("08:00", "18:30")),
             _A("Aga Khan Palace", (_S, _M), 25, ("09:00", "17:30")),
             _A("Dagdusheth Halwai Ganpati Temple", (_S,), 0),
             _A("Raja Dinkar Kelkar Museum", (_M,), None, ("10:00", "17:30"))),
    "Aurangabad": (_A("Ellora Caves", (_S,), 40, ("06:00", "18:00"), ("Tue",)),
                   _A("Ajanta Caves", (_S,), 40, ("09:00", "17:30"), ("Mon",)),
                   _A("Bibi Ka Maqbara", (_S,), 25, ("08:00", "20:00"))),
    "Nashik": (_A("Trimbakeshwar Temple", (_S,), 0),
               _A("Pandavleni Caves", (_S,), 25, ("08:00", "18:00"))),
}
