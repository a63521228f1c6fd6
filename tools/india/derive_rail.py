"""Derive the compact railway sources in `tools/india/rail/` from the raw open data (run by hand;
the sandbox build never runs it, it reads the derived files through `tools/india/sources.py`).

    python -m utp_env.tools.india.derive_rail RAW_DIR

RAW_DIR holds `trains_dict.json` and `stations_dict.json` of `BhanuTeella/Indian-Railways-Data`
(commit 31b2e1e, CC0 1.0) and `stations.json` of `datameet/railways` (commit e0c538a, CC0). The
raw dumps are not vendored; the rules below make the derived files checkable against them.

`trains.csv`, one row per train of `trains_dict.json` (all 2,858; none dropped):

- `number`, `pair` (the return working's number; empty for "No Pair"), `stops` (the ordered
  station codes of `Stations`, space-separated), `run_days` (`Runs_on` as Mon..Sun 1/0 at the
  first stop), `duration_min` (`Duration` "HH:MM", hours may exceed 24), `distance_km`
  (`Distance`), all as in the source;
- `source_name`: `Train_name` as in the source (Indian Railways' abbreviated form, e.g.
  "NDLS TEJAS RAJ", "LTT PURI EXP");
- `name`: `source_name` made readable by `readable_train_name`: each word that is an Indian
  Railways abbreviation listed in `TRAIN_WORDS` is spelled out ("EXP" Express, "SF" Superfast,
  "RAJ" Rajdhani, "JANSHTABDI" Jan Shatabdi, "S KRNTI" Sampark Kranti ...), except that a
  first word naming the state the train serves is that state ("RAJ S KRNTI EXP" is the Rajasthan
  Sampark Kranti, not a Rajdhani: `STATE_FIRST_WORDS`) and a word that is the code of one of
  the train's own stops becomes that station's readable name without "Junction" ("NDLS" New
  Delhi, "LTT" Lokmanya Tilak Terminus, "DD" Daund), the other words are title-cased (a word without a vowel, such as
  "KSR", "IRCTC", stays upper case), and a name ending in a train-type word ("Rajdhani",
  "Shatabdi", "Superfast", "Vande Bharat" ...: `ADD_EXPRESS_AFTER`) gets "Express", as Indian
  Railways' full names have it ("NDLS TEJAS RAJ" -> "New Delhi Tejas Rajdhani Express");
- `type`: `train_type`, from the name's words as `spelled_words` spells them (the same words as the
  readable name) and the number, in this order: Gatimaan, Vande
  Bharat, Rajdhani (also a Tejas Rajdhani, and a Tejas running over 12 h: Indian Railways runs its
  sleeper Tejas rakes only as Rajdhanis), Tejas, Jan Shatabdi, Shatabdi (also Swarna Shatabdi; not
  the sleeper "Trishatabdi"), Duronto, Humsafar, Garib Rath, Double Decker (also Uday), Intercity,
  Toy Train (the 5xxxx numbers: in this source all of them are the narrow-gauge hill trains of the
  Kalka-Shimla and Darjeeling Himalayan railways), Superfast (a 12xxx, 20xxx or 22xxx number, or an
  "SF" word: Indian Railways' numbering of superfast trains), Mail (a "MAIL" word), else Express.

`stations.csv`, one row per station code the trains use: `code`; `name`, readable by
`readable_station_name` (the source's abbreviated name title-cased with "JN" Junction, "CNTL",
"CTL" Central, "RD" Road, a final "T"/"TRM"/"TERM" Terminus, a gauge word "BG"/"MG"/"NG"
dropped; BhanuTeella's current name, or datameet's where BhanuTeella's fills its 15-character
field and datameet's is longer and begins with the same word), or the `name` given in
`station_fixes.csv`; `state` (datameet's, may be empty); `lat`, `lon` and `position`, how the
coordinates were found: `datameet` (its GeoJSON point), `same_as` (a station renamed since
datameet's 2016 data, or a new terminal on the same site, takes the coordinates of the old code
`station_fixes.csv` names: Mughal Sarai MGS -> Pt. Deen Dayal Upadhyaya DDU, Jhansi JHS ->
Virangana Lakshmibai VGLB, Allahabad ALD -> Prayagraj PRYJ ...), `fixed` (coordinates given in
`station_fixes.csv`, from public maps), or `interpolated` (no coordinates anywhere: the midpoint of
its nearest located neighbours on the first train that calls at it, or the neighbour itself at a
terminus; used only to measure distances along a route, never to place the station in a city);
`serves`, the city a station serves although it lies outside it (`station_fixes.csv`: Karmali
serves Panaji, Howrah Junction Kolkata), else empty.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from utp_env.tools.atomic import write_text_atomic
from utp_env.tools.india.sources import (
    SOURCES_DIR,
    optional_number,
    optional_text,
    read_source,
    text,
    update_record,
)

RAIL_DIR = "rail"
TRAINS_FILE = f"{RAIL_DIR}/trains.csv"
STATIONS_FILE = f"{RAIL_DIR}/stations.csv"
FIXES_FILE = f"{RAIL_DIR}/station_fixes.csv"
FIXES_PARSERS = {"code": text, "name": optional_text, "same_as": optional_text, "lat": optional_number,
                 "lon": optional_number, "serves": optional_text, "basis": text}
TRAIN_COLUMNS = ("number", "name", "source_name", "type", "stops", "run_days", "duration_min", "distance_km",
                 "pair")
STATION_COLUMNS = ("code", "name", "state", "lat", "lon", "position", "serves")
WEEKDAY_KEYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
SOURCE_NAME_FIELD = 15  # BhanuTeella's station names are cut at 15 characters

# Indian Railways' abbreviations in train names -> the words they stand for.
TRAIN_WORDS: dict[str, str] = {
    "EXP": "Express", "EX": "Express", "EXPRES": "Express", "EXPRE": "Express", "EXPR": "Express",
    "SF": "Superfast", "SFAST": "Superfast", "SUF": "Superfast", "SUP": "Superfast", "FAST": "Fast",
    "SFEXP": "Superfast Express", "RAJ": "Rajdhani", "RAJDHNI": "Rajdhani", "SHTBDI": "Shatabdi",
    "SHATABADI": "Shatabdi", "SHATBDI": "Shatabdi", "SATABDI": "Shatabdi", "SHT": "Shatabdi",
    "JANSHATABDI": "Jan Shatabdi", "JANSHTABDI": "Jan Shatabdi", "JNSHTBDI": "Jan Shatabdi",
    "JANSHTBDI": "Jan Shatabdi", "JANSHTB": "Jan Shatabdi", "JANSATABDI": "Jan Shatabdi",
    "HUMSAFR": "Humsafar", "HUMSFAR": "Humsafar", "HMSFR": "Humsafar", "HUMSFR": "Humsafar",
    "HAMSAFAR": "Humsafar", "GARIBRATH": "Garib Rath", "VANDEBHARAT": "Vande Bharat",
    "INTRCITY": "Intercity", "INTRCT": "Intercity", "DBLDECK": "Double Decker", "SMPRK": "Sampark",
    "SAMPRK": "Sampark", "KRNTI": "Kranti", "WKLY": "Weekly", "SPL": "Special", "PASS": "Passenger",
    "DLX": "Deluxe", "RJSTHN": "Rajasthan", "MAHMANA": "Mahamana", "SHKTI": "Shakti", "CHAMPRN": "Champaran",
    "SATYGRH": "Satyagrah", "PORVOTR": "Poorvottar", "SANTINIKETN": "Santiniketan", "GUJRAT": "Gujarat",
    "STMJOYRIDEVISTA": "Steam Joyride Vistadome", "VISTAD": "Vistadome", "HIMALYAN": "Himalayan",
    "SHIVALK": "Shivalik", "AC": "AC", "IRCTC": "IRCTC", "DD": "Double Decker",
    "SIKKIMMAHANANDA": "Sikkim Mahananda", "SKRANTI": "Sampark Kranti", "AK": "August Kranti",
    "KARNTK": "Karnataka", "KERLA": "Kerala", "MHRST": "Maharashtra",
}
# Two-word abbreviations: "S F" is Superfast, "S KRANTI" / "SMPRK K" Sampark Kranti.
TRAIN_WORD_PAIRS: dict[tuple[str, str], str] = {
    ("S", "F"): "Superfast", ("S", "KRANTI"): "Sampark Kranti", ("S", "KRNTI"): "Sampark Kranti",
    ("SMPRK", "K"): "Sampark Kranti", ("SAMPARK", "K"): "Sampark Kranti", ("SMPRK", "KRANTI"): "Sampark Kranti",
}
# A name's first word that names the state the train serves, where the same letters mean a train
# type elsewhere: "RAJ" opening a name is Rajasthan ("RAJ S KRNTI EXP", the Rajasthan Sampark
# Kranti, whose return working is "RJSTHN S KRANTI"; "RAJ HUMSAFAR EXP", the Rajasthan Humsafar),
# while a Rajdhani's "RAJ" follows its terminus ("NDLS TEJAS RAJ"). No Rajdhani's name begins with it.
STATE_FIRST_WORDS: dict[str, str] = {"RAJ": "Rajasthan"}
# Names ending in one of these get "Express", as Indian Railways' full names have it.
ADD_EXPRESS_AFTER = ("Rajdhani", "Shatabdi", "Superfast", "Bharat", "Tejas", "Gatimaan", "Duronto", "Humsafar",
                     "Rath", "Intercity", "Kranti", "Decker", "AC", "Sampark")
# Station-name abbreviations.
STATION_WORDS: dict[str, str] = {"JN": "Junction", "JN.": "Junction", "CNTL": "Central", "CTL": "Central",
                                 "CNL": "Central", "RD": "Road", "RD.": "Road", "CANTT": "Cantt",
                                 "CANTT.": "Cantt", "CANT": "Cantt", "NGR": "Nagar", "HLT": "Halt", "(H)": "Halt"}
TERMINUS_WORDS = frozenset({"T", "TRM", "TERM", "TERMINUS"})
GAUGE_WORDS = frozenset({"BG", "MG", "NG"})
LONG_DAY_TRAIN_H = 12  # a Tejas running longer is a sleeper Tejas Rajdhani
SUPERFAST_SERIES = ("12", "20", "22")


def _title(word: str) -> str:
    """A title-cased word; one without a vowel (an acronym such as KSR, MGR, IRCTC) stays upper case."""
    letters = [c for c in word if c.isalpha()]
    if letters and not any(c in "AEIOUaeiou" for c in letters):
        return word.upper()
    return "-".join(part[:1].upper() + part[1:].lower() for part in word.split("-"))


def readable_station_name(current: str, older: str | None) -> str:
    """The readable form of a station's abbreviated source name (see the module docstring)."""
    base = current.strip().rstrip(".")
    if older and len(base) >= SOURCE_NAME_FIELD and len(older.strip()) > len(base) \
            and older.split()[0].upper() == base.split()[0].upper():
        base = older.strip()
    words = base.upper().replace(".", ". ").split()
    out: list[str] = []
    for i, word in enumerate(words):
        last = i == len(words) - 1
        if word in GAUGE_WORDS and i > 0:
            continue
        if word.rstrip(".") in TERMINUS_WORDS and last and i > 0:
            out.append("Terminus")
        elif word in STATION_WORDS:
            out.append(STATION_WORDS[word])
        else:
            out.append(_title(word.rstrip(".")) if word.endswith(".") and len(word) > 2 else _title(word))
    return " ".join(w for w in out if w)


def _short_station(name: str) -> str:
    """A station's name as a word of a train name: without "Junction"."""
    return " ".join(w for w in name.split() if w != "Junction")


def spelled_words(source_name: str, stop_names: dict[str, str]) -> list[str]:
    """The words of a train's abbreviated source name spelled out: a two-word abbreviation
    (`TRAIN_WORD_PAIRS`), a state opening the name (`STATE_FIRST_WORDS`), the code of one of the
    train's own stops (`stop_names`: its readable station name without "Junction"), an Indian
    Railways abbreviation (`TRAIN_WORDS`), else the word title-cased. The readable name and the
    train type both read these words, so a name and its type cannot disagree."""
    words = source_name.split()
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        pair = (word, words[i + 1]) if i + 1 < len(words) else ("", "")
        if pair in TRAIN_WORD_PAIRS:
            out.append(TRAIN_WORD_PAIRS[pair])
            i += 2
            continue
        if i == 0 and word in STATE_FIRST_WORDS and len(words) > 1:
            out.append(STATE_FIRST_WORDS[word])
        elif word in stop_names:
            out.append(_short_station(stop_names[word]))
        elif word in TRAIN_WORDS:
            out.append(TRAIN_WORDS[word])
        else:
            out.append(_title(word))
        i += 1
    return out


def readable_train_name(source_name: str, stop_names: dict[str, str]) -> str:
    """The readable form of a train's abbreviated source name; `stop_names` maps the codes of the
    train's own stops to their readable station names (see the module docstring)."""
    name = " ".join(spelled_words(source_name, stop_names))
    if name.split()[-1] in ADD_EXPRESS_AFTER:
        name += " Express"
    return name


def train_type(number: str, source_name: str, duration_min: int) -> str:
    """The train type from the source name's words and the number (see the module docstring)."""
    words = source_name.upper().split()
    joined = " ".join(words)
    readable = " ".join(spelled_words(" ".join(words), {}))
    if "GATIMAAN" in words:
        return "Gatimaan"
    if "Vande Bharat" in readable or "VANDE BHARAT" in joined:
        return "Vande Bharat"
    if "Rajdhani" in readable or "RAJDHANI" in words:
        return "Rajdhani"
    if "TEJAS" in words:
        return "Rajdhani" if duration_min > LONG_DAY_TRAIN_H * 60 else "Tejas"
    if "Jan Shatabdi" in readable or ("JAN" in words and "SHATABDI" in words):
        return "Jan Shatabdi"
    if "Shatabdi" in readable.split() or "SHATABDI" in words:
        return "Shatabdi"
    if "DURONTO" in words:
        return "Duronto"
    if "Humsafar" in readable.split():
        return "Humsafar"
    if "Garib Rath" in readable or ("GARIB" in words and "RATH" in words):
        return "Garib Rath"
    if "Double Decker" in readable or ("DOUBLE" in words and "DECKER" in words) or "UDAY" in words:
        return "Double Decker"
    if "Intercity" in readable.split() or "INTERCITY" in words:
        return "Intercity"
    if number.startswith("5"):
        return "Toy Train"
    if number.startswith(SUPERFAST_SERIES) or "Superfast" in readable.split():
        return "Superfast"
    if "MAIL" in words:
        return "Mail"
    return "Express"


def _minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def derive_stations(trains: dict[str, Any], datameet: list[dict], current: dict[str, Any],
                    fixes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The station rows of every code the trains use, in order of first use."""
    points: dict[str, tuple[float, float]] = {}
    older: dict[str, dict] = {}
    for feature in datameet:
        props = feature["properties"]
        older[props["code"]] = props
        if feature["geometry"]:
            lon, lat = feature["geometry"]["coordinates"]
            points[props["code"]] = (float(lat), float(lon))
    fix = {row["code"]: row for row in fixes}
    order = list(dict.fromkeys(code for number in sorted(trains) for code in trains[number]["Stations"]))
    located: dict[str, tuple[tuple[float, float], str]] = {}
    for code in order:
        row = fix.get(code)
        if row and row["lat"] is not None and row["lon"] is not None:
            located[code] = ((row["lat"], row["lon"]), "fixed")
        elif row and row["same_as"]:
            if row["same_as"] not in points:
                raise ValueError(f"{FIXES_FILE}: {code}: same_as {row['same_as']} has no coordinates in datameet")
            located[code] = (points[row["same_as"]], "same_as")
        elif code in points:
            located[code] = (points[code], "datameet")
    for code in order:  # interpolate the rest between their located neighbours on the first train
        if code in located:
            continue
        stops = next(trains[n]["Stations"] for n in sorted(trains) if code in trains[n]["Stations"])
        i = stops.index(code)
        before = next((located[c][0] for c in reversed(stops[:i]) if c in located), None)
        after = next((located[c][0] for c in stops[i + 1 :] if c in located), None)
        near = [p for p in (before, after) if p is not None]
        if not near:
            raise ValueError(f"station {code}: no located station on its first train to interpolate from")
        located[code] = ((sum(p[0] for p in near) / len(near), sum(p[1] for p in near) / len(near)),
                         "interpolated")
    rows = []
    for code in order:
        (lat, lon), position = located[code]
        now = current.get(code, {}).get("Station_name") or (older.get(code) or {}).get("name") or code
        then = (older.get(code) or {}).get("name")
        given = fix.get(code, {}).get("name")
        rows.append({"code": code, "name": given or readable_station_name(now, then),
                     "state": (older.get(code) or {}).get("state") or "", "lat": f"{lat:.5f}", "lon": f"{lon:.5f}",
                     "position": position, "serves": fix.get(code, {}).get("serves") or ""})
    return rows


def derive_trains(trains: dict[str, Any], station_names: dict[str, str]) -> list[dict[str, Any]]:
    """The train rows, in order of number."""
    rows = []
    for number in sorted(trains):
        t = trains[number]
        stops = list(t["Stations"])
        duration = _minutes(t["Duration"])
        pair = "" if not str(t["Pair"]).isdigit() else str(t["Pair"])
        rows.append({
            "number": number,
            "name": readable_train_name(t["Train_name"], {c: station_names[c] for c in stops}),
            "source_name": " ".join(t["Train_name"].split()),
            "type": train_type(number, t["Train_name"], duration),
            "stops": " ".join(stops),
            "run_days": "".join(str(int(t["Runs_on"][d])) for d in WEEKDAY_KEYS),
            "duration_min": duration,
            "distance_km": int(t["Distance"]),
            "pair": pair,
        })
    return rows


def _csv(columns: Iterable[str], rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def derive(raw: Path, root: Path = SOURCES_DIR) -> tuple[int, int]:
    """Write `rail/trains.csv` and `rail/stations.csv` under `root` from the raw files in `raw` and
    record their row counts and hashes; returns (trains, stations)."""
    trains = json.loads((raw / "trains_dict.json").read_text(encoding="utf-8"))
    current = json.loads((raw / "stations_dict.json").read_text(encoding="utf-8"))
    datameet = json.loads((raw / "stations.json").read_text(encoding="utf-8"))["features"]
    fixes = read_source(FIXES_FILE, FIXES_PARSERS, root=root)
    stations = derive_stations(trains, datameet, current, fixes)
    names = {row["code"]: row["name"] for row in stations}
    rows = derive_trains(trains, names)
    write_text_atomic(root / STATIONS_FILE, _csv(STATION_COLUMNS, stations))
    write_text_atomic(root / TRAINS_FILE, _csv(TRAIN_COLUMNS, rows))
    update_record(STATIONS_FILE, root)
    update_record(TRAINS_FILE, root)
    return len(rows), len(stations)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0]).is_dir():
        print("usage: python -m utp_env.tools.india.derive_rail RAW_DIR (with trains_dict.json, stations_dict.json, "
              "stations.json)", file=sys.stderr)
        return 2
    n_trains, n_stations = derive(Path(args[0]))
    print(f"{TRAINS_FILE}: {n_trains:,} trains; {STATIONS_FILE}: {n_stations:,} stations")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
