"""Column-wise validation of one table file against its row model (`utp_env.tools.schema`).

Checks that depend only on a cell's text (formats, allowed values, JSON) run once per distinct
value and numbers convert whole columns at a time, which keeps the 250k-row tables fast to
validate; the first bad cell raises a DataError naming the file, row and column.
"""

from __future__ import annotations

import csv
import json
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import TypeAdapter, ValidationError
from pydantic.fields import FieldInfo
from utp_env.tools.errors import DataError
from utp_env.tools.schema import Row, TableSpec, unwrap_optional


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # str | int | float | bool | json | literal
    optional: bool
    info: FieldInfo
    adapter: TypeAdapter | None = None
    choices: tuple[str, ...] = ()


def columns_of(model: type[Row]) -> list[Column]:
    out = []
    for name, info in model.model_fields.items():
        ann, optional = unwrap_optional(info.annotation)
        origin = typing.get_origin(ann)
        if origin is typing.Literal:
            out.append(Column(name, "literal", optional, info, choices=typing.get_args(ann)))
        elif origin in (list, tuple) or ann in (list, tuple):
            out.append(Column(name, "json", optional, info, adapter=TypeAdapter(info.annotation)))
        elif ann in (str, int, float, bool):
            out.append(Column(name, ann.__name__, optional, info))
        else:  # pragma: no cover - guards schema edits
            raise TypeError(f"unsupported column type {ann!r} for {model.__name__}.{name}")
    return out


def _bounds(info: FieldInfo) -> dict[str, float]:
    found = {}
    for meta in info.metadata:
        for op in ("ge", "gt", "le", "lt"):
            if getattr(meta, op, None) is not None:
                found[op] = getattr(meta, op)
    return found


def _pattern(info: FieldInfo) -> str | None:
    for meta in info.metadata:
        if getattr(meta, "pattern", None):
            return meta.pattern
    return None


_TRUE, _FALSE = {"true", "1", "yes"}, {"false", "0", "no"}


def convert(col: Column, cells: list[str], file: str) -> Any:
    """Convert one CSV column to its stored form, or raise DataError at the first bad cell.

    Checks that depend only on a cell's text (formats, allowed values, JSON) run once per
    distinct value, which keeps the 250k-row tables fast to open.
    """

    def fail(i: int, message: str, hint: str | None = None) -> typing.NoReturn:
        raise DataError(f"{message}: {cells[i]!r}", file=file, row=i + 1, column=col.name, hint=hint)

    def fail_value(value: str, message: str, hint: str | None = None) -> typing.NoReturn:
        fail(cells.index(value), message, hint)

    distinct = set(cells)
    if not col.optional and col.kind != "str" and "" in distinct:
        fail_value("", "empty cell in a required column", "fill it in")
    if col.kind == "str":
        pattern = _pattern(col.info)
        rx = re.compile(pattern) if pattern else None
        for value in distinct:
            if rx is not None and not rx.match(value):
                fail_value(value, f"does not match the format {pattern}")
            if rx is None and not value.strip():
                fail_value(value, "empty cell in a required column", "fill it in")
        return cells
    if col.kind == "literal":
        for value in distinct:
            if value not in col.choices and not (col.optional and value == ""):
                fail_value(value, "not an allowed value", f"use one of {', '.join(col.choices)}")
        return cells
    if col.kind == "bool":
        for value in distinct:
            if value.strip().lower() not in _TRUE | _FALSE:
                fail_value(value, "not a boolean", "use true or false")
        truth = {value: value.strip().lower() in _TRUE for value in distinct}
        return np.fromiter((truth[c] for c in cells), dtype=bool, count=len(cells))
    if col.kind in ("int", "float"):
        try:
            if "" in distinct:
                values = np.fromiter((float(c) if c else np.nan for c in cells), dtype=np.float64, count=len(cells))
            else:
                values = np.fromiter(map(float, cells), dtype=np.float64, count=len(cells))
        except ValueError:
            for value in distinct:
                if value != "":
                    try:
                        float(value)
                    except ValueError:
                        fail_value(value, f"not a number (expected {col.kind})")
            raise
        empty = np.isnan(values) if "" in distinct else np.zeros(len(cells), dtype=bool)
        finite = ~empty & ~np.isfinite(values)
        if finite.any():
            fail(int(np.argmax(finite)), "not a finite number")
        if col.kind == "int":
            bad = ~empty & (values != np.round(values))
            if bad.any():
                fail(int(np.argmax(bad)), "not an integer")
        for op, bound in _bounds(col.info).items():
            ok = {"ge": values >= bound, "gt": values > bound, "le": values <= bound,
                  "lt": values < bound}[op] | empty
            if not ok.all():
                fail(int(np.argmax(~ok)), f"out of range (must be {op} {bound})")
        if col.kind == "int" and not col.optional:
            return values.astype(np.int64)
        return values  # optional ints stay float with NaN for missing
    # json-valued column: validated once per distinct text, the parsed value shared read-only
    parsed: dict[str, Any] = {}
    for value in distinct:
        if value == "" and col.optional:
            parsed[value] = None
            continue
        try:
            parsed[value] = col.adapter.validate_json(value)  # type: ignore[union-attr]
        except ValidationError as exc:
            fail_value(value, f"invalid JSON value ({exc.errors()[0]['msg']})")
    return [parsed[c] for c in cells]


def read_table(path: Path, raw: bytes, spec: TableSpec) -> tuple[dict[str, Any], int, dict[str, list[str]]]:
    """Validate one table file's bytes; returns its columns, row count and the JSON cells as text
    (kept for the validated cache)."""
    file = path.name
    if path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise DataError("reading parquet needs pyarrow", file=file,
                            hint="pip install pyarrow, or store the table as CSV") from exc
        table = pq.read_table(path)
        header = table.column_names
        rows_by_col = {
            name: ["" if v is None else (json.dumps(v) if isinstance(v, list | dict) else str(v))
                   for v in table.column(name).to_pylist()]
            for name in header
        }
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DataError(f"not UTF-8 at byte {exc.start}", file=file, hint="save the file as UTF-8") from exc
        reader = csv.reader(text.splitlines())
        try:
            header = next(reader)
        except StopIteration:
            raise DataError("empty file, no header row", file=file) from None
        body = list(reader)
        for i, r in enumerate(body):
            if len(r) != len(header):
                raise DataError(f"has {len(r)} cells but the header has {len(header)}", file=file,
                                row=i + 1, hint="quote cells that contain commas")
        columns_t = list(zip(*body, strict=True)) if body else [() for _ in header]
        rows_by_col = {name: list(columns_t[j]) for j, name in enumerate(header)}
    expected = list(spec.model.model_fields)
    missing = [c for c in expected if c not in rows_by_col]
    if missing:
        raise DataError(f"missing column(s) {', '.join(missing)}", file=file, row=0, column=missing[0],
                        hint=f"the header must hold: {', '.join(expected)}")
    extra = [c for c in rows_by_col if c not in expected]
    if extra:
        raise DataError(f"unknown column(s) {', '.join(extra)}", file=file, row=0, column=extra[0],
                        hint="remove them or check the spelling against docs/DATA.md")
    n = len(rows_by_col[expected[0]]) if expected else 0
    specs = columns_of(spec.model)
    columns = {col.name: convert(col, rows_by_col[col.name], file) for col in specs}
    json_text = {col.name: rows_by_col[col.name] for col in specs if col.kind == "json"}
    return columns, n, json_text
