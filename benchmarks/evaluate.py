"""Benchmark: complete evaluation of 7-day plans on the full sandbox, one core (target >= 1,000/s).

Builds realistic 7-day, 3-city plans programmatically (real legs, stays, meals and attractions
with timings and transit distances), then times `utp_env.evaluation.evaluate` over them.
Target: at least 1,000 plans per second; the baseline measured in the same run is a pydantic round
trip of the same plans (dump and validate). Run: `python benchmarks/evaluate.py [--plans 200] [--seconds 3]`.

Then `parse_plan` + `evaluate` of 7-day plans from JSON (target >= 1,000 plans per CPU
second on one core): the same plans written with `plan_to_json`, and the 7-day reference plans of
the database's query set as stored (`references.jsonl`), timed in interleaved rounds (parse alone,
then parse + evaluate), medians of the rounds. The parser and the evaluator keep bounded
per-database memos of name and venue resolution, which repeated rounds hit on every plan; the
last line therefore times one pass over the remaining 7-day reference plans, never seen before.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

from utp_env.evaluation import evaluate
from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg, parse_hhmm
from utp_env.plan_format import parse_plan, plan_to_json
from utp_env.query import Persona, Query
from utp_env.tools.database import Database

TARGET_PLANS_PER_SECOND = 1000.0
MODES = (("flights", "flight", "flight_number"), ("trains", "train", "train_number"), ("buses", "bus", "bus_id"))


def seeded(label: str) -> np.random.Generator:
    return np.random.default_rng(int.from_bytes(hashlib.sha256(label.encode()).digest()[:8], "little"))


def rich_cities(db: Database) -> dict[str, list[str]]:
    """Cities with at least 2 attractions, 3 restaurants and a stay, grouped by state."""
    out: dict[str, list[str]] = {}
    for city in db.cities:
        if (len(db.city_rows("attractions", city)) >= 2 and len(db.city_rows("restaurants", city)) >= 3
                and len(db.city_rows("accommodations", city)) >= 1):
            out.setdefault(db.state_of(city), []).append(city)
    return out


def leg(db: Database, origin: str, dest: str, rng: np.random.Generator) -> TransportLeg:
    """A scheduled service between two cities (flight, train or bus), else a cab at 08:00."""
    for table, mode, number_col in MODES:
        rows = db.pair_rows(table, origin, dest)
        if len(rows):
            r = int(rows[rng.integers(len(rows))])
            cols = db.tables[table].columns
            dep = parse_hhmm(cols["dep_time"][r])
            arr = parse_hhmm(cols["arr_time"][r]) + 1440 * int(cols["arr_day_offset"][r])
            return TransportLeg(mode=mode, number=str(cols[number_col][r]), origin=origin, destination=dest,
                                dep=dep, arr=arr, planned_arr=arr + int(rng.integers(0, 60)))
    rows = db.pair_rows("distances", origin, dest)
    minutes = int(db.tables["distances"].columns["duration_min"][rows[0]]) if len(rows) else 300
    return TransportLeg(mode="cab", origin=origin, destination=dest, dep=480, arr=480 + minutes,
                        planned_arr=480 + minutes + 30)


def pick(db: Database, table: str, city: str, k: int, rng: np.random.Generator) -> list[str]:
    rows = db.city_rows(table, city)
    chosen = rng.choice(rows, size=min(k, len(rows)), replace=False)
    return [str(db.tables[table].columns["name"][int(i)]) for i in chosen]


def city_day(db: Database, number: int, city: str, hotel: str, rng: np.random.Generator,
             arrive: TransportLeg | None = None, depart: TransportLeg | None = None, start_city: str | None = None
             ) -> Day:
    """One day in `city`: stay, breakfast, two attractions, lunch, dinner, stay (trimmed around legs)."""
    items: list[PlanItem] = []
    attractions = pick(db, "attractions", city, 2, rng)
    breakfast, lunch, dinner = pick(db, "restaurants", city, 3, rng)
    t = 480
    if depart is not None:  # leave in the morning from the previous city
        items.append(PlanItem(name=hotel, activity="checkout", start=max(0, depart.dep - 150),
                              end=max(0, depart.dep - 120)))
        items.append(PlanItem(name="Transit point", activity="arrive", start=max(0, depart.dep - 90),
                              end=max(0, depart.dep - 60)))
        t = depart.planned_arrival + 30
    elif arrive is None and number > 1:
        items.append(PlanItem(name=hotel, activity="stay", start=420, end=480))
    if arrive is not None:
        items.append(PlanItem(name="Transit point", activity="arrive", start=max(0, arrive.dep - 90),
                              end=max(0, arrive.dep - 60)))
        t = arrive.planned_arrival + 30
    stay_name = hotel
    meal_plan = [(breakfast, "breakfast", 50), (attractions[0], None, 0), (lunch, "lunch", 60),
                 (attractions[-1], None, 0), (dinner, "dinner", 75)]
    hours = db.tables["attractions"].columns["visit_duration_hr"]
    for name, meal, base in meal_plan:
        if t >= 22 * 60:
            break
        if meal is None:
            row = db.venue("attractions", city, name)
            base = int(float(hours[row]) * 60) if row is not None else 120
        length = base + int(rng.integers(0, base // 2 + 1))
        items.append(PlanItem(name=name, activity="visit", start=t, end=t + length, meal=meal,
                              transit_stop="Stop", transit_distance_m=float(rng.integers(50, 8000))))
        t += length + 30
    items.append(PlanItem(name=stay_name, activity="stay", start=max(t, 21 * 60), end=max(t, 21 * 60) + 600))
    cities = [start_city, city] if start_city else [city]
    legs = [x for x in (arrive, depart) if x is not None]
    return Day(day=number, cities=cities, transport=legs, accommodation=hotel,
               breakfast=breakfast, lunch=lunch, dinner=dinner, attractions=attractions, items=items)


def seven_day_plan(db: Database, index: int, states: dict[str, list[str]], origins: list[str]
                   ) -> tuple[Plan, Query]:
    rng = seeded(f"bench-eval-{index}")
    state = sorted(states)[int(rng.integers(len(states)))]
    crowded = [c for c in states[state] if db.tables["cities"].columns["has_crowd_data"][
        db.tables["cities"].find(c)]]
    c1, c2, c3 = (str(c) for c in rng.choice(states[state], size=3, replace=False))
    if crowded and c1 not in crowded and c2 not in crowded and c3 not in crowded:
        c1 = str(crowded[int(rng.integers(len(crowded)))])  # visit a city with crowd data (CATS)
    org = origins[int(rng.integers(len(origins)))]
    hotels = {c: pick(db, "accommodations", c, 1, rng)[0] for c in (c1, c2, c3)}
    days = [
        city_day(db, 1, c1, hotels[c1], rng, arrive=leg(db, org, c1, rng), start_city=org),
        city_day(db, 2, c1, hotels[c1], rng),
        city_day(db, 3, c2, hotels[c2], rng, arrive=leg(db, c1, c2, rng), start_city=c1),
        city_day(db, 4, c2, hotels[c2], rng),
        city_day(db, 5, c3, hotels[c3], rng, arrive=leg(db, c2, c3, rng), start_city=c2),
        city_day(db, 6, c3, hotels[c3], rng),
    ]
    back = leg(db, c3, org, rng)
    last = Day(day=7, cities=[c3, org], transport=[back],
               items=[PlanItem(name=hotels[c3], activity="checkout", start=max(0, back.dep - 150),
                               end=max(0, back.dep - 120)),
                      PlanItem(name="Transit point", activity="arrive", start=max(0, back.dep - 90),
                               end=max(0, back.dep - 60))])
    days.append(last)
    query = Query(query_id=f"bench-{index}", org=org, dest=state, visiting_city_number=3, days=7,
                  dates=[f"2025-11-{10 + i}" for i in range(7)], people_number=int(rng.integers(1, 6)),
                  budget_inr=150000, level="hard",
                  persona=Persona(traveler_type="Adventure Seeker", purpose="Cultural Exploration",
                                  spending="Luxury Traveler", location_preference="Historical Sites"),
                  risk_profile=("tolerant", "optimized", "averse")[index % 3], text="benchmark")
    return Plan(query_id=query.query_id, days=days), query


def reference_week_plans(db: Database, limit: int) -> list[tuple[Any, Query]]:
    """Up to `limit` 7-day reference plans (the stored JSON day objects) with their queries; [] when the
    database has no query set."""
    from utp_env.dataset import QUERIES_FILE, REFERENCES_FILE
    from utp_env.queries import read_queries

    path = Path(db.path)
    if not (path / QUERIES_FILE).exists() or not (path / REFERENCES_FILE).exists():
        return []
    queries = {q.query_id: q for q in read_queries(path / QUERIES_FILE)}
    out = []
    for line in (path / REFERENCES_FILE).read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            query = queries.get(record["query_id"])
            if query is not None and query.days == 7:
                out.append((json.dumps(record["plan"]), query))
    return out[:limit]


def parse_and_evaluate(db: Database, texts: list[tuple[str, Query]], seconds: float) -> tuple[float, float, float]:
    """(parse_plan, evaluate of the parsed plans, parse_plan + evaluate) plans per CPU second: medians of
    interleaved rounds."""
    plans = [parse_plan(text, query=q, db=db) for text, q in texts]
    for plan, (_, q) in zip(plans, texts, strict=True):
        evaluate(plan, q, db)  # warm
    parse_rates, eval_rates, both_rates = [], [], []
    start = time.process_time()
    while time.process_time() - start < seconds or len(both_rates) < 3:
        t0 = time.process_time()
        for text, q in texts:
            parse_plan(text, query=q, db=db)
        t1 = time.process_time()
        for plan, (_, q) in zip(plans, texts, strict=True):
            evaluate(plan, q, db)
        t2 = time.process_time()
        for text, q in texts:
            evaluate(parse_plan(text, query=q, db=db), q, db)
        t3 = time.process_time()
        parse_rates.append(len(texts) / max(t1 - t0, 1e-9))
        eval_rates.append(len(texts) / max(t2 - t1, 1e-9))
        both_rates.append(len(texts) / max(t3 - t2, 1e-9))
    return statistics.median(parse_rates), statistics.median(eval_rates), statistics.median(both_rates)


def first_sight(db: Database, texts: list[tuple[str, Query]]) -> float:
    """parse_plan + evaluate plans per CPU second over plans this process has not parsed or evaluated
    before, one pass: what a run's new plans get from memos warmed by earlier plans (the repeated
    rounds of `parse_and_evaluate` hit those memos on every plan)."""
    start = time.process_time()
    for text, q in texts:
        evaluate(parse_plan(text, query=q, db=db), q, db)
    return len(texts) / max(time.process_time() - start, 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plans", type=int, default=200, help="distinct plans to build")
    parser.add_argument("--seconds", type=float, default=3.0, help="time budget of the measurement")
    parser.add_argument("--db", help="database directory (default: the embedded full sandbox)")
    args = parser.parse_args()
    if args.db:
        db = Database.open(args.db)
    else:
        from utp_env.tools.sandbox import open_sandbox

        db = open_sandbox("full")
    states = {s: c for s, c in rich_cities(db).items() if len(c) >= 3}
    origins = sorted(c for cs in rich_cities(db).values() for c in cs)
    pairs = [seven_day_plan(db, i, states, origins) for i in range(args.plans)]
    items = sum(len(d.items) for p, _ in pairs for d in p.days)
    crowd = sum(len(evaluate(p, q, db).pois) for p, q in pairs[:50])
    with_crowd = sum(sum(x.crowd_score is not None for x in evaluate(p, q, db).pois) for p, q in pairs[:50])
    legs = sum(len(d.transport) for p, _ in pairs for d in p.days)
    evaluate(*pairs[0], db)  # warm the per-database caches (delay index, crowd profiles, name index)
    # CPU time of this process: on a shared, loaded machine wall time also counts other processes.
    done, start, wall = 0, time.process_time(), time.perf_counter()
    while time.process_time() - start < args.seconds:
        for plan, query in pairs:
            evaluate(plan, query, db)
        done += len(pairs)
    rate = done / (time.process_time() - start)
    wall_rate = done / (time.perf_counter() - wall)
    # Baseline in the same run: a pydantic round trip of the same plans (dump and validate), the
    # cost of merely handling a plan, so the ratio is comparable across machines and loads.
    base_done, base_start = 0, time.process_time()
    while time.process_time() - base_start < args.seconds / 3:
        for plan, _ in pairs:
            Plan.model_validate(plan.model_dump())
        base_done += len(pairs)
    base_rate = base_done / (time.process_time() - base_start)
    sample = evaluate(*pairs[0], db)
    print(f"plans: {args.plans} distinct 7-day plans, {items / args.plans:.1f} items and "
          f"{legs / args.plans:.1f} legs each; {with_crowd / max(crowd, 1):.0%} of scored visits have crowd data; "
          f"sample BAS {sample.bas:.3f}, TDAS {sample.tdas:.3f}")
    print(f"evaluate: {rate:,.0f} plans per CPU second on one core ({1e3 / rate:.3f} ms per plan; "
          f"wall clock {wall_rate:,.0f}/s); "
          f"target {TARGET_PLANS_PER_SECOND:,.0f}/s: ratio {rate / TARGET_PLANS_PER_SECOND:.2f}x "
          f"({'OK' if rate >= TARGET_PLANS_PER_SECOND else 'BELOW TARGET'})")
    print(f"baseline, a pydantic round trip of the same plans: {base_rate:,.0f} plans per CPU second; "
          f"evaluate costs {base_rate / rate:.1f}x a round trip")
    stored = reference_week_plans(db, 10**9)
    sources = [("benchmark plans via plan_to_json", [(plan_to_json(p), q) for p, q in pairs]),
               ("7-day reference plans as stored", stored[:args.plans])]
    for label, texts in sources:
        if not texts:
            print(f"parse_plan + evaluate, {label}: none in this database")
            continue
        parse_rate, eval_rate, both = parse_and_evaluate(db, texts, args.seconds)
        print(f"parse_plan + evaluate, {len(texts)} {label}: parse {parse_rate:,.0f}/s ({1e3 / parse_rate:.3f} ms), "
              f"evaluate {eval_rate:,.0f}/s ({1e3 / eval_rate:.3f} ms), both {both:,.0f} plans per CPU second "
              f"({1e3 / both:.3f} ms); target {TARGET_PLANS_PER_SECOND:,.0f}/s: ratio "
              f"{both / TARGET_PLANS_PER_SECOND:.2f}x ({'OK' if both >= TARGET_PLANS_PER_SECOND else 'BELOW TARGET'})")
    unseen = stored[args.plans:]
    if unseen:
        rate = first_sight(db, unseen)
        print(f"parse_plan + evaluate, {len(unseen)} 7-day reference plans seen for the first time (the memos "
              f"of the parser and evaluator warmed only by the plans above): {rate:,.0f} plans per CPU second "
              f"({1e3 / rate:.3f} ms)")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average (1, 5, 15 min) at the end: {load} on {os.cpu_count()} CPUs (CPU seconds of this process "
          "are counted, but other work on the same cores slows them too)")


if __name__ == "__main__":
    main()
