"""Import benchmark: how much `import utp_env` costs beyond gymnasium's own import (target <= 1.5x main's).

Every gym worker (`AsyncVectorEnv`, the run pool, the servers' workers) imports utp_env, so the
import must stay light: it registers the env ids and resolves the public names (`utp_env.UTPEnv`,
`utp_env.evaluate`, ...) only on first use. Fresh interpreters run, in interleaved rounds so they
see the same machine load: a bare `python -c pass` (the interpreter's start), `import gymnasium`
(the floor: registering an env needs it), `import utp_env`, and `from utp_env.env.core import
UTPEnv` (what reading `utp_env.UTPEnv` adds: the database, the tools, the evaluator). Each time is
the median over the rounds less the bare start; the figure is `import utp_env` over `import
gymnasium`.

Measured before the public API became lazy names (main at 3dce745, whose `import utp_env` imported
gymnasium and the env registration only), on the 2-core development machine under load:
utp_env / gymnasium = 1.00, 1.01, 1.04, 1.06 in four runs of `python benchmarks/import_time.py
--rounds 21` (mean 1.03); the target is 1.5x that, 1.54. With the lazy public names: 0.97, 1.00,
1.01, 1.04. The env core costs about two and a half times the package import.

    python benchmarks/import_time.py [--rounds 21]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

MAIN_RATIO = 1.03  # utp_env / gymnasium on main before the lazy public names (see the docstring)
TARGET_FACTOR = 1.5
CASES = {
    "bare": "pass",
    "gymnasium": "import gymnasium",
    "utp_env": "import utp_env",
    "the env core": "from utp_env.env.core import UTPEnv",
}


def run_once(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def measure(rounds: int) -> dict[str, float]:
    """{case: median seconds over `rounds` fresh interpreters}, the cases interleaved in each round."""
    times: dict[str, list[float]] = {name: [] for name in CASES}
    for _ in range(rounds):
        for name, code in CASES.items():
            times[name].append(run_once(code))
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21, help="fresh interpreters per case (the median is kept)")
    args = parser.parse_args()
    median = measure(args.rounds)
    bare = median["bare"]
    net = {name: max(value - bare, 1e-6) for name, value in median.items() if name != "bare"}
    for name, value in net.items():
        print(f"import {name:<16} {1000 * value:7.1f} ms beyond the interpreter's start ({1000 * bare:.1f} ms)")
    ratio = net["utp_env"] / net["gymnasium"]
    target = TARGET_FACTOR * MAIN_RATIO
    print(f"the env core / utp_env: {net['the env core'] / net['utp_env']:.2f}x (what the lazy names spare)")
    print(f"utp_env / gymnasium: {ratio:.2f}x (main before the public API: {MAIN_RATIO:.2f}x; "
          f"target <= {target:.2f}x): {'met' if ratio <= target else 'MISSED'}")
    return 0 if ratio <= target else 1


if __name__ == "__main__":
    sys.exit(main())
