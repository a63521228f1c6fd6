"""Plan-format benchmark: the tolerant parser stays linear on adversarial text (target: growth <= 8x
for 4x the length, and each 20,000-character input under 2 s).

LLM output is untrusted: a regular expression that backtracks can take minutes on a crafted line
(two of the cases below took 157 s and 29 s before the parser was fixed). Each adversarial case of
tests/plan_format/test_plan_format.py is built at `--k` and at 4x `--k` characters and parsed (best of
`--repeat`). A linear parser grows about 4x; a quadratic one 16x. The baseline, measured in the
same run, is the paper's 7-day plan (tests/support/data/paper_plans/c2_uncertainty_7day.json) repeated to the
same length as ordinary text: the ratio says how much slower than ordinary text of the same size
each adversarial input parses.

    python benchmarks/plan_format.py [--k 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path

from utp_env.plan_format import PlanFormatError, parse_plan

PAPER_PLANS = Path(__file__).resolve().parent.parent / "tests" / "support" / "data" / "paper_plans"
PAPER_PLAN = PAPER_PLANS / "c2_uncertainty_7day.json"
TARGET_GROWTH = 8.0  # for 4x the length: linear 4x, quadratic 16x
TARGET_SECONDS = 2.0  # each input of 20,000 characters


def _one_day(**fields: str) -> str:
    return json.dumps([{"days": 1, "current_city": "P", **fields}])


def cases() -> dict[str, Callable[[int], str]]:
    """Adversarial inputs as functions of a length k (the same shapes as tests/plan_format/test_plan_format.py)."""
    def s(k: int) -> str:
        return " " * k

    return {
        "commas then stay": lambda k: _one_day(point_of_interest_list=", , ," * (k // 5) + "stay from 10:00"),
        "spaced stay from": lambda k: _one_day(point_of_interest_list="a" + s(k) + "stay" + s(k) + "from" + s(k) + "x"),
        "spaced Board": lambda k: _one_day(point_of_interest_list="Board" + s(k) + "x" + s(k) + "y"),
        "question marks": lambda k: _one_day(point_of_interest_list="a " + "?" * k),
        "visit digits": lambda k: _one_day(point_of_interest_list="a, visit " + "1" * k),
        "transit digits": lambda k: _one_day(
            point_of_interest_list="a, visit from 10:00 to 11:00, nearest transit: s, " + "1" * k),
        "repeated visit from": lambda k: _one_day(point_of_interest_list="a, visit from " * (k // 14)),
        "spaced current_city": lambda k: _one_day(current_city="from a" + s(k) + "to" + s(k)),
        "spaced Departure": lambda k: _one_day(transportation="Flight, from A to B, Departure" + s(k) + "x"),
        "spaced Flight to": lambda k: _one_day(transportation="Flight, a to" + s(k)),
        "backticks": lambda k: "```" * k,
        "braces": lambda k: "{a} [b] " * k,
        # the shapes of the parser's fast paths (poi._CANONICAL_ENTRY_RE, legs._CANONICAL_LEG_RE)
        "glued entries": lambda k: _one_day(
            point_of_interest_list=", ".join(["a, visit from 10:00 to 10:00, nearest transit: s"] * (k // 50))),
        "comma names": lambda k: _one_day(point_of_interest_list="a" + ", a" * (k // 3) + ", visit from 10:00 to 10:0"),
        "transit tail commas": lambda k: _one_day(
            point_of_interest_list="a, visit from 10:00 to 11:00, nearest transit: s" + ", 1" * (k // 3) + "x"),
        "long flight number": lambda k: _one_day(
            transportation="Flight Number: " + "6" * k + ", from A to B, Departure Time: 05:00, Arrival Time: 06:0"),
        "repeated to": lambda k: _one_day(
            transportation="Bus: X, from A" + " to A" * (k // 5) + ", Departure Time: 05:00, Arrival Time: 06:00"),
    }


def ordinary(k: int) -> str:
    """The paper's 7-day plan as JSON text, its days repeated until the text has about k characters."""
    days = json.loads(PAPER_PLAN.read_text(encoding="utf-8"))["plan"]
    one = len(json.dumps(days))
    return json.dumps(days * max(1, round(k / one)))


def timed(text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        with contextlib.suppress(PlanFormatError):
            parse_plan(text)
        best = min(best, time.perf_counter() - started)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=20_000, help="base length of each input (default 20000)")
    parser.add_argument("--repeat", type=int, default=3, help="parse each input this many times, keep the best")
    args = parser.parse_args(argv)

    small_base, large_base = ordinary(args.k), ordinary(4 * args.k)
    base_small, base_large = timed(small_base, args.repeat), timed(large_base, args.repeat)
    print(f"baseline, the paper's 7-day plan repeated: {len(small_base):,} chars {1e3 * base_small:.1f} ms, "
          f"{len(large_base):,} chars {1e3 * base_large:.1f} ms (growth {base_large / base_small:.1f}x)")
    print(f"{'case':<22} {'chars':>9} {'ms':>9} {'vs baseline':>12} {'4x chars':>10} {'ms':>9} {'growth':>7}")
    worst_growth, worst_s = 0.0, 0.0
    for name, make in cases().items():
        small, large = make(args.k), make(4 * args.k)
        t_small, t_large = timed(small, args.repeat), timed(large, args.repeat)
        growth = t_large / max(t_small, 1e-6)
        worst_growth, worst_s = max(worst_growth, growth), max(worst_s, t_small)
        print(f"{name:<22} {len(small):>9,} {1e3 * t_small:>9.2f} {t_small / base_small:>11.2f}x "
              f"{len(large):>10,} {1e3 * t_large:>9.2f} {growth:>6.1f}x")
    growth_ok = worst_growth <= TARGET_GROWTH
    print(f"target growth <= {TARGET_GROWTH:.0f}x for 4x the length: {'met' if growth_ok else 'NOT met'}"
          f" (worst {worst_growth:.1f}x); target < {TARGET_SECONDS:.0f} s per input: "
          f"{'met' if worst_s < TARGET_SECONDS else 'NOT met'} (worst {worst_s:.3f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
