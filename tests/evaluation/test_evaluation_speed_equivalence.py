"""The evaluator's per-database memos (`resolve.resolve_leg`, `VenueName.of`,
`CityKeys.of`, `EvalIndex.found` / `item_fields` / `distance_row` in utp_env/evaluation/context.py)
change no answer: every report is the same with warm memos as with memos that keep at most one
entry, the memos stay within their bound, and each memo's key holds every input its answer
depends on (the date of a leg, the cities of a venue)."""

from __future__ import annotations

from pathlib import Path

import pytest
from plan_outputs import cases

from utp_env import resolve
from utp_env.dataset import Dataset, dataset_of
from utp_env.evaluation import context, evaluate
from utp_env.evaluation.context import eval_index
from utp_env.itinerary import PlanItem, TransportLeg
from utp_env.plan_format import PlanFormatError, parse_plan
from utp_env.resolve import VenueName, resolve_leg
from utp_env.tools.database import Database
from utp_env.tools.memo import remember


def _reports(dataset: Dataset) -> list[str]:
    """The JSON of every report of tests/support/plan_outputs.py's cases (reference plans and broken variants)."""
    out = []
    db = dataset.db
    for _label, text, query, _ref in cases(dataset):
        try:
            plan = parse_plan(text, query=query, db=db)
        except PlanFormatError:
            continue
        out.append(evaluate(plan, query, db).model_dump_json())
    return out


def test_reports_are_the_same_with_warm_memos_and_with_memos_of_one_entry(
        mini_db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    warm = dataset_of(Database.open(mini_db_path))
    _reports(warm)  # every memo filled by every case first
    expected = _reports(warm)
    assert len(expected) > 60
    monkeypatch.setattr(resolve, "MEMO_LIMIT", 1)
    monkeypatch.setattr(context, "MEMO_LIMIT", 1)
    monkeypatch.setattr(resolve, "_VENUE_NAMES", {})
    monkeypatch.setattr(resolve, "_CITY_KEYS", {})
    monkeypatch.setattr(context, "_SUMMARY_NAMES", {})
    cold = dataset_of(Database.open(mini_db_path))
    assert _reports(cold) == expected
    index = eval_index(cold.db)
    memos = [index._found, index._items, index._distances, cold.db.derived(resolve._ResolveMemo).legs,
             resolve._VENUE_NAMES, resolve._CITY_KEYS, context._SUMMARY_NAMES]
    assert all(len(memo) <= 1 for memo in memos)


def test_a_memoised_leg_is_resolved_for_its_own_date(mini_db: Database) -> None:
    """The same train on a day it runs and on one it does not: the memo keys on the date."""
    trains = mini_db.tables["trains"].columns
    row = next(i for i, days in enumerate(trains["run_days"]) if "0" in days and "1" in days)
    runs, stops = trains["run_days"][row].index("1"), trains["run_days"][row].index("0")
    monday = 10  # 2025-11-10 is a Monday
    leg = TransportLeg(mode="train", number=str(trains["train_number"][row]), origin=trains["origin_city"][row],
                       destination=trains["dest_city"][row], dep=600, arr=700, planned_arr=700)
    on = resolve_leg(mini_db, leg, f"2025-11-{monday + runs}")
    off = resolve_leg(mini_db, leg, f"2025-11-{monday + stops}")
    assert (on.runs_on_date, off.runs_on_date) == (True, False)
    assert resolve_leg(mini_db, leg, f"2025-11-{monday + runs}") is on  # answered from the memo


def test_a_memoised_venue_is_found_only_in_the_cities_asked(mini_db: Database) -> None:
    """The same name searched in its own city and in another one: the memo keys on the cities."""
    cols = mini_db.tables["attractions"].columns
    name, city = str(cols["name"][0]), str(cols["city"][0])
    other = next(c for c in mini_db.cities if mini_db.venue("attractions", c, name) is None)
    index = eval_index(mini_db)
    venue = VenueName.of(name)
    here = index.found(venue, resolve.CityKeys.of([city]), ("attractions",), None)
    there = index.found(venue, resolve.CityKeys.of([other]), ("attractions",), None)
    assert here[0] is not None and here[0].row == 0
    assert there == (None, None)


def test_a_memoised_item_takes_its_kind_from_its_own_summary_entry(mini_db: Database) -> None:
    """An item that says only `visit` is whatever the day's summary calls it: the memo keys on that entry."""
    cols = mini_db.tables["restaurants"].columns
    name, city = str(cols["name"][0]), str(cols["city"][0])
    item = PlanItem(name=name, activity="visit", start=600, end=660)
    index, cities, venue = eval_index(mini_db), resolve.CityKeys.of([city]), VenueName.of(name)
    as_lunch = index.item_fields(item, venue, ("restaurant", "lunch"), cities, None)
    as_sight = index.item_fields(item, venue, ("attraction", None), cities, None)
    assert (as_lunch.kind, as_lunch.meal, as_lunch.ref is not None) == ("restaurant", "lunch", True)
    assert (as_sight.kind, as_sight.meal, as_sight.ref) == ("attraction", None, None)


def test_a_memo_at_its_bound_starts_afresh() -> None:
    """`remember` stores and returns the value; a memo holding `limit` entries is emptied first, so
    no memo of the parser or the evaluator grows past its bound."""
    memo: dict[str, int] = {}
    assert remember(memo, "a", 1, limit=2) == 1 and memo == {"a": 1}
    remember(memo, "b", 2, limit=2)
    assert memo == {"a": 1, "b": 2}
    assert remember(memo, "c", 3, limit=2) == 3 and memo == {"c": 3}
