"""What the evaluator reads once per venue (`EvalIndex.transit_distance`, `EvalIndex.opening`, the
distances a `Visit` carries) is what reading it again each time gives, and the memos keep to their
bounds: every report is the same with those memos warm and with memos of one entry; every visit's
distances are the database's (looked up afresh) and the item's; the opening hours of every row are
`opening_hours` of its columns; `venue_closed_because` answers the same with the caller's index.
"""

from __future__ import annotations

import pytest
from plan_outputs import cases

from utp_env.dataset import Dataset, dataset_of
from utp_env.evaluation import context, evaluate
from utp_env.evaluation.commonsense import transit_distance, venue_closed_because
from utp_env.evaluation.context import build_context, eval_index
from utp_env.plan_format import PlanFormatError, parse_plan
from utp_env.tools.clock import opening_hours
from utp_env.tools.database import Database
from utp_env.tools.schema import VENUE_TABLE


@pytest.fixture(scope="module")
def dataset(mini_db_path: object) -> Dataset:
    return dataset_of(Database.open(mini_db_path))  # type: ignore[arg-type]


def _contexts(dataset: Dataset) -> list[context.PlanContext]:
    out = []
    for _label, text, query, _ref in cases(dataset):
        try:
            plan = parse_plan(text, query=query, db=dataset.db)
        except PlanFormatError:
            continue
        out.append(build_context(plan, query, dataset.db))
    return out


def test_visits_carry_the_database_and_the_stated_distance(dataset: Dataset) -> None:
    stops = dataset.db.tables["transit_stops"]
    checked = 0
    for ctx in _contexts(dataset):
        for visit in ctx.visits:
            ref = visit.ref
            row = None if ref is None else stops.find(ref.city_key, visit.kind, ref.name_key)
            expected = None if row is None else float(stops.columns["distance_m"][row])
            assert transit_distance(ctx, visit) == visit.stop_distance == expected
            assert visit.stated_distance == (None if visit.item is None else visit.item.transit_distance_m)
            checked += expected is not None
    assert checked > 1000


def test_opening_hours_are_read_once_per_row_as_opening_hours_reads_them(mini_db: Database) -> None:
    index = eval_index(mini_db)
    for table in ("attractions", "restaurants"):
        cols = mini_db.tables[table].columns
        for row in range(mini_db.tables[table].n):
            assert index.opening(table, row) == opening_hours(cols["open_time"][row], cols["close_time"][row])
        assert len(index._hours[table]) == mini_db.tables[table].n  # one entry per row, never more


def test_venue_closed_because_is_the_same_with_the_callers_index(dataset: Dataset) -> None:
    answers = 0
    for ctx in _contexts(dataset)[:40]:
        for day in ctx.days:
            for visit, start, end in day.timed:
                if visit.kind in ("attraction", "restaurant") and visit.ref is not None:
                    for shift in (0, 600, -300, 1440):
                        args = (VENUE_TABLE[visit.kind], visit.ref.row, day.date, start + shift, end + shift)
                        assert venue_closed_because(ctx.db, *args) == venue_closed_because(ctx.db, *args, ctx.index)
                        answers += 1
    assert answers > 400


def test_reports_are_the_same_with_memos_of_one_entry(mini_db_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    def reports(data: Dataset) -> list[str]:
        return [evaluate(ctx.plan, ctx.query, data.db).model_dump_json() for ctx in _contexts(data)]
    warm = dataset_of(Database.open(mini_db_path))  # type: ignore[arg-type]
    reports(warm)
    expected = reports(warm)
    monkeypatch.setattr(context, "MEMO_LIMIT", 1)
    cold = dataset_of(Database.open(mini_db_path))  # type: ignore[arg-type]
    assert reports(cold) == expected
    assert len(eval_index(cold.db)._transit) <= 1
