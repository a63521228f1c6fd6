"""Benchmark: 10,000 Monte Carlo rollouts of a 7-day plan, vectorised engine vs the per-rollout loop.

    python benchmarks/simulate.py [--profile full|mini] [--rollouts 10000] [--loop-rollouts N]
                                  [--memory-rollouts 10000000]

Builds a 7-day, 3-city plan (origin -> B -> C -> origin, two nights in B, three in C) from the
sandbox, then times, in one run: (1) drawing the delays, (2) the vectorised engine, (3) the whole
`simulate` call (compile + draws + engine + report), and (4) the plain Python loop baseline
(`utp_env.simulation.loop`) on the same draws (all rollouts if that takes < 30 s, else a prefix,
scaled). Targets (README, Performance): vectorised < 100 ms and >= 30x the loop.

Also: `simulate(n=1000)` without a config (the shipped YAML, cached) vs with one, timed
interleaved (target <= 1.2x); the chunked report of 3 blocks + a bit vs the same draws summarised
at once (must be equal); and, in a child process, the peak RSS that `--memory-rollouts` rollouts
add over the process before the call (target < 1 GB for 10M; 0 skips it).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from utp_env.config import load_uncertainty
from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg, parse_hhmm
from utp_env.simulation import compile_for, draw_delays, simulate
from utp_env.simulation.engine import run
from utp_env.simulation.loop import run_loop
from utp_env.tools.database import Database

SERVICES = (("flight", "flights", "flight_number"), ("train", "trains", "train_number"), ("bus", "buses", "bus_id"))
STATION_MINUTES = {"flight": 90, "train": 45, "bus": 30}


def _service(db: Database, origin: str, dest: str, modes: tuple[str, ...]) -> TransportLeg | None:
    """The earliest same-day service origin -> dest leaving 07:00-13:00 by one of `modes`."""
    best = None
    for mode, table_name, column in SERVICES:
        if mode not in modes:
            continue
        table = db.tables[table_name]
        for i in db.pair_rows(table_name, origin, dest):
            dep = parse_hhmm(table.columns["dep_time"][i])
            arr = parse_hhmm(table.columns["arr_time"][i])
            if table.columns["arr_day_offset"][i] == 0 and 420 <= dep <= 780 and arr > dep and arr <= 1080:
                leg = TransportLeg(mode=mode, number=table.columns[column][i], origin=origin, destination=dest,
                                   dep=dep, arr=arr, planned_arr=arr + 30)
                if best is None or (dep, mode) < (best.dep, best.mode):
                    best = leg
    return best


def _rich(db: Database, city: str) -> bool:
    return (len(db.city_rows("attractions", city)) >= 6 and len(db.city_rows("restaurants", city)) >= 4
            and len(db.city_rows("accommodations", city)) >= 1)


def find_route(db: Database) -> tuple[TransportLeg, TransportLeg, TransportLeg]:
    """A triangle origin -> B (flight) -> C -> origin of same-day services, B and C with venues."""
    flights = db.tables["flights"].columns
    for a, b in sorted(set(zip(flights["origin_city"], flights["dest_city"], strict=True))):
        if not _rich(db, b):
            continue
        first = _service(db, a, b, ("flight",))
        if first is None:
            continue
        for c in db.cities:
            if c in (a, b) or not _rich(db, c):
                continue
            second = _service(db, b, c, ("flight", "train", "bus"))
            third = _service(db, c, a, ("flight", "train", "bus")) if second else None
            if second and third:
                return first, second, third
    raise LookupError("no origin -> B -> C -> origin route of same-day services in this database")


class _Venues:
    """Cycles through a city's venues so a plan repeats none within a city."""

    def __init__(self, db: Database, city: str) -> None:
        self.db, self.city = db, city
        self.attr = [int(i) for i in db.city_rows("attractions", city)]
        self.rest = [int(i) for i in db.city_rows("restaurants", city)]
        self.hotel = db.tables["accommodations"].columns["name"][int(db.city_rows("accommodations", city)[0])]

    def attraction(self) -> tuple[str, int]:
        i = self.attr.pop(0)
        t = self.db.tables["attractions"].columns
        return t["name"][i], round(float(t["visit_duration_hr"][i]) * 60)

    def restaurant(self) -> str:
        i = self.rest.pop(0)
        self.rest.append(i)
        return self.db.tables["restaurants"].columns["name"][i]


def _visit(name: str, start: int, minutes: int, venue_type: str) -> PlanItem:
    return PlanItem(name=name, activity="visit", start=start, end=start + minutes, venue_type=venue_type)


def _fill(v: _Venues, t: int) -> list[PlanItem]:
    """Meals and attractions from time t to the night's stay, with 30 min buffers on attractions."""
    items: list[PlanItem] = []
    if t <= 540:
        items.append(_visit(v.restaurant(), max(t, 510), 60, "restaurant"))
        t = items[-1].end + 15
    name, minutes = v.attraction()
    items.append(_visit(name, t, minutes + 30, "attraction"))
    t = items[-1].end + 15
    if t <= 840:
        items.append(_visit(v.restaurant(), max(t, 750), 75, "restaurant"))
        t = items[-1].end + 15
    if t <= 960:
        name, minutes = v.attraction()
        items.append(_visit(name, t, minutes + 30, "attraction"))
        t = items[-1].end + 15
    items.append(_visit(v.restaurant(), max(t, 1170), 90, "restaurant"))
    items.append(PlanItem(name=v.hotel, activity="stay", start=items[-1].end + 15, end=1440 + 480,
                          venue_type="accommodation"))
    return items


def _travel(v_from: _Venues | None, v_to: _Venues | None, leg: TransportLeg, day: int, date: str) -> Day:
    items: list[PlanItem] = []
    lead = STATION_MINUTES[leg.mode]
    if v_from is not None:
        items.append(PlanItem(name=v_from.hotel, activity="stay", start=leg.dep - lead - 90,
                              end=leg.dep - lead - 45, venue_type="accommodation"))
        items.append(PlanItem(name=v_from.hotel, activity="checkout", start=leg.dep - lead - 45,
                              end=leg.dep - lead - 15, venue_type="accommodation"))
    items.append(PlanItem(name=f"{leg.origin} {'Airport' if leg.mode == 'flight' else 'Station'}",
                          activity="arrive", start=leg.dep - lead, end=leg.dep - lead + 30, venue_type="transit"))
    if v_to is not None:
        items.append(PlanItem(name=v_to.hotel, activity="check-in", start=leg.planned_arrival + 45,
                              end=leg.planned_arrival + 75, venue_type="accommodation"))
        items += _fill(v_to, leg.planned_arrival + 90)
    return Day(day=day, date=date, cities=[leg.origin, leg.destination], transport=[leg], items=items)


def week_plan(db: Database) -> Plan:
    """A 7-day, 3-city plan: fly to B (2 nights), go on to C (3 nights), return on day 7."""
    first, second, third = find_route(db)
    vb, vc = _Venues(db, first.destination), _Venues(db, second.destination)
    dates = [f"2025-11-{d:02d}" for d in range(3, 10)]
    days = [_travel(None, vb, first, 1, dates[0])]
    for d in (2, 3):
        days.append(Day(day=d, date=dates[d - 1], cities=[vb.city],
                        items=[PlanItem(name=vb.hotel, activity="stay", start=480, end=510,
                                        venue_type="accommodation"), *_fill(vb, 525)]))
    days.append(_travel(vb, vc, second, 4, dates[3]))
    for d in (5, 6):
        days.append(Day(day=d, date=dates[d - 1], cities=[vc.city],
                        items=[PlanItem(name=vc.hotel, activity="stay", start=480, end=510,
                                        venue_type="accommodation"), *_fill(vc, 525)]))
    days.append(_travel(vc, None, third, 7, dates[6]))
    _end_stays_at_next_morning(days)
    return Plan(query_id="benchmark-week", days=days, source="benchmarks/simulate.py")


def _end_stays_at_next_morning(days: list[Day]) -> None:
    """Each night's stay ends when the next day's first item starts."""
    for today, tomorrow in itertools.pairwise(days):
        last = today.items[-1]
        if last.activity == "stay" and tomorrow.items:
            today.items[-1] = last.model_copy(update={"end": 1440 + int(tomorrow.items[0].start or 480)})


def _best(fn, repeat: int) -> float:
    """Best wall time of `repeat` calls (the least disturbed by other processes)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _cpu(fn, repeat: int) -> float:
    """Mean process CPU time of a call (immune to waiting for a busy machine's cores)."""
    t0 = time.process_time()
    for _ in range(repeat):
        fn()
    return (time.process_time() - t0) / repeat


def _rss_kib(field: str) -> int:
    """VmRSS or VmHWM (peak) of this process in KiB, from /proc/self/status (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def memory_child(profile: str, db_path: str | None, n: int) -> int:
    """Run in a child process: print the peak RSS that `simulate(n)` adds, then the report's headline."""
    from utp_env.tools.sandbox import open_sandbox

    db = Database.open(db_path) if db_path else open_sandbox(profile)
    plan = week_plan(db)
    config = load_uncertainty()
    simulate(plan, None, db, n=1000, seed=0, config=config)  # warm every lazy index
    try:
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
        before = _rss_kib("VmRSS")
    except OSError:
        before = _rss_kib("VmHWM")
    t0 = time.perf_counter()
    report = simulate(plan, None, db, n=n, seed=0, config=config)
    took = time.perf_counter() - t0
    added = _rss_kib("VmHWM") - before
    print(f"{added} {took:.3f} {report.hold_rate!r} {report.trip_end_lateness.p95!r}")
    return 0


def _memory(args: argparse.Namespace) -> None:
    n = args.memory_rollouts
    cmd = [sys.executable, __file__, "--memory-child", str(n), "--profile", args.profile]
    if args.db:
        cmd += ["--db", args.db]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
    added, took, hold, p95 = int(out[0]), float(out[1]), float(out[2]), float(out[3])
    print(f"{n:,} rollouts: peak RSS added {added / 1024:8.1f} MiB in {took:.1f} s "
          f"({n / took:,.0f} rollouts/s)   (target < 1 GB); hold rate {hold:.4f}, trip-end p95 {p95:g} min")


def _config_ratio(plan: Plan, db: Database, config: object, repeat: int = 41) -> tuple[float, float]:
    """Median times of simulate(n=1000) without a config and with one, interleaved."""
    without, with_ = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        simulate(plan, None, db, n=1000, seed=0)
        t1 = time.perf_counter()
        simulate(plan, None, db, n=1000, seed=0, config=config)  # type: ignore[arg-type]
        t2 = time.perf_counter()
        without.append(t1 - t0)
        with_.append(t2 - t1)
    return statistics.median(without), statistics.median(with_)


def _chunks_equal_one_chunk(plan: Plan, db: Database) -> bool:
    """3.5 blocks of rollouts summarised block by block == the same draws summarised at once."""
    from utp_env.simulation import BLOCK_ROLLOUTS, draw_block_delays, simulate_compiled
    from utp_env.simulation.robustness import build_report

    config = load_uncertainty()
    compiled, _ = compile_for(plan, None, db, config)
    n = 3 * BLOCK_ROLLOUTS + BLOCK_ROLLOUTS // 2
    chunked = simulate_compiled(compiled, config, n, seed=0)
    rollouts = run(compiled, draw_block_delays(compiled, 0, n), config.simulation.skip_passed_items)
    once = build_report(compiled, rollouts, 0, config.simulation.late_tolerance_min, block=BLOCK_ROLLOUTS)
    return chunked.model_dump_json() == once.model_dump_json()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", choices=["full", "mini"], default="full", help="sandbox profile (default full)")
    parser.add_argument("--db", default=None, help="a database directory instead of the sandbox profile")
    parser.add_argument("--rollouts", type=int, default=10_000, help="rollouts per timing (default 10000)")
    parser.add_argument("--loop-rollouts", type=int, default=None,
                        help="rollouts for the loop baseline (default: all if under ~30 s, else scaled)")
    parser.add_argument("--repeat", type=int, default=5, help="best of this many timings (vectorised)")
    parser.add_argument("--memory-rollouts", type=int, default=10_000_000,
                        help="rollouts for the peak-RSS measurement in a child process (default 10M; 0 skips)")
    parser.add_argument("--memory-child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_child is not None:
        return memory_child(args.profile, args.db, args.memory_child)

    from utp_env.tools.sandbox import open_sandbox

    db = Database.open(args.db) if args.db else open_sandbox(args.profile)
    plan = week_plan(db)
    config = load_uncertainty()
    compiled, _ = compile_for(plan, None, db, config)
    n = args.rollouts
    where = args.db or f"{args.profile} sandbox"
    print(f"{where}; plan: 7 days, {compiled.n_steps} steps ({len(compiled.leg_steps)} legs), "
          f"{compiled.delays.k} delay elements; {n} rollouts", file=sys.stderr)

    delays = draw_delays(compiled, np.random.default_rng(0), n)
    t_draw = _best(lambda: draw_delays(compiled, np.random.default_rng(0), n), args.repeat)
    t_engine = _best(lambda: run(compiled, delays), args.repeat)
    t_total = _best(lambda: simulate(plan, None, db, n=n, seed=0, config=config), args.repeat)
    cpu_vec = _cpu(lambda: run(compiled, draw_delays(compiled, np.random.default_rng(0), n)), args.repeat)
    cpu_total = _cpu(lambda: simulate(plan, None, db, n=n, seed=0, config=config), args.repeat)

    probe = min(n, 500)
    t_probe = _best(lambda: run_loop(compiled, delays[:probe]), 1)
    m = args.loop_rollouts or (n if t_probe * n / probe < 30 else max(probe, int(n * 10 / (t_probe * n / probe))))
    m = min(m, n)
    t0, c0 = time.perf_counter(), time.process_time()
    slow = run_loop(compiled, delays[:m])
    t_loop = (time.perf_counter() - t0) * n / m
    cpu_loop = (time.process_time() - c0) * n / m
    fast = run(compiled, delays[:m])
    same = np.allclose(fast.end, slow.end, rtol=0, atol=1e-9) and np.array_equal(fast.missed, slow.missed)

    vec = t_draw + t_engine
    base = t_draw + t_loop
    report = simulate(plan, None, db, n=n, seed=0, config=config)
    print(f"draws (n x k normal+uniform)     {t_draw * 1e3:8.1f} ms")
    print(f"vectorised engine                {t_engine * 1e3:8.1f} ms")
    print(f"vectorised draws + engine        {vec * 1e3:8.1f} ms   (target < 100 ms)")
    print(f"simulate() end to end            {t_total * 1e3:8.1f} ms   (compile + draws + engine + report)")
    print(f"loop baseline engine             {t_loop * 1e3:8.1f} ms   ({m} rollouts timed"
          f"{', scaled to ' + str(n) if m < n else ''})")
    print(f"loop baseline draws + engine     {base * 1e3:8.1f} ms")
    print(f"speed-up engine only             {t_loop / t_engine:8.1f} x")
    print(f"speed-up draws + engine          {base / vec:8.1f} x   (target >= 30 x)")
    print(f"CPU time: draws + engine {cpu_vec * 1e3:.1f} ms, simulate() {cpu_total * 1e3:.1f} ms, "
          f"loop engine {cpu_loop * 1e3:.1f} ms -> {(t_draw + cpu_loop) / cpu_vec:.1f} x")
    print(f"engine == loop on the same draws {same}")
    t_without, t_with = _config_ratio(plan, db, config)
    print(f"simulate(n=1000) without config  {t_without * 1e3:8.2f} ms, with {t_with * 1e3:.2f} ms -> "
          f"{t_without / t_with:.2f} x   (target <= 1.2 x; medians of 41 interleaved pairs)")
    chunks_ok = _chunks_equal_one_chunk(plan, db)
    print(f"3.5 blocks chunked == one chunk  {chunks_ok}")
    if args.memory_rollouts:
        _memory(args)
    print(f"hold rate {report.hold_rate:.3f}, P(any missed leg) {report.any_missed_leg_probability:.4f}, "
          f"trip-end lateness p95 {report.trip_end_lateness.p95:.1f} min")
    return 0 if same and chunks_ok else 1


if __name__ == "__main__":
    sys.exit(main())
