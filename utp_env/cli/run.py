"""`utp-env run`: benchmark an agent on the sandbox's queries, resumable, local or on Ray."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from utp_env.cli import positive_int
from utp_env.query import HORIZONS

if TYPE_CHECKING:
    from utp_env.runs.config import RunConfig


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `run` command."""
    p = sub.add_parser("run", help="run an agent on the benchmark's queries and print the summary table",
                       description="Run an agent (the reference planner by default) on a split of the "
                       "sandbox's queries, score every plan (feasibility checks, BAS/CATS/TDAS, Monte Carlo "
                       "robustness) and print the Table-3 summary. Results go to a run folder; rerunning "
                       "with the same --out resumes where it stopped. Flags override a --config file.")
    from utp_env.agents.registry import NAMES

    p.add_argument("--agent", default=None,
                   help=f"agent name ({', '.join(NAMES)}), an agent config YAML, or a module:Class import path "
                   "(default: reference)")
    p.add_argument("--env", choices=["plan", "replan"],
                   help="plan: score each plan (UTP-v0); replan: then live the trip through one sampled "
                   "reality, the agent repairing it at each disruption (UTP-Replan-v0, docs/REPLAN.md) "
                   "(default: plan)")
    p.add_argument("--config", type=Path, metavar="YAML",
                   help="a run config YAML (keys of RunConfig, docs/RUNS.md); flags override it")
    p.add_argument("--split", choices=["validation", "test", "all"],
                   help="which queries: the validation split, the test split, or all (default: validation)")
    p.add_argument("--horizons", type=int, nargs="+", choices=HORIZONS, metavar="DAYS",
                   help="only trips of these lengths in days, any of 3 5 7 (default: all)")
    p.add_argument("--limit", type=positive_int, metavar="N", help="run at most N queries (default: all of the split)")
    p.add_argument("--trials", type=int, metavar="K",
                   help="episodes per query, for pass^k, 1 to 1000 (default: 1)")
    p.add_argument("--seed", type=int,
                   help="seed of the episodes (sampled delays, agent randomness); the same seed "
                   "gives the same results (default: 0)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="episodes run in parallel, in N processes, 1 to 1024; local processes are at most "
                   "the run's episodes and max(8, 4 x CPUs), fewer with a notice (default: 1)")
    p.add_argument("--backend", choices=["local", "ray"],
                   help="where the workers run: local processes, or a Ray cluster "
                   "(needs pip install 'utp-env[ray]') (default: local)")
    p.add_argument("--ray-address", dest="ray_address", metavar="ADDRESS",
                   help="Ray cluster address for --backend ray (default: start Ray locally)")
    p.add_argument("--rollouts", type=int, metavar="N",
                   help="Monte Carlo rollouts per plan for the hold rate, 0 (disables) to 100,000,000 "
                   "(default: 1000)")
    p.add_argument("--profile", choices=["full", "mini"],
                   help="embedded sandbox: full (504 cities) or mini (a small one for trying things) "
                   "(default: full)")
    p.add_argument("--world", type=int, metavar="N",
                   help="the embedded sandbox built from seed N: another world, same cities and statistics, other "
                   "services, venues and names, its own queries (docs/RL.md 'Worlds') (default: 0)")
    p.add_argument("--db", metavar="DIR", help="a database directory instead of the embedded sandbox")
    p.add_argument("--out", metavar="DIR", help="run folder (default: runs/<agent>[-replan]-<profile>-<split>-"
                   "seed<seed>, plus -limit<N> and a short hash of other non-default options)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override an agent setting, e.g. --set buffers=false (repeatable)")
    p.add_argument("--replan-set", dest="replan_overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="with --env replan, override a closed-loop setting of configs/replan.yaml, e.g. "
                   "--replan-set max_disruptions=5 (repeatable; docs/REPLAN.md)")
    p.add_argument("--adopt-results", dest="adopt_results", action="store_true",
                   help="accept a results.jsonl found in --out without its config.json as this run's "
                   "(only when you know it was made with the same options; refused otherwise)")
    p.add_argument("--accept-agent-change", dest="accept_agent_change", action="store_true",
                   help="resume --out although the agent's code or settings changed since its results were made "
                   "(refused otherwise): keep the old episodes and run the rest with this agent")
    p.add_argument("--no-retry-failed", dest="no_retry_failed", action="store_true",
                   help="on resume, keep the episodes that ended in an infrastructure error (model server down, a "
                   "timeout) as they are; by default they run again")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    from utp_env.cli import add_layout_options

    add_layout_options(p)
    p.set_defaults(handler=handle)


def resolve_config(args: argparse.Namespace) -> RunConfig:
    """Merge defaults < --config file < flags into a validated RunConfig."""
    from utp_env.config import load_model
    from utp_env.runs.config import RunConfig, check_bounds, parse_overrides

    check_bounds(vars(args))  # flags first, named as flags, before a --config file is read
    base = load_model(RunConfig, args.config).model_dump() if args.config else {}
    for key in ("agent", "env", "split", "horizons", "limit", "trials", "seed", "workers", "backend", "ray_address",
                "rollouts", "profile", "world", "db", "out"):
        value = getattr(args, key)
        if value is not None:
            base[key] = value
    settings = dict(base.get("agent_settings") or {})
    agent_set = parse_overrides(args.overrides)
    from utp_env.env.replan import ReplanConfig

    closed_loop = sorted(set(agent_set) & set(ReplanConfig.model_fields))
    if closed_loop:
        key = closed_loop[0]
        raise ValueError(f"--set {key}: {key} is a closed-loop setting (configs/replan.yaml), not an agent "
                         f"setting; use --replan-set {key}=... with --env replan")
    settings.update(agent_set)
    base["agent_settings"] = settings
    replan_set = parse_overrides(args.replan_overrides, flag="--replan-set")
    if replan_set:
        from utp_env.env.config import load_replan_config

        load_replan_config(replan_set, source="--replan-set")  # its errors name the flag
        base["replan"] = {**(base.get("replan") or {}), **replan_set}
    config = load_model(RunConfig, None, base)
    if args.ray_address is not None and config.backend != "ray":
        # refused where a run starts, not in RunConfig: configs stored by earlier runs must still load
        raise ValueError(f"--ray-address {args.ray_address!r} is only read with --backend ray, and the backend is "
                         f"{config.backend!r}: add --backend ray, or leave the address out")
    return config


def handle(args: argparse.Namespace) -> int:
    """Run, print the summary; exit 1 when every episode failed or a worker process died."""
    from utp_env.cli import with_intervals
    from utp_env.runs.runner import WorkerDiedError, run
    from utp_env.runs.summary import all_failed, load_summary, render_text

    ci = with_intervals(args)  # (a conflict of layout options is refused before the run, not after it)
    config = resolve_config(args)
    try:
        run_dir = run(config, progress=not args.quiet, adopt_results=args.adopt_results,
                      accept_agent_change=args.accept_agent_change, retry_failed=not args.no_retry_failed)
    except WorkerDiedError as exc:
        print(f"utp-env run: error: {exc}", file=sys.stderr)
        return 1
    summary = load_summary(run_dir)
    print(render_text(summary, ci=ci))
    print(f"\nresults in {run_dir}/ (results.jsonl, summary.json, summary.md, plots)", file=sys.stderr)
    failure = all_failed(summary)
    if failure is not None:
        print(f"utp-env run: error: {failure}", file=sys.stderr)
        return 1
    return 0

