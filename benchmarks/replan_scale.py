"""Closed-loop scale benchmark: living a trip stays linear in the plan's size (target: growth
<= 8x for 4x the items; linear 4x, quadratic 16x).

`continue_trip` on a day padded to 3,000 items took 47 s (6,000: 244 s) while UTP-v0 evaluated the
plan in 0.6 s: after each late step the realisation looked ahead over every remaining step. The env
now refuses such a plan at its boundary (`MAX_ITEMS_PER_DAY`, utp_env/itinerary.py); this script
measures the simulation beneath that cap, where a plan is not validated again.

A reference plan of the split (`--query-index`) gets one of its days padded with `--items`, then 4x
`--items`, one-minute visits (copies of a venue of that day, overlapping so that each step starts
late and the realisation looks ahead after every one: the case that was quadratic). The trip is lived
as `continue_trip` lives it (`Realiser.start`, then `run` with pauses until the end), best of
`--repeat`. Baseline, measured in the same run: the same padded plan compiled and played by the
vectorised engine in one go (`compile_plan` and `engine.run` on the common-random-numbers delays),
which is linear; the ratio says how much slower than one engine pass the closed loop is, and should
not grow with the plan.

    python benchmarks/replan_scale.py [--profile full|mini] [--db PATH] [--items 3000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from utp_env.config import load_uncertainty
from utp_env.dataset import open_dataset
from utp_env.env.replan import lived_plan
from utp_env.itinerary import MAX_ITEMS_PER_DAY, Plan
from utp_env.query import Query
from utp_env.simulation.compile import compile_plan
from utp_env.simulation.crn import crn_delays
from utp_env.simulation.engine import run as engine_run
from utp_env.simulation.realise import DEFAULT_KINDS, Realiser, copy_plan
from utp_env.tools.database import Database

TARGET_GROWTH = 8.0  # for 4x the items: linear 4x, quadratic 16x
SEED = 0


def padded(plan: Plan, n: int) -> Plan:
    """`plan` with its busiest day holding `n` more one-minute visits of one of its venues, each
    starting a minute after the previous (from 10:00, wrapping every 600): every one starts late.
    Assigned, not validated: the plan is far over `MAX_ITEMS_PER_DAY`, as the env would refuse it."""
    out = copy_plan(plan)
    day = max(out.days, key=lambda d: sum(1 for i in d.items if i.activity == "visit"))
    base = next(i for i in day.items if i.activity == "visit")
    day.items = [*day.items, *(base.model_copy(update={"start": 600 + i % 600, "end": 601 + i % 600})
                               for i in range(n))]
    return out


def live(plan: Plan, query: Query, db: Database) -> tuple[float, int, int]:
    """Seconds to live the trip through every pause to its end; the steps and pauses."""
    realiser = Realiser(db=db, query=query, seed=SEED, config=load_uncertainty(), kinds=frozenset(DEFAULT_KINDS),
                        slack={"late_arrival": 15.0, "overrun": 15.0}, max_disruptions=3)
    started = time.perf_counter()
    realiser.start(plan)
    while realiser.run(plan, pause=True) is not None:
        pass
    return time.perf_counter() - started, len(realiser.steps), len(realiser.disruptions)


def engine(plan: Plan, query: Query, db: Database) -> float:
    """Seconds to compile the plan and play it once through `engine.run` on the same draws."""
    config = load_uncertainty()
    started = time.perf_counter()
    compiled = compile_plan(plan.days, db, config, query)
    engine_run(compiled, crn_delays(compiled, plan, query, SEED, db), config.simulation.skip_passed_items)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="full", choices=["full", "mini"])
    parser.add_argument("--db", default=None, help="A database directory instead of the sandbox profile")
    parser.add_argument("--split", default="validation", choices=["validation", "test"])
    parser.add_argument("--query-index", type=int, default=0, help="Which query of the split (query-id order)")
    parser.add_argument("--items", type=int, default=3000, help="Visits added to one day (then 4x as many)")
    parser.add_argument("--repeat", type=int, default=3, help="Time each size this many times, keep the best")
    args = parser.parse_args(argv)

    dataset = open_dataset(args.db, profile=args.profile)
    queries = sorted((q for q in dataset.queries if q.split == args.split), key=lambda q: q.query_id)
    query = queries[args.query_index]
    reference = dataset.references.get(query.query_id)
    if reference is None:
        print(f"{query.query_id} has no reference plan; pick another --query-index; target not met")
        return 1
    lived = lived_plan(reference, query, dataset.db)
    print(f"{query.query_id}: reference plan, one day padded with one-minute visits (the env caps a day at "
          f"{MAX_ITEMS_PER_DAY} items; measured beneath the cap)")
    print(f"{'items added':>11} {'steps':>7} {'pauses':>6} {'closed loop s':>14} {'engine.run s':>13} {'ratio':>7}")
    times = []
    for n in (args.items, 4 * args.items):
        plan = padded(lived, n)
        runs = [live(plan, query, dataset.db) for _ in range(args.repeat)]
        loop_s, (_, steps, pauses) = min(r[0] for r in runs), runs[0]
        engine_s = min(engine(plan, query, dataset.db) for _ in range(args.repeat))
        times.append((loop_s, engine_s))
        print(f"{n:>11,} {steps:>7,} {pauses:>6} {loop_s:>14.3f} {engine_s:>13.3f} {loop_s / engine_s:>6.1f}x")
    (small, small_engine), (large, large_engine) = times
    growth = large / max(small, 1e-9)
    ratio_growth = (large / large_engine) / max(small / small_engine, 1e-9)
    met = growth <= TARGET_GROWTH
    print(f"closed loop at {args.items:,} items: {small:.3f} s; ratio to the baseline grows {ratio_growth:.2f}x "
          f"for 4x the items")
    print(f"target growth <= {TARGET_GROWTH:.0f}x for 4x the items: {'met' if met else 'NOT met'} "
          f"(closed loop {growth:.1f}x, baseline engine.run {large_engine / max(small_engine, 1e-9):.1f}x)")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
