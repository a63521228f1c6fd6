"""Benchmark: peak memory of `utp-env evaluate` on a large plans file (target < 300 MB at 200 MB).

Writes a plans file of about `--mb` megabytes from the database's reference plans, repeated with
distinct `trial` numbers (each line `{"query_id", "trial", "plan"}`, so no line repeats a query
and trial, which evaluate refuses), then runs `utp-env evaluate --plans FILE --out REPORT` in a
child process and reads its peak resident memory (`ru_maxrss` of the child, Linux: KiB). Also
prints the peak of `utp-env evaluate` on a file of one round of plans, so the growth with file
size is visible: streaming keeps the two close.

Run: `python benchmarks/evaluate_memory.py [--profile full | --db DIR] [--mb 200]`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MB = 300.0


def write_plans(references: Path, out: Path, megabytes: float) -> tuple[int, int]:
    """Write reference plans, round after round (trial 0, 1, ...), until the file reaches the size;
    returns (lines, bytes)."""
    lines = [json.loads(line) for line in references.read_text(encoding="utf-8").splitlines() if line.strip()]
    goal = int(megabytes * 1e6)
    written = count = 0
    trial = 0
    with out.open("w", encoding="utf-8") as fh:
        while written < goal:
            for ref in lines:
                text = json.dumps({"query_id": ref["query_id"], "trial": trial, "plan": ref["plan"]}) + "\n"
                fh.write(text)
                written += len(text.encode("utf-8"))
                count += 1
                if written >= goal:
                    break
            trial += 1
    return count, written


def peak_of(argv: list[str]) -> tuple[float, float, int]:
    """Run a child; (its peak RSS in MB, wall seconds, exit code). Each measurement runs in a fresh
    wrapper process, so ru_maxrss of its children is this command's alone."""
    code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
            "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode; "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.perf_counter() - t, rc)")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True)
    kib, seconds, rc = done.stdout.split()
    return int(kib) / 1024, float(seconds), int(rc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=["full", "mini"], default="full")
    parser.add_argument("--db", type=Path, help="a database directory instead of the embedded sandbox")
    parser.add_argument("--mb", type=float, default=200.0, help="size of the large plans file in MB (default 200)")
    args = parser.parse_args()
    if args.db is not None:
        db_dir, where = args.db, ["--db", str(args.db)]
    else:
        from utp_env.tools.sandbox.cache import ensure_sandbox

        db_dir, where = ensure_sandbox(args.profile), ["--profile", args.profile]
    references = db_dir / "reference_plans.jsonl"
    exe = [sys.executable, "-m", "utp_env"]
    with tempfile.TemporaryDirectory() as tmp:
        small, large = Path(tmp) / "one_round.jsonl", Path(tmp) / "large.jsonl"
        small.write_text(references.read_text(encoding="utf-8"), encoding="utf-8")
        start = time.perf_counter()
        lines, size = write_plans(references, large, args.mb)
        print(f"plans file: {lines:,} lines, {size / 1e6:.1f} MB (written in {time.perf_counter() - start:.1f} s)")
        base, base_s, base_rc = peak_of([*exe, "evaluate", "--plans", str(small), *where,
                                         "--out", str(Path(tmp) / "small.json")])
        print(f"one round ({small.stat().st_size / 1e6:.1f} MB): peak RSS {base:.0f} MB, {base_s:.1f} s, "
              f"exit {base_rc}")
        peak, seconds, rc = peak_of([*exe, "evaluate", "--plans", str(large), *where,
                                     "--out", str(Path(tmp) / "large.json")])
        print(f"{size / 1e6:.1f} MB file: peak RSS {peak:.0f} MB, {seconds:.1f} s, exit {rc}")
    ok = peak < TARGET_MB and rc in (0, 3)
    print(f"target: peak RSS < {TARGET_MB:.0f} MB on the large file with --out: {'yes' if ok else 'NO, ' + str(peak)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
