"""Benchmark: 10,000 Monte Carlo rollouts of a 7-day plan, vectorised engine vs the per-rollout loop.

    python benchmarks/simulate.py [--profile full|mini] [--rollouts 10000] [--loop-rollouts N]

Builds a 7-day, 3-city plan (origin -> B -> C -> origin, two nights in B, three in C) from the
sandbox, then times, in one run: (1) drawing the delays, (2) the vectorised engine, (3) the whole
`simulate` call (compile + draws + engine + report), and (4) the plain Python loop baseline
(`utp_env.simulation.loop`) on the same draws (all rollouts if that takes < 30 s, else a prefix,
scaled). Targets (README, Performance): vectorised < 100 ms and >= 30x the loop.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

import numpy as np
from utp_env.tools.database import Database

from utp_env.config import load_uncertainty
from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg, parse_hhmm
from utp_env.simulation import compile_for, draw_delays, simulate
from utp_env.simulation.engine import run
from utp_env.simulation.loop import run_loop

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", choices=["full", "mini"], default="full", help="sandbox profile (default full)")
    parser.add_argument("--db", default=None, help="a database directory instead of the sandbox profile")
    parser.add_argument("--rollouts", type=int, default=10_000, help="rollouts per timing (default 10000)")
    parser.add_argument("--loop-rollouts", type=int, default=None,
                        help="rollouts for the loop baseline (default: all if under ~30 s, else scaled)")
    parser.add_argument("--repeat", type=int, default=5, help="best of this many timings (vectorised)")
    args = parser.parse_args(argv)

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
    print(f"hold rate {report.hold_rate:.3f}, P(any missed leg) {report.any_missed_leg_probability:.4f}, "
          f"trip-end lateness p95 {report.trip_end_lateness.p95:.1f} min")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
