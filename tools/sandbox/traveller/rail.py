"""Traveller figures of the trains table (see `__init__.py`); each names its target's source.

A figure about named cities is left out when the database lacks one of them. Definitions:

- trains a day from A to B (`ROUTES_A_DAY`): over the distinct train numbers with a row from A to
  B, the sum of the weekdays each runs divided by 7: Delhi -> Chandigarh >= 5, Kolkata -> Patna
  >= 5, Kochi (Ernakulam) -> Thiruvananthapuram >= 10, Mumbai -> Surat 20-80 (tens a day); source:
  Indian Railways' timetable, trains between the cities' stations (NTES / IRCTC listings, 2024);
- trains a day on short busy routes (`SHORT_ROUTES`), counted the same way: Mumbai -> Pune >= 40,
  Delhi -> Jaipur >= 25, Bengaluru -> Hyderabad >= 10 (the same timetable, intercity, passenger and
  MEMU services included). **A known shortfall** (`Figure.shortfall`, printed "short", not FAIL):
  the sandbox has 25, 14 and 6, because the CC0 source lists the long-distance trains but few of
  those services, and no open source with a usable licence adds them (docs/DATA.md, "Trains" under
  "How the sandbox is built");
- fastest Delhi -> Agra, the shortest `duration_min` of a row, 1 h 35 - 1 h 45 (the Gatimaan
  Express, Hazrat Nizamuddin 08:10 - Agra Cantt 09:50); fastest Delhi -> Mumbai 15-17 h (the
  Mumbai Rajdhani, 15 h 30 - 15 h 40); fastest Delhi -> Bhopal 7 h 30 - 8 h 00 (the Rani
  Kamlapati - Hazrat Nizamuddin Vande Bharat of `rail/added_trains.csv`, 7 h 30 up and 7 h 45
  down; 8 h 40 before generator 12, when the source's Shatabdi was the fastest); fastest on four
  more trunk routes, all within Indian
  Railways' fastest train's time and a margin: Delhi -> Kolkata 16-20 h (Howrah Rajdhani about
  17), Delhi -> Bengaluru 30-36 h (Bengaluru Rajdhani about 33.5), Chennai -> Hyderabad 10-14 h
  (about 12-13), Mumbai -> Pune 2.5-3.5 h (about 3 over the Bhor Ghat);
- trains at Darjeeling other than the toy train (type "Toy Train" in `tools/india/rail/trains.csv`:
  the Darjeeling Himalayan Railway's 2 ft gauge, the only line to Darjeeling) = 0, with at least one
  toy train;
- station names of the trains table found in Indian Railways' station list as vendored
  (`tools/india/rail/stations.csv`: datameet/railways and BhanuTeella/Indian-Railways-Data names) =
  100 %;
- the main stations travellers know under their cities (`MAIN_STATIONS`: New Delhi in Delhi,
  Howrah Junction in Kolkata, Chhatrapati Shivaji Maharaj Terminus in Mumbai, Chennai Central,
  Varanasi Junction, Agra Cantt, New Jalpaiguri Junction in Siliguri, Jammu Tawi), all present;
- trains named Rajdhani between Delhi and Udaipur or Jodhpur (`NO_RAJDHANI`; no Rajdhani runs
  there: Rajasthan's Rajdhanis are the Ahmedabad one through Jaipur and Ajmer and the Mumbai ones
  through Kota) = 0 (2 before generator 12: the Rajasthan Humsafar and the Rajasthan Sampark Kranti,
  whose source names begin "RAJ"), and the trains typed Rajdhani with a terminus in Delhi = 100 %
  (Indian Railways: every Rajdhani Express runs from Delhi);
- train numbers that are real trains of the source with their real name (`tools/india/rail/
  trains.csv`, from BhanuTeella/Indian-Railways-Data, and `added_trains.csv`) = 100 %;
- train rows at towns without a passenger railway (`NO_RAILWAY`: Leh, Manali, Gangtok, Shillong,
  Kohima, Imphal, Pithampur; Indian Railways' network map, 2024) = 0.
"""

from __future__ import annotations

from collections import defaultdict

from utp_env.tools.database import Database
from utp_env.tools.india.rail_facts import RealTrain, read_rail
from utp_env.tools.sandbox.traveller.figure import Figure

TIMETABLE = "Indian Railways timetable, trains between the cities' stations (NTES / IRCTC listings, 2024)"
# (origin, destination, least, most trains a day; None: no upper bound)
ROUTES_A_DAY: tuple[tuple[str, str, float, float | None], ...] = (
    ("Delhi", "Chandigarh", 5.0, None), ("Kolkata", "Patna", 5.0, None), ("Kochi", "Thiruvananthapuram", 10.0, None),
    ("Mumbai", "Surat", 20.0, 80.0),
)
# (origin, destination, least trains a day) on short busy routes the source is known to be short on
SHORT_ROUTES: tuple[tuple[str, str, float], ...] = (
    ("Mumbai", "Pune", 40.0), ("Delhi", "Jaipur", 25.0), ("Bengaluru", "Hyderabad", 10.0),
)
SOURCE_SHORTFALL = ("the CC0 source lists long-distance trains but few intercity, passenger and MEMU services, "
                    "and no open source with a usable licence has them (docs/DATA.md)")
NO_RAJDHANI: tuple[tuple[str, str], ...] = (("Delhi", "Udaipur"), ("Delhi", "Jodhpur"))
DELHI = "Delhi"
RAJDHANI = "Rajdhani"
# (origin, destination, least hours, most hours, the fastest train as publicly listed)
FASTEST: tuple[tuple[str, str, float, float, str], ...] = (
    ("Delhi", "Agra", 95 / 60, 105 / 60, "12050 Gatimaan Express, Hazrat Nizamuddin 08:10 - Agra Cantt 09:50"),
    ("Delhi", "Mumbai", 15.0, 17.0, "12951/12952 Mumbai Rajdhani Express, 15 h 32 - 15 h 40"),
    ("Delhi", "Bhopal", 7.5, 8.0, "20171/20172 Rani Kamlapati - Hazrat Nizamuddin Vande Bharat, 7 h 30 - 7 h 45"),
)
TRUNK_FASTEST: tuple[tuple[str, str, float, float], ...] = (
    ("Delhi", "Kolkata", 16.0, 20.0), ("Delhi", "Bengaluru", 30.0, 36.0), ("Chennai", "Hyderabad", 10.0, 14.0),
    ("Mumbai", "Pune", 2.5, 3.5),
)
MAIN_STATIONS: dict[str, str] = {
    "Delhi": "New Delhi", "Kolkata": "Howrah Junction", "Mumbai": "Chhatrapati Shivaji Maharaj Terminus",
    "Chennai": "Chennai Central", "Varanasi": "Varanasi Junction", "Agra": "Agra Cantt",
    "Siliguri": "New Jalpaiguri Junction", "Jammu": "Jammu Tawi",
}
NO_RAILWAY = ("Leh", "Manali", "Gangtok", "Shillong", "Kohima", "Imphal", "Pithampur")
TOY_TRAIN = "Toy Train"


def _hours(minutes: float) -> str:
    return f"{int(minutes // 60)} h {int(minutes % 60):02d}"


def figures(db: Database) -> list[Figure]:
    """The rail figures of `db`."""
    t = db.tables["trains"].columns
    present = set(db.cities)
    source = read_rail()
    real = {train.number: train for train in source.trains}
    days: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    fastest: dict[tuple[str, str], int] = {}
    stations: dict[str, set[str]] = defaultdict(set)
    for num, o, d, so, sd, run, minutes in zip(t["train_number"], t["origin_city"], t["dest_city"],
                                               t["origin_station"], t["dest_station"], t["run_days"],
                                               t["duration_min"], strict=True):
        days[(o, d)][num] = run.count("1")
        fastest[(o, d)] = min(int(minutes), fastest.get((o, d), int(minutes)))
        stations[o].add(so)
        stations[d].add(sd)
    out: list[Figure] = []
    for a, b, low, high in ROUTES_A_DAY:
        if {a, b} <= present:
            value = sum(days.get((a, b), {}).values()) / 7.0
            target = f">= {low:g}" if high is None else f"{low:g}-{high:g}"
            out.append(Figure(name=f"trains a day {a} -> {b}", value=round(value, 1), target=target, source=TIMETABLE,
                              passed=value >= low and (high is None or value <= high)))
    for a, b, least in SHORT_ROUTES:
        if {a, b} <= present:
            value = sum(days.get((a, b), {}).values()) / 7.0
            out.append(Figure(name=f"trains a day {a} -> {b}", value=round(value, 1), target=f">= {least:g}",
                              source=TIMETABLE, passed=value >= least, shortfall=SOURCE_SHORTFALL))
    for a, b, low, high, train in FASTEST:
        if {a, b} <= present:
            best = fastest.get((a, b))
            ok = best is not None and low <= best / 60.0 <= high
            out.append(Figure(name=f"fastest train {a} -> {b}", value="none" if best is None else _hours(best),
                              target=f"{_hours(low * 60)} - {_hours(high * 60)}", passed=ok,
                              source=f"Indian Railways timetable: {train}"))
    trunk = [(a, b, low, high) for a, b, low, high in TRUNK_FASTEST if {a, b} <= present]
    if trunk:
        values = [fastest.get((a, b)) for a, b, _, _ in trunk]
        ok = all(v is not None and low <= v / 60.0 <= high for v, (_, _, low, high) in zip(values, trunk, strict=True))
        text = ", ".join(f"{a}-{b} {'none' if v is None else f'{v / 60:.1f}'}"
                         for v, (a, b, _, _) in zip(values, trunk, strict=True))
        out.append(Figure(name="fastest trains on trunk routes (h)", value=text, passed=ok,
                          target=", ".join(f"{a}-{b} {low:g}-{high:g}" for a, b, low, high in trunk),
                          source="Indian Railways timetable: the Howrah and Bengaluru Rajdhanis, Chennai-Hyderabad "
                                 "Superfasts, Mumbai-Pune over the Bhor Ghat"))
    if "Darjeeling" in present:
        at = {num for num, o, d in zip(t["train_number"], t["origin_city"], t["dest_city"], strict=True)
              if "Darjeeling" in (o, d)}
        broad = sum(1 for num in at if num in real and real[num].type != TOY_TRAIN)
        toy = len(at) - broad
        out.append(Figure(name="trains at Darjeeling other than the toy train (toy trains)", value=f"{broad} ({toy})",
                          target="= 0 (toy trains >= 1)", passed=broad == 0 and toy >= 1,
                          source="Darjeeling Himalayan Railway (UNESCO World Heritage): the only line to Darjeeling, "
                                 "2 ft gauge from New Jalpaiguri"))
    known = {s.name for s in source.stations.values()}
    names = set().union(*stations.values()) if stations else set()
    listed = sum(name in known for name in names)
    out.append(Figure(name="station names in Indian Railways' station list", value=f"{listed}/{len(names)}",
                      target="100%", passed=bool(names) and listed == len(names),
                      source="datameet/railways stations.json, BhanuTeella/Indian-Railways-Data (CC0)"))
    main = {c: s for c, s in MAIN_STATIONS.items() if c in present}
    if main:
        found = sum(s in stations.get(c, set()) for c, s in main.items())
        out.append(Figure(name="main stations under their cities", value=f"{found}/{len(main)}",
                          target=f"= {len(main)}", passed=found == len(main),
                          source="Indian Railways: New Delhi, Howrah Junction, CSMT, Chennai Central, Varanasi "
                                 "Junction, Agra Cantt, New Jalpaiguri Junction, Jammu Tawi"))
    out.extend(_rajdhanis(db, present, real, {code: s.name for code, s in source.stations.items()}))
    numbers = set(t["train_number"])
    name_of = dict(zip(t["train_number"], t["train_name"], strict=True))
    genuine = sum(1 for num in numbers if num in real and real[num].name == name_of[num])
    out.append(Figure(name="train numbers that are real trains with their name", value=f"{genuine}/{len(numbers)}",
                      target="100%", passed=bool(numbers) and genuine == len(numbers),
                      source="BhanuTeella/Indian-Railways-Data trains_dict.json (CC0), 2,858 trains, "
                             "and tools/india/rail/added_trains.csv"))
    towns = [c for c in NO_RAILWAY if c in present]
    if towns:
        served = sum(1 for o, d in zip(t["origin_city"], t["dest_city"], strict=True) if o in towns or d in towns)
        out.append(Figure(name="train rows at towns without a railway", value=served, target="= 0", passed=served == 0,
                          source=f"Indian Railways network map, 2024: no passenger station at {', '.join(towns)}"))
    return out


def _rajdhanis(db: Database, present: set[str], real: dict[str, RealTrain],
               station_name: dict[str, str]) -> list[Figure]:
    """Trains named Rajdhani on the `NO_RAJDHANI` routes, and the Rajdhanis whose first or last stop
    lies in Delhi (a Rajdhani row boarding or alighting at its terminus in Delhi)."""
    t = db.tables["trains"].columns
    out: list[Figure] = []
    routes = [pair for pair in NO_RAJDHANI if set(pair) <= present]
    if routes:
        wrong = {num for num, name, o, d in zip(t["train_number"], t["train_name"], t["origin_city"], t["dest_city"],
                                                strict=True)
                 if RAJDHANI in name and any({o, d} == set(pair) for pair in routes)}
        out.append(Figure(name=f"trains named Rajdhani {', '.join(f'{a}-{b}' for a, b in routes)}",
                          value=len(wrong), target="= 0", passed=not wrong,
                          source="Indian Railways' Rajdhani Express list: none runs to Udaipur or Jodhpur"))
    if DELHI in present:
        rajdhanis: set[str] = set()
        at_delhi: set[str] = set()
        for num, o, d, so, sd in zip(t["train_number"], t["origin_city"], t["dest_city"], t["origin_station"],
                                     t["dest_station"], strict=True):
            train = real.get(num)
            if train is None or train.type != RAJDHANI:
                continue
            rajdhanis.add(num)
            if (o == DELHI and so == station_name[train.stops[0]]) or \
                    (d == DELHI and sd == station_name[train.stops[-1]]):
                at_delhi.add(num)
        if rajdhanis:
            out.append(Figure(name="Rajdhanis with a terminus in Delhi", value=f"{len(at_delhi)}/{len(rajdhanis)}",
                              target="100%", passed=at_delhi == rajdhanis,
                              source="Indian Railways: every Rajdhani Express runs from Delhi"))
    return out

