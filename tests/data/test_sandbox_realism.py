"""The sandbox's network looks like India's: real cities without neighbourhoods, intercity buses,
flights where people fly, trains whose timetables agree with themselves (tools/sandbox/realism.py;
the real trains themselves: tests/data/test_sandbox_rail.py)."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

from utp_env.tools.database import Database
from utp_env.tools.india import (
    TOP_TOURIST_COUNT,
    TOURIST_CITIES,
    city_tier,
)
from utp_env.tools.lookup import LOOKUP
from utp_env.tools.sandbox import build_sandbox
from utp_env.tools.sandbox.attractions import category_weights, entry_fee
from utp_env.tools.sandbox.crowd import crowd_cities
from utp_env.tools.sandbox.geography import (
    GEONAMES_CORRECTIONS,
    SEPARATE_MUNICIPALITIES,
    Cities,
    airport_city,
    match_airports,
    select_cities,
)
from utp_env.tools.sandbox.profiles import PROFILES
from utp_env.tools.sandbox.rail import TYPE_CLASSES, fare_km, train_fare
from utp_env.tools.sandbox.realism import (
    delay_spread,
    realism,
    row_train_types,
    run_day_contradictions,
    track_ratios,
)
from utp_env.tools.sandbox.road import (
    BUS_MIN_KM,
    BUS_SLOWDOWN,
    LOCAL_BUS_MIN_KM,
    buses_table,
    drive_minutes,
    road_matrix,
)
from utp_env.tools.sandbox.traveller.rail import NO_RAILWAY
from utp_env.tools.sandbox.traveller.rail import figures as rail_figures
from utp_env.tools.schema import fare_class, runs_on, shift_run_days


def _check(db: Database, prefix: str):
    return next(c for c in realism(db) if c.name.startswith(prefix))


def test_full_city_set_has_no_metro_neighbourhoods() -> None:
    cities = select_cities(PROFILES["full"])
    names = set(cities.name)
    assert cities.n == 504 and len(set(cities.state)) == 33
    for place in ("Dharavi", "Karol Bagh", "Rohini", "Borivli", "Kukatpally", "Ambattur", "New Delhi"):
        assert place not in names
    for city in ("Thane", "Howrah", "Noida", "Ghaziabad", "Gurugram", "Pimpri-Chinchwad", "Navi Mumbai"):
        assert city in names or city not in SEPARATE_MUNICIPALITIES


def test_mini_realism_figures(mini_db: Database) -> None:
    """The figures that do not name cities outside the mini profile's states hold there too."""
    for prefix in ("buses under 20 km", "bus distance", "cities within 15 km", "train rows whose run days",
                   "(train, alighting stop) pairs", "crowd cities among India's most-visited"):
        check = _check(mini_db, prefix)
        assert check.passed, check


def test_mini_trains_have_one_timetable_per_number(mini_db: Database) -> None:
    """Every row of a train agrees on the departure and arrival time at each stop, and rows run forward."""
    t = mini_db.tables["trains"].columns
    dep: dict[tuple[str, str], set[str]] = defaultdict(set)
    arr: dict[tuple[str, str], set[str]] = defaultdict(set)
    for num, o, d, dt, at in zip(t["train_number"], t["origin_city"], t["dest_city"], t["dep_time"], t["arr_time"],
                                 strict=True):
        dep[(num, o)].add(dt)
        arr[(num, d)].add(at)
    assert all(len(v) == 1 for v in dep.values())
    assert all(len(v) == 1 for v in arr.values())
    assert np.all(np.asarray(t["duration_min"]) > 0)


def test_mini_buses_are_intercity(mini_db: Database) -> None:
    b = mini_db.tables["buses"].columns
    r = mini_db.tables["road_routes"].columns
    km = dict(zip(zip(r["origin_city"], r["dest_city"], strict=True), r["distance_km"], strict=True))
    dist = np.array([km[p] for p in zip(b["origin_city"], b["dest_city"], strict=True)])
    assert dist.min() >= LOCAL_BUS_MIN_KM
    # a bus under BUS_MIN_KM is a town bus: one end has no road of BUS_MIN_KM or more (Madgaon-Panaji)
    longest = {}
    for (o, _), v in km.items():
        longest[o] = max(longest.get(o, 0.0), v)
    for (o, d), v in zip(zip(b["origin_city"], b["dest_city"], strict=True), dist.tolist(), strict=True):
        assert v >= BUS_MIN_KM or min(longest[o], longest[d]) < BUS_MIN_KM, (o, d, v)
    long = dist > 350
    assert all("Sleeper" in t for t, is_long in zip(b["bus_type"], long.tolist(), strict=True) if is_long)


def test_mini_buses_are_slower_than_a_cab_on_their_road(mini_db: Database) -> None:
    """A bus takes its road's free-flow time (hill approaches and mountain roads included) times
    `BUS_SLOWDOWN`: never faster than a cab on the same road (the plains speed once made the
    Siliguri-Darjeeling bus 1.4 h against the road's 3 h)."""
    b = mini_db.tables["buses"].columns
    r = mini_db.tables["road_routes"].columns
    free = dict(zip(zip(r["origin_city"], r["dest_city"], strict=True), r["free_flow_min"], strict=True))
    for pair, minutes in zip(zip(b["origin_city"], b["dest_city"], strict=True), b["duration_min"], strict=True):
        low, high = BUS_SLOWDOWN
        assert free[pair] * low - 1e-6 <= minutes, (pair, minutes, free[pair])
        assert minutes <= max(20.0, free[pair] * high + 5), (pair, minutes, free[pair])


def test_mountain_road_buses_take_the_mountain_time() -> None:
    """On a listed mountain road (Siliguri-Darjeeling, 65 km in 3 h) the bus takes that road's time
    times `BUS_SLOWDOWN`, not the plains speed's 65 km (about 1.5 h)."""
    cities = Cities(name=["Siliguri", "Darjeeling"], state=["West Bengal", "West Bengal"],
                    lat=np.array([26.7271, 27.0410]), lon=np.array([88.3953, 88.2663]),
                    population=np.array([513264, 132016]), draw=np.array([513264.0, 132016.0]))
    km, minutes = road_matrix(cities, cities.distances_km(), PROFILES["full"].road_factor)
    o, d = np.array([0, 1]), np.array([1, 0])
    assert minutes[0, 1] == 180.0 and float(drive_minutes(np.array([65.0]))[0]) < 120
    cols = buses_table(cities, o, d, km[o, d], minutes[o, d], PROFILES["full"], 0)
    assert min(cols["duration_min"]) >= 180 * BUS_SLOWDOWN[0]
    assert max(cols["duration_min"]) <= 180 * BUS_SLOWDOWN[1] + 5


@pytest.mark.slow
def test_full_sandbox_realism_targets(tmp_path: Path) -> None:
    """Every realism target on the full sandbox (the table printed by `utp-env data stats`)."""
    build_sandbox("full", 0, tmp_path / "full")
    checks = realism(Database.open(tmp_path / "full"))
    for c in checks:
        print(f"  {c.name}: {c.value} (target {c.target}) {'pass' if c.passed else 'FAIL'}")
    assert len(checks) == 21  # the train, flight and sight figures are traveller figures (tools/sandbox/traveller/)
    assert all(c.passed for c in checks), [c for c in checks if not c.passed]


# ------------------------------------------------ timetables that agree with themselves


def test_shift_run_days() -> None:
    assert shift_run_days("1000000", 1) == "0100000"  # Monday's departure boards there on Tuesday
    assert shift_run_days("0000001", 1) == "1000000"  # Sunday -> Monday
    assert shift_run_days("1100111", 2) == "1111001"
    assert shift_run_days("1100111", 0) == shift_run_days("1100111", 7) == "1100111"


def _runs_after_midnight(t: dict) -> list[int]:
    """Rows of non-daily trains boarding at a stop left on a later day than the first stop."""
    first_dep: dict[str, int] = {}
    origins, dests = defaultdict(set), defaultdict(set)
    for num, o, d in zip(t["train_number"], t["origin_city"], t["dest_city"], strict=True):
        origins[num].add(o)
        dests[num].add(d)
    first = {num: (origins[num] - dests[num]).pop() for num in origins}
    reach: dict[tuple[str, str], int] = {}
    for num, o, d, dep, dur in zip(t["train_number"], t["origin_city"], t["dest_city"], t["dep_time"],
                                   t["duration_min"], strict=True):
        if first[num] == o:
            first_dep[num] = int(dep[:2]) * 60 + int(dep[3:])
            reach[(num, d)] = first_dep[num] + int(dur)
    return [i for i, (num, o, days) in enumerate(zip(t["train_number"], t["origin_city"], t["run_days"],
                                                       strict=True))
            if days != "1111111" and reach.get((num, o), 0) >= 1440]


def test_mini_run_days_are_shifted_past_midnight(mini_db: Database) -> None:
    """A row boarding after midnight runs on the days the train reaches that stop
    (was: the first stop's days on every row); the search tool and the timetable check agree."""
    t = mini_db.tables["trains"].columns
    late = _runs_after_midnight(t)
    assert late, "the mini sandbox has no non-daily train boarding after midnight: the test measures nothing"
    assert run_day_contradictions(t) == 0
    # the search tool lists such a row on the boarding date and the timetable check accepts it

    i = late[0]
    day = t["run_days"][i].index("1")
    date = f"2025-11-{3 + day:02d}"  # 2025-11-03 is a Monday
    assert runs_on(t["run_days"][i], date)
    found = LOOKUP.invoke(mini_db, "search_trains", {"origin": t["origin_city"][i], "destination": t["dest_city"][i],
                                                   "date": date, "limit": 100})
    assert any(r["train_number"] == t["train_number"][i] for r in found.rows)


def test_run_day_contradictions_counts_an_unshifted_row() -> None:
    """The measure itself: a copy of a train whose after-midnight row keeps the first stop's days is counted."""
    t = {"train_number": ["12951"] * 3, "origin_city": ["Delhi", "Delhi", "Vadodara"],
         "dest_city": ["Vadodara", "Mumbai", "Mumbai"], "dep_time": ["20:40", "20:40", "08:30"],
         "duration_min": [700, 1000, 290], "run_days": ["1100111", "1100111", "1100111"]}
    assert run_day_contradictions(t) == 1
    t["run_days"][2] = shift_run_days("1100111", 1)
    assert run_day_contradictions(t) == 0


def test_mini_one_delay_per_train_and_alighting_stop(mini_db: Database) -> None:
    """Every row of a train alighting at one city carries the same delay statistics."""
    t = mini_db.tables["trains"].columns
    spread, pairs = delay_spread(t)
    assert pairs > 100 and spread == 0
    boarded = Counter(zip(t["train_number"], t["dest_city"], strict=True))
    assert max(boarded.values()) > 2  # pairs boarded from several stops exist


def test_train_fares_follow_type_and_class(mini_db: Database) -> None:
    """Fares depend on the train type (Express < Superfast < premium on one route) and are
    quoted for a class the train offers (CC on the chair-car day trains)."""
    t = mini_db.tables["trains"].columns
    kinds = row_train_types(t)
    assert all(fare_class(c) in c for c in t["classes"])
    assert all(fare_class(c) == "CC" for c, kind in zip(t["classes"], kinds, strict=True)
               if kind in ("Shatabdi", "Vande Bharat"))
    check = _check(mini_db, "train fare per 100 km")
    assert check.passed, check
    day = t["run_days"][0].index("1")
    shown = LOOKUP.invoke(mini_db, "search_trains", {"origin": t["origin_city"][0], "destination": t["dest_city"][0],
                                                  "date": f"2025-11-{3 + day:02d}"})
    assert "fare_class" in shown.text and "fare_3A" not in shown.text


@pytest.mark.slow
def test_full_delhi_agra_fares_differ_by_train_type(tmp_path: Path) -> None:
    """A check once measured Delhi-Agra at 438 for a Passenger, a Rajdhani and a Shatabdi alike; real
    trains between Delhi and Agra run different distances from different stations, so their fares
    differ by type and by km."""
    build_sandbox("full", 0, tmp_path / "full")
    t = Database.open(tmp_path / "full").tables["trains"].columns
    by_kind: dict[str, set[float]] = defaultdict(set)
    for kind, o, d, fare in zip(row_train_types(t), t["origin_city"], t["dest_city"], t["fare_inr"], strict=True):
        if (o, d) == ("Delhi", "Agra"):
            by_kind[kind].add(float(fare))
    assert len(by_kind) >= 4
    assert max(by_kind["Express"]) < min(by_kind["Rajdhani"])
    assert run_day_contradictions(t) == 0 and delay_spread(t)[0] == 0


# ------------------------------------------------ fares per real km


def test_fare_km_reads_the_track_km_back() -> None:
    """Fares are per km, so the realism figure reads a row's rail km back from its fare (to within
    the fare's rounding to 5 INR)."""
    km = np.array([80.0, 212.0, 1385.0, 2270.0])
    for kind in TYPE_CLASSES:
        back = fare_km(kind, train_fare(kind, km))
        assert np.all(np.abs(back - km) <= 2.5 / min(1.0, 0.198)), (kind, back)


def test_mini_fastest_trains_and_track_length(mini_db: Database) -> None:
    """Mumbai -> Pune about 3 h over the Bhor Ghat; track 1.2-1.45 x the great circle (median)."""
    check = _check(mini_db, "track km / great-circle km")
    assert check.passed, check
    trunk = next(f for f in rail_figures(mini_db) if f.name.startswith("fastest trains on trunk routes"))
    assert trunk.passed and "Mumbai-Pune" in str(trunk.value), trunk


def test_track_figure_counts_what_it_says() -> None:
    """A made-up table: only a train's first-to-last-stop row over 100 km counts."""
    fare = float(train_fare("Express", np.array([300.0]))[0])
    t = {"train_number": ["1", "1", "1", "3"], "origin_city": ["A", "A", "B", "A"], "dest_city": ["B", "C", "C", "C"],
         "fare_inr": [50, fare, 40, 55]}
    gc = np.array([[0.0, 50.0, 200.0], [50.0, 0.0, 150.0], [200.0, 150.0, 0.0]])
    ratios = track_ratios(t, ["Express", "Express", "Express", ""], {"A": 0, "B": 1, "C": 2}, gc)
    assert ratios.size == 1 and abs(ratios[0] - 1.5) < 0.02


# ------------------------------------------------ the right cities and airports


def test_geonames_errors_are_corrected() -> None:
    """Gorakhpur is the one in Uttar Pradesh; the inflated small towns no longer outweigh cities."""
    cities = select_cities(PROFILES["full"])
    where = {n: (s, int(p)) for n, s, p in zip(cities.name, cities.state, cities.population.tolist(), strict=True)}
    assert where["Gorakhpur"][0] == "Uttar Pradesh" and 600_000 < where["Gorakhpur"][1] < 800_000
    assert where["Greater Noida"][1] < where["Noida"][1]
    assert where["Tirunelveli"][1] < 600_000
    for town in ("Punasa", "Gyanpur", "Bilimora"):
        assert town not in where or where[town][1] < 100_000, (town, where.get(town))
    for geonameid, population in GEONAMES_CORRECTIONS.items():  # each correction names a real entry
        assert population is None or population > 0, geonameid


def test_airports_serve_the_city_they_are_named_for() -> None:
    """Bilimora does not get Daman's airport, Tirunelveli not Thoothukudi's, Faridabad not Jewar's,
    Sangli not Kolhapur's; every airport's city is the one airportsdata (or its name) gives."""
    import airportsdata

    cities = select_cities(PROFILES["full"])
    airports = match_airports(cities, PROFILES["full"].airport_radius_km)
    records = airportsdata.load("IATA")
    served: dict[str, set[str]] = defaultdict(set)
    for code, i in airports.items():
        assert airport_city(records[code]) == cities.name[i], (code, cities.name[i])
        served[cities.name[i]].add(code)
    assert "GOP" in served["Gorakhpur"] and "KLH" in served["Kolhapur"] and "TCR" in served["Thoothukudi"]
    for city in ("Bilimora", "Tirunelveli", "Faridabad", "Sangli"):
        assert city not in served, (city, served.get(city))
    assert airport_city(records["NMB"]) == "Daman" and airport_city(records["DXN"]) == "Jewar"


@pytest.mark.slow
def test_full_cities_airports_and_rail(tmp_path: Path) -> None:
    """On the full sandbox: no train calls at Shillong, Gorakhpur (UP) flies from GOP, Bilimora has no flights."""
    build_sandbox("full", 0, tmp_path / "full")
    db = Database.open(tmp_path / "full")
    t, f = db.tables["trains"].columns, db.tables["flights"].columns
    assert not {c for c in t["origin_city"] + t["dest_city"] if c in NO_RAILWAY}
    airports = dict(zip(f["origin_city"], f["origin_airport"], strict=True))
    assert airports.get("Gorakhpur") == "GOP" and "Bilimora" not in airports and "Faridabad" not in airports
    c = db.tables["cities"].columns
    assert dict(zip(c["city"], c["state"], strict=True))["Gorakhpur"] == "Uttar Pradesh"


# ------------------------------------------------ the places travellers go to, flights like India's


def test_tourist_places_are_chosen_with_their_states() -> None:
    """Goa's Panaji, Leh, Manali, Rishikesh, Darjeeling, Jaisalmer and Khajuraho are cities of the full
    profile (none was), with Table 1's 504 cities and 33 states kept."""
    cities = select_cities(PROFILES["full"])
    state = dict(zip(cities.name, cities.state, strict=True))
    expected = {"Panaji": "Goa", "Leh": "Ladakh", "Manali": "Himachal Pradesh", "Rishikesh": "Uttarakhand",
                "Darjeeling": "West Bengal", "Jaisalmer": "Rajasthan", "Khajuraho": "Madhya Pradesh"}
    assert {c: state.get(c) for c in expected} == expected
    assert cities.n == 504 and len(set(cities.state)) == 33
    draw = dict(zip(cities.name, cities.draw.tolist(), strict=True))
    assert draw["Panaji"] > 1_000_000 and draw["Mumbai"] == int(cities.population[cities.name.index("Mumbai")])


def test_goa_has_both_airports_and_tourist_airports_serve_their_towns() -> None:
    cities = select_cities(PROFILES["full"])
    airports = match_airports(cities, PROFILES["full"].airport_radius_km)
    assert cities.name[airports["GOI"]] == cities.name[airports["GOX"]] == "Panaji"
    for city, code in (("Leh", "IXL"), ("Manali", "KUU"), ("Jaisalmer", "JSA"), ("Khajuraho", "HJR"),
                       ("Udaipur", "UDR")):
        assert cities.name[airports[code]] == city


def test_mini_flights_trains_like_india(mini_db: Database) -> None:
    """No two flights of a route leave at the same minute on one day (was up to 10); no Vistara;
    on-time shares differ by airline (were all 75 %); premium trains are less late than Passengers.
    A flight row is a timetable's flight number with its weekdays: most fly daily."""
    for prefix in ("most flights of one route", "airlines (on-time share", "train mean delay, premium"):
        check = _check(mini_db, prefix)
        assert check.passed, check
    f = mini_db.tables["flights"].columns
    assert "Vistara" not in set(f["airline"])
    assert sum(days == "1111111" for days in f["run_days"]) > len(f["run_days"]) / 2


@pytest.mark.slow
def test_full_flights_and_tourist_places(tmp_path: Path) -> None:
    """The realism targets on the full sandbox: Delhi -> Udaipur >= 3 services (was 0), the tourist
    places served, Delhi -> Mumbai flights of several block times (the flight counts are traveller
    figures now: tests/data/test_sandbox_air.py)."""
    build_sandbox("full", 0, tmp_path / "full")
    db = Database.open(tmp_path / "full")
    for prefix in ("Delhi -> Udaipur", "tourist places present", "Delhi -> Mumbai distinct block times"):
        check = _check(db, prefix)
        assert check.passed, check
    t = db.tables["trains"].columns
    for a, b in (("Delhi", "Jammu"), ("Delhi", "Dehradun"), ("Kolkata", "Puri"), ("Chennai", "Puducherry")):
        assert any((o, d) == (a, b) for o, d in zip(t["origin_city"], t["dest_city"], strict=True)), (a, b)


# ------------------------------------------------ venues where they may be, prices that fit


def test_category_weights_leave_out_casinos_and_bars_where_illegal() -> None:
    assert "Casinos & Gambling" in category_weights("Panaji", "Goa")
    assert "Casinos & Gambling" in category_weights("Gangtok", "Sikkim")
    assert "Casinos & Gambling" in category_weights("Daman", "Dadra and Nagar Haveli and Daman and Diu")
    assert "Casinos & Gambling" not in category_weights("Silvassa", "Dadra and Nagar Haveli and Daman and Diu")
    assert "Casinos & Gambling" not in category_weights("Mumbai", "Maharashtra")
    for state in ("Gujarat", "Bihar", "Nagaland", "Mizoram"):
        assert "Nightlife" not in category_weights("X", state)
    assert "Nightlife" in category_weights("Mumbai", "Maharashtra")


def test_entry_fees_by_kind() -> None:
    """Places of worship, ghats, beaches, markets and food streets charge nothing; the rest by the
    tiers of their dearest category (a real sight's own fee is its listed one: test_venues.py)."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        assert entry_fee("market", ["Shopping"], rng) == 0
        assert entry_fee("food_street", ["Food & Drink", "Shopping"], rng) == 0
        assert entry_fee("temple", ["Sights & Landmarks"], rng) == 0
        assert entry_fee("beach", ["Nature & Parks"], rng) == 0
        assert entry_fee("museum", ["Museums"], rng) <= 200
        assert entry_fee("water_park", ["Water & Amusement Parks"], rng) >= 500
        assert entry_fee("park", ["Nature & Parks"], rng) <= 50
    assert city_tier(5e6) == "metro" and city_tier(2e6) == "large" and city_tier(5e5) == "mid"
    assert city_tier(1e5) == "town"


def test_mini_venues_where_they_may_be(mini_db: Database) -> None:
    for prefix in ("cities with a casino", "bars, pubs and brewpubs", "shopping-only attractions",
                   "3-star stays"):
        check = _check(mini_db, prefix)
        assert check.passed, check


@pytest.mark.slow
def test_full_venues_and_prices(tmp_path: Path) -> None:
    """The venue and price targets on the full sandbox: casinos outside Goa, Sikkim and Daman
    0 (was 122 cities), bars in dry states 0 (was 186), 3-star median Rs 2,000-6,000 (was 10,350)."""
    build_sandbox("full", 0, tmp_path / "full")
    db = Database.open(tmp_path / "full")
    a = db.tables["attractions"].columns
    state = dict(zip(db.tables["cities"].columns["city"], db.tables["cities"].columns["state"], strict=True))
    assert not any("Casinos & Gambling" in cats and state[c] not in ("Goa", "Sikkim")
                   for c, cats in zip(a["city"], a["categories"], strict=True))
    assert not any("Nightlife" in cats and state[c] in ("Gujarat", "Bihar", "Nagaland", "Mizoram")
                   for c, cats in zip(a["city"], a["categories"], strict=True))
    s = db.tables["accommodations"].columns
    three = [p for p, st in zip(s["price_per_night_inr"], s["star_rating"], strict=True) if st == 3]
    assert 2000 <= float(np.median(three)) <= 6000
    for prefix in ("cities with a casino", "bars, pubs and brewpubs", "shopping-only attractions", "3-star stays",
                   "stays in towns under 300k", "restaurant median cost"):
        check = _check(db, prefix)
        assert check.passed, check


# ------------------------------------------------ the crowd cities


def test_crowd_cities_are_the_most_visited_places() -> None:
    """The full sandbox's 20 crowd cities are India's 20 most-visited places (`TOURIST_CITIES`), the
    mini profile's 6 the four of them it holds, then Ahmedabad and Pune (places its trips go to)."""
    full = select_cities(PROFILES["full"])
    chosen = {full.name[i] for i in crowd_cities(full, PROFILES["full"])}
    assert chosen == set(TOURIST_CITIES[:TOP_TOURIST_COUNT])
    assert {"Agra", "Varanasi", "Panaji", "Udaipur", "Amritsar", "Kochi", "Leh"} <= chosen
    assert not chosen & {"Thane", "Kanpur", "Surat"}
    mini = select_cities(PROFILES["mini"])
    assert [mini.name[i] for i in crowd_cities(mini, PROFILES["mini"])] == \
        ["Mumbai", "Bengaluru", "Ahmedabad", "Pune", "Mysuru", "Panaji"]
