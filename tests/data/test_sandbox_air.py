"""Flights on India's real air network (tools/sandbox/air.py, tools/india/air/): only the vendored
airport pairs fly, by today's airlines; a damaged source is refused in one line; the mini
profile's flights are the full profile's between its cities; the traveller figures hold."""

from __future__ import annotations

import csv
import io
import json
import shutil
import string
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from utp_env.tools.database import Database
from utp_env.tools.india import air_facts
from utp_env.tools.india.air_facts import (
    NATIONAL_DEPARTURES_A_DAY,
    NO_SCHEDULED_FLIGHTS,
    airline_code,
    iata,
    read_airports,
    read_carriers,
    read_route_carriers,
    read_routes,
)
from utp_env.tools.india.derive_air import derive
from utp_env.tools.india.sources import SOURCES_DIR, SourceError, update_record
from utp_env.tools.sandbox import air, build_sandbox
from utp_env.tools.sandbox.geography import airport_city, indian_airports, match_airports, select_cities
from utp_env.tools.sandbox.profiles import PROFILES
from utp_env.tools.sandbox.traveller.air import departures_a_day, figures

SCHEDULE = ("flight_number", "airline", "origin_city", "dest_city", "origin_airport", "dest_airport", "dep_time",
            "arr_time", "arr_day_offset", "duration_min", "run_days", "price_inr", "otp_total", "otp_on_time",
            "otp_late", "otp_very_late", "otp_excessive", "otp_cancelled", "otp_diverted")


@pytest.fixture
def fresh_network() -> Iterator[None]:
    """The network is read once per process; a test that changes its sources reads them afresh."""
    air.network.cache_clear()
    yield
    air.network.cache_clear()


def _pairs(f: dict) -> set[frozenset[str]]:
    return {frozenset(p) for p in zip(f["origin_airport"], f["dest_airport"], strict=True)}


def _vendored_pairs() -> set[frozenset[str]]:
    return {frozenset((r.airport_a, r.airport_b)) for r in read_routes()}


# ------------------------------------------------------------------ the source and its damage


def _replace_cell(text: str, row: int, column: int, value: str) -> str:
    lines = text.splitlines(keepends=True)
    cells = next(csv.reader([lines[row]]))
    cells[column] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    lines[row] = out.getvalue()
    return "".join(lines)


def _cut_mid_row(text: str) -> str:
    middle = text.index("\n", len(text) // 2) + 1
    return text[: text.index(",", middle) + 1]


def _cut_at_row(text: str) -> str:
    return "".join(text.splitlines(keepends=True)[: len(text.splitlines()) // 2])


@pytest.mark.parametrize(("name", "damage", "fragment"), [
    ("routes.csv", lambda t: _replace_cell(t, 5, 0, "D3L"), "routes.csv, row 5, column 'airport_a'"),
    ("routes.csv", _cut_mid_row, "of 4 columns (a damaged or truncated row)"),
    ("routes.csv", _cut_at_row, "are recorded (truncated after row"),
    ("routes.csv", lambda t: t.replace("OpenFlights 2014", "OpenFlights 2015", 1), "differs from the SHA-256"),
    ("carriers.csv", lambda t: _replace_cell(t, 1, 3, "1.4"), "carriers.csv, row 1, column 'share'"),
    ("airports.csv", lambda t: _replace_cell(t, 2, 1, "many"), "airports.csv, row 2, column 'domestic_passengers_m'"),
])
def test_build_refuses_a_damaged_air_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_network: None,
                                            name: str, damage: Callable[[str], str], fragment: str) -> None:
    """Building the sandbox from a corrupted, truncated or edited copy of the air sources fails at the
    flights stage in one line naming the file (and the row and column where there is one)."""
    root = tmp_path / "india"
    shutil.copytree(SOURCES_DIR / "air", root / "air")
    path = root / "air" / name
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    monkeypatch.setattr(air_facts, "SOURCE_ROOT", root)
    with pytest.raises(SourceError) as err:
        build_sandbox("mini", 0, tmp_path / "out")
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"india/air/{name}")
    assert fragment in message


def test_every_vendored_file_is_recorded_and_licensed() -> None:
    records = json.loads((SOURCES_DIR / "air" / "SOURCE.json").read_text(encoding="utf-8"))
    assert set(records) == {p.name for p in (SOURCES_DIR / "air").glob("*.csv")}
    assert all("ODbL" in r["licence"] for r in records.values())
    licence = (SOURCES_DIR / "air" / "LICENSE").read_text(encoding="utf-8")
    assert "Contains information from" in licence and "OpenFlights" in licence
    assert "ODC Open Database License (ODbL)" in licence  # the licence text itself travels with the data


def test_vendored_facts_are_consistent() -> None:
    """Every route's airports are Indian airports with traffic, every regional route is a vendored
    pair flown by airlines that fly today, and the national shares sum to one."""
    known = set(indian_airports())
    traffic = {a.iata for a in read_airports()}
    used = {code for pair in _vendored_pairs() for code in pair}
    assert used <= known and used == traffic
    flying = {c.code for c in read_carriers() if c.flying}
    for r in read_route_carriers():
        assert frozenset((r.airport_a, r.airport_b)) in _vendored_pairs(), r
        assert set(r.carriers) <= flying, r
    shares = [c.share for c in read_carriers() if c.share]
    assert abs(sum(shares) - 1.0) < 1e-9
    assert not any(c.share for c in read_carriers() if not c.flying)


@given(st.text(alphabet=string.ascii_letters + string.digits + " -", max_size=5))
def test_code_parsers_accept_only_codes(cell: str) -> None:
    for parser, size in ((iata, 3), (airline_code, 2)):
        try:
            value = parser(cell)
        except ValueError:
            continue
        assert value == cell and len(cell) == size and cell == cell.upper() and cell.isalnum()


# ------------------------------------------------------------------ the derivation rule


def _fake_facts(root: Path, updates: list[str], airports: list[str]) -> None:
    folder = root / "air"
    folder.mkdir(parents=True)
    files = {
        "carriers.csv": "code,airline,status,share,on_time,block_extra_min,cruise_kmh,fact,source\n"
                        "6E,IndiGo,flying,0.7,0.8,0,750,f,s\nAI,Air India,flying,0.3,0.7,5,750,f,s\n"
                        "9W,Jet Airways,ceased 2019-04,,,,,f,s\n",
        "updates.csv": "change,airport_a,airport_b,fact,source\n" + "".join(f"{u},f,s\n" for u in updates),
        "airports.csv": "iata,domestic_passengers_m,taxi_extra_min,source\n" + "".join(f"{a},1,,s\n" for a in airports),
    }
    record = {"rows": 0, "sha256": "", "licence": "test", "source": "test", "retrieved": "test", "derived": "test"}
    (folder / "SOURCE.json").write_text(json.dumps(dict.fromkeys(files, record)), encoding="utf-8")
    for name, body in files.items():
        (folder / name).write_text(body, encoding="utf-8")
        update_record(f"air/{name}", root)


def _fake_raw(raw: Path) -> None:
    raw.mkdir()
    india = ("DEL", "BOM", "GOI", "RAJ", "HJR", "IXL")
    (raw / "airports.dat").write_text("".join(f'{k},"{c} Airport","{c}","India","{c}","VX{c}",0,0,0,5.5,"N",'
                                              f'"Asia/Kolkata","airport","OurAirports"\n'
                                              for k, c in enumerate(india, 1))
                                      + '99,"Dubai","Dubai","United Arab Emirates","DXB","OMDB",0,0,0,4,"U",'
                                        '"Asia/Dubai","airport","OurAirports"\n', encoding="utf-8")
    legs = [("6E", "DEL", "BOM"), ("6E", "BOM", "DEL"), ("AI", "DEL", "HJR"), ("9W", "DEL", "IXL"),
            ("9W", "IXL", "DEL"), ("9W", "BOM", "GOI"), ("9W", "GOI", "BOM"), ("AI", "BOM", "RAJ"),
            ("AI", "RAJ", "BOM"), ("6E", "DEL", "DXB"), ("6E", "DXB", "DEL")]
    (raw / "routes.dat").write_text("".join(f"{a},1,{o},1,{d},2,,0,320\n" for a, o, d in legs), encoding="utf-8")


def test_derivation_applies_the_stated_rules(tmp_path: Path) -> None:
    """One-way legs and pairs flown only by airlines gone since are dropped unless kept; a moved
    airport replaces the old one; added pairs join; international routes never enter."""
    root, raw = tmp_path / "facts", tmp_path / "raw"
    _fake_facts(root, ["move,RAJ,HSR", "keep,BOM,GOI", "add,DEL,GOX"], ["DEL", "BOM", "GOI", "HSR", "GOX"])
    _fake_raw(raw)
    rows = {(r["airport_a"], r["airport_b"]): r for r in derive(raw, root)}
    assert set(rows) == {("BOM", "DEL"), ("BOM", "GOI"), ("BOM", "HSR"), ("DEL", "GOX")}
    assert rows[("BOM", "GOI")]["carriers_2014"] == "9W" and "kept" in rows[("BOM", "GOI")]["basis"]
    assert "RAJ moved to HSR" in rows[("BOM", "HSR")]["basis"]
    assert rows[("DEL", "GOX")]["basis"].startswith("added")


@pytest.mark.parametrize(("updates", "airports", "fragment"), [
    (["drop,DEL,BOM"], ["DEL", "BOM"], "unknown change"),
    (["keep,DEL,GOI"], ["DEL", "BOM"], "'keep' of pairs the 2014 table lacks"),
    (["add,BOM,DEL"], ["DEL", "BOM"], "already in the 2014 table"),
    (["move,RAJ,HSR"], ["DEL", "HSR"], "lacks the airports ['BOM']"),
    (["move,RAJ,HSR"], ["DEL", "BOM", "HSR", "GOI"], "lists airports no pair uses: ['GOI']"),
    (["move,RAJ,HSR", "add,DEL,ZZZ"], ["DEL", "BOM", "HSR", "ZZZ"], "not in airportsdata as Indian: ['ZZZ']"),
    ([], ["DEL", "BOM"], "not in airportsdata as Indian: ['RAJ']"),
])
def test_derivation_refuses_inconsistent_updates(tmp_path: Path, updates: list[str], airports: list[str],
                                                 fragment: str) -> None:
    root, raw = tmp_path / "facts", tmp_path / "raw"
    _fake_facts(root, updates, airports)
    _fake_raw(raw)
    with pytest.raises(SystemExit, match=fragment.replace("[", r"\[").replace("]", r"\]")):
        derive(raw, root)


# ------------------------------------------------------------------ the flights


def test_mini_flights_fly_only_vendored_pairs_from_the_airports_of_their_cities(mini_db: Database) -> None:
    f = mini_db.tables["flights"].columns
    assert _pairs(f) and _pairs(f) <= _vendored_pairs()
    records = indian_airports()
    for city, code in {*zip(f["origin_city"], f["origin_airport"], strict=True),
                       *zip(f["dest_city"], f["dest_airport"], strict=True)}:
        assert airport_city(records[code]) == city, (city, code)
    legs = {(o, d) for o, d in zip(f["origin_city"], f["dest_city"], strict=True)}
    assert all((d, o) in legs for o, d in legs)  # every pair is flown both ways


def test_no_flight_on_a_pair_the_source_lacks(monkeypatch: pytest.MonkeyPatch, fresh_network: None) -> None:
    """Take Delhi-Mumbai out of the route table: it has no flight, and no other pair is invented."""
    routes = read_routes()
    busiest = next(r for r in routes if {r.airport_a, r.airport_b} == {"DEL", "BOM"})
    kept = [r for r in routes if r is not busiest]
    monkeypatch.setattr(air, "read_routes", lambda: kept)
    cols = air.network_flights(0, PROFILES["full"].calibration).columns
    pairs = _pairs(cols)
    assert frozenset((busiest.airport_a, busiest.airport_b)) not in pairs
    assert pairs == {frozenset((r.airport_a, r.airport_b)) for r in kept}


def test_airlines_are_todays_and_regional_ones_fly_their_routes() -> None:
    cols = air.network_flights(0, PROFILES["full"].calibration).columns
    carriers = read_carriers()
    flying = {c.airline: c for c in carriers if c.flying}
    assert set(cols["airline"]) <= set(flying)
    assert not set(cols["airline"]) & {c.airline for c in carriers if not c.flying}
    listed: dict[frozenset[str], tuple[set[str], bool]] = {
        frozenset((r.airport_a, r.airport_b)): ({flying_name(r2, carriers) for r2 in r.carriers}, r.only)
        for r in read_route_carriers()}
    regional = {name for name, c in flying.items() if not c.share}
    departures: dict[str, float] = defaultdict(float)
    for name, o, d, days in zip(cols["airline"], cols["origin_airport"], cols["dest_airport"], cols["run_days"],
                                strict=True):
        pair = frozenset((o, d))
        if name in regional:
            assert pair in listed and name in listed[pair][0], (name, o, d)
        if pair in listed and listed[pair][1]:
            assert name in listed[pair][0], (name, o, d)
        departures[name] += days.count("1")
    total = sum(departures.values())
    for name, c in flying.items():
        if c.share:  # each national airline's share of departures near its share of passengers
            assert abs(departures[name] / total - c.share) < 0.08, (name, departures[name] / total, c.share)
    numbers = list(zip(cols["flight_number"], cols["origin_airport"], cols["dest_airport"], strict=True))
    assert len({n for n, _, _ in numbers}) == len(numbers)  # a flight number is one route and direction


def flying_name(code: str, carriers: list[air_facts.Carrier]) -> str:
    return next(c.airline for c in carriers if c.code == code)


def test_network_departures_follow_airport_traffic() -> None:
    """The national total is India's; each airport's departures are its share of the domestic
    passengers (the routes' floor of a few a week aside); the busiest pair is Delhi-Mumbai."""
    net = air.network()
    a, b = np.array(net.airport_a), np.array(net.airport_b)
    assert abs(2 * net.weekly.sum() / 7 - NATIONAL_DEPARTURES_A_DAY) / NATIONAL_DEPARTURES_A_DAY < 0.02
    traffic = {x.iata: x.passengers_m for x in read_airports()}
    total = sum(traffic.values())
    for code in ("DEL", "BOM", "BLR", "HYD", "CCU", "MAA"):
        weekly = net.weekly[(a == code) | (b == code)].sum()
        assert weekly / 7 == pytest.approx(traffic[code] / total * NATIONAL_DEPARTURES_A_DAY, rel=0.05), code
    top = int(np.argmax(net.weekly))
    assert {a[top], b[top]} == {"DEL", "BOM"}
    assert net.weekly.min() >= air.MIN_WEEKLY


def test_week_rows_and_airline_counts() -> None:
    rng = np.random.default_rng(0)
    assert air.week_rows(14, rng) == ["1111111", "1111111"]
    rows = air.week_rows(17, rng)
    assert rows[:2] == ["1111111"] * 2 and rows[2].count("1") == 3
    assert sum(r.count("1") for r in air.week_rows(5, rng)) == 5
    assert [air.airlines_on_route(x) for x in (0.3, 2.0, 3.0, 10.0, 50.0)] == [1, 1, 2, 3, 5]


def test_mini_flights_are_the_full_networks_between_its_cities() -> None:
    """The mini profile is a real region: its flights are exactly the full profile's rows between
    its cities (only the late-delay mean is calibrated per sandbox)."""
    tables = {}
    for name in ("full", "mini"):
        profile = PROFILES[name]
        cities = select_cities(profile)
        tables[name] = (set(cities.name), air.flights_table(cities, match_airports(cities, profile.airport_radius_km),
                                                             profile, 0))

    def rows(cols: dict, within: set[str]) -> set[tuple]:
        return {tuple(str(cols[c][k]) for c in SCHEDULE) for k in range(len(cols["origin_city"]))
                if cols["origin_city"][k] in within and cols["dest_city"][k] in within}

    mini_cities, mini = tables["mini"]
    _, full = tables["full"]
    assert rows(mini, mini_cities) == rows(full, mini_cities)
    assert len(mini["origin_city"]) > 0


# ------------------------------------------------------------------ the full sandbox


@pytest.mark.slow
def test_full_flights_meet_the_traveller_figures(tmp_path: Path) -> None:
    build_sandbox("full", 0, tmp_path / "full")
    db = Database.open(tmp_path / "full")
    result = figures(db)
    for figure in result:
        print(f"  {figure.name}: {figure.value} (target {figure.target}; {figure.source})")
    assert len(result) >= 8 and all(f.passed for f in result), [f for f in result if not f.passed]
    f = db.tables["flights"].columns
    cities = set(db.tables["cities"].columns["city"])
    flown = {c for pair in zip(f["origin_city"], f["dest_city"], strict=True) for c in pair}
    assert not flown & set(NO_SCHEDULED_FLIGHTS)
    assert cities & set(NO_SCHEDULED_FLIGHTS)  # the figure is about cities the sandbox has
    pairs = departures_a_day(f)
    for a, b in (("Kolkata", "Mysuru"), ("Coimbatore", "Nashik"), ("Bhubaneswar", "Srinagar")):
        assert (a, b) not in pairs and (b, a) not in pairs, (a, b)
    assert _pairs(f) <= _vendored_pairs()
