"""Lookup benchmark: the indexed lookup tools against pandas boolean-mask scans (target >= 100x) and
against TravelPlanner's own tools as they run them (whole tool call, target >= 50x).

The same seeded set of lookups (flights, trains and buses by city pair and date; stays,
attractions and restaurants by city and a filter) runs three ways on the same tables:

- `core`: the query function under each tool (city-name check, index lookup, filter, sort) ->
  row indices;
- `invoke`: the whole tool call an agent makes (argument validation, core, E[D], rendering of
  at most 20 rows, structured rows). A row's line is rendered on its first display and kept
  (`render.RowMemo`); `cold` times the call with that memo emptied first;
- `pandas`: a boolean mask over the whole DataFrame followed by the same filter and sort, as
  TravelPlanner's tools do. Weekday masks are precomputed as boolean columns, so the baseline
  is a fair, vectorised scan;
- `travelplanner`: TravelPlanner's tools as they run them (`TravelPlannerTools`): chained masks,
  no sort, and `DataFrame.to_string(index=False)` of the rows, the text its agent reads. Timed as
  its filter alone (vs `core`) and as the whole tool call (vs `invoke`).

Both `core` and `pandas` must return the same rows in the same order, and `travelplanner` the
same set of rows (checked for every lookup), and `invoke`'s rows must be the first rows of `core`.
Each lookup is timed `--repeat`
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
from utp_env.tools.lookup.render import row_memo
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
    tp_filter: list[float] = field(default_factory=list)
    tp: list[float] = field(default_factory=list)
    cold: list[float] = field(default_factory=list)


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


# The columns each tool shows, kept in the TravelPlanner-style frames as TravelPlanner keeps its
# display columns at load time (`pd.read_csv(...)[[...]]` in its tools/*/apis.py).
TP_COLUMNS = {
    "flights": ["flight_number", "airline", "origin_airport", "dest_airport", "dep_time", "arr_time",
                "duration_min", "price_inr", "origin_city", "dest_city"],
    "trains": ["train_number", "train_name", "origin_station", "dest_station", "dep_time", "arr_time",
               "duration_min", "classes", "fare_inr", "origin_city", "dest_city"],
    "buses": ["bus_id", "operator", "bus_type", "dep_time", "arr_time", "duration_min", "fare_inr", "origin_city",
              "dest_city"],
    "accommodations": ["name", "house_type", "star_rating", "rating", "price_per_night_inr", "max_occupancy",
                       "house_rules", "amenities", "services", "minimum_nights", "check_in", "check_out", "city"],
    "attractions": ["name", "categories", "visit_duration_hr", "rating", "entry_fee_inr", "open_time", "close_time",
                    "city"],
    "restaurants": ["name", "cuisines", "price_tier", "avg_cost_inr", "rating", "open_time", "close_time", "city"],
}


class TravelPlannerTools:
    """TravelPlanner's tools as they run them (github:OSU-NLP-Group/TravelPlanner, tools/*/apis.py and
    agents/tool_agents.py), ported onto our tables.

    Each `run` chains boolean masks, one per filter, each on the previous result
    (`results = results[results["DestCityName"] == destination]`), does not sort, and the agent
    reads `DataFrame.to_string(index=False)` of the result. Their date filter
    (`FlightDate == date`) becomes the weekday's precomputed `runs_<wd>` column; our extra filters
    (price, house rules, category, cuisine, tier) are masks in the same chained style. Rendering is
    of the rows our tool shows (at most `limit`; TravelPlanner renders every row, which costs more).
    """

    def __init__(self, db: Database) -> None:
        self.frames: dict[str, pd.DataFrame] = {}
        for name, cols in TP_COLUMNS.items():
            df = pd.DataFrame({c: db.tables[name].columns[c] for c in cols})
            if name in ("flights", "trains", "buses"):
                for wd in range(7):
                    df[f"runs_{wd}"] = pd.Series(db.tables[name].columns["run_days"]).str[wd] == "1"
            self.frames[name] = df

    def filter(self, lk: Lookup) -> pd.DataFrame:
        a = lk.args
        if lk.kind in ("flights", "trains", "buses"):
            df = self.frames[lk.kind]
            results = df[df["origin_city"] == a["origin"]]
            results = results[results["dest_city"] == a["destination"]]
            return results[results[f"runs_{dt.date.fromisoformat(a['date']).weekday()}"]]
        if lk.kind == "stays":
            df = self.frames["accommodations"]
            results = df[df["city"] == a["city"]]
            results = results[results["price_per_night_inr"] <= a["max_price_per_night"]]
            forbidden = {HOUSE_RULE_FORBIDS[x].casefold() for x in a.get("allows", [])}
            if forbidden:
                results = results[results["house_rules"].map(
                    lambda rules: forbidden.isdisjoint(r.casefold() for r in rules))]
            return results
        if lk.kind == "attractions":
            df = self.frames["attractions"]
            results = df[df["city"] == a["city"]]
            return results[results["categories"].map(lambda cats: a["category"] in cats)]
        df = self.frames["restaurants"]
        results = df[df["city"] == a["city"]]
        results = results[results["price_tier"] == a["price_tier"]]
        return results[results["cuisines"].map(lambda cs: a["cuisine"] in cs)]

    def run(self, lk: Lookup, shown: int) -> str:
        """The whole tool call: the filters, then the text the agent reads."""
        results = self.filter(lk)
        if len(results) == 0:
            return "There is no result."
        return results.head(shown).to_string(index=False)


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
    tp = TravelPlannerTools(db)
    memo = row_memo(db)
    lookups = make_lookups(db, n, seed)
    print(f"{db_path or 'profile ' + profile}: {db.counts()['flights']} flights, {db.counts()['trains']} trains; "
          f"{len(lookups)} lookups (setup {time.perf_counter() - t0:.1f}s)")
    for lk in lookups[: len(KINDS)]:  # warm caches (E[D] index, amenity vocabulary) outside the timing
        LOOKUP_TOOLS[TOOL[lk.kind]].invoke(db, lk.args)
    timings = {k: Timing() for k in KINDS}
    mismatches = empty = 0
    for lk in lookups:
        spec = LOOKUP_TOOLS[TOOL[lk.kind]]
        core, t_core = timed(lambda lk=lk: core_query(db, lk), repeat)
        result, t_invoke = timed(lambda lk=lk, spec=spec: spec.invoke(db, lk.args), repeat)
        t_cold = float("inf")
        for _ in range(repeat):  # the first display of these rows: the row memo emptied before each call
            memo.clear()
            start = time.perf_counter()
            spec.invoke(db, lk.args)
            t_cold = min(t_cold, time.perf_counter() - start)
        frame, t_pandas = timed(lambda lk=lk: baseline.query(lk), repeat)
        shown = len(result.rows)
        tp_rows, t_tp_filter = timed(lambda lk=lk: tp.filter(lk), repeat)
        _, t_tp = timed(lambda lk=lk, shown=shown: tp.run(lk, shown), repeat)
        table = db.tables[TABLE[lk.kind]]
        if (core.tolist() != list(frame) or sorted(core.tolist()) != sorted(tp_rows.index) or not result.ok
                or result.rows != table.rows(core[:20])):
            mismatches += 1
            print(f"MISMATCH {lk.kind} {lk.args}: core {core.tolist()[:5]} pandas {list(frame)[:5]} "
                  f"travelplanner {sorted(tp_rows.index)[:5]} {result.error or ''}", file=sys.stderr)
        empty += core.size == 0
        timings[lk.kind].core.append(t_core)
        timings[lk.kind].invoke.append(t_invoke)
        timings[lk.kind].cold.append(t_cold)
        timings[lk.kind].pandas.append(t_pandas)
        timings[lk.kind].tp_filter.append(t_tp_filter)
        timings[lk.kind].tp.append(t_tp)
    print(f"{'kind':12} {'n':>4} {'pandas_us':>10} {'core_us':>8} {'invoke_us':>9} {'pandas/core':>11} "
          f"{'pandas/invoke':>13} {'tp_filter_us':>12} {'tp_us':>7} {'tpfilter/core':>13} {'tp/invoke':>9} "
          f"{'cold_us':>7} {'tp/cold':>7}")
    ratios: dict[str, list[float]] = {"core": [], "invoke": [], "tp_core": [], "tp_invoke": [], "tp_cold": []}
    summary: dict[str, Any] = {}
    for kind, t in timings.items():
        rc = [p / c for p, c in zip(t.pandas, t.core, strict=True)]
        ri = [p / i for p, i in zip(t.pandas, t.invoke, strict=True)]
        tc = [p / c for p, c in zip(t.tp_filter, t.core, strict=True)]
        ti = [p / i for p, i in zip(t.tp, t.invoke, strict=True)]
        tcold = [p / i for p, i in zip(t.tp, t.cold, strict=True)]
        for key, values in (("core", rc), ("invoke", ri), ("tp_core", tc), ("tp_invoke", ti), ("tp_cold", tcold)):
            ratios[key] += values
        summary[kind] = dict(pandas_us=statistics.median(t.pandas) * 1e6, core_us=statistics.median(t.core) * 1e6,
                             invoke_us=statistics.median(t.invoke) * 1e6, ratio_core=statistics.median(rc),
                             ratio_invoke=statistics.median(ri), tp_filter_us=statistics.median(t.tp_filter) * 1e6,
                             tp_us=statistics.median(t.tp) * 1e6, ratio_tp_core=statistics.median(tc),
                             ratio_tp_invoke=statistics.median(ti), cold_us=statistics.median(t.cold) * 1e6,
                             ratio_tp_cold=statistics.median(tcold))
        s = summary[kind]
        print(f"{kind:12} {len(t.core):>4} {s['pandas_us']:>10.0f} {s['core_us']:>8.1f} {s['invoke_us']:>9.1f} "
              f"{s['ratio_core']:>10.0f}x {s['ratio_invoke']:>12.0f}x {s['tp_filter_us']:>12.0f} {s['tp_us']:>7.0f} "
              f"{s['ratio_tp_core']:>12.0f}x {s['ratio_tp_invoke']:>8.1f}x {s['cold_us']:>7.1f} "
              f"{s['ratio_tp_cold']:>6.1f}x")
    summary["median_ratio_core"] = statistics.median(ratios["core"])
    summary["median_ratio_invoke"] = statistics.median(ratios["invoke"])
    summary["median_ratio_tp_core"] = statistics.median(ratios["tp_core"])
    summary["median_ratio_tp_invoke"] = statistics.median(ratios["tp_invoke"])
    summary["median_ratio_tp_cold"] = statistics.median(ratios["tp_cold"])
    summary["mismatches"] = mismatches
    print(f"median ratio over all lookups: pandas/core {summary['median_ratio_core']:.0f}x, "
          f"pandas/invoke {summary['median_ratio_invoke']:.0f}x (target >= 100x); "
          f"results identical: {'yes' if not mismatches else f'NO, {mismatches} mismatches'}; "
          f"{empty} of {len(lookups)} lookups return no rows")
    print(f"against TravelPlanner's tools as they run them: its filters / core "
          f"{summary['median_ratio_tp_core']:.0f}x; its whole tool call (filters + to_string) / our whole tool "
          f"call (validation + rows + text) {summary['median_ratio_tp_invoke']:.1f}x (target >= 50x); "
          f"{summary['median_ratio_tp_cold']:.1f}x when none of the rows was shown before (row memo empty)")
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
