"""`day_objects` skips the depth walk of a plan text holding at most `MAX_JSON_DEPTH` brackets (`{`, `[`):
nothing decoded from such a text can nest deeper, so the walk could not refuse it. A text past the
bound is still refused in one line, whether its brackets are in fences, prose or JSONL around it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utp_env.plan_format import PlanFormatError
from utp_env.plan_format.extract import day_objects
from utp_env.tools.json_depth import MAX_JSON_DEPTH, exceeds_depth

DAY = {"days": 1, "current_city": "Pune"}
values = st.recursive(
    st.none() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=40)


@settings(max_examples=500, deadline=None)
@given(values)
def test_a_text_with_few_brackets_decodes_to_nothing_too_deep(value: object) -> None:
    for text in (json.dumps(value), json.dumps(value, indent=1)):
        if text.count("{") + text.count("[") <= MAX_JSON_DEPTH:
            assert not exceeds_depth(json.loads(text))


def _nested_day(levels: int) -> dict[str, object]:
    inner: object = "x"
    for _ in range(levels):
        inner = [inner]
    return {**DAY, "attraction": inner}


@pytest.mark.parametrize("wrap", [lambda t: t, lambda t: f"Here it is:\n```json\n{t}\n```", lambda t: f"note {t} end"])
def test_a_too_deep_plan_is_refused_and_a_deep_one_within_the_bound_is_read(wrap: object) -> None:
    too_deep = json.dumps([_nested_day(MAX_JSON_DEPTH)])  # the list, the day, then MAX_JSON_DEPTH lists
    with pytest.raises(PlanFormatError, match=f"nests more than {MAX_JSON_DEPTH} levels"):
        day_objects(wrap(too_deep))  # type: ignore[operator]
    within = json.dumps([_nested_day(MAX_JSON_DEPTH - 2)])
    assert day_objects(wrap(within)) == [_nested_day(MAX_JSON_DEPTH - 2)]  # type: ignore[operator]
