"""The parser assembles its Plan without pydantic validation (`parse._assembled`, `itinerary.unvalidated`)
when every value lies within the models' bounds, and validates otherwise. Both must give the same
thing: the same Plan, field by field, with the same types, field order and fields set at every level,
or the same PlanFormatError. Compared here on every reference plan of the mini sandbox and its broken
variants (tests/support/plan_outputs.py), on hypothesis mutations of them (times, distances, entry
counts, stray fragments), and on the values at and past each bound.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_outputs import cases
from same_models import outcome, readings_agree

from utp_env.dataset import Dataset
from utp_env.itinerary import MAX_CLOCK_MINUTES, Plan
from utp_env.plan_format import legs as legs_module
from utp_env.plan_format import parse as parse_module
from utp_env.query import Query
from utp_env.tools.database import Database


@contextlib.contextmanager
def validated_only() -> Iterator[None]:
    """parse_plan with every plan and every leg validated by pydantic (the path of values out of bounds)."""
    saved = parse_module._assembled, legs_module.unvalidated
    parse_module._assembled = lambda query_id, days: Plan.model_validate({"query_id": query_id, "days": days})
    legs_module.unvalidated = lambda model, values, given=None: model.model_validate(values)
    try:
        yield
    finally:
        parse_module._assembled, legs_module.unvalidated = saved


def agree(text: object, query: Query | None = None, db: Database | None = None) -> Plan | str:
    return readings_agree(validated_only, text, query, db)


def test_reference_plans_and_their_broken_variants(dataset: Dataset) -> None:
    plans = errors = 0
    for _label, text, query, _ref in cases(dataset):
        for q, db in ((query, dataset.db), (query, None), (None, None)):
            if isinstance(agree(text, q, db), Plan):
                plans += 1
            else:
                errors += 1
    assert plans > 100 and errors > 0


def _times_past_midnight(text: str, count: int) -> str:
    """Every time of the first `count` POI entries set so that each starts before the previous time
    by more than 12 h (10:00 after 23:59): each moves past one more midnight."""
    seen = 0

    def swap(m: re.Match[str]) -> str:
        nonlocal seen
        seen += 1
        return "from 10:00 to 23:59" if seen <= count else m.group(0)
    return re.sub(r"from \d\d:\d\d to \d\d:\d\d", swap, text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_reference_plans(dataset: Dataset, data: st.DataObject) -> None:
    """Reference plans with arrivals days later and times moved past midnight (both up to past
    `MAX_CLOCK_MINUTES`), distances of
    hundreds of digits (infinite), entries repeated (past the day's cap, or past midnight again and
    again), and stray fragments."""
    references = [(text, query) for label, text, query, _ in cases(dataset) if "/" not in label]  # as stored
    text, query = data.draw(st.sampled_from(references[:12]))
    mutation = data.draw(st.sampled_from(["midnights", "distance", "entries", "fragment", "arrival"]))
    if mutation == "arrival":  # an arrival days later (past MAX_CLOCK_MINUTES from 10 days)
        days = data.draw(st.sampled_from(["+1 day", "+3 days", "+9 days", "+10 days", "+11 days", "+99 days"]))
        text = re.sub(r"Arrival Time: (\d\d:\d\d)", rf"Arrival Time: \1 ({days})", text, count=1)
        text = re.sub(r" \(scheduled \d\d:\d\d\)", "", text) if data.draw(st.booleans()) else text
    elif mutation == "midnights":
        text = _times_past_midnight(text, data.draw(st.integers(0, 12)))
    elif mutation == "distance":
        digits = data.draw(st.sampled_from(["9" * 400, "1" * 309, "1" * 308, "0.5", "17"]))
        text = re.sub(r"\d+(?:\.\d+)?km away", f"{digits}km away", text, count=data.draw(st.integers(1, 3)))
    elif mutation == "entries":
        days = json.loads(text)
        day = data.draw(st.integers(0, len(days) - 1))
        entries = days[day]["point_of_interest_list"].rstrip(".").split("; ")
        days[day]["point_of_interest_list"] = "; ".join(entries * data.draw(st.integers(1, 12))) + "."
        text = json.dumps(days)
        if data.draw(st.booleans()):  # and past midnight, up to past MAX_CLOCK_MINUTES within one day
            text = _times_past_midnight(text, data.draw(st.integers(0, 40)))
    else:
        cut = data.draw(st.integers(0, len(text)))
        junk = data.draw(st.sampled_from(["(", ")", ";", "25:99", " to ", ",", "from () to ()", "+3 days"]))
        text = text[:cut] + junk + text[cut:]
    for q, db in ((query, dataset.db), (None, None)):
        agree(text, q, db)


def test_times_at_and_past_the_bound() -> None:
    """A plan whose items cross enough midnights to pass `MAX_CLOCK_MINUTES` is refused by both paths
    with the same message; one just within it is read the same."""
    def plan(entries: int) -> str:
        poi = "; ".join(f"Place {i}, visit from 10:00 to 23:59" for i in range(entries))
        return json.dumps([{"days": 1, "current_city": "Pune", "point_of_interest_list": poi}])
    within = max(n for n in range(1, 20) if isinstance(outcome(plan(n), None, None), Plan))
    last = agree(plan(within))
    assert isinstance(last, Plan) and last.days[0].items[-1].end <= MAX_CLOCK_MINUTES  # type: ignore[operator]
    refused = agree(plan(within + 1))
    assert isinstance(refused, str) and "invalid day" in refused


def test_an_infinite_distance_and_a_non_int_day_number_are_validated() -> None:
    entry = f"Place, visit from 10:00 to 11:00, nearest transit: Stop, {'9' * 400}km away"
    refused = agree(json.dumps([{"days": 1, "current_city": "Pune", "point_of_interest_list": entry}]))
    assert isinstance(refused, str) and "invalid day" in refused

    class Number(int):
        pass
    read = agree([{"days": Number(2), "current_city": "Pune"}])
    assert isinstance(read, Plan) and type(read.days[0].day) is int
