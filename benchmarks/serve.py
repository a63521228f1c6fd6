"""Serving benchmark: `utp-env serve` (OpenEnv, WebSocket sessions) under many concurrent scripted episodes.

Each episode is a query's scripted episode (lookups, a bad call, the reference plan sent with
`submit_plan`), played first in-process (the baseline, and each episode's expected reward), then
through servers started here on 127.0.0.1, one session (a new WebSocket) per episode. Every served
reward must equal its in-process twin (else `MISMATCH`). In one run:

1. **latency** on one server process: `--sessions` concurrent sessions, paced (each session waits a
   seeded exponential time of mean `--think-ms` before a call, as an agent waits for its model):
   p50 and p99 of a tool call, the target being about p99;
2. **throughput**, `--workers 1` against `--workers N` behind one address: the same episodes back to
   back (each session sends its next call the moment the answer arrives) from two client processes,
   so the clients weigh the same on both; the ratio is the scaling. With the clients on the same
   cores as the workers, N = 2 workers on 2 cores reach at most 2s/(s + c) of one worker, s and c the
   server's and the clients' CPU per tool call (one worker uses one core, s per call; two workers and
   the clients share both, s + c per call): the script measures s and c in the one-worker runs and
   prints that bound beside the ratio, and how much of a core the one worker had (below 1, the machine
   gave it less, and the bound does not hold). Both servers are started together and each first
   plays the episodes once untimed (every worker process builds its own evaluation memos on its
   first plans); then `--rounds` rounds time one worker, then N, and the figures are the medians of
   the rounds (one timing of each used to swing between 1.08x and 1.66x on the same machine);
3. **CPU per tool call**: the server's (s above, its sessions' starts and connections included) beside
   the env's own work on the same calls in-process (the difference is what serving costs), and on
   **light calls** (lookups and plan views, as most of an agent's calls are) played back to back on
   kept sessions (one WebSocket per session, a `reset` per episode of 30 calls, as
   `utp_env.rl.remote.remote_env_class` plays them): the server's CPU per call against the same
   calls' in-process;
4. **memory**: `--hold` sessions opened, reset and left idle on a fresh server: its resident memory
   before and after, and a last step on every one (all must still be served);
5. **keep-alive**: the round trip of `GET /health` on one kept-alive HTTP connection and on a new
   connection each (Nagle's algorithm against delayed ACKs used to add ~42 ms to the first);
6. the **load** of the machine (`/proc/loadavg`, cores) before and after, printed with the numbers:
   on a machine whose cores also run other work, p99 and the scaling are that work's as much as ours.

    python benchmarks/serve.py [--profile full|mini] [--db PATH] [--episodes 200] [--sessions 50]
                               [--think-ms 200] [--workers 2] [--hold 200]

Targets: p99 < 50 ms at 50 paced sessions; N workers >= 90% of their bound against one (2s/(s + c)
for 2 workers on 2 cores); server CPU <= 0.8 ms per light call (the env's own: about 0.1 ms); 200 idle
sessions held at < 2 MB each. Exit status 0 when every target is met, 1 when one is missed, 2 on a
reward mismatch.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import http.client
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from utp_env.env.config import open_database, query_pool, reference_plan
from utp_env.env.core import UTPEnv
from utp_env.plan_format.write import format_plan

TARGET_HELD = 200
TARGET_P99_MS = 50.0
TARGET_IDLE_MB = 2.0
TARGET_OF_BOUND = 0.9
TARGET_LIGHT_CPU_MS = 0.8
LIGHT_CALLS = 30

Call = tuple[str, dict[str, Any]]
Work = list[tuple[str, int, list[Call]]]


def episodes(db_path: str | None, profile: str, n: int) -> Work:
    """`n` scripted episodes (query id, seed, calls), cycling over the queries that have a reference plan."""
    db = open_database(db_path, profile)
    pool = [q for q in query_pool(db) if reference_plan(db, q.query_id) is not None]
    out = []
    for i in range(n):
        q = pool[i % len(pool)]
        plan = reference_plan(db, q.query_id)
        assert plan is not None
        calls: list[Call] = [("search_stays", {"city": q.org, "limit": 3}),
                             ("search_attractions", {"city": q.org, "limit": 3}),
                             ("view_plan", {"bogus": 1}),
                             ("view_plan", {}),
                             ("submit_plan", {"plan": json.dumps(format_plan(plan))})]
        out.append((q.query_id, i, calls))
    return out


def light_episodes(db_path: str | None, profile: str, n: int, calls: int = LIGHT_CALLS) -> Work:
    """`n` episodes of `calls` light calls each (lookups in the query's cities and views of the plan, no
    submit), cycling over the queries."""
    db = open_database(db_path, profile)
    pool = query_pool(db)
    out = []
    for i in range(n):
        q = pool[i % len(pool)]
        cycle: list[Call] = [("search_stays", {"city": q.org, "limit": 3}),
                             ("search_attractions", {"city": q.org, "limit": 3}),
                             ("search_restaurants", {"city": q.org, "limit": 3}),
                             ("search_events", {"city": q.org, "start_date": q.dates[0], "end_date": q.dates[-1]}),
                             ("view_plan", {})]
        out.append((q.query_id, i, [cycle[k % len(cycle)] for k in range(calls)]))
    return out


def in_process(db_path: str | None, profile: str, work: Work) -> tuple[list[float], float, float]:
    """Play every episode on one env in this process: (rewards, wall seconds, CPU seconds)."""
    env = UTPEnv(db_path=db_path, profile=profile)
    rewards = []
    start, cpu = time.perf_counter(), time.process_time()
    for query_id, seed, calls in work:
        env.reset(seed=seed, options={"query_id": query_id})
        reward = 0.0
        for name, args in calls:
            _, reward, terminated, truncated, _ = env.step({"tool": name, "args": args})
            if terminated or truncated:
                break
        rewards.append(float(reward))
    return rewards, time.perf_counter() - start, time.process_time() - cpu


def load() -> str:
    """The machine's load averages (1, 5, 15 min) and cores, as Linux reports them."""
    one, five, fifteen = Path("/proc/loadavg").read_text().split()[:3]
    return f"load average {one} {five} {fifteen} on {os.cpu_count()} cores"


@contextmanager
def server(db_path: str | None, profile: str, max_sessions: int, workers: int = 1) -> Iterator[tuple[str, int]]:
    """`utp-env serve --port 0 --workers N` (OpenEnv) on 127.0.0.1: yields (base URL, pid)."""
    where = ["--db", db_path] if db_path else ["--profile", profile]
    proc = subprocess.Popen([sys.executable, "-m", "utp_env", "serve", "--host", "127.0.0.1", "--port", "0",
                             "--workers", str(workers), "--max-sessions", str(max_sessions),
                             "--max-client-sessions", str(max_sessions), *where], stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        if " on http://" not in line:
            raise RuntimeError(f"the server did not start: {line}{proc.stderr.read()}")
        yield line.rsplit(" on ", 1)[1].strip(), proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of process `pid` and of its children alive now (the workers)."""
    total = 0.0
    children = Path(f"/proc/{pid}/task/{pid}/children")
    for p in [pid, *(int(c) for c in (children.read_text().split() if children.exists() else []))]:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def rss_mb(pid: int) -> float:
    """Resident memory of process `pid` in MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


async def drive(url: str, work: Work, sessions: int, think: float = 0.0, kept: bool = False
                ) -> tuple[list[float], list[float], float]:
    """Play `work` against `url` with `sessions` concurrent WebSocket sessions (OpenEnv's messages, sent
    as JSON text: the lightest client, so that the server is what is measured), each waiting before
    each call a time drawn from an exponential distribution of mean `think` seconds (0: back to back).
    Each episode has a session of its own (a new WebSocket), or with `kept` each session plays its
    episodes one after the other on one WebSocket (a `reset` each, as `remote_env_class` does):
    (rewards in order, tool-call latencies in seconds, wall seconds)."""
    import websockets

    rewards = [float("nan")] * len(work)
    latencies: list[float] = []
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(work)):
        queue.put_nowait(i)
    ws_url = url.replace("http://", "ws://") + "/ws"

    async def episode(ws: Any, i: int, rng: np.random.Generator) -> None:
        query_id, seed, calls = work[i]
        await ws.send(json.dumps({"type": "reset", "data": {"seed": seed, "query_id": query_id}}))
        token = json.loads(await ws.recv())["data"]["metadata"]["episode"]
        for name, args in calls:
            if think:
                await asyncio.sleep(float(rng.exponential(think)))
            t0 = time.perf_counter()
            await ws.send(json.dumps({"type": "step", "data": {
                "type": "call_tool", "tool_name": name, "arguments": args, "metadata": {"episode": token}}}))
            answer = json.loads(await ws.recv())["data"]
            latencies.append(time.perf_counter() - t0)
            if answer["done"]:
                rewards[i] = float(answer["reward"])
                break

    async def worker(k: int) -> None:
        rng = np.random.default_rng(k)
        if kept:
            async with websockets.connect(ws_url, max_size=None, compression=None) as ws:
                while not queue.empty():
                    await episode(ws, queue.get_nowait(), rng)
            return
        while not queue.empty():
            i = queue.get_nowait()
            async with websockets.connect(ws_url, max_size=None, compression=None) as ws:
                await episode(ws, i, rng)

    start = time.perf_counter()
    await asyncio.gather(*(worker(k) for k in range(min(sessions, len(work)))))
    return rewards, latencies, time.perf_counter() - start


def _client_process(part: int, url: str, work: Work, sessions: int, ready: Any, out: Any) -> None:
    """A client process: import everything, wait for the other one, then drive the server; puts
    (part, rewards, start, end, CPU seconds) with wall-clock times (comparable across processes)."""
    import websockets  # noqa: F401  (imported before the start line, not timed)

    ready.wait()
    start, cpu = time.time(), time.process_time()
    rewards, _, _ = asyncio.run(drive(url, work, sessions))
    out.put((part, rewards, start, time.time(), time.process_time() - cpu))


def throughput(url: str, work: Work, sessions: int) -> tuple[float, list[float], float, float]:
    """Episodes per second of `work` played back to back on `url` by two client processes (half each):
    (episodes/s from the first start to the last end, rewards in order, wall seconds, the clients' CPU
    seconds)."""
    parts = [work[0::2], work[1::2]]
    ctx = multiprocessing.get_context("spawn")
    ready, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_client_process, args=(k, url, p, max(1, sessions // 2), ready, out))
             for k, p in enumerate(parts)]
    for p in procs:
        p.start()
    results = [out.get() for _ in procs]
    for p in procs:
        p.join()
    wall = max(r[3] for r in results) - min(r[2] for r in results)
    rewards_of = {r[0]: r[1] for r in results}
    merged = [0.0] * len(work)
    merged[0::2], merged[1::2] = rewards_of[0], rewards_of[1]
    return len(work) / wall, merged, wall, sum(r[4] for r in results)


class ScalingRound(NamedTuple):
    """One timed round of the throughput comparison: one worker, then N, on the same episodes."""

    one: float  # episodes per second, 1 worker
    many: float  # episodes per second, N workers
    s_ms: float  # the 1 worker's server CPU per tool call
    c_ms: float  # the clients' CPU per tool call with 1 worker
    one_core: float  # the share of a core the 1 worker had
    many_s_ms: float  # the N workers' server CPU per tool call
    many_c_ms: float  # the clients' CPU per tool call with N workers
    rewards_one: list[float]  # the 1-worker run's rewards, in episode order
    rewards_many: list[float]  # the N-worker run's

    @property
    def scale(self) -> float:
        return self.many / self.one


def scaling_round(one_url: str, one_pid: int, many_url: str, many_pid: int, work: Work, sessions: int,
                  steps: int) -> ScalingRound:
    """Time `work` on the one-worker server, then on the N-worker one (both warmed by the caller)."""
    cpu = cpu_seconds(one_pid)
    one, rewards_one, one_wall, client_cpu = throughput(one_url, work, sessions)
    cpu = cpu_seconds(one_pid) - cpu
    many_cpu = cpu_seconds(many_pid)
    many, rewards_many, _, many_client_cpu = throughput(many_url, work, sessions)
    many_cpu = cpu_seconds(many_pid) - many_cpu
    return ScalingRound(one, many, 1000 * cpu / steps, 1000 * client_cpu / steps, cpu / one_wall,
                        1000 * many_cpu / steps, 1000 * many_client_cpu / steps, rewards_one, rewards_many)


def median_of(rounds: list[ScalingRound], name: str) -> float:
    return statistics.median(getattr(r, name) for r in rounds)


def scaling_bound(workers: int, cores: int, server_ms: float, client_ms: float) -> float:
    """The most `workers` server processes can reach against one on `cores` cores that also run the
    clients: N workers serve at most N calls per `server_ms` (a core each) and, with the clients, spend
    `server_ms + client_ms` of the cores' time per call, so at most min(N / s, cores / (s + c)) calls per
    ms; the ratio of that for N workers and for one (2s/(s + c) for two workers on two cores)."""
    def most(n: int) -> float:
        return min(n / server_ms, cores / (server_ms + client_ms))

    return most(workers) / most(1)


async def hold(url: str, n: int, work: Work, pid: int) -> tuple[float, float, int]:
    """Open and reset `n` sessions, leave them idle; (RSS before MB, RSS with them MB, sessions still served)."""
    import websockets

    ws_url = url.replace("http://", "ws://") + "/ws"
    before = rss_mb(pid)
    sockets = []
    for k in range(n):
        ws = await websockets.connect(ws_url, max_size=None, compression=None)
        query_id, seed, _ = work[k % len(work)]
        await ws.send(json.dumps({"type": "reset", "data": {"seed": seed, "query_id": query_id}}))
        await ws.recv()
        sockets.append(ws)
    held = rss_mb(pid)
    served = 0
    for ws in sockets:
        await ws.send(json.dumps({"type": "step", "data": {"type": "call_tool", "tool_name": "view_plan"}}))
        served += int(json.loads(await ws.recv())["data"]["observation"]["ok"])
    for ws in sockets:
        await ws.close()
    return before, held, served


def keep_alive(url: str, n: int = 200) -> tuple[float, float]:
    """Median ms of `GET /health` on one kept-alive connection, and on a new connection per request."""
    host, port = url.split("://", 1)[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port))
    kept, fresh = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        conn.request("GET", "/health")
        conn.getresponse().read()
        kept.append(time.perf_counter() - t0)
    conn.close()
    for _ in range(n):
        c = http.client.HTTPConnection(host, int(port))
        t0 = time.perf_counter()
        c.request("GET", "/health")
        c.getresponse().read()
        fresh.append(time.perf_counter() - t0)
        c.close()
    return 1000 * statistics.median(kept), 1000 * statistics.median(fresh)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", choices=["full", "mini"], default="full")
    parser.add_argument("--db", help="a database directory instead of the embedded sandbox")
    parser.add_argument("--episodes", type=int, default=200, help="scripted episodes per measurement")
    parser.add_argument("--sessions", type=int, default=50, help="concurrent sessions while driving")
    parser.add_argument("--think-ms", type=float, default=200.0,
                        help="a paced agent's mean wait before each call, for the latency at its pace (default 200)")
    parser.add_argument("--workers", type=int, default=2, help="the workers compared with one (default 2)")
    parser.add_argument("--hold", type=int, default=TARGET_HELD, help="idle sessions held at once")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of 1 worker then N (default 3; medians)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, not {args.rounds}")
    db, profile = args.db, args.profile
    print(f"machine at the start: {load()}")
    work = episodes(db, profile, args.episodes)
    light = light_episodes(db, profile, args.episodes)
    local, local_s, local_cpu = in_process(db, profile, work)
    _, _, light_local_cpu = in_process(db, profile, light)
    gc.collect()
    gc.freeze()  # this process holds the database too: its full collections must not count as server latency
    steps = sum(len(c) for _, _, c in work)
    print(f"in-process: {len(work)} episodes ({steps} steps) in {local_s:.2f} s: "
          f"{len(work) / local_s:.1f} episodes/s, {1000 * local_s / steps:.2f} ms per step")
    max_sessions = max(args.sessions, args.hold) + 8
    same = True

    with server(db, profile, max_sessions) as (url, pid):
        ka, fresh = keep_alive(url)
        print(f"GET /health: {ka:.2f} ms on one kept-alive connection, {fresh:.2f} ms on a new connection each "
              "(medians of 200)")
        paced_rewards, paced_lat, _ = asyncio.run(drive(url, work, args.sessions, args.think_ms / 1000))
        same &= paced_rewards == local
        paced = np.array(paced_lat) * 1000
        p50, p99 = float(np.percentile(paced, 50)), float(np.percentile(paced, 99))
        print(f"paced, 1 process: {args.sessions} concurrent sessions each waiting {args.think_ms:.0f} ms on average "
              f"(exponential) before a call: tool call p50 {p50:.1f} ms, p99 {p99:.1f} ms over {len(paced)} calls; "
              f"rewards equal to in-process: {'yes' if paced_rewards == local else 'MISMATCH'} [{load()}]")
        light_cpu = cpu_seconds(pid)
        asyncio.run(drive(url, light, args.sessions, kept=True))
        light_cpu = cpu_seconds(pid) - light_cpu
    with (server(db, profile, max_sessions) as (one_url, one_pid),
          server(db, profile, max_sessions, workers=args.workers) as (many_url, many_pid)):
        for url in (one_url, many_url):  # untimed: each worker's first plans build its memos
            same &= throughput(url, work, args.sessions)[1] == local
        rounds = [scaling_round(one_url, one_pid, many_url, many_pid, work, args.sessions, steps)
                  for _ in range(args.rounds)]
    rounds_same = all(r.rewards_one == local and r.rewards_many == local for r in rounds)
    same &= rounds_same
    one, many = median_of(rounds, "one"), median_of(rounds, "many")
    scale = median_of(rounds, "scale")
    s_ms, c_ms, env_ms = median_of(rounds, "s_ms"), median_of(rounds, "c_ms"), 1000 * local_cpu / steps
    cores = os.cpu_count() or 1
    bound = scaling_bound(args.workers, cores, s_ms, c_ms)
    of_bound = statistics.median(r.scale / scaling_bound(args.workers, cores, r.s_ms, r.c_ms) for r in rounds)
    print(f"back to back, two client processes, {args.sessions} sessions, medians of {len(rounds)} rounds: 1 worker "
          f"{one:.1f} episodes/s, {args.workers} workers {many:.1f} episodes/s: {scale:.2f}x (rounds: "
          f"{', '.join(f'{r.scale:.2f}x' for r in rounds)}); rewards equal to in-process: "
          f"{'yes' if rounds_same else 'MISMATCH'} [{load()}]")
    print(f"server CPU per tool call (1 worker, the session's start and connection included): "
          f"{s_ms:.2f} ms, against {env_ms:.2f} ms per step in-process (the env's own work on the same calls; "
          f"serving: {s_ms - env_ms:.2f} ms per call); the 1 worker used {median_of(rounds, 'one_core'):.2f} of a core")
    print(f"client CPU per tool call (the benchmark's two client processes): {c_ms:.2f} ms; bound of {args.workers} "
          f"workers against 1 with the clients on the same {cores} cores, min(N/s, {cores}/(s + c)) / min(1/s, "
          f"{cores}/(s + c)) = {bound:.2f}x (2s/(s + c) for 2 on 2); measured {scale:.2f}x = {of_bound:.0%} "
          f"of the bound (the median of the rounds' ratios to their own bounds; with {args.workers} workers: server "
          f"{median_of(rounds, 'many_s_ms'):.2f} ms, clients {median_of(rounds, 'many_c_ms'):.2f} ms per call)")
    light_steps = sum(len(c) for _, _, c in light)
    light_ms, light_local_ms = 1000 * light_cpu / light_steps, 1000 * light_local_cpu / light_steps
    print(f"light calls on kept sessions ({len(light)} episodes of {LIGHT_CALLS} lookups and plan views, "
          f"{args.sessions} sessions, one WebSocket each, back to back, 1 worker): server CPU {light_ms:.2f} ms per "
          f"call (its episodes' starts included), against {light_local_ms:.2f} ms in-process [{load()}]")

    with server(db, profile, max_sessions) as (url, pid):  # a fresh server: no memory freed by earlier sessions
        asyncio.run(drive(url, work[:1], 1))  # one episode first: what any first session loads is not counted
        before, held, served = asyncio.run(hold(url, args.hold, work, pid))
        per = (held - before) / args.hold
        print(f"{args.hold} idle sessions held, {served} still served; server RSS {before:.1f} MB -> {held:.1f} MB: "
              f"{per:.3f} MB per idle session (a fresh server after one episode)")
    print(f"machine at the end: {load()}")
    print(f"target: p99 < {TARGET_P99_MS:.0f} ms at {args.sessions} paced sessions ({p99:.1f} ms); "
          f"{args.workers} workers >= {TARGET_OF_BOUND:.0%} of the bound ({of_bound:.0%}); server CPU <= "
          f"{TARGET_LIGHT_CPU_MS} ms per light call ({light_ms:.2f} ms); {TARGET_HELD} sessions held ({served}); "
          f"< {TARGET_IDLE_MB:.0f} MB per idle session ({per:.2f} MB)")
    if not same:
        return 2
    met = (p99 < TARGET_P99_MS and of_bound >= TARGET_OF_BOUND and light_ms <= TARGET_LIGHT_CPU_MS
           and served >= TARGET_HELD and per < TARGET_IDLE_MB)
    return 0 if met else 1


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
