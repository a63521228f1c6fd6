"""Lookup benchmark: the indexed lookup tools against pandas boolean-mask scans (target >= 100x).

The same seeded set of lookups (flights, trains and buses by city pair and date; stays,
attractions and restaurants by city and a filter) runs three ways on the same tables:

- `core`: the query function under each tool (city-name check, index lookup, filter, sort) ->
  row indices;
- `invoke`: the whole tool call an agent makes (argument validation, core, E[D], rendering of
  at most 20 rows, structured rows);
- `pandas`: a boolean mask over the whole DataFrame followed by the same filter and sort, as
  TravelPlanner's tools do. Weekday masks are precomputed as boolean columns, so the baseline
  is a fair, vectorised scan.

Both `core` and `pandas` must return the same rows in the same order (checked for every
lookup), and `invoke`'s rows must be the first rows of `core`. Each lookup is timed `--repeat`
times each way and the best time kept. Prints per-kind medians of the per-lookup times and
ratios, and the overall median ratio. Target: pandas / core >= 100.

    python benchmarks/lookup.py [--profile full|mini | --db DIR] [--n 600] [--seed 0]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from utp_env.tools.database import Database
from utp_env.tools.lookup import LOOKUP_TOOLS
from utp_env.tools.lookup.transport import services
from utp_env.tools.lookup.venues import StaySearch, find_attractions, find_restaurants, find_stays
from utp_env.tools.sandbox import open_sandbox
from utp_env.tools.schema import HOUSE_RULE_FORBIDS

KINDS = ("flights", "trains", "buses", "stays", "attractions", "restaurants")
TOOL = {"flights": "search_flights", "trains": "search_trains", "buses": "search_buses", "stays": "search_stays",
        "attractions": "search_attractions", "restaurants": "search_restaurants"}
TABLE = {"flights": "flights", "trains": "trains", "buses": "buses", "stays": "accommodations",
         "attractions": "attractions", "restaurants": "restaurants"}


def seeded_rng(seed: int, label: str) -> np.random.Generator:
    """A generator seeded from a stable hash of (seed, label), never Python's `hash()`."""
    digest = hashlib.sha256(f"{seed}:{label}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


@dataclass
class Lookup:
    kind: str
    args: dict[str, Any]
    stay_filter: StaySearch | None = None  # the validated filter of a stay lookup, as the tool holds it

    def __post_init__(self) -> None:
        if self.kind == "stays":
            self.stay_filter = StaySearch.model_validate(self.args)


@dataclass
class Timing:
    core: list[float] = field(default_factory=list)
    invoke: list[float] = field(default_factory=list)
    pandas: list[float] = field(default_factory=list)


def make_lookups(db: Database, n: int, seed: int) -> list[Lookup]:
    """`n` lookups spread evenly over the kinds, built from random rows of the database."""
    rng = seeded_rng(seed, "lookups")
    cal = db.manifest.get("calendar") or {"start": "2025-11-01", "end": "2026-03-31"}
    first, last = dt.date.fromisoformat(cal["start"]), dt.date.fromisoformat(cal["end"])
    out = []
    for k in range(n):
        kind = KINDS[k % len(KINDS)]
        t = db.tables[TABLE[kind]]
        row = t.row(int(rng.integers(t.n)))
        if kind in ("flights", "trains", "buses"):
            date = first + dt.timedelta(days=int(rng.integers((last - first).days + 1)))
            out.append(Lookup(kind, dict(origin=row["origin_city"], destination=row["dest_city"],
                                         date=date.isoformat())))
        elif kind == "stays":
            args: dict[str, Any] = dict(city=row["city"], max_price_per_night=round(row["price_per_night_inr"] * 1.5))
            if rng.random() < 0.5:
                args["allows"] = [str(rng.choice(list(HOUSE_RULE_FORBIDS)))]
            out.append(Lookup(kind, args))
        elif kind == "attractions":
            out.append(Lookup(kind, dict(city=row["city"], category=row["categories"][0])))
        else:
            out.append(Lookup(kind, dict(city=row["city"], cuisine=row["cuisines"][0], price_tier=row["price_tier"])))
    return out


def core_query(db: Database, lk: Lookup) -> np.ndarray:
    """The query under the tool: canonical names, index lookup, filter, sort -> row indices."""
    a = lk.args
    if lk.kind in ("flights", "trains", "buses"):
        o, d = db.city(a["origin"]), db.city(a["destination"])
        return services(db, lk.kind, o, d, dt.date.fromisoformat(a["date"]).weekday())
    city = db.city(a["city"])
    if lk.kind == "stays":
        return find_stays(db, city, lk.stay_filter)
    if lk.kind == "attractions":
        return find_attractions(db, city, a["category"])
    return find_restaurants(db, city, a["cuisine"], a["price_tier"])


class PandasTools:
    """TravelPlanner-style lookups: a boolean mask over the whole DataFrame, then filter and sort."""

    def __init__(self, db: Database) -> None:
        self.frames = {name: pd.DataFrame(db.tables[name].columns) for name in set(TABLE.values())}
        for name in ("flights", "trains", "buses"):
            df = self.frames[name]
            for wd in range(7):  # precomputed once, like a date column: the per-query scan stays vectorised
                df[f"runs_{wd}"] = df["run_days"].str[wd] == "1"

    def query(self, lk: Lookup) -> pd.Index:
        a = lk.args
        if lk.kind in ("flights", "trains", "buses"):
            df = self.frames[lk.kind]
            wd = dt.date.fromisoformat(a["date"]).weekday()
            hit = df[(df["origin_city"] == a["origin"]) & (df["dest_city"] == a["destination"]) & df[f"runs_{wd}"]]
            return hit.sort_values("dep_time", kind="stable").index
        if lk.kind == "stays":
            df = self.frames["accommodations"]
            hit = df[(df["city"] == a["city"]) & (df["price_per_night_inr"] <= a["max_price_per_night"])]
            forbidden = {HOUSE_RULE_FORBIDS[x].casefold() for x in a.get("allows", [])}
            if forbidden:
                hit = hit[hit["house_rules"].map(lambda rules: forbidden.isdisjoint(r.casefold() for r in rules))]
            return hit.sort_values(["price_per_night_inr", "name"], kind="stable").index
        if lk.kind == "attractions":
            df = self.frames["attractions"]
            hit = df[df["city"] == a["city"]]
            hit = hit[hit["categories"].map(lambda cats: a["category"] in cats)]
        else:
            df = self.frames["restaurants"]
            hit = df[(df["city"] == a["city"]) & (df["price_tier"] == a["price_tier"])]
            hit = hit[hit["cuisines"].map(lambda cs: a["cuisine"] in cs)]
        return hit.sort_values(["rating", "name"], ascending=[False, True], kind="stable").index


def timed(fn: Callable[[], Any], repeat: int) -> tuple[Any, float]:
    """Result of `fn` and its best time over `repeat` calls (the least disturbed by other load)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return out, best


def run(profile: str, n: int, seed: int, repeat: int = 3, db_path: str | None = None) -> dict[str, Any]:
    """Run the benchmark on the sandbox `profile` (or the database at `db_path`); returns the
    per-kind medians and ratios (also printed)."""
    t0 = time.perf_counter()
    db = Database.open(db_path) if db_path else open_sandbox(profile)
    baseline = PandasTools(db)
    lookups = make_lookups(db, n, seed)
    print(f"{db_path or 'profile ' + profile}: {db.counts()['flights']} flights, {db.counts()['trains']} trains; "
          f"{len(lookups)} lookups (setup {time.perf_counter() - t0:.1f}s)")
    for lk in lookups[: len(KINDS)]:  # warm caches (E[D] index, amenity vocabulary) outside the timing
        LOOKUP_TOOLS[TOOL[lk.kind]].invoke(db, lk.args)
    timings = {k: Timing() for k in KINDS}
    mismatches = 0
    for lk in lookups:
        spec = LOOKUP_TOOLS[TOOL[lk.kind]]
        core, t_core = timed(lambda lk=lk: core_query(db, lk), repeat)
        result, t_invoke = timed(lambda lk=lk, spec=spec: spec.invoke(db, lk.args), repeat)
        frame, t_pandas = timed(lambda lk=lk: baseline.query(lk), repeat)
        table = db.tables[TABLE[lk.kind]]
        if core.tolist() != list(frame) or not result.ok or result.rows != table.rows(core[:20]):
            mismatches += 1
            print(f"MISMATCH {lk.kind} {lk.args}: core {core.tolist()[:5]} pandas {list(frame)[:5]} "
                  f"{result.error or ''}", file=sys.stderr)
        timings[lk.kind].core.append(t_core)
        timings[lk.kind].invoke.append(t_invoke)
        timings[lk.kind].pandas.append(t_pandas)
    print(f"{'kind':12} {'n':>4} {'pandas_us':>10} {'core_us':>8} {'invoke_us':>9} {'pandas/core':>11} "
          f"{'pandas/invoke':>13}")
    ratios_core, ratios_invoke, summary = [], [], {}
    for kind, t in timings.items():
        rc = [p / c for p, c in zip(t.pandas, t.core, strict=True)]
        ri = [p / i for p, i in zip(t.pandas, t.invoke, strict=True)]
        ratios_core += rc
        ratios_invoke += ri
        summary[kind] = dict(pandas_us=statistics.median(t.pandas) * 1e6, core_us=statistics.median(t.core) * 1e6,
                             invoke_us=statistics.median(t.invoke) * 1e6, ratio_core=statistics.median(rc),
                             ratio_invoke=statistics.median(ri))
        s = summary[kind]
        print(f"{kind:12} {len(t.core):>4} {s['pandas_us']:>10.0f} {s['core_us']:>8.1f} {s['invoke_us']:>9.1f} "
              f"{s['ratio_core']:>10.0f}x {s['ratio_invoke']:>12.0f}x")
    summary["median_ratio_core"] = statistics.median(ratios_core)
    summary["median_ratio_invoke"] = statistics.median(ratios_invoke)
    summary["mismatches"] = mismatches
    print(f"median ratio over all lookups: pandas/core {summary['median_ratio_core']:.0f}x, "
          f"pandas/invoke {summary['median_ratio_invoke']:.0f}x (target >= 100x); "
          f"results identical: {'yes' if not mismatches else f'NO, {mismatches} mismatches'}")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", choices=["full", "mini"], default="full", help="sandbox to benchmark on")
    parser.add_argument("--db", default=None, help="a database directory instead of the sandbox profile")
    parser.add_argument("--n", type=int, default=600, help="number of lookups (spread over the six kinds)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the lookup set")
    parser.add_argument("--repeat", type=int, default=3, help="time each lookup this many times, keep the best")
    args = parser.parse_args(argv)
    if args.n < len(KINDS):
        parser.error(f"--n must be at least {len(KINDS)}")
    summary = run(args.profile, args.n, args.seed, max(1, args.repeat), args.db)
    return 1 if summary["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(main())
