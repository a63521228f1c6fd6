"""Venues a traveller recognises: real sights with their facts, breakfast where India breakfasts,
resorts where resorts are, crowds by kind of place, events at venues that suit them, transit stops
of the city's own network (tools/sandbox/venues.py, attractions.py, restaurants.py, stays.py, crowd.py,
events.py, transit.py, names.py and the fact files of tools/india/venue_facts.py)."""

from __future__ import annotations

import csv
import io
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from utp_env.tools.database import Database
from utp_env.tools.india import TOURIST_CITIES, alcohol_allowed
from utp_env.tools.india import venue_facts as vf
from utp_env.tools.india.sources import SourceError, update_record
from utp_env.tools.india.venue_facts import LUNCH_EVENING_KINDS
from utp_env.tools.sandbox import build_sandbox
from utp_env.tools.sandbox import names as nm
from utp_env.tools.sandbox.attractions import (
    ATTRACTION_TEMPLATES,
    KIND_VISIT_HR,
    attractions_table,
    generated_visit_hr,
    sight_hours,
)
from utp_env.tools.sandbox.crowd import ATTRACTION_PEAKS, RESTAURANT_PEAKS, intensity
from utp_env.tools.sandbox.events import EVENT_KINDS, OPEN_AIR_END, event_end, venue_kind
from utp_env.tools.sandbox.geography import Cities, select_cities
from utp_env.tools.sandbox.profiles import PROFILES
from utp_env.tools.sandbox.restaurants import (
    KIND_CUISINES,
    KIND_OPENING,
    KIND_TEMPLATES,
    opens_for_breakfast,
    restaurant_template,
)
from utp_env.tools.sandbox.traveller.venues import (
    event_problems,
    figures,
    misplaced_stops,
    peak_hours,
)
from utp_env.tools.sandbox.venues import attraction_kind, naming_places, per_city, restaurant_kind, sight_of
from utp_env.tools.schema import ATTRACTION_CATEGORIES

STATE_OF_REGION = {"hindi": ("Lucknow", "Uttar Pradesh"), "rajasthani": ("Jaipur", "Rajasthan"),
                   "punjabi": ("Amritsar", "Punjab"), "marathi": ("Pune", "Maharashtra"),
                   "gujarati": ("Surat", "Gujarat"), "konkani": ("Panaji", "Goa"), "kannada": ("Mysuru", "Karnataka"),
                   "tamil": ("Madurai", "Tamil Nadu"), "telugu": ("Hyderabad", "Telangana"),
                   "malayalam": ("Kochi", "Kerala"), "bengali": ("Kolkata", "West Bengal"), "odia": ("Puri", "Odisha"),
                   "assamese": ("Guwahati", "Assam"), "northeast": ("Shillong", "Meghalaya"),
                   "himalayan": ("Gangtok", "Sikkim"), "pahari": ("Shimla", "Himachal Pradesh"),
                   "kashmiri": ("Srinagar", "Jammu and Kashmir"), "plain": ("Agartala", "Tripura")}


# ------------------------------------------------------------------ the fact files


def test_every_tourist_city_has_its_real_sights() -> None:
    """Every destination of TOURIST_CITIES has real sights (most 4-8, a small town a few), their
    categories Table 7's; the Taj Mahal's facts; day trips include the journey."""
    sights = vf.sights()
    assert set(TOURIST_CITIES) <= set(sights)
    counts = [len(sights[c]) for c in TOURIST_CITIES]
    assert min(counts) >= 2 and np.median(counts) >= 5
    taj = sights["Agra"][0]
    assert (taj.name, taj.closed, taj.fee_inr, taj.hours) == ("Taj Mahal", ("Fri",), 50, ("06:00", "18:30"))
    assert 2 <= taj.visit_hr <= 3
    trips = {s.name: s for places in sights.values() for s in places if s.day_trip_hr is not None}
    assert {"Ajanta Caves", "Ellora Caves", "Fatehpur Sikri", "Elephanta Caves", "Sam Sand Dunes", "Gulmarg",
            "Konark Sun Temple"} <= set(trips)
    assert all(s.visit_hr >= 2 * s.day_trip_hr + 0.5 for s in trips.values())
    assert sight_of("Aurangabad", "ajanta caves").city == "Aurangabad"  # type: ignore[union-attr]
    for places in sights.values():
        for s in places:
            assert set(s.categories) <= set(ATTRACTION_CATEGORIES) and s.kind in vf.ATTRACTION_KINDS


def test_day_trip_hours_include_the_journey() -> None:
    """A day trip's row opens a journey before the site and closes a journey after it (within
    05:00-22:00); round-the-clock stays so; a town sight keeps its listed hours."""
    ajanta = sight_of("Aurangabad", "Ajanta Caves")
    vaishno = sight_of("Katra", "Vaishno Devi Temple")
    taj = sight_of("Agra", "Taj Mahal")
    assert ajanta is not None and vaishno is not None and taj is not None
    assert sight_hours(ajanta) == ("06:30", "20:00")
    assert sight_hours(vaishno) == ("00:00", "00:00")
    assert sight_hours(taj) == ("06:00", "18:30")


def test_real_restaurants_hotels_and_stations() -> None:
    """Famous breakfast places open early; flagship hotels cost tens of thousands; resort hotels
    only in resort areas; metro stations only in metro cities."""
    restaurants = vf.restaurant_index()
    mtr = restaurants[("Bengaluru", "mavalli tiffin room")]
    assert mtr.kind == "tiffin" and mtr.hours is not None and mtr.hours[0] <= "07:00"
    assert restaurants[("Mumbai", "britannia & co.")].hours == ("12:00", "16:00")
    hotels = {(h.city, h.name): h for v in vf.real_hotels().values() for h in v}
    assert hotels[("Mumbai", "The Taj Mahal Palace")].price_inr >= 25_000
    assert all(vf.resort_area(h.city) for h in hotels.values() if h.house_type == "Resort/Beach")
    stations = vf.transit_stations()
    assert set(c for c, v in stations.items() if any(s.system == "metro" for s in v)) <= vf.METRO_CITIES
    assert "Chennai" in stations and not {"Surat", "Coimbatore", "Madurai"} & set(stations)


def _root_copy(tmp_path: Path) -> Path:
    """A copy of the fact folders under a root named like the real one (messages name `india/...`)."""
    root = tmp_path / "india"
    for folder in ("sights", "venues"):
        shutil.copytree(vf.FACTS_ROOT / folder, root / folder)
    return root


@pytest.fixture
def facts_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Point the fact readers at a writable copy; the caches are emptied before and after."""
    root = _root_copy(tmp_path)
    monkeypatch.setattr(vf, "FACTS_ROOT", root)
    vf.clear_caches()
    yield root
    vf.clear_caches()


def _rewrite(root: Path, relative: str, edit, record: bool = True) -> None:
    path = root / relative
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))
    rows = edit(rows)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8")
    if record:
        update_record(relative, root)


def _cell(row: int, column: str, value: str):
    def edit(rows: list[list[str]]) -> list[list[str]]:
        rows[row][rows[0].index(column)] = value
        return rows
    return edit


def test_building_from_a_damaged_sight_file_fails_naming_the_file_and_row(facts_root: Path) -> None:
    """A corrupted cell, a cut file and an edit the record does not know each stop the build in one
    line naming the file (and the row)."""
    cities = select_cities(PROFILES["mini"])
    _rewrite(facts_root, "sights/sights.csv", _cell(7, "categories", "Sights and Landmarks"), record=False)
    with pytest.raises(SourceError, match=r"^india/sights/sights\.csv, row 7, column 'categories'") as err:
        attractions_table(cities, PROFILES["mini"], 0)
    assert "\n" not in str(err.value)
    shutil.copy(vf.SOURCES_DIR / "sights/sights.csv", facts_root / "sights/sights.csv")
    text = (facts_root / "sights/sights.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    (facts_root / "sights/sights.csv").write_text("".join(text[:-40]), encoding="utf-8")
    vf.clear_caches()
    with pytest.raises(SourceError, match=r"sights\.csv: 569 rows where 609 are recorded \(truncated"):
        build_sandbox("mini", 0, facts_root.parent / "out")
    shutil.copy(vf.SOURCES_DIR / "sights/sights.csv", facts_root / "sights/sights.csv")
    _rewrite(facts_root, "sights/sights.csv", _cell(1, "fee_inr", "60"), record=False)
    vf.clear_caches()
    with pytest.raises(SourceError, match="SHA-256"):
        vf.sights()


@pytest.mark.parametrize(("relative", "edit", "message"), [
    ("sights/sights.csv", _cell(3, "closed", "Friday"), r"row 3, column 'closed'.*not a weekday name"),
    ("sights/sights.csv", _cell(2, "kind", "palace-ish"), r"row 2, column 'kind'.*not a known attraction kind"),
    ("sights/sights.csv", _cell(17, "visit_hr", "2"), r"row 17: a day trip's visit_hr \(2\) includes the journey"),
    ("sights/sights.csv", _cell(1, "open", ""), r"row 1: give both open and close"),
    ("sights/sights.csv", _cell(7, "midday_closed", "19:00-20:00"), r"row 7: the midday closure lies outside"),
    ("sights/sights.csv", _cell(2, "nearest_stop", "Marina Metro Station"),
     r"row 2: nearest_stop 'Marina Metro Station' is not a station of Delhi"),
    ("sights/sights.csv", _cell(2, "name", "Red Fort"), r"row 2: 'Red Fort' of Delhi is listed twice"),
    ("venues/transit_lines.csv", _cell(1, "city", "Surat"), r"row 1: a metro station in Surat, which has no metro"),
    ("venues/localities.csv", _cell(1, "locality", "Sector 12"), r"row 1: a numbered sector in Mumbai"),
    ("venues/restaurants.csv", _cell(1, "cuisines", "Tiffin"), r"row 1, column 'cuisines'.*Table 8"),
    ("venues/event_venues.csv", _cell(1, "kind", "arena"), r"row 1, column 'kind'"),
])
def test_bad_facts_are_refused_naming_the_row(facts_root: Path, relative: str, edit, message: str) -> None:
    _rewrite(facts_root, relative, edit)
    reader = {"sights/sights.csv": vf.sights, "venues/hotels.csv": vf.real_hotels,
              "venues/transit_lines.csv": vf.transit_stations, "venues/localities.csv": vf.localities,
              "venues/restaurants.csv": vf.real_restaurants, "venues/event_venues.csv": vf.event_venues}[relative]
    with pytest.raises(SourceError, match=message) as err:
        reader()
    assert str(err.value).startswith(f"india/{relative}") and "\n" not in str(err.value)


def test_a_resort_hotel_inland_is_refused(facts_root: Path) -> None:
    def inland(rows: list[list[str]]) -> list[list[str]]:
        row = next(i for i, r in enumerate(rows) if r[3] == "Resort/Beach")
        rows[row][0] = "Ludhiana"
        return rows
    _rewrite(facts_root, "venues/hotels.csv", inland)
    with pytest.raises(SourceError, match=r"row \d+: a Resort/Beach stay in Ludhiana, which is not a resort area"):
        vf.real_hotels()


# ------------------------------------------------------------------ kinds and names


@pytest.mark.parametrize("region", sorted(nm.REGIONS))
def test_generated_names_say_their_kind(region: str) -> None:
    """Every name template, filled with every region's words, reads as the kind of place it is meant
    to be (the kind that sets its hours, visit and crowd), and restaurant names never take a stay's
    or an attraction's template."""
    city, state = STATE_OF_REGION[region]
    places = naming_places(city, state)
    rng = np.random.default_rng(0)
    allowed = {"Sights & Landmarks": {"temple", "gurudwara", "mosque", "church", "monument"},
               "Nature & Parks": {"park", "garden", "lake", "beach", "viewpoint", "waterfall"}}
    for category, options in ATTRACTION_TEMPLATES.items():
        for template, _ in options:
            pattern = getattr(nm.region_of(state), template[1:]) if template.startswith("@") else template
            for _ in range(40):
                name = nm.fill(pattern, city, state, rng, places)
                kind = attraction_kind("", name, [category])
                assert kind in allowed.get(category, {kind}), (name, kind)
                if category not in allowed:
                    assert kind == attraction_kind("", pattern.format(city="X", word="Y", person="Z", deity="D",
                                                                       locality="L", saint="S", surname="N",
                                                                       irani="I", temple="T"), [category])
    for kind in KIND_TEMPLATES:
        for _ in range(40):
            name = nm.fill(restaurant_template(kind, state, rng), city, state, rng, places)
            got = restaurant_kind("", name, list(KIND_CUISINES[kind]))
            assert got == kind or {got, kind} <= {"mess", "bhojanalaya"}, (name, got, kind)
            assert not name.startswith("Hotel ") or name.endswith((" Restaurant", " Bhavan")), name


def test_names_and_stops_are_the_citys_own(mini_db: Database) -> None:
    """Generated names use the city's own localities (a Chennai name a Chennai locality), never a
    numbered sector outside a planned city; no restaurant, attraction and stay of a city share a name."""
    chennai = nm.city_localities("Chennai", "Tamil Nadu")
    assert "T. Nagar" in chennai and "Anand Vihar" not in chennai
    assert nm.city_localities("Madurai", "Tamil Nadu")[0] == "Anna Nagar"
    assert all(p.startswith("Sector ") for p in nm.city_localities("Mohali", "Punjab"))
    assert not any(p.startswith("Sector") for p in nm.city_localities("Agartala", "Tripura"))
    assert misplaced_stops(mini_db)[:3] == (0, 0, 0)
    names: Counter[tuple[str, str]] = Counter()
    for table in ("attractions", "restaurants", "accommodations"):
        c = mini_db.tables[table].columns
        names.update({(city, n.casefold()) for city, n in zip(c["city"], c["name"], strict=True)})
    assert [k for k, v in names.items() if v > 1] == []


# ------------------------------------------------------------------ sights and visits


def test_real_sights_come_first_rated_above_generated_ones(mini_db: Database) -> None:
    a = mini_db.tables["attractions"].columns
    best_generated: dict[str, float] = {}
    worst_real: dict[str, float] = {}
    for city, name, rating in zip(a["city"], a["name"], np.asarray(a["rating"], float).tolist(), strict=True):
        if sight_of(city, name) is None:
            best_generated[city] = max(best_generated.get(city, 0.0), rating)
        else:
            worst_real[city] = min(worst_real.get(city, 5.0), rating)
    assert worst_real and all(worst_real[c] > best_generated.get(c, 0.0) for c in worst_real)
    rows = mini_db.city_rows("attractions", "Aurangabad")
    assert [a["name"][int(i)] for i in rows[:2]] == ["Ellora Caves", "Ajanta Caves"]


def test_generated_visits_are_their_kinds_never_absurd() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        beach = generated_visit_hr("beach", ["Nature & Parks"], rng)
        assert 1.0 <= beach <= 2.0
        museum = generated_visit_hr("museum", ["Museums"], rng)
        assert museum <= ATTRACTION_CATEGORIES["Museums"] and museum <= KIND_VISIT_HR["museum"] * 1.2
        assert generated_visit_hr("viewpoint", ["Nature & Parks"], rng) >= 0.5


def test_per_city_keeps_floors_and_total() -> None:
    cities = Cities(name=["A", "B", "C"], state=["X"] * 3, lat=np.zeros(3), lon=np.zeros(3),
                    population=np.array([1_000_000, 100_000, 10_000]), draw=np.array([1_000_000, 100_000, 2_000_000]))
    counts = per_city(cities, 30, np.array([2, 8, 3]))
    assert counts.sum() == 30 and (counts >= [2, 8, 3]).all() and counts[2] > counts[1] - 8
    short = per_city(cities, 9, np.array([2, 8, 3]))  # floors over the total: each capped, still the total
    assert short.sum() == 9 and short.min() >= 2
    with pytest.raises(ValueError, match="cannot give each of 3 cities"):
        per_city(cities, 5, np.array([2, 8, 3]))


# ------------------------------------------------------------------ restaurants and stays


def test_breakfast_where_india_breakfasts(mini_db: Database) -> None:
    """No pizzeria, Chinese corner, grill, pub or bar opens by 08:00; every city has min(8, all) places
    open by then; the kinds' hours say so."""
    r = mini_db.tables["restaurants"].columns
    early: Counter[str] = Counter()
    for city, name, cuisines, o, c in zip(r["city"], r["name"], r["cuisines"], r["open_time"], r["close_time"],
                                          strict=True):
        kind = restaurant_kind(city, name, cuisines)
        if opens_for_breakfast(o, c):
            early[city] += 1
            assert kind not in LUNCH_EVENING_KINDS, (city, name, o)
    for city in mini_db.cities:
        assert early[city] >= min(8, len(mini_db.city_rows("restaurants", city))), city
    for kind in ("pizzeria", "chinese", "grill", "pub", "lounge", "biryani"):
        assert min(KIND_OPENING[kind][0]) >= "11:30"
    for kind in vf.BREAKFAST_KINDS:
        assert min(KIND_OPENING[kind][0]) <= "08:00"


def test_no_bar_in_a_dry_state_and_resorts_where_resorts_are(mini_db: Database) -> None:
    state = {c: mini_db.state_of(c) for c in mini_db.cities}
    r = mini_db.tables["restaurants"].columns
    for city, name, cuisines in zip(r["city"], r["name"], r["cuisines"], strict=True):
        if not alcohol_allowed(state[city]):
            assert restaurant_kind(city, name, cuisines) not in ("pub", "brewpub", "lounge"), name
    s = mini_db.tables["accommodations"].columns
    resorts = {c for c, t in zip(s["city"], s["house_type"], strict=True) if t == "Resort/Beach"}
    assert resorts and all(vf.resort_area(c) for c in resorts)
    assert "Panaji" in resorts and not resorts & {"Pune", "Ahmedabad", "Rajkot", "Sholapur"}
    row = mini_db.venue("accommodations", "Mumbai", "The Taj Mahal Palace")
    assert row is not None
    taj = mini_db.tables["accommodations"].row(row)
    assert taj["price_per_night_inr"] >= 25_000 and taj["star_rating"] == 5


# ------------------------------------------------------------------ crowds


def test_crowd_profiles_by_kind_of_place() -> None:
    """Beaches fill in the evening, temples at the morning and evening aarti, museums at midday,
    markets in the evening, forts from mid-morning; restaurants at dinner more than at lunch."""
    hours = np.arange(5, 23)

    def peak(profile: tuple) -> int:
        return int(hours[np.argmax(intensity(profile, hours))])

    assert 16 <= peak(ATTRACTION_PEAKS["beach"]) <= 19
    assert 12 <= peak(ATTRACTION_PEAKS["museum"]) <= 14
    assert 18 <= peak(ATTRACTION_PEAKS["market"]) <= 20
    assert 10 <= peak(ATTRACTION_PEAKS["fort"]) <= 14
    temple = intensity(ATTRACTION_PEAKS["temple"], hours)
    assert temple[hours == 7][0] > temple[hours == 13][0] < temple[hours == 19][0]
    meals = intensity(RESTAURANT_PEAKS["meals"], hours)
    assert meals[hours == 20][0] > meals[hours == 13][0] > meals[hours == 16][0]


def test_mini_crowd_peaks_by_kind(mini_db: Database) -> None:
    peaks = peak_hours(mini_db)
    assert 16 <= peaks["beach"] <= 20 and 11 <= peaks["museum"] <= 15
    assert peaks["temple"] <= 9 or peaks["temple"] >= 17


# ------------------------------------------------------------------ events and stops


def test_event_kinds_suit_their_venues_and_hours() -> None:
    for kind in EVENT_KINDS:
        runs = any(w in kind.name for w in ("Marathon", "Run", "Cyclothon"))
        if runs:
            assert all("05:00" <= s <= "06:30" for s in kind.starts) and set(kind.venues) <= {"run_start", "stadium"}
        if "Play" in kind.name or "{play}" in kind.name:
            assert "stadium" not in kind.venues and "indoor_stadium" not in kind.venues
        if kind.segment in ("Concerts", "Comedy", "Music") and "Carnatic" not in kind.name:
            assert all(s >= "16:00" for s in kind.starts), kind.name
    music_festival = next(k for k in EVENT_KINDS if "Music Festival" in k.name)
    assert event_end(music_festival, "17:00", 300, "open_air") == OPEN_AIR_END
    assert venue_kind("Mumbai", "Prithvi Theatre") == "theatre" and venue_kind("Delhi", "Gandhi Stadium") == "stadium"


def test_mini_events_and_stops_are_where_they_belong(mini_db: Database) -> None:
    problems, total = event_problems(mini_db)
    assert total == PROFILES["mini"].events and problems == []
    t = mini_db.tables["transit_stops"].columns
    stop = {(c, n): s for c, n, s in zip(t["city"], t["poi_name"], t["stop_name"], strict=True)}
    assert stop[("Mumbai", "Chhatrapati Shivaji Maharaj Terminus")] == "CSMT Railway Station"
    for (city, _), s in stop.items():
        if s.endswith("Metro Station"):
            assert city in vf.METRO_CITIES


def test_mini_venue_figures_hold(mini_db: Database) -> None:
    """Every venue figure the mini profile can compute holds there (the flagship hotel of Mumbai,
    the tourist cities of its four states ...)."""
    figs = figures(mini_db)
    names = [f.name for f in figs]
    assert any("top 3 sights" in n for n in names) and any("crowd peak hour of beaches" in n for n in names)
    assert all(f.passed for f in figs if "4 h or more" not in f.name), [f for f in figs if not f.passed]


@pytest.mark.slow
def test_full_venue_figures(tmp_path: Path) -> None:
    """All venue traveller figures on the full sandbox: the 86 tourist cities with their top sights,
    no pizzeria at breakfast, beaches busiest in the evening, no resort inland, no metro in Madurai ..."""
    build_sandbox("full", 0, tmp_path / "full")
    db = Database.open(tmp_path / "full")
    figs = figures(db)
    for f in figs:
        print(f"  {f.name}: {f.value} (target {f.target}) {'pass' if f.passed else 'FAIL'}")
    assert len(figs) == 14
    assert all(f.passed for f in figs), [f for f in figs if not f.passed]
    counts = db.counts()
    for table, paper in (("restaurants", 3433), ("attractions", 2990), ("accommodations", 3670), ("events", 783),
                         ("transit_stops", 10025)):
        assert abs(counts[table] - paper) <= 0.1 * paper


def test_the_lookup_tool_says_a_day_trip_is_one(mini_db: Database) -> None:
    from utp_env.tools.lookup import LOOKUP

    text = LOOKUP.invoke(mini_db, "search_attractions", {"city": "Aurangabad", "limit": 20}).text
    ajanta = next(line for line in text.splitlines() if line.startswith("Ajanta Caves |"))
    assert "9 (day trip, 2.5 h each way included)" in ajanta and "06:30-20:00, closed Mon" in ajanta
    bibi = next(line for line in text.splitlines() if line.startswith("Bibi Ka Maqbara |"))
    assert "day trip" not in bibi
