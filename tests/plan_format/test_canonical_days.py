"""A `point_of_interest_list` written as `format_item` writes it is read in one pass
(`items.canonical_day_items`); it must read exactly what the entry-by-entry reading reads
(`poi.parse_entry`, `poi.place`, `items.day_items`). Both readings are compared on every reference plan
of the mini sandbox and its broken variants, on hypothesis plans in canonical form (names holding
activity words, meals named twice, times past midnight, untyped names), and on hypothesis mutations of
the reference plans (parentheses, times, separators, absent markers, entry counts): the same Plan, to
the types and fields set of every model, or the same PlanFormatError.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_outputs import cases
from same_models import readings_agree
from test_plan_format_hypothesis import plans

from utp_env.dataset import Dataset
from utp_env.itinerary import Plan
from utp_env.plan_format import format_plan, plan_to_json
from utp_env.plan_format import items as items_module
from utp_env.plan_format import parse as parse_module
from utp_env.query import Query
from utp_env.tools.database import Database

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@contextlib.contextmanager
def entry_by_entry() -> Iterator[None]:
    """parse_plan without the one-pass reading of canonical lists."""
    saved = parse_module.canonical_day_items
    parse_module.canonical_day_items = lambda *args: None
    try:
        yield
    finally:
        parse_module.canonical_day_items = saved


def agree(text: object, query: Query | None = None, db: Database | None = None) -> Plan | str:
    return readings_agree(entry_by_entry, text, query, db)


def test_reference_plans_and_their_broken_variants(dataset: Dataset) -> None:
    one_pass = 0
    original = items_module.canonical_day_items

    def counting(*args: object) -> object:
        nonlocal one_pass
        read = original(*args)  # type: ignore[arg-type]
        one_pass += read is not None
        return read
    parse_module.canonical_day_items = counting  # type: ignore[assignment]
    try:
        for _label, text, query, _ref in cases(dataset):
            agree(text, query, dataset.db)
            agree(text)
    finally:
        parse_module.canonical_day_items = original
    assert one_pass > 500  # the reference plans are read in one pass


@SETTINGS
@given(plans())
def test_canonical_plans(plan: Plan) -> None:
    agree(format_plan(plan))
    agree(plan_to_json(plan, indent=None))


MUTATIONS = ["(", ")", " (note)", ";", "; -", "; ;", ".", "..", "25:99", "24:00", "9:40", " ", "\n",
             ", visit from 23:50 to 00:10", ", nearest transit: -, 0.1km away", "Visit", "rest", "N/A", "-"]


@SETTINGS
@given(data=st.data())
def test_mutated_reference_lists(dataset: Dataset, data: st.DataObject) -> None:
    references = [(text, query) for label, text, query, _ in cases(dataset) if "/" not in label]
    text, query = data.draw(st.sampled_from(references[:12]))
    days = json.loads(text)
    day = days[data.draw(st.integers(0, len(days) - 1))]
    poi = day["point_of_interest_list"]
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(poi)))
        poi = poi[:at] + data.draw(st.sampled_from(MUTATIONS)) + poi[at + data.draw(st.integers(0, 3)):]
    if data.draw(st.booleans()):  # times moved so that starts fall more than 12 h before the previous time
        poi = re.sub(r"from \d\d:\d\d to \d\d:\d\d", lambda m: data.draw(st.sampled_from(
            [m.group(0), "from 10:00 to 23:59", "from 23:30 to 00:15", "from 00:00 to 00:00"])), poi)
    day["point_of_interest_list"] = poi if data.draw(st.integers(0, 9)) else [poi]  # or a list of one text
    mutated = json.dumps(days)
    agree(mutated, query, dataset.db)
    agree(mutated)
