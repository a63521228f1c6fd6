"""`same(a, b)`: two parsed plans (or errors) are the same value down to the types, the field order
and the fields set of every pydantic model, as a faster path of the parser must give them."""

from __future__ import annotations

from pydantic import BaseModel


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
