"""Two readings of the same plan text must give the same thing: `same(a, b)` compares two parsed
plans (or errors) down to the types, the field order and the fields set of every pydantic model, as
a faster path of the parser must give them; `readings_agree` parses a text both ways."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

from pydantic import BaseModel

from utp_env.itinerary import Plan
from utp_env.plan_format import PlanFormatError, parse_plan
from utp_env.query import Query
from utp_env.tools.database import Database


def same(a: object, b: object, where: str = "plan") -> None:
    """`a` and `b` are the same value down to the types, the field order and the fields set of every model."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, BaseModel):
        assert isinstance(b, BaseModel)
        assert list(a.__dict__) == list(b.__dict__), where
        assert a.model_fields_set == b.model_fields_set, where
        assert (a.__pydantic_extra__, a.__pydantic_private__) == (b.__pydantic_extra__, b.__pydantic_private__), where
        for name, value in a.__dict__.items():
            same(value, b.__dict__[name], f"{where}.{name}")
        assert a == b and repr(a) == repr(b) and a.model_dump_json() == b.model_dump_json(), where
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    else:
        assert repr(a) == repr(b), f"{where}: {a!r} != {b!r}"


def outcome(text: object, query: Query | None, db: Database | None) -> Plan | str:
    """The plan `parse_plan` reads, or its error as text."""
    try:
        return parse_plan(text, query=query, db=db)
    except PlanFormatError as exc:
        return f"PlanFormatError: {exc}"


def readings_agree(other_reading: Callable[[], AbstractContextManager[None]], text: object,
                   query: Query | None = None, db: Database | None = None) -> Plan | str:
    """`outcome` of `text` as parse_plan reads it and inside `other_reading()`: `same` both ways."""
    first = outcome(text, query, db)
    with other_reading():
        second = outcome(text, query, db)
    same(first, second)
    return first
