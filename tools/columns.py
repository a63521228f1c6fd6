"""Column-wise validation of one table file against its row model (`utp_env.tools.schema`).

Checks that depend only on a cell's text (formats, allowed values, JSON) run once per distinct
value and numbers convert whole columns at a time, which keeps the 250k-row tables fast to
validate; the first bad cell raises a DataError naming the file, row and column.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

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
            # the field's constraints (min_length, ...) apply to the parsed value too
            annotated: Any = Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation
            out.append(Column(name, "json", optional, info, adapter=TypeAdapter(annotated)))
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
MAX_INT = 2**53  # larger integers do not survive the float64 columns exactly


def shown(value: object) -> str:
    """`repr(value)`, cut to 80 characters so that an error stays one readable line."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(str(value)):,} characters)"


def convert(col: Column, cells: list[str], file: str) -> Any:
    """Convert one CSV column to its stored form, or raise DataError at the first bad cell.

    Checks that depend only on a cell's text (formats, allowed values, JSON) run once per
    distinct value, which keeps the 250k-row tables fast to open.
    """

    def fail(i: int, message: str, hint: str | None = None) -> typing.NoReturn:
        raise DataError(f"{message}: {shown(cells[i])}", file=file, row=i + 1, column=col.name, hint=hint)

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
        empty = (np.fromiter((c == "" for c in cells), dtype=bool, count=len(cells)) if "" in distinct
                 else np.zeros(len(cells), dtype=bool))
        finite = ~empty & ~np.isfinite(values)
        if finite.any():
            fail(int(np.argmax(finite)), "not a finite number")
        if col.kind == "int":
            bad = ~empty & (values != np.round(values))
            if bad.any():
                fail(int(np.argmax(bad)), "not an integer")
            huge = ~empty & (np.abs(np.nan_to_num(values)) > MAX_INT)
            if huge.any():
                fail(int(np.argmax(huge)), f"integer too large (at most {MAX_INT:,})")
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
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error.get("loc", ()))
            fail_value(value, f"invalid JSON value ({where + ': ' if where else ''}{error['msg']})")
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
        header, body = _parse_csv(text, file)
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


def _parse_csv(text: str, file: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a CSV text; a malformed file (a cell over the csv module's field limit,
    a NUL byte, ...) is a DataError naming the row and, when it can be found, the column."""
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[list[str]] = []
    try:
        for r in reader:
            rows.append(r)
    except csv.Error as exc:
        row, limit = len(rows), csv.field_size_limit()
        column = None
        if "field larger than field limit" in str(exc):
            column = _long_cell_column(text, reader.line_num, rows[0] if rows else [], limit)
            message = f"a cell is longer than the CSV field limit of {limit:,} characters"
        else:
            message = f"malformed CSV ({exc})"
        raise DataError(message, file=file, row=row, column=column,
                        hint="shorten the cell or fix the quoting") from None
    if not rows:
        raise DataError("empty file, no header row", file=file)
    return rows[0], rows[1:]


def _long_cell_column(text: str, line_num: int, header: list[str], limit: int) -> str | None:
    """The column of the first cell over `limit` on physical line `line_num` (best effort)."""
    line = text.splitlines()[line_num - 1] if 0 < line_num <= len(text.splitlines()) else ""
    previous = csv.field_size_limit(sys.maxsize)
    try:
        cells = next(csv.reader([line]), [])
    except csv.Error:
        return None
    finally:
        csv.field_size_limit(previous)
    for j, cell in enumerate(cells):
        if len(cell) > limit and j < len(header):
            return header[j]
    return None
