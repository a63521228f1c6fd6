"""How deeply untrusted JSON may nest: one bound for actions, plans and `reset` options.

Python's `json` and `pickle` recurse once per level: a 100,000-deep list raises `RecursionError` in
`json.loads`, in a `repr`, in pydantic's validation or while an async vector env pickles the action
for its worker. Nothing the env reads needs depth: a whole plan in the paper's format nests about 8
levels deep inside an OpenAI tool_calls message. Every reader of model output, actions and `reset`
options bounds the depth with `MAX_JSON_DEPTH` (the env's action grammar `utp_env/env/actions.py`,
the plan parser `utp_env/plan_format`, `UTPEnv.reset`), so such input is one line naming what was
too deep, never a `RecursionError`.
"""

from __future__ import annotations

import json
from typing import Any

MAX_JSON_DEPTH = 32
"""Most levels of objects and lists (the outermost counts as level 1) in an action, a plan or a
`reset` option; honest ones nest under 12."""


class JSONDepthError(ValueError):
    """A value, or JSON text, that nests deeper than the bound; the message is one line naming it."""


def depth_message(what: str, limit: int = MAX_JSON_DEPTH) -> str:
    """The one-line reason: `what` nests deeper than `limit` levels."""
    return (f"{what} nests more than {limit} levels deep (objects and lists); plans and tool calls "
            "nest fewer than 12: send a flat structure")


def exceeds_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether `value` (dicts, lists and tuples, keys included) nests deeper than `limit` levels.

    Iterative, so it never recurses; it stops at the first container past the bound (a list that
    contains itself is therefore too deep, not an endless walk)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            if depth > limit:
                return True
            for key, inner in item.items():
                if type(inner) not in _SCALARS:  # a scalar nests nothing: not walked
                    stack.append((inner, depth + 1))
                if type(key) is not str and isinstance(key, tuple):
                    stack.append((key, depth + 1))
        elif isinstance(item, (list, tuple)):  # a tuple of types: `list | tuple` would be built anew per item
            if depth > limit:
                return True
            stack.extend([(inner, depth + 1) for inner in item if type(inner) not in _SCALARS])
    return False


_SCALARS = frozenset({str, int, float, bool, type(None)})  # JSON's scalar types (exactly these, not subclasses)


def check_depth(value: Any, what: str, limit: int = MAX_JSON_DEPTH) -> None:
    """`JSONDepthError` naming `what` when `value` nests deeper than `limit` levels."""
    if exceeds_depth(value, limit):
        raise JSONDepthError(depth_message(what, limit))


def loads_bounded(text: str | bytes | bytearray, what: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """`json.loads(text)` that refuses (`JSONDepthError`) what nests deeper than `limit` levels,
    including text too deep for Python's parser; other bad JSON raises `json.JSONDecodeError` or
    `ValueError` as `json.loads` does."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JSONDepthError(depth_message(what, limit)) from None
    check_depth(value, what, limit)
    return value
