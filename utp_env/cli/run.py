"""`utp-env run`: benchmark an agent on the sandbox's queries, resumable, local or on Ray."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run an agent on a query split and print the Table-3 summary",
                       description="Run an agent (the reference planner by default) on the validation split "
                       "of the embedded sandbox. Rerunning with the same --out resumes.")
    p.add_argument("--agent", default=None,
                   help="agent name (reference, deterministic, direct, atlas, tool_calling), "
                   "a config YAML, or a module:Class import path (default: reference)")
    p.add_argument("--config", type=Path, help="a run config YAML (keys of RunConfig); flags override it")
    p.add_argument("--split", choices=["validation", "test", "all"])
    p.add_argument("--horizons", type=int, nargs="+", choices=[3, 5, 7])
    p.add_argument("--limit", type=int, help="at most this many queries")
    p.add_argument("--trials", type=int, help="trials per query (pass^k)")
    p.add_argument("--seed", type=int)
    p.add_argument("--workers", type=int)
    p.add_argument("--backend", choices=["local", "ray"])
    p.add_argument("--ray-address", dest="ray_address", help="Ray cluster address for --backend ray")
    p.add_argument("--rollouts", type=int, help="Monte Carlo rollouts per plan (0 disables)")
    p.add_argument("--profile", choices=["full", "mini"], help="embedded sandbox profile (default full)")
    p.add_argument("--db", help="database directory instead of the embedded sandbox")
    p.add_argument("--out", help="run folder (default runs/<agent>-<split>-seed<seed>)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override an agent setting, e.g. --set buffers=false (repeatable)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=handle)


def resolve_config(args: argparse.Namespace):  # -> RunConfig
    """Merge defaults < --config file < flags into a validated RunConfig."""
    from utp_env.config import load_model
    from utp_env.runs.config import RunConfig, parse_overrides

    base = load_model(RunConfig, args.config).model_dump() if args.config else {}
    for key in ("agent", "split", "horizons", "limit", "trials", "seed", "workers", "backend", "ray_address",
                "rollouts", "profile", "db", "out"):
        value = getattr(args, key)
        if value is not None:
            base[key] = value
    settings = dict(base.get("agent_settings") or {})
    settings.update(parse_overrides(args.overrides))
    base["agent_settings"] = settings
    return load_model(RunConfig, None, base)


def handle(args: argparse.Namespace) -> int:
    from utp_env.runs.runner import run
    from utp_env.runs.summary import load_summary, render_text

    config = resolve_config(args)
    run_dir = run(config, progress=not args.quiet)
    print(render_text(load_summary(run_dir)))
    print(f"\nresults in {run_dir}/ (results.jsonl, summary.json, summary.md, plots)", file=sys.stderr)
    return 0

