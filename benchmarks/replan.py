"""Closed-loop benchmark: does the reference planner's repair policy pay off on the realised day?

For every query of a split (default: validation) the reference planner plans once; the plan is then
lived through `utp_env/UTP-Replan-v0` on `--seeds` realities (the episode seeds of `utp-env run
--trials N`: `episode_seed(run seed, query id, trial)`), once with the planner's repair policy
(`agents/reference/repair.py`) and once without (`no_repair`), on the same seed: common random
numbers, so the difference of one (query, seed) is a paired observation. It prints, per agent, the
mean realised score, items kept (share of planned visits, meals and events done), rebookings,
late minutes at commitments, extra cost and disruptions, and the mean paired difference of the
realised score with its 95% Student-t confidence interval (`utp_env/runs/paired.py`); also by
horizon x risk profile. `--planner deterministic` repeats it with the deterministic baseline's
plans (no buffers: more disruptions to repair).

Speed: episodes/s of the execution phase (reset with the plan -> repairs -> continue_trip to the
end) with and without repair, against a baseline measured in the same run: the same trip played by
the vectorised engine in one go (compiling the plan and `engine.run` on the delays the realisation
drew, no pauses). Without repair the realised timeline must equal that engine run (`MISMATCH`
otherwise).

    python benchmarks/replan.py [--profile full|mini] [--db PATH] [--split validation] [--seeds 5]
                                [--limit N] [--planner reference|deterministic] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from typing import Any

import numpy as np

from utp_env.agents.base import Toolkit
from utp_env.agents.reference import ReferencePlanner
from utp_env.config import load_uncertainty
from utp_env.dataset import open_dataset
from utp_env.env.replan import UTPReplanEnv, lived_plan
from utp_env.runs.episode import episode_seed
from utp_env.runs.paired import paired_difference
from utp_env.runs.replan_episode import live_trip, replan_block
from utp_env.simulation.compile import compile_plan
from utp_env.simulation.engine import run as engine_run

FIELDS = (("realised score", "realised_score", "{:.4f}"), ("items kept", "items_kept", "{:.2%}"),
          ("rebookings", "rebookings", "{:.3f}"), ("late min", "late_minutes", "{:.1f}"),
          ("extra INR", "extra_cost", "{:.0f}"), ("disruptions", "disruptions", "{:.3f}"))


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="full", choices=["full", "mini"])
    parser.add_argument("--db", default=None, help="A database directory instead of the sandbox profile")
    parser.add_argument("--split", default="validation", choices=["validation", "test", "all"])
    parser.add_argument("--seeds", type=int, default=5, help="Realities per query (trials 0..N-1 of run seed 0)")
    parser.add_argument("--limit", type=int, default=None, help="At most this many queries (query-id order)")
    parser.add_argument("--planner", default="reference", choices=["reference", "deterministic"],
                        help="Whose plans are lived: the reference planner's, or the deterministic baseline's")
    parser.add_argument("--run-seed", type=int, default=0, help="The run seed the episode seeds derive from")
    parser.add_argument("--json", default=None, help="Also write the per-episode values and the table here")
    args = parser.parse_args(argv)

    dataset = open_dataset(args.db, profile=args.profile)
    queries = sorted((q for q in dataset.queries if args.split == "all" or q.split == args.split),
                     key=lambda q: q.query_id)[: args.limit]
    planner = ReferencePlanner(buffers=args.planner == "reference")
    env = UTPReplanEnv(db_path=args.db, profile=args.profile)
    config = load_uncertainty()
    print(f"{len(queries)} {args.split} queries x {args.seeds} seeds, {args.planner} plans, "
          f"{args.db or args.profile} database", file=sys.stderr)

    started = time.perf_counter()
    plans = {q.query_id: planner.run(q, Toolkit(dataset.db)).plan for q in queries}
    plan_s = time.perf_counter() - started
    values: dict[str, list[dict[str, Any]]] = {"no_repair": [], "repair": []}
    timing = {"no_repair": 0.0, "repair": 0.0, "engine": 0.0}
    mismatches: list[str] = []
    undelivered = 0
    for query in queries:
        plan = plans[query.query_id]
        if plan is None:
            undelivered += 1
            continue
        for trial in range(args.seeds):
            seed = episode_seed(args.run_seed, query.query_id, trial)
            row = {"query_id": query.query_id, "trial": trial, "seed": seed, "days": query.days,
                   "risk": query.risk_profile}
            for name, repair in (("no_repair", None), ("repair", planner.repair)):
                t0 = time.perf_counter()
                reward, info, steps, error = live_trip(env, query, plan, seed, repair)
                timing[name] += time.perf_counter() - t0
                if error is not None:
                    print(f"repair error on {query.query_id}#{trial}: {error}", file=sys.stderr)
                block = replan_block(reward, info, steps, error)
                values[name].append(row | {key: block[key] for _, key, _ in FIELDS})
                if name == "no_repair":
                    realised = info["realised"]["steps"]
            # the baseline: the same trip in one go through the vectorised engine, on the draws the
            # realisation made (each executed step's delay, in the engine's layout)
            t0 = time.perf_counter()
            lived = lived_plan(plan, query, dataset.db)
            compiled = compile_plan(lived.days, dataset.db, config, query)
            delays = np.zeros((1, compiled.delays.k))
            for j, step in enumerate(realised[: compiled.n_steps]):
                if compiled.draw[j] >= 0:
                    delays[0, compiled.draw[j]] = step["delay"]
            rollout = engine_run(compiled, delays, config.simulation.skip_passed_items)
            timing["engine"] += time.perf_counter() - t0
            got = np.array([[s["actual_start"], s["actual_end"]] for s in realised])
            want = np.stack([rollout.start[0], rollout.end[0]], axis=1)
            if got.shape != want.shape or not np.allclose(got, want):
                mismatches.append(f"{query.query_id}#{trial}")

    n = len(values["repair"])
    if not n:
        print("no plan was delivered: nothing to live through; target not met (no episodes)")
        return 1
    width = max(len(label) for label, _, _ in FIELDS)
    print(f"\nRealised outcome, {n} episodes ({len(queries) - undelivered} plans x {args.seeds} seeds; "
          f"{undelivered} queries without a plan), {args.planner} plans:")
    print(f"{'':{width}}  {'no_repair':>12}  {'with repair':>12}  {'difference':>11}  95% CI (paired t)")
    table = []
    for label, key, fmt in FIELDS:
        a = [float(v[key] or 0.0) for v in values["no_repair"]]
        b = [float(v[key] or 0.0) for v in values["repair"]]
        stat = paired_difference(label, a, b)
        ci = "-" if stat.ci_low is None else f"[{stat.ci_low:+.4f}, {stat.ci_high:+.4f}]"
        print(f"{label:{width}}  {fmt.format(stat.mean_a):>12}  {fmt.format(stat.mean_b):>12}  "
              f"{stat.diff:>+11.4f}  {ci}")
        table.append(stat.to_json())
    print("\nRealised score by horizon x risk profile (no_repair -> with repair, difference [95% CI], episodes):")
    cells: dict[tuple[int, str], list[tuple[float, float]]] = defaultdict(list)
    for a, b in zip(values["no_repair"], values["repair"], strict=True):
        cells[(a["days"], a["risk"])].append((a["realised_score"], b["realised_score"]))
    for (days, risk), pairs in sorted(cells.items()):
        stat = paired_difference("realised", [p[0] for p in pairs], [p[1] for p in pairs])
        ci = "-" if stat.ci_low is None else f"[{stat.ci_low:+.4f}, {stat.ci_high:+.4f}]"
        print(f"  {days}-day {risk:<9}  {stat.mean_a:.4f} -> {stat.mean_b:.4f}  {stat.diff:+.4f} {ci}  n={stat.n}")
    better = sum(b["realised_score"] > a["realised_score"] + 1e-12
                 for a, b in zip(values["no_repair"], values["repair"], strict=True))
    worse = sum(b["realised_score"] < a["realised_score"] - 1e-12
                for a, b in zip(values["no_repair"], values["repair"], strict=True))
    print(f"\nepisodes where repair scores higher: {better}, lower: {worse}, equal: {n - better - worse}")

    rates = {k: n / v if v > 0 else float("inf") for k, v in timing.items()}
    print(f"\nexecution phase: {rates['no_repair']:,.0f} episodes/s without repair, {rates['repair']:,.0f} with "
          f"repair; baseline (the same trip compiled and through engine.run in one go): {rates['engine']:,.0f}/s; "
          f"ratio no_repair/baseline {rates['no_repair'] / rates['engine']:.3f}, "
          f"repair/baseline {rates['repair'] / rates['engine']:.3f} (planning took {plan_s:.1f} s)")
    if mismatches:
        print(f"MISMATCH: without repair the realised timeline differs from engine.run on {len(mismatches)} "
              f"episode(s), e.g. {mismatches[0]}")
    else:
        print(f"without repair the realised timeline equals engine.run on the same draws in all {n} episodes")
    gain = table[0]
    met = gain["ci95"] is not None and gain["ci95"][0] > 0
    print(f"target: repair beats no_repair on the realised score (95% CI of the paired difference above 0): "
          f"{'met' if met else 'not met on this run'}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"args": vars(args), "table": table, "episodes": values, "rates": rates}, fh, indent=1)
    return 0 if met and not mismatches else 1


if __name__ == "__main__":
    sys.exit(main())
