"""`utp-env compare A B`: two runs paired by query and trial, every Table 3 row with B - A, its 95%
interval and a Holm-corrected paired test (built by utp_env/runs/compare.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `compare` command."""
    p = sub.add_parser(
        "compare", help="test whether two runs differ, row by row of Table 3 (paired, with intervals)",
        description="Pair two finished runs made on the same episodes (database, query set, trials, seed and env "
        "configuration; anything else is refused with the reason) by query and trial, and print for every row of "
        "Table 3's 'all' column, the reward and (two closed-loop runs) the realised outcome: each run's value, "
        "B - A, its 95%% interval (paired bootstrap over queries) and the p-value of a sign-flip permutation test, "
        "Holm-adjusted across the rows. A markdown table by default; --json for the same as JSON.")
    p.add_argument("runs", nargs=2, metavar="RUN_DIR", help="run A, then run B (B - A is reported)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the markdown table")
    p.add_argument("--out", type=Path, metavar="FILE", help="also write the comparison as JSON to FILE (atomically)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from utp_env.runs.compare import compare_runs
    from utp_env.tools.atomic import write_text_atomic

    comparison = compare_runs(args.runs[0], args.runs[1])
    data = json.dumps(comparison.to_json(), indent=2) + "\n"
    if args.out is not None:
        write_text_atomic(args.out, data)
    print(data, end="") if args.json else print(comparison.to_markdown())
    return 0
