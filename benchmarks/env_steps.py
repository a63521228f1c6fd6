"""Env step benchmark: env steps per second with lookup tools (target >= 5,000/s).

A seeded list of random lookup actions (flights, trains and buses between random city pairs on the
query's dates; stays, attractions and restaurants in random cities; distances and cab routes) is
built first, then replayed through `UTPEnv.step` (action parsing, argument validation, the tool,
the trace, the observation). The baseline is the same calls made directly through
`ToolSpec.invoke` on the database, so the ratio is the env's overhead per call.

    python benchmarks/env_steps.py [--profile full|mini] [--db PATH] [--n 20000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from utp_env.env.core import UTPEnv
from utp_env.tools.lookup import LOOKUP_TOOLS
from utp_env.tools.seeding import stable_int

TARGET_STEPS_PER_S = 5_000


def random_lookups(env: UTPEnv, n: int, seed: int) -> list[dict[str, Any]]:
    """`n` lookup actions over random cities of the env's database, from a seeded generator."""
    rng = np.random.default_rng(stable_int("env_steps", seed))
    cities = env.db.cities
    dates = env.episode.query.dates if env.episode else ["2025-11-20"]
    actions = []
    for _ in range(n):
        a, b = (cities[int(i)] for i in rng.choice(len(cities), size=2, replace=False))
        kind = int(rng.integers(0, 8))
        date = dates[int(rng.integers(0, len(dates)))]
        if kind < 3:
            tool = ("search_flights", "search_trains", "search_buses")[kind]
            actions.append({"tool": tool, "args": {"origin": a, "destination": b, "date": date}})
        elif kind < 6:
            tool = ("search_stays", "search_attractions", "search_restaurants")[kind - 3]
            actions.append({"tool": tool, "args": {"city": a, "limit": 10}})
        else:
            actions.append({"tool": ("distance", "cab_route")[kind - 6], "args": {"origin": a, "destination": b}})
    return actions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="full", choices=["full", "mini"])
    parser.add_argument("--db", default=None, help="A database directory instead of the sandbox profile")
    parser.add_argument("--n", type=int, default=20_000, help="Steps to time")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    env = UTPEnv(db_path=args.db, profile=args.profile, config={"step_limit": 10**9})
    env.reset(seed=args.seed)
    actions = random_lookups(env, args.n, args.seed)

    start = time.perf_counter()
    for action in actions[:200]:  # warm-up: caches (delay index, vocabularies)
        env.step(action)
    start = time.perf_counter()
    ok = 0
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        ok += info["calls"][0]["ok"]
    env_s = time.perf_counter() - start
    assert not (terminated or truncated)

    start = time.perf_counter()
    for action in actions:
        LOOKUP_TOOLS[action["tool"]].invoke(env.db, action["args"])
    direct_s = time.perf_counter() - start

    rate = args.n / env_s
    print(f"database: {env.db.path} ({len(env.db.cities)} cities); {args.n} lookup steps, {ok} answered ok")
    print(f"env.step:           {rate:10.0f} steps/s ({1e6 * env_s / args.n:.1f} us/step)")
    print(f"ToolSpec.invoke:    {args.n / direct_s:10.0f} calls/s ({1e6 * direct_s / args.n:.1f} us/call)")
    print(f"env overhead ratio: {env_s / direct_s:.2f}x the direct call")
    print(f"target {TARGET_STEPS_PER_S}/s: {'met' if rate >= TARGET_STEPS_PER_S else 'NOT met'} "
          f"({rate / TARGET_STEPS_PER_S:.2f}x)")
    return 0 if rate >= TARGET_STEPS_PER_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
