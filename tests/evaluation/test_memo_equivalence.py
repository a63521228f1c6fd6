"""The per-database memos of `utp_env.resolve` and `utp_env.evaluation.context` answer as the code without them:
cases the differential review checked against the code before the change and that
tests/evaluation/test_evaluation_speed_equivalence.py does not pin. Each fails if a memo answers for the
wrong database or the wrong date."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from utp_env.dataset import dataset_of
from utp_env.evaluation import evaluate
from utp_env.evaluation.context import build_context
from utp_env.itinerary import Day, Plan, PlanItem
from utp_env.plan_format import parse_plan
from utp_env.tools.database import Database, normalize

FARE_RAISE = 1000.0


def _raise_avg_cost(folder: Path, name: str, city: str) -> None:
    """Add FARE_RAISE to one restaurant's avg_cost_inr in the copy's restaurants.csv."""
    path = folder / "restaurants.csv"
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    name_at, city_at, cost_at = header.index("name"), header.index("city"), header.index("avg_cost_inr")
    wanted = (normalize(name), normalize(city))
    hits = [r for r in rows[1:] if (normalize(r[name_at]), normalize(r[city_at])) == wanted]
    assert len(hits) == 1
    hits[0][cost_at] = str(float(hits[0][cost_at]) + FARE_RAISE)
    with path.open("w", encoding="utf-8", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)


def test_a_database_reopened_after_its_files_changed_is_not_answered_from_the_first_ones_memos(
        mini_db_path: Path, tmp_path: Path) -> None:
    """Two databases in one process, the second a copy whose restaurant price changed: each plan's
    cost reads its own database, before and after the other one filled its memos."""
    first = dataset_of(Database.open(mini_db_path))
    query = first.queries[0]
    plan = parse_plan(_reference_text(mini_db_path, query.query_id), query=query, db=first.db)
    ctx = build_context(plan, query, first.db)
    eaten = [v for v in ctx.visits if v.kind == "restaurant" and v.ref is not None]
    assert eaten, "the first reference plan eats at a known restaurant"
    chosen = eaten[0].ref
    assert chosen is not None
    times = sum(1 for v in eaten if v.ref == chosen)
    copy = tmp_path / "changed"
    shutil.copytree(mini_db_path, copy)
    name = str(first.db.tables["restaurants"].columns["name"][chosen.row])
    _raise_avg_cost(copy, name, chosen.city)
    second = Database.open(copy, check_manifest=False, use_cache=False)

    before = evaluate(plan, query, first.db).cost.meals
    changed = evaluate(plan, query, second).cost.meals
    again = evaluate(plan, query, first.db).cost.meals
    assert again == before
    assert changed == before + FARE_RAISE * times * query.people_number


def _reference_text(folder: Path, query_id: str) -> str:
    """The stored reference plan of `query_id` as JSON text (reference_plans.jsonl)."""
    for line in (folder / "reference_plans.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip() and json.loads(line)["query_id"] == query_id:
            return json.dumps(json.loads(line)["plan"])
    raise AssertionError(f"no reference plan for {query_id}")


def test_an_untyped_item_naming_an_event_is_resolved_for_its_own_date(mini_db: Database) -> None:
    """An item without a venue type that names an event is looked up on its day's date: the same
    item on a date without that event is not that event, also after the dated one was memoised
    (and the other way round)."""
    events = mini_db.tables["events"].columns
    row = 0
    name, city, date = str(events["name"][row]), str(events["city"][row]), str(events["date"][row])
    dated = {(normalize(str(c)), normalize(str(n)), str(d)) for c, n, d in
             zip(events["city"], events["name"], events["date"], strict=True)}
    other = next(f"2020-01-{d:02d}" for d in range(1, 29)
                 if (normalize(city), normalize(name), f"2020-01-{d:02d}") not in dated)
    query = dataset_of(mini_db).queries[0]

    def resolved_row(on: str) -> int | None:
        item = PlanItem(name=name, activity="visit", start=600, end=660)
        plan = Plan(days=[Day(day=1, date=on, cities=[city], items=[item])])
        visit = build_context(plan, query, mini_db).days[0].items[0]
        return visit.ref.row if visit.ref is not None and visit.ref.table == "events" else None

    assert resolved_row(date) == row
    assert resolved_row(other) is None
    assert resolved_row(date) == row
