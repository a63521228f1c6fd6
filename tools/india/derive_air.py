"""Derive `tools/india/air/routes.csv`, India's domestic airport pairs with scheduled service, from
the OpenFlights route database and the stated updates. Run by hand; the sandbox build never runs it.

    python -m utp_env.tools.india.derive_air RAW_DIR

RAW_DIR holds `routes.dat` and `airports.dat` of `jpatokal/openflights` (folder `data/`, commit
5a03602; also accepted as `of_routes.dat`, `of_airports.dat`). The route table is a snapshot of
2014 (OpenFlights' route source stopped updating in June 2014), so the rule is:

1. an Indian domestic pair is an unordered pair of airports both in India (OpenFlights
   `airports.dat` country) with a `routes.dat` row between them in either direction;
   `carriers_2014` lists the airline codes of those rows (codeshares included);
2. a pair listed in one direction only (a leg of a 2014 triangle service: Agra -> Khajuraho ->
   Varanasi, Mumbai -> Diu -> Porbandar) is dropped;
3. a pair whose 2014 carriers have all stopped flying (status `ceased` or `merged` in
   `air/carriers.csv`: Jet Airways, JetKonnect, Go First ...) is dropped;
4. the changes of `air/updates.csv` apply, each with its fact and its kind of source: `move A B`
   replaces airport A by B in every pair (Rajkot RAJ -> Hirasar HSR, 2023); `keep A B` keeps a
   pair that rule 2 or 3 would drop, as it is flown today; `add A B` adds a pair flown today that
   the 2014 table lacks (airports opened since: Mopa, Ayodhya, Deoghar ...; routes opened since);
5. every airport of the result must be an Indian airport of `airportsdata` (the package the
   build reads coordinates and cities from) and have a row in `air/airports.csv`.

`basis` says which rule gave each pair. The result is sorted by (airport_a, airport_b) with
airport_a < airport_b, and its row count and SHA-256 are recorded in `air/SOURCE.json`.
"""

from __future__ import annotations

import csv
import io
import sys
from collections import defaultdict
from pathlib import Path

from utp_env.tools.atomic import write_text_atomic
from utp_env.tools.india.air_facts import read_airports, read_carriers, read_updates
from utp_env.tools.india.sources import SOURCES_DIR, update_record

ROUTES = "air/routes.csv"
COLUMNS = ("airport_a", "airport_b", "carriers_2014", "basis")
CHANGES = ("move", "keep", "add")


def _raw(raw_dir: Path, name: str) -> Path:
    for candidate in (raw_dir / name, raw_dir / f"of_{name}"):
        if candidate.is_file():
            return candidate
    raise SystemExit(f"{raw_dir}: neither {name} nor of_{name} (OpenFlights data/{name}) is there")


def indian_airports(airports_dat: Path) -> set[str]:
    """IATA codes of the airports OpenFlights places in India."""
    with airports_dat.open(encoding="utf-8", newline="") as handle:
        return {row[4] for row in csv.reader(handle) if len(row) > 4 and row[3] == "India" and len(row[4]) == 3}


def domestic_routes(routes_dat: Path, india: set[str]) -> dict[tuple[str, str], set[str]]:
    """Directed (origin, destination) -> airline codes of the routes between Indian airports."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    with routes_dat.open(encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.reader(handle), 1):
            if len(row) != 9:
                raise SystemExit(f"{routes_dat}, line {number}: {len(row)} fields where routes.dat has 9")
            airline, origin, dest = row[0], row[2], row[4]
            if origin in india and dest in india and origin != dest:
                out[(origin, dest)].add(airline)
    return out


def derive(raw_dir: Path, root: Path | None = None) -> list[dict[str, str]]:
    """The rows of `air/routes.csv` (rules 1-5 of the module docstring), with the facts of `root`
    (`tools/india/` by default)."""
    directed = domestic_routes(_raw(raw_dir, "routes.dat"), indian_airports(_raw(raw_dir, "airports.dat")))
    gone = {c.code for c in read_carriers(root) if not c.flying}
    pairs: dict[tuple[str, str], set[str]] = defaultdict(set)
    both_ways: dict[tuple[str, str], bool] = {}
    for (o, d), airlines in directed.items():
        key = (min(o, d), max(o, d))
        pairs[key] |= airlines
        both_ways[key] = (d, o) in directed
    updates = read_updates(root)
    unknown = sorted({u.change for u in updates} - set(CHANGES))
    if unknown:
        raise SystemExit(f"air/updates.csv: unknown change(s) {unknown}; use one of {', '.join(CHANGES)}")
    moves = {u.airport_a: u.airport_b for u in updates if u.change == "move"}
    keep = {(min(u.airport_a, u.airport_b), max(u.airport_a, u.airport_b)) for u in updates if u.change == "keep"}
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for key in sorted(pairs):
        carriers = pairs[key]
        one_way = not both_ways[key]
        only_gone = carriers <= gone
        if (one_way or only_gone) and key not in keep:
            continue
        a, b = (moves.get(x, x) for x in key)
        basis = "OpenFlights 2014"
        if key in keep:
            basis += ", one way only" if one_way else ", ceased carriers only"
            basis += "; kept (updates.csv)"
        if (a, b) != key:
            basis += f"; {', '.join(f'{x} moved to {moves[x]}' for x in key if x in moves)} (updates.csv)"
        a, b = min(a, b), max(a, b)
        rows[(a, b)] = {"airport_a": a, "airport_b": b, "carriers_2014": "|".join(sorted(carriers)), "basis": basis}
    stale = keep - set(pairs)
    if stale:
        raise SystemExit(f"air/updates.csv: 'keep' of pairs the 2014 table lacks: {sorted(stale)} (use 'add')")
    for u in updates:
        if u.change != "add":
            continue
        key = (min(u.airport_a, u.airport_b), max(u.airport_a, u.airport_b))
        if key in rows:
            raise SystemExit(f"air/updates.csv: 'add {key[0]} {key[1]}' is already in the 2014 table (drop the row)")
        rows[key] = {"airport_a": key[0], "airport_b": key[1], "carriers_2014": "", "basis": "added (updates.csv)"}
    _check_airports(rows, root)
    return [rows[k] for k in sorted(rows)]


def _check_airports(rows: dict[tuple[str, str], dict[str, str]], root: Path | None) -> None:
    import airportsdata

    known = {code for code, a in airportsdata.load("IATA").items() if a["country"] == "IN"}
    listed = {a.iata for a in read_airports(root)}
    used = {code for key in rows for code in key}
    if used - known:
        raise SystemExit(f"airports not in airportsdata as Indian: {sorted(used - known)}")
    if used - listed:
        raise SystemExit(f"air/airports.csv lacks the airports {sorted(used - listed)}: add their traffic")
    if listed - used:
        raise SystemExit(f"air/airports.csv lists airports no pair uses: {sorted(listed - used)}: remove them")


def write_routes(rows: list[dict[str, str]], root: Path = SOURCES_DIR) -> Path:
    """Write `air/routes.csv` atomically (LF line ends) and record its rows and hash."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path = root / ROUTES
    write_text_atomic(path, buffer.getvalue())
    update_record(ROUTES, root)
    return path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m utp_env.tools.india.derive_air RAW_DIR (with OpenFlights routes.dat, airports.dat)",
              file=sys.stderr)
        return 2
    rows = derive(Path(args[0]))
    path = write_routes(rows)
    kinds: dict[str, int] = defaultdict(int)
    for row in rows:
        kinds[row["basis"].split(";")[0].split(",")[0]] += 1
    print(f"{path}: {len(rows)} pairs ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
