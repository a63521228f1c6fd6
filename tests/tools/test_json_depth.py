"""`exceeds_depth` walks only containers (scalars nest nothing): it answers as a plain recursive
count of the levels does, on random nested values (dicts, lists, tuples, tuple keys, subclasses of
the containers and of the scalars), at the bound and past it, and on a list that holds itself."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from utp_env.tools.json_depth import MAX_JSON_DEPTH, exceeds_depth


def depth(value: Any) -> int:
    """Levels of dicts, lists and tuples (keys included), the outermost counting 1."""
    if isinstance(value, dict):
        inner = [depth(v) for v in value.values()] + [depth(k) for k in value if isinstance(k, tuple)]
        return 1 + max(inner, default=0)
    if isinstance(value, list | tuple):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


class Text(str):
    pass


class Items(list):  # type: ignore[type-arg]
    pass


scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3) | st.builds(Text, st.text())
values = st.recursive(
    scalars,
    lambda inner: (st.lists(inner, max_size=3) | st.lists(inner, max_size=3).map(tuple)
                   | st.lists(inner, max_size=3).map(Items)
                   | st.dictionaries(st.text(max_size=3) | st.tuples(st.integers()), inner, max_size=3)),
    max_leaves=40,
)


@settings(max_examples=500, deadline=None)
@given(values, st.integers(1, 6))
def test_the_answer_is_the_recursive_count(value: Any, limit: int) -> None:
    assert exceeds_depth(value, limit) == (depth(value) > limit)


def test_at_and_past_the_bound_and_a_list_that_holds_itself() -> None:
    deep: Any = "leaf"
    for _ in range(MAX_JSON_DEPTH):
        deep = [deep] if len(str(deep)) % 2 else {"k": deep}
    assert not exceeds_depth(deep)
    assert exceeds_depth([deep])
    loop: list[Any] = []
    loop.append(loop)
    assert exceeds_depth(loop)
