"""The trains table from Indian Railways' real timetable (tools/sandbox/rail.py, tools/india/rail/):
real trains and stations, times that add up to the real durations, run days shifted past midnight,
a damaged source refused in one line, and the traveller figures of the full sandbox."""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from utp_env.tools.database import Database
from utp_env.tools.india import sources
from utp_env.tools.india.derive_rail import readable_station_name, readable_train_name, train_type
from utp_env.tools.india.rail_facts import TRAIN_TYPES, RealTrain, read_rail
from utp_env.tools.india.sources import SourceError, update_record
from utp_env.tools.sandbox import build_sandbox
from utp_env.tools.sandbox.geography import Cities, select_cities
from utp_env.tools.sandbox.profiles import PROFILES
from utp_env.tools.sandbox.rail import (
    KIND_DELAY,
    TYPE_CLASSES,
    TYPE_FARE,
    departures,
    fare_km,
    station_cities,
    timetable,
    train_fare,
    trains_table,
)
from utp_env.tools.sandbox.realism import run_day_contradictions
from utp_env.tools.sandbox.traveller.rail import SHORT_ROUTES, figures
from utp_env.tools.schema import fare_class, shift_run_days

SOURCE = read_rail()
TRAIN = {t.number: t for t in SOURCE.trains}


@pytest.fixture(scope="module")
def full_cities() -> Cities:
    return select_cities(PROFILES["full"])


def _subset(cities: Cities, names: list[str]) -> Cities:
    """The named cities of `cities` (most populous first, as `select_cities` orders them)."""
    idx = sorted((cities.name.index(n) for n in names), key=lambda i: -int(cities.population[i]))
    return Cities(name=[cities.name[i] for i in idx], state=[cities.state[i] for i in idx], lat=cities.lat[idx],
                  lon=cities.lon[idx], population=cities.population[idx], draw=cities.draw[idx])


def _rows(cols: dict, number: str) -> list[dict]:
    keys = list(cols)
    return [{k: cols[k][i] for k in keys} for i, n in enumerate(cols["train_number"]) if n == number]


# ------------------------------------------------------------------ the vendored source


def test_the_source_is_every_train_with_known_stops_and_types() -> None:
    assert len(SOURCE.trains) == len(TRAIN)  # numbers unique
    assert {t.type for t in SOURCE.trains} <= set(TRAIN_TYPES)
    assert all(code in SOURCE.stations for t in SOURCE.trains for code in t.stops)
    assert set(TYPE_CLASSES) == set(TRAIN_TYPES) == set(TYPE_FARE) == set(KIND_DELAY)
    assert all(fare_class(c) in c for c in TYPE_CLASSES.values())


def _damaged_copy(tmp_path: Path) -> Path:
    root = tmp_path / "india"
    shutil.copytree(sources.SOURCES_DIR, root, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return root


def _rewrite_row(path: Path, row: int, old: str, new: str) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    assert old in lines[row]
    lines[row] = lines[row].replace(old, new, 1)
    path.write_text("\n".join(lines), encoding="utf-8")


def test_building_from_a_damaged_source_fails_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox build reads the railway only through the vendored-source reader: a corrupted cell
    stops it with one line naming the file, the row and the column."""
    root = _damaged_copy(tmp_path)
    _rewrite_row(root / "rail" / "trains.csv", 7, ",1111111,", ",11x1111,")
    monkeypatch.setattr(sources, "SOURCES_DIR", root)
    with pytest.raises(SourceError) as err:
        build_sandbox("mini", 0, tmp_path / "db")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("india/rail/trains.csv, row 7, column 'run_days'")


def test_a_truncated_or_inconsistent_source_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       full_cities: Cities) -> None:
    """A file cut at a row boundary names the rows missing; a stop that is no station (after a
    deliberate edit recorded in SOURCE.json) names its row; a fact naming a stop the train does
    not call at names its row."""
    cities = _subset(full_cities, ["Mumbai", "Pune"])
    root = _damaged_copy(tmp_path)
    monkeypatch.setattr(sources, "SOURCES_DIR", root)
    trains = root / "rail" / "trains.csv"
    good = trains.read_text(encoding="utf-8")
    trains.write_text("\n".join(good.split("\n")[:101]) + "\n", encoding="utf-8")
    with pytest.raises(SourceError, match=r"rail/trains\.csv: 100 rows where 2,858 are recorded \(truncated"):
        trains_table(cities, PROFILES["mini"], 0)
    trains.write_text(good, encoding="utf-8")
    _rewrite_row(trains, 1, " TNA ", " XXXX ")
    update_record("rail/trains.csv", root)
    with pytest.raises(SourceError, match=r"rail/trains\.csv, row 1, column 'stops': station XXXX is not in"):
        trains_table(cities, PROFILES["mini"], 0)
    trains.write_text(good, encoding="utf-8")
    update_record("rail/trains.csv", root)
    timings = root / "rail" / "timings.csv"
    _rewrite_row(timings, 2, ",AGC,", ",BSB,")
    update_record("rail/timings.csv", root)
    with pytest.raises(SourceError, match=r"rail/timings\.csv, row 2: train 12050 does not call at BSB"):
        trains_table(cities, PROFILES["mini"], 0)


def test_readable_names_follow_the_stated_rules() -> None:
    assert readable_station_name("VARANASI JN", None) == "Varanasi Junction"
    assert readable_station_name("NEW DELHI", "NEW DELHI") == "New Delhi"
    assert readable_station_name("JAMMU TAWI", None) == "Jammu Tawi"
    assert readable_station_name("KSR BENGALURU", None) == "KSR Bengaluru"
    assert readable_station_name("INDORE JN BG", None) == "Indore Junction"
    assert readable_station_name("HYDERABAD DECAN", "HYDERABAD DECCAN") == "Hyderabad Deccan"  # cut at 15: older
    assert readable_station_name("GONEANA B JAGTA", "GONEANA") == "Goneana B Jagta"  # the older is shorter
    names = {"NDLS": "New Delhi", "MMCT": "Mumbai Central", "LTT": "Lokmanya Tilak Terminus",
             "DD": "Daund Junction", "GWL": "Gwalior"}
    assert readable_train_name("NDLS TEJAS RAJ", names) == "New Delhi Tejas Rajdhani Express"
    assert readable_train_name("LTT PURI EXP", names) == "Lokmanya Tilak Terminus Puri Express"
    assert readable_train_name("DD GWL SFAST", names) == "Daund Gwalior Superfast Express"  # DD: a stop here
    assert readable_train_name("VSKP UDAY DD EXP", {}) == "VSKP Uday Double Decker Express"
    assert readable_train_name("BBS SMVB S F", {}) == "BBS SMVB Superfast Express"
    assert train_type("12049", "GATIMAAN EXP", 265) == "Gatimaan"
    assert train_type("12951", "NDLS TEJAS RAJ", 932) == "Rajdhani"
    assert train_type("20501", "TEJAS EXPRESS", 2390) == "Rajdhani"  # a sleeper Tejas runs as a Rajdhani
    assert train_type("82501", "IRCTC TEJAS EXP", 375) == "Tejas"
    assert train_type("12057", "UHL JANSHATABDI", 405) == "Jan Shatabdi"
    assert train_type("12913", "TRISHATABDI EXP", 705) == "Superfast"  # not a Shatabdi
    assert train_type("52541", "NJP DJ PASSENGER", 450) == "Toy Train"
    assert train_type("12901", "GUJRAT MAIL", 490) == "Superfast"  # a 12xxx number
    assert train_type("11077", "JHELUM EXPRESS", 2000) == "Express"
    # "RAJ" opening a name is the state, not a Rajdhani (none runs to Jodhpur or Udaipur)
    assert readable_train_name("RAJ S KRNTI EXP", {}) == "Rajasthan Sampark Kranti Express"
    assert train_type("12463", "RAJ S KRNTI EXP", 590) == "Superfast"
    assert readable_train_name("RAJ HUMSAFAR EXP", {}) == "Rajasthan Humsafar Express"
    assert train_type("22985", "RAJ HUMSAFAR EXP", 730) == "Humsafar"
    assert readable_train_name("AK TEJAS RAJ EX", {}) == "August Kranti Tejas Rajdhani Express"
    assert train_type("12953", "AK TEJAS RAJ EX", 993) == "Rajdhani"
    assert readable_train_name("GOA SMPRK K", {}) == "Goa Sampark Kranti Express"
    assert train_type("12449", "GOA SMPRK K", 1850) == "Superfast"  # not a "S F" Superfast pair


def test_every_rajdhani_runs_from_delhi() -> None:
    """Every train of type Rajdhani has a terminus in Delhi, and its name says Rajdhani."""
    delhi = {"NDLS", "NZM", "ANVT", "DLI", "DEE", "DEC"}
    rajdhanis = [t for t in SOURCE.trains if t.type == "Rajdhani"]
    assert len(rajdhanis) >= 40
    assert all({t.stops[0], t.stops[-1]} & delhi for t in rajdhanis), [
        t.number for t in rajdhanis if not {t.stops[0], t.stops[-1]} & delhi]
    # the source names the Agartala Tejas Rajdhani (20501/20502) "Tejas": a sleeper Tejas runs as a Rajdhani
    assert all("Rajdhani" in t.name or "Tejas" in t.name for t in rajdhanis)
    assert not [t.name for t in SOURCE.trains if "Rajdhani" in t.name and t.type != "Rajdhani"]


# ------------------------------------------------------------------ stations in cities


def test_stations_belong_to_the_city_they_name_or_serve(full_cities: Cities) -> None:
    cities = _subset(full_cities, ["Chandigarh", "Panchkula", "Panaji", "Kolkata", "Howrah", "Delhi", "Pithampur",
                                   "Indore"])
    city_of = {code: cities.name[i] for code, i in station_cities(cities, SOURCE.stations).items()}
    assert city_of["CDG"] == "Chandigarh"  # nearer Panchkula's centre, but named after Chandigarh
    assert city_of["KRMI"] == "Panaji" and city_of["HWH"] == "Kolkata"  # stations.csv: serves
    assert city_of["NDLS"] == city_of["NZM"] == city_of["DEE"] == "Delhi"
    assert "Pithampur" not in city_of.values()  # no passenger station there
    assert not {c for c, s in SOURCE.stations.items() if s.position == "interpolated"} & set(city_of)


def test_no_train_where_there_is_none(full_cities: Cities) -> None:
    """Darjeeling has only the toy train (and its joyrides, which start and end there: no row)."""
    cities = _subset(full_cities, ["Darjeeling", "Siliguri", "Kolkata", "Delhi", "Leh", "Pithampur", "Indore"])
    cols = trains_table(cities, PROFILES["full"], 0)
    at = {n for n, o, d in zip(cols["train_number"], cols["origin_city"], cols["dest_city"], strict=True)
          if "Darjeeling" in (o, d)}
    assert at and all(TRAIN[n].type == "Toy Train" for n in at)
    assert all("JOYRIDE" not in TRAIN[n].source_name for n in cols["train_number"])
    assert not {"Leh", "Pithampur"} & (set(cols["origin_city"]) | set(cols["dest_city"]))
    assert {"New Jalpaiguri Junction"} <= set(cols["origin_station"])
    stations = {s.name for s in SOURCE.stations.values()}
    assert set(cols["origin_station"]) | set(cols["dest_station"]) <= stations


# ------------------------------------------------------------------ times


def test_timetable_adds_up_to_the_real_duration_and_keeps_published_times() -> None:
    train = RealTrain("00001", "T", "T", "Express", ("A", "B", "C", "D"), "1111111", 600, 500, None)
    km = np.array([0.0, 100.0, 300.0, 500.0])
    halts = np.array([0.0, 10.0, 5.0, 0.0])
    tt = timetable(train, km, halts, {})
    assert tt.depart[0] == 0 and tt.arrive[-1] == 600
    assert np.all(np.diff(tt.arrive) > 0) and np.all(tt.depart >= tt.arrive)
    assert list(tt.depart - tt.arrive) == [0, 10, 5, 0]
    running = 600 - 15
    assert tt.arrive[1] == round(running * 100 / 500)  # running time spread over the km
    fixed = timetable(train, km, halts, {2: 200})  # a published arrival at C
    assert fixed.arrive[2] == 200 and fixed.arrive[-1] == 600
    assert fixed.arrive[1] == round((200 - 10) * 100 / 300)  # before C: 190 min running over its 300 km


def test_rows_end_to_end_take_the_real_duration(mini_db: Database) -> None:
    """Every row from a train's first station to its last takes exactly the source's duration."""
    t = mini_db.tables["trains"].columns
    name = {c: s.name for c, s in SOURCE.stations.items()}
    checked = 0
    for num, so, sd, minutes in zip(t["train_number"], t["origin_station"], t["dest_station"], t["duration_min"],
                                    strict=True):
        train = TRAIN[num]
        if so == name[train.stops[0]] and sd == name[train.stops[-1]]:
            assert int(minutes) == train.duration_min, num
            checked += 1
    assert checked > 50


def test_run_days_shift_at_stops_after_midnight(mini_db: Database) -> None:
    """A non-daily train boarded after midnight runs there on its first stop's days shifted by the
    midnights passed; the measure agrees on the whole mini table."""
    t = mini_db.tables["trains"].columns
    assert run_day_contradictions(t) == 0
    first_dep: dict[str, tuple[str, int]] = {}
    reach: dict[tuple[str, str], int] = {}
    name = {c: s.name for c, s in SOURCE.stations.items()}
    for num, o, d, so, dep, minutes in zip(t["train_number"], t["origin_city"], t["dest_city"], t["origin_station"],
                                           t["dep_time"], t["duration_min"], strict=True):
        if so == name[TRAIN[num].stops[0]]:
            start = int(dep[:2]) * 60 + int(dep[3:])
            first_dep[num] = (o, start)
            reach[(num, d)] = start + int(minutes)
    shifted = 0
    for num, o, dep, days in zip(t["train_number"], t["origin_city"], t["dep_time"], t["run_days"], strict=True):
        if (num, o) in reach and TRAIN[num].run_days != "1111111":
            arrive = reach[(num, o)]
            leave = arrive + (int(dep[:2]) * 60 + int(dep[3:]) - arrive) % 1440
            assert days == shift_run_days(TRAIN[num].run_days, leave // 1440), (num, o)
            shifted += leave >= 1440
    assert shifted > 0, "no non-daily train boards after midnight in mini: the test measures nothing"


def test_departures_follow_the_published_facts_and_day_train_pairs() -> None:
    from utp_env.tools.sandbox.common import stage_rng
    from utp_env.tools.sandbox.rail import DAY_TYPES, TURNAROUND_MIN, station_traffic

    dep = departures(SOURCE.trains, SOURCE.timings, station_traffic(SOURCE.trains), stage_rng(0, "trains"))
    assert set(dep) == set(TRAIN)
    for f in SOURCE.timings:
        if f.event == "dep":
            assert dep[f.number] == int(f.time[:2]) * 60 + int(f.time[3:]), f
    assert all(0 <= m < 1440 for m in dep.values())
    assert all(dep[n] + t.duration_min < 4 * 1440 for n, t in TRAIN.items())  # arrives within 3 days
    returns = 0
    for t in SOURCE.trains:
        pair = TRAIN.get(t.pair or "")
        if t.type in DAY_TYPES and pair is not None and pair.type in DAY_TYPES \
                and dep[t.number] >= dep[pair.number] + pair.duration_min + TURNAROUND_MIN:
            returns += 1
    assert returns > 10  # day trains whose return leaves after the outward one arrives


def test_well_known_trains_as_published(full_cities: Cities) -> None:
    """The Gatimaan takes 1 h 40 from Hazrat Nizamuddin to Agra Cantt; the Mumbai Rajdhani calls
    at its real stops in order and takes its real time; the Varanasi Vande Bharat leaves at 06:00."""
    cities = _subset(full_cities, ["Delhi", "Agra", "Gwalior", "Kota", "Ratlam", "Vadodara", "Surat", "Mumbai",
                                   "Varanasi", "Kanpur", "Prayagraj"])
    cols = trains_table(cities, PROFILES["full"], 0)
    gatimaan = {(r["origin_city"], r["dest_city"]): r for r in _rows(cols, "12050")}
    row = gatimaan[("Delhi", "Agra")]
    assert (row["dep_time"], row["arr_time"], row["duration_min"]) == ("08:10", "09:50", 100)
    assert (row["origin_station"], row["dest_station"]) == ("Hazrat Nizamuddin", "Agra Cantt")
    assert row["classes"] == ["CC", "EC"]
    rajdhani = _rows(cols, "12952")
    order = ["Delhi", "Kota", "Ratlam", "Vadodara", "Surat", "Mumbai"]
    assert {(r["origin_city"], r["dest_city"]) for r in rajdhani} == {
        (a, b) for i, a in enumerate(order) for b in order[i + 1 :]}
    whole = next(r for r in rajdhani if (r["origin_city"], r["dest_city"]) == ("Delhi", "Mumbai"))
    assert (whole["origin_station"], whole["dest_station"], whole["dep_time"]) == ("New Delhi", "Mumbai Central",
                                                                                   "16:55")
    assert whole["duration_min"] == TRAIN["12952"].duration_min and whole["arr_day_offset"] == 1
    assert whole["train_name"] == TRAIN["12952"].name and whole["classes"] == ["3A", "2A", "1A"]
    vande = next(r for r in _rows(cols, "22436") if (r["origin_city"], r["dest_city"]) == ("Delhi", "Varanasi"))
    assert (vande["dep_time"], vande["arr_time"]) == ("06:00", "14:00")


def test_the_bhopal_vande_bharat_as_published(full_cities: Cities) -> None:
    """The Rani Kamlapati - Hazrat Nizamuddin Vande Bharat (added_trains.csv: the source predates it)
    leaves Hazrat Nizamuddin at 15:00 and reaches Rani Kamlapati at 22:45, daily but Saturday."""
    cities = _subset(full_cities, ["Delhi", "Agra", "Gwalior", "Jhansi", "Bhopal"])
    cols = trains_table(cities, PROFILES["full"], 0)
    row = next(r for r in _rows(cols, "20172") if (r["origin_city"], r["dest_city"]) == ("Delhi", "Bhopal"))
    assert (row["origin_station"], row["dest_station"]) == ("Hazrat Nizamuddin", SOURCE.stations["RKMP"].name)
    assert (row["dep_time"], row["arr_time"], row["duration_min"]) == ("15:00", "22:45", 465)
    assert row["run_days"] == "1111101" and row["train_name"] == TRAIN["20172"].name
    up = next(r for r in _rows(cols, "20171") if (r["origin_city"], r["dest_city"]) == ("Bhopal", "Delhi"))
    assert (up["dep_time"], up["arr_time"]) == ("05:40", "13:10")


def test_fares_by_type_class_and_real_km() -> None:
    km = np.array([80.0, 212.0, 1385.0, 2270.0])
    for kind in TRAIN_TYPES:
        back = fare_km(kind, train_fare(kind, km))
        assert np.all(np.abs(back - km) <= 2.5 / 0.198), (kind, back)
    at = {kind: float(train_fare(kind, np.array([200.0]))[0]) for kind in TRAIN_TYPES}
    assert at["Toy Train"] < at["Express"] < at["Superfast"] < min(at["Shatabdi"], at["Rajdhani"],
                                                                     at["Vande Bharat"])


# ------------------------------------------------------------------ profiles


@pytest.mark.slow
def test_mini_trains_are_the_full_rows_between_mini_cities(full_cities: Cities) -> None:
    """The mini profile's trains are a real subset: the full table's rows whose two cities are both
    in mini, with the same times, stations, run days and fares (delays are calibrated per profile)."""
    mini_cities = select_cities(PROFILES["mini"])
    keep = ("train_number", "origin_city", "dest_city", "origin_station", "dest_station", "dep_time", "arr_time",
            "arr_day_offset", "duration_min", "run_days", "fare_inr")

    def rows(cities: Cities, profile: str) -> set[tuple]:
        cols = trains_table(cities, PROFILES[profile], 0)
        return {tuple(str(cols[k][i]) for k in keep) for i in range(len(cols["train_number"]))}

    mini = rows(mini_cities, "mini")
    names = set(mini_cities.name)
    full = {r for r in rows(full_cities, "full") if r[1] in names and r[2] in names}
    assert mini == full


@pytest.mark.slow
def test_full_sandbox_traveller_rail_figures(tmp_path: Path) -> None:
    """Every rail traveller figure holds on the full sandbox (the table `utp-env data stats` prints)."""
    build_sandbox("full", 0, tmp_path / "full")
    db = Database.open(tmp_path / "full")
    out = figures(db)
    for f in out:
        print(f"  {f.name}: {f.value} (target {f.target}; {f.source}) {'pass' if f.passed else 'FAIL'}")
    assert len(out) >= 8
    # every figure holds but the short busy routes the source lacks services on (a known shortfall)
    assert all(f.passed or f.shortfall for f in out), [f for f in out if not f.passed]
    short = {f.name for f in out if f.shortfall}
    assert short == {f"trains a day {a} -> {b}" for a, b, _ in SHORT_ROUTES}
    assert all(f.result == ("pass" if f.passed else "short") for f in out if f.shortfall)
    t = db.tables["trains"].columns
    per_pair: dict[tuple[str, str], set[str]] = defaultdict(set)
    for num, o, d in zip(t["train_number"], t["origin_city"], t["dest_city"], strict=True):
        per_pair[(o, d)].add(num)
    assert per_pair[("Delhi", "Chandigarh")] and per_pair[("Kolkata", "Patna")]
    assert per_pair[("Kochi", "Thiruvananthapuram")]


@pytest.mark.parametrize(("file", "row", "old", "new", "fragment"), [
    ("stations.csv", 2, "DR,Dadar", "CSMT,Dadar", "row 2: station CSMT listed twice"),
    ("stations.csv", 2, ",19.01718,", ",51.01718,", "row 2, column 'lat'"),
    ("trains.csv", 2, "10104,", "10103,", "row 2: train 10103 listed twice"),
    ("trains.csv", 2, "MAO KRMI THVM PERN SWV KUDL SNDD KKW VBW RAJP ADVI RN SGR CHI KHED MNI PNVL TNA DR CSMT",
     "MAO", "row 2, column 'stops': a train needs at least two stops"),
    ("trains.csv", 2, ",Express,", ",Local,", "row 2, column 'type'"),
    ("timings.csv", 2, "12050,AGC,arr", "12050,AGC,dep", "row 2: a departure fact is for the train's first stop NZM"),
    ("timings.csv", 2, "12050,AGC", "99999,AGC", "row 2: train 99999 is not in rail/trains.csv"),
    ("added_trains.csv", 1, "20171,Rani", "12050,Rani", "row 1: train 12050 listed twice"),
    ("added_trains.csv", 1, "RKMP VGLB GWL AGC NZM", "RKMP XXXX", "row 1, column 'stops': station XXXX is not in"),
])
def test_every_inconsistency_of_the_source_is_refused(tmp_path: Path, file: str, row: int, old: str, new: str,
                                                      fragment: str) -> None:
    """A deliberate edit recorded in SOURCE.json still has to make sense: each cross-check names its row."""
    root = _damaged_copy(tmp_path)
    _rewrite_row(root / "rail" / file, row, old, new)
    update_record(f"rail/{file}", root)
    with pytest.raises(SourceError) as err:
        read_rail(root)
    assert "\n" not in str(err.value) and f"rail/{file}" in str(err.value) and fragment in str(err.value)


def test_derivation_refuses_a_fix_without_coordinates_and_a_bad_call(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from utp_env.tools.india.derive_rail import derive_stations, main

    trains = {"00001": {"Stations": ["AAA", "BBB"]}}
    datameet = [{"properties": {"code": "AAA", "name": "A", "state": None}, "geometry": None}]
    fixes = [{"code": "AAA", "name": None, "same_as": "ZZZ", "lat": None, "lon": None, "serves": None, "basis": "x"}]
    with pytest.raises(ValueError, match="AAA: same_as ZZZ has no coordinates"):
        derive_stations(trains, datameet, {}, fixes)
    with pytest.raises(ValueError, match="station AAA: no located station"):
        derive_stations(trains, datameet, {}, [])
    assert main(["/nonexistent"]) == 2 and "usage:" in capsys.readouterr().err
