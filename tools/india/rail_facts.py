"""India's railway as open data: the real trains and stations vendored in `tools/india/rail/`, read
through `tools/india/sources.py` (which refuses a damaged file in one line), and the few timetable
facts of well-known trains.

- `rail/trains.csv`: Indian Railways' 2,858 trains of `BhanuTeella/Indian-Railways-Data`
  (CC0 1.0): number, readable name, the source's name, type, stops in order, run days at the first
  stop, total duration and distance, the return working's number;
- `rail/stations.csv`: every station those trains call at (3,343), with its readable name and
  coordinates from `datameet/railways` (CC0), and how the coordinates were found (`position`);
- `rail/added_trains.csv`: well-known trains that run today but that source predates (the Rani
  Kamlapati - Hazrat Nizamuddin Vande Bharat, 20171/20172), in the same columns with the published
  facts each row rests on (`basis`); read after `trains.csv`, so the trains keep their order;
- `rail/timings.csv`: the departure time at the first stop, or the arrival time at a named stop,
  of a few well-known trains (the Gatimaan, main-line Rajdhanis, Vande Bharats and Shatabdis), as
  publicly listed in Indian Railways' timetable;
- `rail/station_fixes.csv`: the corrections `tools/india/derive_rail.py` applied to the stations
  (renamed codes, missing coordinates, names the readable-name rule cannot make, and the city a
  station serves where it lies outside the city: Karmali for Panaji).

`SOURCE.json` beside them records each file's source, licence, date and derivation.
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Literal, NamedTuple

from utp_env.tools.india import sources
from utp_env.tools.india.sources import (
    SourceError,
    hhmm,
    integer,
    number,
    optional_text,
    text,
    weekdays,
    words,
)

# The train types of `trains.csv` (tools/india/derive_rail.py `train_type` assigns them).
TrainType = Literal["Gatimaan", "Vande Bharat", "Rajdhani", "Tejas", "Jan Shatabdi", "Shatabdi", "Duronto",
                    "Humsafar", "Garib Rath", "Double Decker", "Intercity", "Toy Train", "Superfast", "Mail",
                    "Express"]
TRAIN_TYPES: tuple[str, ...] = typing.get_args(TrainType)
# How a station's coordinates were found (tools/india/derive_rail.py); an interpolated station is
# never placed in a city.
POSITIONS = ("datameet", "same_as", "fixed", "interpolated")


class GhatSection(NamedTuple):
    """A steep incline of a main line: a hop between two stops crosses it when one stop lies at or
    west of `west_lon` and the other at or east of `east_lon`, both between `lat` degrees north."""

    name: str
    west_lon: float
    east_lon: float
    lat: tuple[float, float]


# The Western Ghats inclines of the lines out of Mumbai (Indian Railways: the Bhor Ghat between
# Karjat, 73.33 E, and Lonavala, 73.41 E, on the Mumbai-Pune line; the Thal Ghat between Kasara,
# 73.47 E, and Igatpuri, 73.56 E, on the Mumbai-Nashik line; both 1 in 37, climbed with banker
# locomotives at low speed, on a line that winds about 1.6 x the great circle). The timetable
# rule counts a hop across one as `GHAT_WEIGHT` times its km.
GHAT_SECTIONS: tuple[GhatSection, ...] = (
    GhatSection("Bhor Ghat", 73.34, 73.40, (18.3, 19.3)),
    GhatSection("Thal Ghat", 73.48, 73.55, (19.3, 20.2)),
)
GHAT_WEIGHT = 1.5
TRAINS_FILE = "rail/trains.csv"
STATIONS_FILE = "rail/stations.csv"
TIMINGS_FILE = "rail/timings.csv"
ADDED_TRAINS_FILE = "rail/added_trains.csv"


class Station(NamedTuple):
    """A station: code, readable name, state (may be empty), coordinates, how they were found, and
    the city it serves where that is not the nearest one (`serves`, else None)."""

    code: str
    name: str
    state: str | None
    lat: float
    lon: float
    position: str
    serves: str | None


class RealTrain(NamedTuple):
    """A real train: the stops (station codes) in order, run days at the first stop (Mon..Sun 1/0),
    duration and distance from the first to the last stop, the return working (None: none)."""

    number: str
    name: str
    source_name: str
    type: str
    stops: tuple[str, ...]
    run_days: str
    duration_min: int
    distance_km: int
    pair: str | None


class TimingFact(NamedTuple):
    """A published time of a well-known train: its departure from its first stop (`dep`) or its
    arrival at a named stop (`arr`)."""

    number: str
    station: str
    event: str
    time: str
    train: str


def _root(root: Path | None) -> Path:
    return sources.SOURCES_DIR if root is None else root


def _train_number(cell: str) -> str:
    if len(cell) != 5 or not cell.isdigit():
        raise ValueError("not a five-digit train number")
    return cell


def _optional_train_number(cell: str) -> str | None:
    return _train_number(cell) if cell else None


def _one_of(values: tuple[str, ...]) -> sources.Parser:
    def parse(cell: str) -> str:
        if cell not in values:
            raise ValueError(f"not one of {', '.join(values)}")
        return cell
    return parse


def _positive(cell: str) -> int:
    value = integer(cell)
    if value <= 0:
        raise ValueError("not positive")
    return value


def _latitude(cell: str) -> float:
    value = number(cell)
    if not 5.0 <= value <= 38.0:
        raise ValueError("not a latitude in India")
    return value


def _longitude(cell: str) -> float:
    value = number(cell)
    if not 67.0 <= value <= 98.0:
        raise ValueError("not a longitude in India or its neighbours")
    return value


def read_stations(root: Path | None = None) -> dict[str, Station]:
    """The stations of `rail/stations.csv` by code."""
    rows = sources.read_source(STATIONS_FILE, {
        "code": text, "name": text, "state": optional_text, "lat": _latitude, "lon": _longitude,
        "position": _one_of(POSITIONS), "serves": optional_text}, root=_root(root))
    out: dict[str, Station] = {}
    for i, row in enumerate(rows, 1):
        if row["code"] in out:
            raise SourceError(f"{_root(root).name}/{STATIONS_FILE}, row {i}: station {row['code']} listed twice")
        out[row["code"]] = Station(**row)
    return out


def read_trains(stations: dict[str, Station], root: Path | None = None) -> list[RealTrain]:
    """The trains of `rail/trains.csv` and then of `rail/added_trains.csv`, each stop a station of
    `stations`, each number listed once over both files."""
    parsers: dict[str, sources.Parser] = {
        "number": _train_number, "name": text, "source_name": text, "type": _one_of(TRAIN_TYPES),
        "stops": words, "run_days": weekdays, "duration_min": _positive, "distance_km": _positive,
        "pair": _optional_train_number}
    seen: set[str] = set()
    trains: list[RealTrain] = []
    for file, columns in ((TRAINS_FILE, parsers), (ADDED_TRAINS_FILE, {**parsers, "basis": text})):
        rows = sources.read_source(file, columns, root=_root(root))
        for i, row in enumerate(rows, 1):
            where = f"{_root(root).name}/{file}, row {i}"
            if row["number"] in seen:
                raise SourceError(f"{where}: train {row['number']} listed twice "
                                  f"(in {TRAINS_FILE} or {ADDED_TRAINS_FILE})")
            seen.add(row["number"])
            unknown = [code for code in row["stops"] if code not in stations]
            if unknown:
                raise SourceError(f"{where}, column 'stops': station {unknown[0]} is not in {STATIONS_FILE}")
            if len(row["stops"]) < 2:
                raise SourceError(f"{where}, column 'stops': a train needs at least two stops")
            row.pop("basis", None)
            trains.append(RealTrain(**row))
    return trains


def read_timings(trains: list[RealTrain], root: Path | None = None) -> list[TimingFact]:
    """The timetable facts of `rail/timings.csv`, each naming a train and one of its stops."""
    rows = sources.read_source(TIMINGS_FILE, {"number": _train_number, "station": text,
                                              "event": _one_of(("dep", "arr")), "time": hhmm, "train": text},
                               root=_root(root))
    stops = {t.number: t.stops for t in trains}
    for i, row in enumerate(rows, 1):
        where = f"{_root(root).name}/{TIMINGS_FILE}, row {i}"
        if row["number"] not in stops:
            raise SourceError(f"{where}: train {row['number']} is not in {TRAINS_FILE} or {ADDED_TRAINS_FILE}")
        if row["station"] not in stops[row["number"]]:
            raise SourceError(f"{where}: train {row['number']} does not call at {row['station']}")
        if row["event"] == "dep" and row["station"] != stops[row["number"]][0]:
            raise SourceError(f"{where}: a departure fact is for the train's first stop "
                              f"{stops[row['number']][0]}, not {row['station']}")
    return [TimingFact(**row) for row in rows]


class RailSource(NamedTuple):
    """The vendored railway: stations by code, trains in order of number, timetable facts."""

    stations: dict[str, Station]
    trains: list[RealTrain]
    timings: list[TimingFact]


def read_rail(root: Path | None = None) -> RailSource:
    """Every vendored railway file, cross-checked (stops are stations, facts name real stops)."""
    stations = read_stations(root)
    trains = read_trains(stations, root)
    return RailSource(stations, trains, read_timings(trains, root))
