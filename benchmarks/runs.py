"""Run benchmark: does a run get faster with more workers, and how soon is a worker ready?

Three measurements, each against its baseline in the same invocation:

1. Worker ready: fresh Python processes import the package, then build a run's context
   (`utp_env.runs.episode.context_for`: database, indices, queries, reference plans, agent) and
   run a few episodes. Reported: the imports, the context (target <= 0.5 s on the full sandbox)
   and the first episode against the median of the next ones (anything still built lazily shows
   there). Medians over `--fresh` processes.
2. Local: `--episodes` reference episodes through the run backend (`utp_env.runs.runner.BACKENDS`:
   the pool's start-up, scheduling and result transfer included; the summary and plots that `run`
   writes afterwards are not episodes and are left out) with 2 local workers against 1; target
   >= 1.6x. Every timed run happens in a fresh process whose driver context is built first,
   untimed, as `run` builds it before its episodes (so no run inherits caches that another one
   warmed); the variants alternate within each of `--rounds` rounds, and the ratio is of medians.
   The CPU time per episode of all the processes is printed too: on a loaded machine the
   kernel shares CPU time between sessions, so a second worker cannot add CPU time and the
   speedup cannot show there (`/proc/sys/kernel/sched_autogroup_enabled`).
3. Ray: Ray with 2 CPUs against the same 1 local worker, in the same rounds. In its fresh process
   Ray is started and its worker processes are up before the timing (like a cluster that is
   already running); "cold": the first run, whose workers import the package and build the
   context inside the timing; "warm": a second run on the same workers. Target >= 1.5x (cold).

Every round's records must equal the one-worker records (durations aside), or it prints MISMATCH.

    python benchmarks/runs.py [--profile full|mini] [--db PATH] [--episodes 200] [--rounds 2]
                              [--fresh 3] [--no-ray]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

TARGET_READY_S = 0.5
TARGET_LOCAL = 1.6
TARGET_RAY = 1.5

READY_PROBE = r"""
import json, statistics, sys, time
t0 = time.perf_counter()
c0 = time.process_time()
import utp_env.runs.episode as episode
import utp_env.agents.registry, utp_env.agents.reference, utp_env.evaluation, utp_env.simulation, utp_env.tools.lookup
from utp_env.runs.config import RunConfig
t1, c1 = time.perf_counter(), time.process_time()
config = RunConfig(**json.loads(sys.argv[1]))
ctx = episode.context_for(config)
t2, c2 = time.perf_counter(), time.process_time()
ids = sorted(ctx.queries)[:12]
durations = []
for qid in ids:
    s = time.perf_counter()
    episode.run_episode(config, qid, 0)
    durations.append(time.perf_counter() - s)
print(json.dumps({"imports": t1 - t0, "ready": t2 - t1, "ready_cpu": c2 - c1, "first": durations[0],
                  "median": statistics.median(durations[1:])}))
"""


def config_for(args: argparse.Namespace, **changes: Any) -> Any:
    from utp_env.runs.config import RunConfig

    base = {"agent": "reference", "profile": args.profile, "db": args.db, "split": "all",
            "limit": args.episodes, "seed": 0}
    return RunConfig(**{**base, **changes})


def episodes_through(config: Any) -> tuple[float, list[str]]:
    """Seconds to run every episode of `config` through its backend, and the records without their
    durations, sorted."""
    from utp_env.runs.runner import BACKENDS, plan_episodes, worker_count

    todo = plan_episodes(config)
    processes, _ = worker_count(config, len(todo), len(todo))  # as `run` sizes the pool
    start = time.perf_counter()
    records = list(BACKENDS[config.backend](config, todo, processes))
    seconds = time.perf_counter() - start
    return seconds, sorted(json.dumps({k: v for k, v in r.items() if k != "duration_s"}, sort_keys=True)
                           for r in records)


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the pool's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure_ready(args: argparse.Namespace) -> dict[str, float]:
    """Medians over `args.fresh` fresh processes (see the module docstring)."""
    config = config_for(args).model_dump_json()
    samples = []
    for _ in range(args.fresh):
        done = subprocess.run([sys.executable, "-c", READY_PROBE, config], capture_output=True, text=True,
                              check=True)
        samples.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


VARIANTS = {"1 worker": {"workers": 1}, "2 workers": {"workers": 2}, "ray": {"workers": 2, "backend": "ray"}}


def variant_child(args: argparse.Namespace) -> None:
    """One timed run of `args.variant` in this fresh process (printed as JSON): the driver's context
    is built first, untimed, as `run` builds it before its episodes; for Ray, Ray is started and its
    worker processes are up before the timing (like a cluster that is already running), then the
    run is timed twice: "cold" (the workers import the package and build the context inside the
    timing) and "warm" (they hold it)."""
    from utp_env.runs.episode import context_for

    config = config_for(args, **VARIANTS[args.variant])
    context_for(config)
    out: dict[str, Any] = {}
    if config.backend == "ray":
        import ray

        @ray.remote
        def started() -> int:
            return os.getpid()

        ray.init(num_cpus=config.workers, include_dashboard=False, log_to_driver=False)
        ray.get([started.remote() for _ in range(2 * config.workers)])
        for name in ("cold", "warm"):
            seconds, records = episodes_through(config)
            out[name] = {"seconds": seconds, "records": records}
        ray.shutdown()
    else:
        before = cpu_seconds()
        seconds, records = episodes_through(config)
        out["run"] = {"seconds": seconds, "records": records, "cpu": cpu_seconds() - before}
    print(json.dumps(out))


def in_child(args: argparse.Namespace, variant: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--variant", variant, "--profile", args.profile,
               "--episodes", str(args.episodes)] + (["--db", args.db] if args.db else [])
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "RAY_DEDUP_LOGS": "0"})
    if done.returncode != 0:
        raise RuntimeError(f"the {variant} measurement failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure_runs(args: argparse.Namespace, ray: bool) -> dict[str, Any]:
    """Every variant in a fresh process per round (no run inherits caches another run warmed),
    variants alternating within each round; times, CPU and whether all records agree."""
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    records: list[list[str]] = []
    variants = ["1 worker", "2 workers"] + (["ray"] if ray else [])
    for number in range(args.rounds):
        for variant in variants if number % 2 == 0 else variants[::-1]:
            for name, result in in_child(args, variant).items():
                label = variant if name == "run" else f"ray {name}"
                times.setdefault(label, []).append(result["seconds"])
                if "cpu" in result:
                    cpu.setdefault(label, []).append(result["cpu"])
                records.append(result["records"])
    return {"times": times, "cpu": cpu, "episodes": len(records[0]),
            "mismatch": any(r != records[0] for r in records)}


def ratio(times: dict[str, list[float]], baseline: str, other: str) -> float:
    return statistics.median(times[baseline]) / statistics.median(times[other])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="full", choices=["full", "mini"])
    parser.add_argument("--db", default=None, help="A database directory instead of the sandbox profile")
    parser.add_argument("--episodes", type=int, default=200, help="Reference episodes per timed run")
    parser.add_argument("--rounds", type=int, default=2, help="Alternating rounds per comparison")
    parser.add_argument("--fresh", type=int, default=3, help="Fresh processes for the worker-ready figure")
    parser.add_argument("--no-ray", action="store_true", help="Skip the Ray comparison")
    parser.add_argument("--variant", choices=sorted(VARIANTS), default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.variant:
        variant_child(args)
        return 0

    from utp_env.dataset import open_dataset

    open_dataset(args.db, profile=args.profile, progress=False)  # a first-use build is not measured
    ready = measure_ready(args)
    print(f"worker ready, median of {args.fresh} fresh processes: imports {ready['imports']:.2f} s, "
          f"context (database, indices, dataset, agent) {ready['ready']:.3f} s ({ready['ready_cpu']:.3f} s CPU) "
          f"(target <= {TARGET_READY_S} s: {'yes' if ready['ready'] <= TARGET_READY_S else 'NO'}); "
          f"first episode {1000 * ready['first']:.0f} ms vs median {1000 * ready['median']:.0f} ms")
    ok = ready["ready"] <= TARGET_READY_S
    use_ray = not args.no_ray
    if use_ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            print("ray: not installed (pip install 'utp-env[ray]'); skipped")
            use_ray = False
    result = measure_runs(args, use_ray)
    t = result["times"]
    speedup = ratio(t, "1 worker", "2 workers")
    print(f"local, {result['episodes']} episodes, median of {args.rounds} rounds: 1 worker "
          f"{statistics.median(t['1 worker']):.2f} s, 2 workers {statistics.median(t['2 workers']):.2f} s -> "
          f"{speedup:.2f}x (target >= {TARGET_LOCAL}x: {'yes' if speedup >= TARGET_LOCAL else 'NO'})")
    n = max(result["episodes"], 1)
    per_episode = {name: 1000 * statistics.median(values) / n for name, values in result["cpu"].items()}
    print(f"  CPU per episode (all processes): 1 worker {per_episode['1 worker']:.0f} ms, "
          f"2 workers {per_episode['2 workers']:.0f} ms; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs (on a loaded machine the workers share this session's CPU time, so the "
          "speedup cannot show)")
    ok &= speedup >= TARGET_LOCAL
    if use_ray:
        cold, warm = ratio(t, "1 worker", "ray cold"), ratio(t, "1 worker", "ray warm")
        print(f"ray, {result['episodes']} episodes, median of {args.rounds} rounds: 1 local worker "
              f"{statistics.median(t['1 worker']):.2f} s, Ray 2 CPUs cold {statistics.median(t['ray cold']):.2f} s "
              f"-> {cold:.2f}x (target >= {TARGET_RAY}x: {'yes' if cold >= TARGET_RAY else 'NO'}), warm "
              f"{statistics.median(t['ray warm']):.2f} s -> {warm:.2f}x")
        ok &= cold >= TARGET_RAY
    if result["mismatch"]:
        print("MISMATCH: the runs' records differ")
    ok &= not result["mismatch"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
