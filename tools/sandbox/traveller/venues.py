"""Traveller figures of the venue tables (sights, restaurants, stays, crowds, events, transit stops).

Each figure is measured on the database and compared with what a traveller who knows India would
expect; its target's source is in `Figure.source`. A figure about named places is left out when the
database holds none of them (a small profile). Definitions:

- tourist cities with their top sights as listed: the `TOURIST_CITIES` in the database whose first
  `TOP_SIGHTS` real sights (`venue_facts.sights`, most visited first) are attraction rows with their
  listed categories, typical visit, fee, hours (a day trip's widened by the journey) and weekly
  closing days; all (source: ASI, state tourism and the venues' own listings, 2024-25);
- real sights rated above generated places: tourist cities whose every real sight is rated above
  every generated attraction of the city, so that a traveller (or a planner) picking the best rated
  goes to the Taj Mahal before a generated park; all (source: travellers' rankings of a city's
  attractions list its landmarks first);
- median typical visit of an attraction, hours: 1-2.5 (state tourism itineraries: the Taj Mahal
  2-3 h, a museum or a beach 1.5-2 h, a temple or a viewpoint within the hour);
- attractions with a typical visit of 4 h or more: at most 5 %, and each a day trip (visit with the
  journey), a theme or water park, a safari, a trek or a snow point (the same itineraries);
- restaurants open by 08:00, by kind (`venues.restaurant_kind`): tiffin rooms, Udupi and darshini
  places, cafes, Irani cafes, bakeries, sweet shops, nasta and misal houses, dhabas, paratha places
  and a few real restaurants that serve breakfast, none of a lunch-or-evening kind
  (`LUNCH_EVENING_KINDS` of tools/india/venue_facts.py: pizzerias, Chinese corners, grills, kebab
  and biryani houses, pubs and bars ...) (source: the opening hours of India's breakfast places and of the rest);
- famous breakfast places open by 07:30 (Mavalli Tiffin Room, Vidyarthi Bhavan, Murugan Idli
  Shop, Ratna Cafe, Cafe Madras, Kyani & Co., Nimrah Cafe, Chandravilas, Vaishali ... where their
  city is in the database): all (source: the places' own hours);
- crowd peak hour by kind of attraction, the hour of the highest mean crowd intensity over the
  crowd cities' attractions of that kind: beaches 16-20 (they fill towards sunset), temples 5-9 or
  17-21 (the morning and evening aarti), museums 11-15 (midday), markets 17-21 (evening shopping)
  (source: BestTime's venue curves as the paper's Figure 2 aggregates them; temple trusts' aarti
  timings);
- Resort/Beach stays outside a resort area (`venue_facts.resort_area`: the coast, the hill
  stations, the wildlife gateways and the beach and desert-camp towns): 0 (source: where India's
  resorts are);
- flagship hotels' price per night: the Taj Mahal Palace (Mumbai), Rambagh Palace (Jaipur), the
  Taj Lake Palace (Udaipur), Umaid Bhawan Palace (Jodhpur), the Oberoi Amarvilas (Agra) and Taj
  Falaknuma Palace (Hyderabad) at Rs 20,000 or more, where their city is in the database (source:
  the hotels' published rates, winter 2024-25: tens of thousands a night);
- transit stops out of place: metro stations in a city without a metro (`venue_facts.METRO_CITIES`),
  numbered sectors outside the planned cities (`venue_facts.SECTOR_CITIES`), bus stops named after
  another city's locality: 0 (source: the metro operators' networks at the end of 2025; city maps);
- events at unsuitable venues or hours: runs not starting 05:00-06:30 at a start area or stadium,
  cricket or football away from a stadium, kabaddi or badminton away from an indoor stadium, plays
  outside a theatre or hall or not starting 15:00-20:00, comedy not starting 18:00-21:30 or away
  from a club, hall or theatre, concerts and recitals in a stadium, cinema, gallery or at a run's
  start, films away from a cinema, hall or theatre, an open-air event ending after 22:00: 0 (source: how
  India's city runs, matches, plays and shows are held; the Noise Pollution Rules' 22:00 limit).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from utp_env.tools.clock import parse_hhmm
from utp_env.tools.database import Database
from utp_env.tools.india import TOURIST_CITIES
from utp_env.tools.india import venue_facts as vf
from utp_env.tools.sandbox import names as nm
from utp_env.tools.sandbox.attractions import open_days_of, sight_hours
from utp_env.tools.sandbox.calibration import INTENSITY
from utp_env.tools.sandbox.events import venue_kind
from utp_env.tools.sandbox.restaurants import opens_for_breakfast
from utp_env.tools.sandbox.traveller.figure import Figure
from utp_env.tools.sandbox.venues import attraction_kind, restaurant_kind, sight_of

TOP_SIGHTS = 3
VISIT_MEDIAN_HR = (1.0, 2.5)
LONG_VISIT_HR, LONG_VISIT_SHARE = 4.0, 0.05
LONG_VISIT_KINDS = frozenset({"amusement_park", "water_park", "wildlife", "adventure", "snow"})
FAMOUS_BREAKFAST: tuple[tuple[str, str], ...] = (
    ("Bengaluru", "Mavalli Tiffin Room"), ("Bengaluru", "Vidyarthi Bhavan"), ("Bengaluru", "CTR Malleshwaram"),
    ("Chennai", "Murugan Idli Shop"), ("Chennai", "Ratna Cafe"), ("Mumbai", "Cafe Madras"), ("Mumbai", "Kyani & Co."),
    ("Hyderabad", "Nimrah Cafe"), ("Ahmedabad", "Chandravilas"), ("Pune", "Vaishali"),
    ("Jaipur", "Rawat Mishthan Bhandar"),
    ("Udupi", "Mitra Samaj"), ("Mysuru", "Mylari"),
)
BREAKFAST_EARLY = "07:30"
PEAK_TARGETS: dict[str, tuple[tuple[int, int], ...]] = {
    "beach": ((16, 20),), "temple": ((5, 9), (17, 21)), "museum": ((11, 15),), "market": ((17, 21),),
}
PEAK_NAMES = {"beach": "beaches", "temple": "temples", "museum": "museums", "market": "markets"}
PEAK_SOURCES = {
    "beach": "BestTime venue curves (paper Figure 2); beaches fill towards sunset",
    "temple": "temple trusts' aarti timings: morning and evening",
    "museum": "BestTime venue curves (paper Figure 2): museums busiest at midday",
    "market": "BestTime venue curves (paper Figure 2): markets busiest in the evening",
}
FLAGSHIP_HOTELS: tuple[tuple[str, str], ...] = (
    ("Mumbai", "The Taj Mahal Palace"), ("Jaipur", "Rambagh Palace"), ("Udaipur", "Taj Lake Palace"),
    ("Jodhpur", "Umaid Bhawan Palace"), ("Agra", "The Oberoi Amarvilas"), ("Hyderabad", "Taj Falaknuma Palace"),
)
FLAGSHIP_MIN_INR = 20_000
OPEN_AIR_END = "22:00"


def _rows(db: Database, table: str) -> dict[tuple[str, str], int]:
    cols = db.tables[table].columns
    return {(c, n.casefold()): i for i, (c, n) in enumerate(zip(cols["city"], cols["name"], strict=True))}


def sight_as_listed(db: Database, row: int | None, sight: vf.Sight) -> bool:
    """Whether attraction `row` carries the facts of `sight` (categories, visit, fee, hours, closing days)."""
    if row is None:
        return False
    a = db.tables["attractions"].columns
    return (sorted(a["categories"][row]) == sorted(sight.categories)
            and float(a["visit_duration_hr"][row]) == sight.visit_hr
            and (sight.fee_inr is None or float(a["entry_fee_inr"][row]) == float(sight.fee_inr))
            and (a["open_time"][row], a["close_time"][row]) == sight_hours(sight)
            and a["open_days"][row] == open_days_of(sight.closed))


def sight_figures(db: Database) -> list[Figure]:
    """Top sights as listed, and rated above the generated places."""
    rows = _rows(db, "attractions")
    a = db.tables["attractions"].columns
    cities = [c for c in TOURIST_CITIES if c in db.cities]
    if not cities:
        return []
    facts = vf.sights()
    listed = sum(all(sight_as_listed(db, rows.get((c, s.name.casefold())), s) for s in facts.get(c, ())[:TOP_SIGHTS])
                 and bool(facts.get(c)) for c in cities)
    real_min: dict[str, float] = {}
    generated_max: dict[str, float] = defaultdict(float)
    for c, n, r in zip(a["city"], a["name"], np.asarray(a["rating"], float).tolist(), strict=True):
        if c not in cities:
            continue
        if sight_of(c, n) is not None:
            real_min[c] = min(real_min.get(c, 5.0), r)
        else:
            generated_max[c] = max(generated_max[c], r)
    above = sum(c in real_min and real_min[c] > generated_max[c] for c in cities)
    return [
        Figure(name=f"tourist cities with their top {TOP_SIGHTS} sights as listed (fee, hours, closed, visit)",
               value=f"{listed}/{len(cities)}", target=f"= {len(cities)}", passed=listed == len(cities),
               source="ASI, state tourism and the venues' own listings, 2024-25"),
        Figure(name="tourist cities whose real sights are rated above every generated place",
               value=f"{above}/{len(cities)}", target=f"= {len(cities)}", passed=above == len(cities),
               source="travellers' rankings list a city's landmarks first"),
    ]


def visit_figures(db: Database) -> list[Figure]:
    """The median typical visit and the share of visits of 4 h or more."""
    a = db.tables["attractions"].columns
    hours = np.asarray(a["visit_duration_hr"], float)
    if not hours.size:
        return []
    median = float(np.median(hours))
    long_rows = [i for i in np.flatnonzero(hours >= LONG_VISIT_HR).tolist()]
    odd = [a["name"][i] for i in long_rows
           if not ((s := sight_of(a["city"][i], a["name"][i])) is not None and s.day_trip_hr is not None)
           and attraction_kind(a["city"][i], a["name"][i], a["categories"][i]) not in LONG_VISIT_KINDS]
    share = len(long_rows) / len(hours)
    lo, hi = VISIT_MEDIAN_HR
    return [
        Figure(name="median typical attraction visit (h)", value=round(median, 2), target=f"{lo:g}-{hi:g}",
               passed=lo <= median <= hi,
               source="state tourism itineraries: Taj Mahal 2-3 h, museum or beach 1.5-2 h, temple within the hour"),
        Figure(name="attractions with a typical visit of 4 h or more",
               value=f"{100 * share:.1f}% ({len(long_rows)}; {len(odd)} not a day trip, theme park, safari or trek)",
               target=f"<= {100 * LONG_VISIT_SHARE:.0f}%, all day trips, theme parks, safaris, treks",
               passed=share <= LONG_VISIT_SHARE and not odd, source="state tourism itineraries"),
    ]


def breakfast_figures(db: Database) -> list[Figure]:
    """Restaurants open by 08:00 by kind, and the famous breakfast places' hours."""
    r = db.tables["restaurants"].columns
    kinds: Counter[str] = Counter()
    for c, n, cu, o, e in zip(r["city"], r["name"], r["cuisines"], r["open_time"], r["close_time"], strict=True):
        if opens_for_breakfast(o, e):
            kinds[restaurant_kind(c, n, cu)] += 1
    total = sum(kinds.values())
    if not total:
        return []
    wrong = {k: v for k, v in kinds.items() if k in vf.LUNCH_EVENING_KINDS}
    morning = sum(v for k, v in kinds.items() if k in vf.BREAKFAST_KINDS)
    text = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in kinds.most_common(5))
    out = [Figure(name="restaurants open by 08:00, by kind",
                  value=f"{text}; breakfast kinds {100 * morning / total:.0f}%; lunch or evening kinds "
                        f"{sum(wrong.values())}",
                  target="no pizzeria, Chinese corner, grill, kebab or biryani house, pub or bar", passed=not wrong,
                  source="opening hours of India's tiffin rooms, cafes, sweet shops and dhabas")]
    rows = _rows(db, "restaurants")
    present = [(c, n) for c, n in FAMOUS_BREAKFAST if (c, n.casefold()) in rows]
    if present:
        early = [n for c, n in present if r["open_time"][rows[(c, n.casefold())]] <= BREAKFAST_EARLY]
        out.append(Figure(name=f"famous breakfast places open by {BREAKFAST_EARLY}",
                          value=f"{len(early)}/{len(present)}",
                          target=f"= {len(present)}", passed=len(early) == len(present),
                          source="the places' own hours (Mavalli Tiffin Room 06:30, Murugan Idli Shop 07:00 ...)"))
    return out


def peak_hours(db: Database) -> dict[str, int]:
    """Kind of attraction -> the hour of the highest mean crowd intensity over its crowd rows."""
    a = db.tables["attractions"].columns
    cats = {(c, n): cs for c, n, cs in zip(a["city"], a["name"], a["categories"], strict=True)}
    total: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(24))
    count: dict[str, np.ndarray] = defaultdict(lambda: np.zeros(24))
    crowd = db.tables["crowd"].columns
    for vt, city, name, windows in zip(crowd["venue_type"], crowd["city"], crowd["venue_name"], crowd["windows"],
                                       strict=True):
        if vt != "attraction" or (city, name) not in cats:
            continue
        kind = attraction_kind(city, name, cats[(city, name)])
        for start, end, level in windows:
            h = start
            while True:
                total[kind][h] += INTENSITY[level]
                count[kind][h] += 1
                if h == end:
                    break
                h = (h + 1) % 24
    return {k: int(np.argmax(np.where(count[k] > 0, total[k] / np.maximum(count[k], 1), -1))) for k in total}


def crowd_figures(db: Database) -> list[Figure]:
    """The crowd peak hour of beaches, temples, museums and markets."""
    peaks = peak_hours(db)
    out = []
    for kind, windows in PEAK_TARGETS.items():
        if kind not in peaks:
            continue
        hour = peaks[kind]
        out.append(Figure(name=f"crowd peak hour of {PEAK_NAMES[kind]}", value=f"{hour:02d}:00",
                          target=" or ".join(f"{a:02d}-{b:02d}" for a, b in windows),
                          passed=any(a <= hour <= b for a, b in windows), source=PEAK_SOURCES[kind]))
    return out


def stay_figures(db: Database) -> list[Figure]:
    """Resort stays only in resort areas; flagship hotels at their prices."""
    s = db.tables["accommodations"].columns
    resorts = [c for c, t in zip(s["city"], s["house_type"], strict=True) if t == "Resort/Beach"]
    inland = sum(not vf.resort_area(c) for c in resorts)
    out = [Figure(name="Resort/Beach stays outside a resort area", value=f"{inland}/{len(resorts)}", target="= 0",
                  passed=inland == 0, source="the coast, hill stations, wildlife gateways (where India's resorts are)")]
    rows = _rows(db, "accommodations")
    present = [(c, n) for c, n in FLAGSHIP_HOTELS if (c, n.casefold()) in rows]
    if present:
        prices = [(n, float(s["price_per_night_inr"][rows[(c, n.casefold())]])) for c, n in present]
        out.append(Figure(name="flagship hotels, price per night (Rs)",
                          value="; ".join(f"{n} {p:,.0f}" for n, p in prices), target=f">= {FLAGSHIP_MIN_INR:,} each",
                          passed=all(p >= FLAGSHIP_MIN_INR for _, p in prices),
                          source="the hotels' published rates, winter 2024-25"))
    return out


def misplaced_stops(db: Database) -> tuple[int, int, int, int]:
    """(metro stations in cities without a metro, sectors outside planned cities, bus stops named
    after another city's own locality, all stops)."""
    t = db.tables["transit_stops"].columns
    state_of = dict(zip(db.tables["cities"].columns["city"], db.tables["cities"].columns["state"], strict=True))
    own = vf.localities()
    common = {p for r in nm.REGIONS.values() for p in r.localities} | set(nm.PAN_INDIAN_LOCALITIES)
    owner: dict[str, set[str]] = defaultdict(set)
    for city, places in own.items():
        for p in places:
            owner[p].add(city)
    metro = sector = foreign = 0
    for city, stop in zip(t["city"], t["stop_name"], strict=True):
        metro += stop.endswith(" Metro Station") and city not in vf.METRO_CITIES
        sector += stop.startswith("Sector ") and city not in vf.SECTOR_CITIES
        place = stop.removesuffix(" Bus Stop")
        if place != stop and place in owner and city not in owner[place] and place not in common \
                and place not in nm.city_localities(city, state_of.get(city, "")):
            foreign += 1
    return metro, sector, foreign, len(t["stop_name"])


def stop_figures(db: Database) -> list[Figure]:
    metro, sector, foreign, total = misplaced_stops(db)
    bad = metro + sector + foreign
    return [Figure(name="transit stops out of place (metro without a metro, sectors, another city's locality)",
                   value=f"{metro} / {sector} / {foreign} of {total:,}", target="0 / 0 / 0", passed=bad == 0,
                   source="metro operators' networks, end of 2025; city maps")]


def event_problems(db: Database) -> tuple[list[str], int]:
    """The events held at a venue or an hour that does not suit them, and all events."""
    e = db.tables["events"].columns
    out = []
    for name, city, seg, start, end, venue in zip(e["name"], e["city"], e["segment"], e["start_time"], e["end_time"],
                                                  e["venue"], strict=True):
        kind = venue_kind(city, venue)
        words = f" {name.casefold()} "
        begin = parse_hhmm(start)
        past_midnight = parse_hhmm(end) <= begin
        problem = ""
        if any(w in words for w in (" marathon ", " run ", " cyclothon ", " walkathon ")):
            if not (5 * 60 <= begin <= 6 * 60 + 30) or kind not in ("run_start", "stadium"):
                problem = "run"
        elif any(w in words for w in (" cricket ", " football ", " ranji ")):
            problem = "" if kind == "stadium" else "match"
        elif any(w in words for w in (" kabaddi ", " badminton ")):
            problem = "" if kind == "indoor_stadium" else "indoor match"
        elif any(w in words for w in (" play:", " natak:", " natok:", " tiatr:")):
            if kind not in ("theatre", "auditorium") or not (15 * 60 <= begin <= 20 * 60):
                problem = "play"
        elif seg == "Comedy":
            if kind not in ("comedy_club", "auditorium", "theatre") or not (18 * 60 <= begin <= 21 * 60 + 30):
                problem = "comedy"
        elif seg in ("Concerts", "Music"):
            problem = "concert" if kind in ("stadium", "cinema", "gallery", "run_start") else ""
        elif seg == "Film":
            problem = "" if kind in ("cinema", "auditorium", "theatre") else "film"
        if kind == "open_air" and (past_midnight or parse_hhmm(end) > parse_hhmm(OPEN_AIR_END)):
            problem = problem or "open air after 22:00"
        if kind == "stadium" and seg != "Sports":
            problem = problem or "stage event in a stadium"
        if problem:
            out.append(f"{name} ({city}, {start}, {venue}): {problem}")
    return out, len(e["name"])


def event_figures(db: Database) -> list[Figure]:
    problems, total = event_problems(db)
    if not total:
        return []
    return [Figure(name="events at unsuitable venues or hours", value=f"{len(problems)}/{total}", target="= 0",
                   passed=not problems, source="how India's city runs, matches, plays and shows are held; "
                   "Noise Pollution Rules (outdoor music by 22:00)")]


def figures(db: Database) -> list[Figure]:
    """The venues figures of `db`."""
    return [*sight_figures(db), *visit_figures(db), *breakfast_figures(db), *crowd_figures(db), *stay_figures(db),
            *stop_figures(db), *event_figures(db)]
