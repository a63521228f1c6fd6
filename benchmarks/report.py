"""Run every benchmark and print the README's performance table and the figures quoted in docs/.

One command regenerates them all on the machine it runs on (each figure is a ratio against a
baseline measured in the same run, or an absolute time against its target); run it on a quiet
machine, since absolute times on a loaded one are pessimistic:

    python benchmarks/report.py --markdown            # the table, then the docs figures
    python benchmarks/report.py --markdown --write    # also replace the table in README.md

Each row names the command that produced it. `--small` runs tiny workloads (on `--db`, e.g. the
mini sandbox) to check that the report itself works; its numbers mean nothing.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
README = HERE.parent / "README.md"
TABLE_START = "<!-- performance table: python benchmarks/report.py --markdown --write -->"
TABLE_END = "<!-- end of performance table -->"


@dataclass
class Bench:
    """One benchmark script: its arguments (full run, small run) and its output when run."""

    script: str
    full: list[str]
    small: list[str]
    output: str = ""
    seconds: float = 0.0
    status: int = 0

    def command(self) -> str:
        return " ".join(["python", f"benchmarks/{self.script}", *self.full])

    def find(self, pattern: str, group: int = 1) -> str:
        """The `group` of the first match of `pattern` in the output, or `?` when it is not there."""
        m = re.search(pattern, self.output)
        return m.group(group) if m else "?"


def benches(db: str | None) -> dict[str, Bench]:
    where = ["--db", db] if db else []
    return {
        "lookup": Bench("lookup.py", [], [*where, "--n", "12", "--repeat", "1"]),
        "evaluate": Bench("evaluate.py", [], [*where, "--plans", "5", "--seconds", "0.2"]),
        "simulate": Bench("simulate.py", [], [*where, "--rollouts", "200", "--loop-rollouts", "50", "--repeat", "1",
                                              "--memory-rollouts", "20000"]),
        "env_steps": Bench("env_steps.py", [], [*where, "--n", "300"]),
        "runs": Bench("runs.py", [], [*where, "--episodes", "6", "--rounds", "1", "--fresh", "1", "--no-ray"]),
        "sandbox": Bench("sandbox.py", [], ["--profile", "mini", "--repeat", "1"]),
        "plan_format": Bench("plan_format.py", [], ["--k", "500", "--repeat", "1"]),
        "serve": Bench("serve.py", [], [*where, "--episodes", "6", "--sessions", "3", "--hold", "4", "--rounds", "1",
                                        "--think-ms", "1"]),
    }


def run_all(selected: dict[str, Bench], small: bool, db: str | None) -> None:
    for name, bench in selected.items():
        args = bench.small if small else bench.full + (["--db", db] if db and name not in ("sandbox", "plan_format")
                                                       else [])
        print(f"report: running benchmarks/{bench.script} {' '.join(args)}", file=sys.stderr, flush=True)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, str(HERE / bench.script), *args], capture_output=True, text=True)
        bench.seconds = time.perf_counter() - start
        bench.output, bench.status = done.stdout + done.stderr, done.returncode
        if "Traceback" in bench.output:
            print(f"report: benchmarks/{bench.script} failed:\n{bench.output[-2000:]}", file=sys.stderr)


# (benchmark, pattern, group) of every figure the table and the docs quote, read from the output.
FIGURES: dict[str, tuple[str, str, int]] = {
    "tp_invoke": ("lookup", r"call \(validation \+ rows \+ text\) ([\d.]+)x", 1),
    "tp_cold": ("lookup", r"([\d.]+)x when none of the rows was shown before", 1),
    "tp_core": ("lookup", r"its filters / core (\d+)x", 1),
    "pandas_core": ("lookup", r"pandas/core (\d+)x", 1),
    "pandas_invoke": ("lookup", r"pandas/invoke (\d+)x", 1),
    "lookup_same": ("lookup", r"results identical: (\w+)", 1),
    "ref_parse": ("evaluate", r"reference plans as stored: parse ([\d,]+)/s", 1),
    "ref_evaluate": ("evaluate", r"reference plans as stored: .*?evaluate ([\d,]+)/s", 1),
    "ref_both": ("evaluate", r"reference plans as stored: .*?both ([\d,]+) plans per CPU", 1),
    "evaluate": ("evaluate", r"evaluate: ([\d,]+) plans per CPU second", 1),
    "ref_first": ("evaluate", r"seen for the first time .*?: ([\d,]+) plans per CPU second", 1),
    "mc_ms": ("simulate", r"vectorised draws \+ engine\s+([\d.]+) ms", 1),
    "mc_speedup": ("simulate", r"speed-up draws \+ engine\s+([\d.]+) x", 1),
    "config_ratio": ("simulate", r"without config .*?-> ([\d.]+) x", 1),
    "mc_rss": ("simulate", r"rollouts: peak RSS added\s+([\d.]+) MiB", 1),
    "mc_chunks": ("simulate", r"chunked == one chunk\s+(\w+)", 1),
    "steps": ("env_steps", r"env.step:\s+(\d+) steps/s", 1),
    "env_overhead": ("env_steps", r"env overhead ratio: ([\d.]+)x", 1),
    "ready": ("runs", r"agent\) ([\d.]+) s", 1),
    "ready_cpu": ("runs", r"agent\) [\d.]+ s \(([\d.]+) s CPU", 1),
    "imports": ("runs", r"imports ([\d.]+) s", 1),
    "local": ("runs", r"2 workers [\d.]+ s -> ([\d.]+)x", 1),
    "ray_cold": ("runs", r"cold [\d.]+ s -> ([\d.]+)x", 1),
    "ray_warm": ("runs", r"warm [\d.]+ s -> ([\d.]+)x", 1),
    "build": ("sandbox", r"build:\s+([\d.]+) s", 1),
    "open": ("sandbox", r"open \(validated cache\):\s+([\d.]+) s", 1),
    "open_cold": ("sandbox", r"open, validating every CSV:\s+([\d.]+) s", 1),
    "growth": ("plan_format", r"\(worst ([\d.]+)x\)", 1),
    "worst_s": ("plan_format", r"\(worst ([\d.]+) s\)", 1),
    "serve_paced_p50": ("serve", r"paced, 1 process: .*?p50 ([\d.]+) ms", 1),
    "serve_paced_p99": ("serve", r"paced, 1 process: .*?p99 ([\d.]+) ms", 1),
    "serve_paced_load": ("serve", r"paced, 1 process: .*?\[load average ([\d.]+)", 1),
    "serve_scale": ("serve", r"workers [\d.]+ episodes/s: ([\d.]+)x", 1),
    "serve_scale_load": ("serve", r"back to back, .*?\[load average ([\d.]+)", 1),
    "serve_cpu": ("serve", r"server CPU per tool call .*?: ([\d.]+) ms", 1),
    "serve_env_cpu": ("serve", r"against ([\d.]+) ms per step in-process", 1),
    "serve_keepalive": ("serve", r"GET /health: ([\d.]+) ms on one kept-alive", 1),
    "serve_held": ("serve", r"(\d+) idle sessions held, (\d+) still served", 2),
    "serve_idle_mb": ("serve", r"([\d.]+) MB per idle session", 1),
    "serve_same": ("serve", r"rewards equal to in-process: (\w+)", 1),
    "serve_light_cpu": ("serve", r"light calls on kept sessions .*?server CPU ([\d.]+) ms per call", 1),
    "serve_light_local": ("serve", r"light calls on kept sessions .*?against ([\d.]+) ms in-process", 1),
    "serve_light_load": ("serve", r"light calls on kept sessions .*?\[load average ([\d.]+)", 1),
    "serve_bound": ("serve", r"= ([\d.]+)x \(2s/\(s \+ c\) for 2 on 2\)", 1),
    "serve_of_bound": ("serve", r"measured [\d.]+x = (\d+)% of the bound", 1),
}


def figures(b: dict[str, Bench]) -> dict[str, str]:
    return {name: b[bench].find(pattern, group) for name, (bench, pattern, group) in FIGURES.items()}


def rows(b: dict[str, Bench]) -> list[tuple[str, str, str, str]]:
    """(what, measured, target, command) of every row of the table."""
    f = figures(b)
    cmd = {name: bench.command() for name, bench in b.items()}
    return [
        ("whole tool call (validation, rows, LLM-readable text) vs TravelPlanner's tool (its `apis.py` pandas "
         "masks + `to_string`)",
         f"median {f['tp_invoke']}× for rows shown before, {f['tp_cold']}× on a row's first display; core query "
         f"alone {f['tp_core']}×", "≥ 50×", cmd["lookup"]),
        ("a lookup vs the same lookup as a pandas boolean-mask scan, filter and sort",
         f"median {f['pandas_core']}× (whole tool call {f['pandas_invoke']}×); results identical: "
         f"{f['lookup_same']}", "≥ 100×", cmd["lookup"]),
        ("`parse_plan` + `evaluate` of 7-day reference plans from JSON, one core",
         f"{f['ref_both']} plans per CPU second (parse {f['ref_parse']}/s, evaluate {f['ref_evaluate']}/s); "
         f"{f['ref_first']}/s on plans seen for the first time",
         "≥ 1,000/s", cmd["evaluate"]),
        ("`evaluate` of built 7-day plans (about 35 items, 4 legs), one core",
         f"{f['evaluate']} plans per CPU second", "≥ 1,000/s", cmd["evaluate"]),
        ("10,000 Monte Carlo rollouts of a 7-day plan",
         f"draws + engine {f['mc_ms']} ms, {f['mc_speedup']}× the per-rollout loop", "< 100 ms, ≥ 30×",
         cmd["simulate"]),
        ("`simulate(n=1000)` without a config / with one", f"{f['config_ratio']}×", "≤ 1.2×", cmd["simulate"]),
        ("Monte Carlo memory: peak RSS added by 10,000,000 rollouts",
         f"{f['mc_rss']} MiB; chunked == one chunk: {f['mc_chunks']}", "< 1 GB", cmd["simulate"]),
        ("env steps with lookup tools (every lookup answers rows)",
         f"{f['steps']} steps/s ({f['env_overhead']}× a direct tool call, interleaved)", "≥ 5,000/s",
         cmd["env_steps"]),
        ("worker ready: database, indices, queries, reference plans, agent in a fresh process",
         f"{f['ready']} s ({f['ready_cpu']} s CPU; imports {f['imports']} s before it)", "≤ 0.5 s", cmd["runs"]),
        ("200 reference episodes, 2 local workers / 1 worker", f"{f['local']}×", "≥ 1.6×", cmd["runs"]),
        ("200 reference episodes, Ray with 2 CPUs / 1 local worker",
         f"{f['ray_cold']}× with fresh Ray workers, {f['ray_warm']}× once they hold the dataset", "≥ 1.5×",
         cmd["runs"]),
        ("build the full sandbox / open it",
         f"{f['build']} s / {f['open']} s (validating every CSV: {f['open_cold']} s)", "< 60 s / < 2 s",
         cmd["sandbox"]),
        ("`utp-env serve` (OpenEnv): 200 scripted episodes, 50 concurrent paced WebSocket sessions (200 ms on "
         "average between calls), one server process",
         f"tool call p50 {f['serve_paced_p50']} ms, p99 {f['serve_paced_p99']} ms (load average "
         f"{f['serve_paced_load']}); server CPU {f['serve_cpu']} ms per call (the env: {f['serve_env_cpu']} ms); "
         f"kept-alive `GET /health` {f['serve_keepalive']} ms; rewards equal to in-process: {f['serve_same']}",
         "p99 < 50 ms", cmd["serve"]),
        ("`utp-env serve`: idle sessions held / memory per idle session / `--workers 2` vs 1 behind one address",
         f"{f['serve_held']} / {f['serve_idle_mb']} MB / {f['serve_scale']}× (load average {f['serve_scale_load']})",
         "200 / < 2 MB / ≥ 1.6×", cmd["serve"]),
        ("`utp-env serve`: server CPU per light tool call on kept sessions (30 lookups and plan views per episode, "
         "50 sessions, 1 worker) / `--workers 2` against its bound 2s/(s + c) with the clients on the same 2 CPUs",
         f"{f['serve_light_cpu']} ms per call ({f['serve_light_local']} ms in-process; load average "
         f"{f['serve_light_load']}) / {f['serve_scale']}× = {f['serve_of_bound']} % of the {f['serve_bound']}× bound",
         "≤ 0.8 ms / ≥ 90 % of the bound", cmd["serve"]),
        ("the plan parser on 17 adversarial inputs (baseline: the paper's plan repeated to the same length)",
         f"growth for 4× the length: worst {f['growth']}× (linear 4×, quadratic 16×); worst {f['worst_s']} s",
         "≤ 8×, < 2 s", cmd["plan_format"]),
    ]


def docs_figures(b: dict[str, Bench]) -> list[tuple[str, str]]:
    """(file, sentence) of every figure docs/ quotes, as the benchmarks measured it now."""
    f = figures(b)
    return [
        ("docs/ENV.md, Performance", f"Measured on the full sandbox: about {_thousands(f['steps'])} env steps per "
         f"second (target 5,000), about {f['env_overhead']}× the direct tool call (`{b['env_steps'].command()}`)."),
        ("docs/RUNS.md, Running at scale with Ray", f"Each Ray worker process opens the dataset once (about "
         f"{f['ready']} s on the full sandbox, `{b['runs'].command()}`)."),
        ("docs/SIMULATION.md, blocks", f"10,000,000 rollouts of the 7-day benchmark plan add ~{f['mc_rss']} MiB of "
         f"peak RSS (`{b['simulate'].command()}`)."),
    ]


def _thousands(text: str) -> str:
    return f"{int(text):,}" if text.isdigit() else text


def machine() -> str:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=HERE.parent).stdout.strip() or "?"
    except OSError:
        commit = "?"
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"measured {datetime.date.today().isoformat()} at commit {commit} on {os.cpu_count()} CPUs "
            f"(load average {load} when the report finished)")


def markdown(table: list[tuple[str, str, str, str]]) -> str:
    lines = ["| what | measured | target | command |", "|---|---|---|---|"]
    lines += [f"| {what} | {measured} | {target} | `{command}` |" for what, measured, target, command in table]
    return "\n".join(lines)


def write_readme(text: str, readme: Path = README) -> None:
    """Replace the table between the markers of README.md (ValueError naming them when absent)."""
    current = readme.read_text(encoding="utf-8")
    start, end = current.find(TABLE_START), current.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"{readme} has no {TABLE_START!r} ... {TABLE_END!r} block to replace")
    readme.write_text(current[: start + len(TABLE_START)] + "\n" + text + "\n" + current[end:], encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown (default: plain)")
    parser.add_argument("--write", action="store_true", help="also replace the table in README.md")
    parser.add_argument("--db", default=None, help="a database directory instead of the full sandbox")
    parser.add_argument("--small", action="store_true", help="tiny workloads: checks the report, not the speed")
    parser.add_argument("--only", nargs="*", default=None, help="run only these benchmarks (others show ?)")
    args = parser.parse_args(argv)
    if args.write and args.small:
        parser.error("--write with --small would put meaningless numbers in README.md")
    selected = benches(args.db)
    run_all({k: v for k, v in selected.items() if args.only is None or k in args.only}, args.small, args.db)
    table = rows(selected)
    render: Callable[[list[tuple[str, str, str, str]]], str] = markdown if args.markdown else (
        lambda t: "\n".join(f"{w}: {m} (target {g}; {c})" for w, m, g, c in t))
    text = render(table)
    print(text)
    print()
    print(machine())
    print()
    print("figures quoted in docs/:")
    for where, sentence in docs_figures(selected):
        print(f"- {where}: {sentence}")
    failed = [b.script for b in selected.values() if "Traceback" in b.output]
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    if args.write and not failed:
        write_readme(f"{text}\n\n{machine()}.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
