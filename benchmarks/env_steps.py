"""Env step benchmark: env steps per second with lookup tools (target >= 5,000/s).

A seeded list of lookup actions that return rows is built first: flights, trains and buses
between the cities of a random timetable row on a date it runs (the query's dates and the days
after them), stays, attractions and restaurants in cities that have them, distances and cab
routes between cities that have one; a candidate that answers no rows is replaced (the share
kept is printed). The actions are then replayed through `UTPEnv.step` (action parsing, argument
validation, the tool, the trace, the observation) and, as the baseline, directly through
`ToolSpec.invoke` on the database, in alternating blocks (env first, then direct first), so
that both see the same machine load; the ratio is the env's overhead per call.

    python benchmarks/env_steps.py [--profile full|mini] [--db PATH] [--n 20000] [--seed 0]
"""

from __future__ import annotations

import argparse
import datetime
import time
from typing import Any

import numpy as np

from utp_env.env.core import UTPEnv
from utp_env.tools.clock import weekday
from utp_env.tools.lookup import LOOKUP_TOOLS
from utp_env.tools.schema import SERVICE_TABLE
from utp_env.tools.seeding import stable_int

TARGET_STEPS_PER_S = 5_000
BLOCK = 200  # actions per timed block; env and direct blocks alternate


def _dates(first: str, n: int = 7) -> list[str]:
    day = datetime.date.fromisoformat(first)
    return [(day + datetime.timedelta(days=k)).isoformat() for k in range(n)]


def lookups_with_rows(env: UTPEnv, n: int, seed: int) -> tuple[list[dict[str, Any]], float]:
    """`n` lookup actions that answer rows, from a seeded generator, and the share of candidates kept."""
    rng = np.random.default_rng(stable_int("env_steps", seed))
    db = env.db
    dates = _dates(env.episode.query.dates[0] if env.episode else "2025-11-20")
    venue_cities = {t: [c for c in db.cities if db.city_rows(t, c).size]
                    for t in ("accommodations", "attractions", "restaurants")}
    actions: list[dict[str, Any]] = []
    tried = 0
    while len(actions) < n:
        tried += 1
        kind = int(rng.integers(0, 8))
        if kind < 3:
            table = list(SERVICE_TABLE.values())[kind]
            cols = db.tables[table].columns
            if not db.tables[table].n:
                continue
            r = int(rng.integers(db.tables[table].n))
            runs = [d for d in dates if cols["run_days"][r][weekday(d)] == "1"]
            if not runs:
                continue
            action = {"tool": f"search_{table}", "args": {"origin": cols["origin_city"][r],
                                                          "destination": cols["dest_city"][r],
                                                          "date": runs[int(rng.integers(len(runs)))]}}
        elif kind < 6:
            table = ("accommodations", "attractions", "restaurants")[kind - 3]
            cities = venue_cities[table]
            if not cities:
                continue
            tool = {"accommodations": "search_stays"}.get(table, f"search_{table}")
            action = {"tool": tool, "args": {"city": cities[int(rng.integers(len(cities)))], "limit": 10}}
        else:
            table = ("distances", "road_routes")[kind - 6]
            if not db.tables[table].n:
                continue
            r = int(rng.integers(db.tables[table].n))
            cols = db.tables[table].columns
            action = {"tool": ("distance", "cab_route")[kind - 6],
                      "args": {"origin": cols["origin_city"][r], "destination": cols["dest_city"][r]}}
        if LOOKUP_TOOLS[action["tool"]].invoke(db, action["args"]).rows:
            actions.append(action)
    return actions, len(actions) / tried


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="full", choices=["full", "mini"])
    parser.add_argument("--db", default=None, help="A database directory instead of the sandbox profile")
    parser.add_argument("--n", type=int, default=20_000, help="Steps to time")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    env = UTPEnv(db_path=args.db, profile=args.profile, config={"step_limit": 10**9})
    env.reset(seed=args.seed)
    actions, kept = lookups_with_rows(env, args.n, args.seed)

    for action in actions[:BLOCK]:  # warm-up: caches (delay index, vocabularies, row memo)
        env.step(action)
        LOOKUP_TOOLS[action["tool"]].invoke(env.db, action["args"])
    env_s = direct_s = 0.0
    ok = rows = 0
    terminated = truncated = False
    for number, first in enumerate(range(0, len(actions), BLOCK)):
        block = actions[first:first + BLOCK]
        for side in (("env", "direct") if number % 2 == 0 else ("direct", "env")):
            start = time.perf_counter()
            if side == "env":
                for action in block:
                    _, _, terminated, truncated, info = env.step(action)
                    ok += info["calls"][0]["ok"]
                env_s += time.perf_counter() - start
            else:
                for action in block:
                    rows += bool(LOOKUP_TOOLS[action["tool"]].invoke(env.db, action["args"]).rows)
                direct_s += time.perf_counter() - start
    assert not (terminated or truncated)

    rate = args.n / env_s
    print(f"database: {env.db.path} ({len(env.db.cities)} cities); {args.n} lookup steps, {ok} answered ok, "
          f"{rows} with rows ({kept:.0%} of the drawn candidates answered rows and were kept)")
    print(f"env.step:           {rate:10.0f} steps/s ({1e6 * env_s / args.n:.1f} us/step)")
    print(f"ToolSpec.invoke:    {args.n / direct_s:10.0f} calls/s ({1e6 * direct_s / args.n:.1f} us/call)")
    print(f"env overhead ratio: {env_s / direct_s:.2f}x the direct call (blocks of {BLOCK}, alternating)")
    print(f"target {TARGET_STEPS_PER_S}/s: {'met' if rate >= TARGET_STEPS_PER_S else 'NOT met'} "
          f"({rate / TARGET_STEPS_PER_S:.2f}x)")
    return 0 if rate >= TARGET_STEPS_PER_S else 1

if __name__ == "__main__":
    raise SystemExit(main())
