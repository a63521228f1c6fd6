"""Sandbox benchmark: build the India sandbox, then open it from disk (targets: build < 60 s, open < 2 s).

In one run, into a temporary directory (the embedded cache is not touched):

1. build the sandbox (`build_sandbox`: generate, validate, write the CSVs, the manifest and the
   validated cache);
2. open it as the env does (`Database.open`, from the validated cache), best of `--repeat`;
3. the baseline: open it validating every CSV from scratch (`Database.open(use_cache=False)`),
   best of `--repeat`.

Prints the times, the cached open as a ratio of the cold validation, the build as a multiple of
the cold validation, the process's peak memory, and whether the targets of the README's
performance table are met. Exits 1 only when the database read back differs from what was built.

    python benchmarks/sandbox.py [--profile full|mini] [--seed 0] [--repeat 3]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

from utp_env.tools.database import Database
from utp_env.tools.sandbox import PROFILES, build_sandbox

TARGET_BUILD_S = 60.0
TARGET_OPEN_S = 2.0


def best_of(repeat: int, fn) -> tuple[float, object]:  # -> (seconds, last result)
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="full", choices=sorted(PROFILES), help="sandbox profile (default full)")
    parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    parser.add_argument("--repeat", type=int, default=3, help="time each open this many times, keep the best")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="utp-sandbox-bench-") as tmp:
        path = Path(tmp) / args.profile
        build_s, manifest = best_of(1, lambda: build_sandbox(args.profile, args.seed, path))
        open_s, db = best_of(args.repeat, lambda: Database.open(path))
        cold_s, cold = best_of(args.repeat, lambda: Database.open(path, use_cache=False))
        same = db.counts() == cold.counts() == manifest["row_counts"] and db.content_hash == cold.content_hash
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows = sum(manifest["row_counts"].values())
    print(f"{args.profile} sandbox (seed {args.seed}): {len(manifest['row_counts'])} tables, {rows:,} rows")
    print(f"build:                          {build_s:8.2f} s  ({build_s / cold_s:.1f}x the cold validation)")
    print(f"open (validated cache):         {open_s:8.3f} s")
    print(f"open, validating every CSV:     {cold_s:8.3f} s  (baseline)")
    print(f"cached open vs cold validation: {cold_s / open_s:8.1f}x faster")
    print(f"process peak RSS:               {peak_mb:8.0f} MB")
    print(f"target build < {TARGET_BUILD_S:.0f} s: {'met' if build_s < TARGET_BUILD_S else 'NOT met'} "
          f"({build_s / TARGET_BUILD_S:.2f} of the budget); "
          f"target open < {TARGET_OPEN_S:.0f} s: {'met' if open_s < TARGET_OPEN_S else 'NOT met'} "
          f"({open_s / TARGET_OPEN_S:.2f} of the budget)")
    if not same:
        print("MISMATCH: the database read back differs from what was built", file=sys.stderr)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
