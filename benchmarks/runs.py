"""Run benchmark (issue 14): does a run get faster with more workers, and how soon is a worker ready?

Three measurements, each against its baseline in the same invocation:

1. Worker ready: fresh Python processes import the package, then build a run's context
   (`utp_env.runs.episode.context_for`: database, indices, queries, reference plans, agent) and
   run a few episodes. Reported: the imports, the context (target <= 0.5 s on the full sandbox)
   and the first episode against the median of the next ones (anything still built lazily shows
   there). Medians over `--fresh` processes.
2. Local: `--episodes` reference episodes through the run backend (`utp_env.runs.runner.BACKENDS`:
   the pool's start-up, scheduling and result transfer included; the summary and plots that `run`
   writes afterwards are not episodes and are left out) with 2 local workers against 1, in
   alternating rounds; target >= 1.6x. The driver's context is built before the first round, as
   `run` builds it before its episodes.
3. Ray: in a child process (Ray and forked pool workers are kept apart), Ray with 2 CPUs against 1
   local worker, alternating rounds. "cold": a fresh Ray instance each round (its start, like a
   cluster that is already up, not timed; its workers import the package and build the context
   inside the timing); "warm": a second run on the same instance, whose workers hold the
   dataset already. Target >= 1.5x (cold).

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
import tempfile
import time
from pathlib import Path
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
    from utp_env.runs.runner import BACKENDS, plan_episodes

    todo = plan_episodes(config)
    start = time.perf_counter()
    records = list(BACKENDS[config.backend](config, todo))
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


def measure_local(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    from utp_env.runs.episode import context_for

    one, two = config_for(args, workers=1), config_for(args, workers=2)
    context_for(one)  # the driver's context, built before the episodes as `run` does
    context_for(two)
    times: dict[str, list[float]] = {"1 worker": [], "2 workers": []}
    cpu: dict[str, list[float]] = {"1 worker": [], "2 workers": []}
    reference: list[str] | None = None
    mismatch = False
    for _ in range(args.rounds):
        for name, config in (("1 worker", one), ("2 workers", two)):
            before = cpu_seconds()
            seconds, records = episodes_through(config)
            cpu[name].append(cpu_seconds() - before)
            times[name].append(seconds)
            reference = reference or records
            mismatch |= records != reference
    return {"times": times, "cpu": cpu, "episodes": len(reference or []), "mismatch": mismatch}


def measure_ray(args: argparse.Namespace) -> dict[str, Any]:
    """Runs this script as a child with --ray-child; returns what it printed."""
    command = [sys.executable, __file__, "--ray-child", "--profile", args.profile, "--episodes", str(args.episodes),
               "--rounds", str(args.rounds)] + (["--db", args.db] if args.db else [])
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "RAY_DEDUP_LOGS": "0"})
    if done.returncode != 0:
        raise RuntimeError(f"the Ray measurement failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def ray_child(args: argparse.Namespace) -> None:
    import ray

    from utp_env.runs.episode import context_for

    local = config_for(args, workers=1)
    context_for(local)
    times: dict[str, list[float]] = {"1 worker": [], "ray cold": [], "ray warm": []}
    reference: list[str] | None = None
    mismatch = False

    @ray.remote
    def started() -> int:
        return os.getpid()

    for _ in range(args.rounds):
        seconds, records = episodes_through(local)
        times["1 worker"].append(seconds)
        reference = reference or records
        mismatch |= records != reference
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        ray.get([started.remote() for _ in range(4)])  # Ray's own worker processes are up (not timed)
        for name in ("ray cold", "ray warm"):
            seconds, records = episodes_through(config_for(args, workers=2, backend="ray"))
            times[name].append(seconds)
            mismatch |= records != reference
        ray.shutdown()
    print(json.dumps({"times": times, "episodes": len(reference or []), "mismatch": mismatch}))


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
    parser.add_argument("--ray-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ray_child:
        ray_child(args)
        return 0

    from utp_env.dataset import open_dataset

    open_dataset(args.db, profile=args.profile, progress=False)  # a first-use build is not measured
    ready = measure_ready(args)
    print(f"worker ready, median of {args.fresh} fresh processes: imports {ready['imports']:.2f} s, "
          f"context (database, indices, dataset, agent) {ready['ready']:.3f} s ({ready['ready_cpu']:.3f} s CPU) "
          f"(target <= {TARGET_READY_S} s: {'yes' if ready['ready'] <= TARGET_READY_S else 'NO'}); "
          f"first episode {1000 * ready['first']:.0f} ms vs median {1000 * ready['median']:.0f} ms")
    ok = ready["ready"] <= TARGET_READY_S
    with tempfile.TemporaryDirectory() as tmp:
        local = measure_local(args, Path(tmp))
    t = local["times"]
    speedup = ratio(t, "1 worker", "2 workers")
    print(f"local, {local['episodes']} episodes, median of {args.rounds} rounds: 1 worker "
          f"{statistics.median(t['1 worker']):.2f} s, 2 workers {statistics.median(t['2 workers']):.2f} s -> "
          f"{speedup:.2f}x (target >= {TARGET_LOCAL}x: {'yes' if speedup >= TARGET_LOCAL else 'NO'})"
          + ("  MISMATCH: records differ" if local["mismatch"] else ""))
    n = max(local["episodes"], 1)
    per_episode = {name: 1000 * statistics.median(values) / n for name, values in local["cpu"].items()}
    print(f"  CPU per episode (all processes): 1 worker {per_episode['1 worker']:.0f} ms, "
          f"2 workers {per_episode['2 workers']:.0f} ms; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (a loaded machine cannot show the speedup)")
    ok &= speedup >= TARGET_LOCAL and not local["mismatch"]
    if not args.no_ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            print("ray: not installed (pip install 'utp-env[ray]'); skipped")
        else:
            result = measure_ray(args)
            t = result["times"]
            cold, warm = ratio(t, "1 worker", "ray cold"), ratio(t, "1 worker", "ray warm")
            print(f"ray, {result['episodes']} episodes, median of {args.rounds} rounds: 1 local worker "
                  f"{statistics.median(t['1 worker']):.2f} s, Ray 2 CPUs cold {statistics.median(t['ray cold']):.2f} s "
                  f"-> {cold:.2f}x (target >= {TARGET_RAY}x: {'yes' if cold >= TARGET_RAY else 'NO'}), warm "
                  f"{statistics.median(t['ray warm']):.2f} s -> {warm:.2f}x"
                  + ("  MISMATCH: records differ" if result["mismatch"] else ""))
            ok &= cold >= TARGET_RAY and not result["mismatch"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
