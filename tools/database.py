"""The database: load a directory of tables, validate them against `tools.schema`, index them.

Validation is columnar (numpy conversions on whole columns, regexes and JSON per cell only where
the schema needs them) so that the full sandbox opens in well under two seconds; the slow,
per-cell path runs only to locate a bad cell once a column has failed. Lookups go through hash
indices built here, never through scans.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import json
import re
import types
import typing
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from tools.errors import DataError, UnknownNameError
from tools.schema import TABLES, Row, TableSpec

MANIFEST = "manifest.json"
# Files a benchmark keeps beside the tables (utp_env's query set); covered by the content hash.
COMPANION_FILES = ("queries.jsonl", "reference_plans.jsonl")


def normalize(name: str) -> str:
    """Canonical form of a name for matching: collapsed whitespace, case-folded."""
    return " ".join(str(name).split()).casefold()


def suggest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The closest known names to `name`, best first (for 'did you mean' errors)."""
    pool = {normalize(c): c for c in candidates}
    key = normalize(name)
    close = difflib.get_close_matches(key, list(pool), n=n, cutoff=0.6)
    if len(close) < n:
        close += [k for k in pool if key and (key in k or k in key) and k not in close][: n - len(close)]
    return [pool[k] for k in close]


# ---------------------------------------------------------------- column conversion


@dataclass(frozen=True)
class _Column:
    name: str
    kind: str  # str | int | float | bool | json | literal
    optional: bool
    info: FieldInfo
    adapter: TypeAdapter | None = None
    choices: tuple[str, ...] = ()


def _columns(model: type[Row]) -> list[_Column]:
    out = []
    for name, info in model.model_fields.items():
        ann = info.annotation
        optional = False
        if typing.get_origin(ann) in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(ann) if a is not type(None)]
            optional, ann = True, args[0]
        origin = typing.get_origin(ann)
        if origin is typing.Literal:
            out.append(_Column(name, "literal", optional, info, choices=typing.get_args(ann)))
        elif origin in (list, tuple) or ann in (list, tuple):
            out.append(_Column(name, "json", optional, info, adapter=TypeAdapter(info.annotation)))
        elif ann in (str, int, float, bool):
            out.append(_Column(name, ann.__name__, optional, info))
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


def _convert(col: _Column, cells: list[str], file: str) -> Any:
    """Convert one CSV column to its stored form, or raise DataError at the first bad cell."""

    def fail(i: int, message: str, hint: str | None = None) -> typing.NoReturn:
        raise DataError(f"{message}: {cells[i]!r}", file=file, row=i + 1, column=col.name, hint=hint)

    if not col.optional and col.kind != "str":
        for i, c in enumerate(cells):
            if c == "":
                fail(i, "empty cell in a required column", "fill it in")
    if col.kind == "str":
        pattern = _pattern(col.info)
        if pattern:
            rx = re.compile(pattern)
            for i, c in enumerate(cells):
                if not rx.match(c):
                    fail(i, f"does not match the format {pattern}")
        else:
            for i, c in enumerate(cells):
                if not c.strip():
                    fail(i, "empty cell in a required column", "fill it in")
        return cells
    if col.kind == "literal":
        allowed = set(col.choices)
        for i, c in enumerate(cells):
            if c not in allowed and not (col.optional and c == ""):
                fail(i, "not an allowed value", f"use one of {', '.join(col.choices)}")
        return cells
    if col.kind == "bool":
        values = []
        for i, c in enumerate(cells):
            low = c.strip().lower()
            if low not in _TRUE | _FALSE:
                fail(i, "not a boolean", "use true or false")
            values.append(low in _TRUE)
        return np.array(values, dtype=bool)
    if col.kind in ("int", "float"):
        arr = np.array(cells, dtype=object)
        empty = arr == ""
        filled = np.where(empty, "nan", arr).astype(str)
        try:
            values = filled.astype(np.float64)
        except ValueError:
            for i, c in enumerate(cells):
                if c != "":
                    try:
                        float(c)
                    except ValueError:
                        fail(i, f"not a number (expected {col.kind})")
            raise
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
    # json-valued column
    values = []
    for i, c in enumerate(cells):
        if c == "" and col.optional:
            values.append(None)
            continue
        try:
            values.append(col.adapter.validate_json(c))  # type: ignore[union-attr]
        except ValidationError as exc:
            fail(i, f"invalid JSON value ({exc.errors()[0]['msg']})")
    return values


def _read_table(path: Path, spec: TableSpec) -> tuple[dict[str, Any], int, bytes]:
    """Read and validate one table file; returns columns, row count and raw bytes (for hashing)."""
    raw = path.read_bytes()
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
        rows_by_col = {name: [r[j] for r in body] for j, name in enumerate(header)}
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
    columns = {col.name: _convert(col, rows_by_col[col.name], file) for col in _columns(spec.model)}
    return columns, n, raw


# ---------------------------------------------------------------- tables and the database


@dataclass
class Table:
    """One validated table held as columns, with a unique-key index and per-city row lists."""

    spec: TableSpec
    columns: dict[str, Any]
    n: int
    by_key: dict[tuple[str, ...], int] = field(default_factory=dict)
    by_city: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return self.n

    def value(self, column: str, i: int) -> Any:
        """The Python value of one cell (None for a missing optional)."""
        v = self.columns[column][i]
        if isinstance(v, np.floating):
            v = None if np.isnan(v) else float(v)
            if v is not None and self.spec.model.model_fields[column].annotation in (int, int | None):
                v = int(v)
        elif isinstance(v, np.integer):
            v = int(v)
        elif isinstance(v, np.bool_):
            v = bool(v)
        return v

    def row(self, i: int) -> dict[str, Any]:
        """Row `i` as a dict of Python values."""
        return {c: self.value(c, i) for c in self.columns}

    def rows(self, indices: Iterable[int]) -> list[dict[str, Any]]:
        return [self.row(int(i)) for i in indices]

    def model(self, i: int) -> Row:
        """Row `i` as its pydantic row model."""
        return self.spec.model.model_construct(**self.row(i))

    def find(self, *key: str) -> int | None:
        """Row index of a unique key (names compared after `normalize`), or None."""
        return self.by_key.get(tuple(normalize(k) for k in key))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self.row(i) for i in range(self.n))


class Database:
    """All tables of one database directory, validated and indexed, with a content hash."""

    def __init__(self, path: Path, tables: dict[str, Table], content_hash: str, manifest: dict) -> None:
        self.path = path
        self.tables = tables
        self.content_hash = content_hash
        self.manifest = manifest
        self._city_names = {normalize(c): c for c in tables["cities"].columns["city"]}
        self._pairs: dict[str, dict[tuple[str, str], np.ndarray]] = {}
        for name in ("flights", "trains", "buses", "road_routes", "distances"):
            self._pairs[name] = _group(tables[name], ("origin_city", "dest_city"))
        self._cities_by_state = _group(tables["cities"], ("state",))

    # -- opening

    @classmethod
    def open(cls, path: str | Path) -> Database:
        """Load, validate and index the database in `path`; raise DataError naming any bad cell."""
        path = Path(path)
        if not path.is_dir():
            raise DataError(f"database directory {str(path)!r} does not exist",
                            hint="run `utp-env data build --out DIR` or pass the right path")
        tables, digest = {}, hashlib.sha256()
        for name, spec in TABLES.items():
            file = next((path / f"{name}{ext}" for ext in (".csv", ".parquet")
                         if (path / f"{name}{ext}").exists()), None)
            if file is None:
                raise DataError(f"table {name!r} is missing", file=f"{path / name}.csv",
                                hint="every table of docs/DATA.md must be present")
            columns, n, raw = _read_table(file, spec)
            digest.update(name.encode() + b"\0" + hashlib.sha256(raw).digest())
            tables[name] = Table(spec, columns, n)
        for name in COMPANION_FILES:
            if (path / name).exists():
                digest.update(name.encode() + b"\0" + hashlib.sha256((path / name).read_bytes()).digest())
        manifest = {}
        if (path / MANIFEST).exists():
            try:
                manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise DataError(f"invalid JSON: {exc.msg}", file=MANIFEST, row=exc.lineno) from exc
        for table in tables.values():
            _index(table)
        _check_foreign_cities(tables)
        return cls(path, tables, digest.hexdigest(), manifest)

    # -- names

    def city(self, name: str) -> str:
        """The canonical spelling of a city; UnknownNameError with suggestions otherwise."""
        found = self._city_names.get(normalize(name))
        if found is None:
            raise UnknownNameError("city", name, suggest(name, self._city_names.values()))
        return found

    def has_city(self, name: str) -> bool:
        return normalize(name) in self._city_names

    @property
    def cities(self) -> list[str]:
        return list(self.tables["cities"].columns["city"])

    def cities_of_state(self, state: str) -> list[str]:
        """Cities of a state or union territory, most populous first."""
        rows = self._cities_by_state.get((normalize(state),))
        if rows is None:
            states = sorted(set(self.tables["cities"].columns["state"]))
            raise UnknownNameError("state", state, suggest(state, states))
        table = self.tables["cities"]
        order = sorted(rows, key=lambda i: -table.columns["population"][i])
        return [table.columns["city"][i] for i in order]

    def state_of(self, city: str) -> str:
        table = self.tables["cities"]
        return table.columns["state"][table.find(self.city(city))]

    # -- keyed lookups

    def pair_rows(self, table: str, origin: str, dest: str) -> np.ndarray:
        """Row indices of `table` (flights, trains, buses, road_routes, distances) for a city pair."""
        key = (normalize(origin), normalize(dest))
        return self._pairs[table].get(key, _EMPTY)

    def city_rows(self, table: str, city: str) -> np.ndarray:
        """Row indices of a venue table (accommodations, attractions, ...) in one city."""
        return self.tables[table].by_city.get(normalize(city), _EMPTY)

    def venue(self, table: str, city: str, name: str) -> int | None:
        """Row index of the venue `name` in `city` of `table`, or None."""
        return self.tables[table].find(city, name)

    def require_venue(self, table: str, city: str, name: str) -> int:
        """Row index of a venue; UnknownNameError with the closest names of that city otherwise."""
        i = self.venue(table, city, name)
        if i is None:
            names = [self.tables[table].columns["name"][j] for j in self.city_rows(table, city)]
            raise UnknownNameError(table.rstrip("s").replace("accommodation", "stay"), name,
                                   suggest(name, names))
        return i

    def crowd_row(self, city: str, venue_type: str, name: str) -> int | None:
        return self.tables["crowd"].find(city, venue_type, name)

    def counts(self) -> dict[str, int]:
        return {name: t.n for name, t in self.tables.items()}


_EMPTY = np.empty(0, dtype=np.int64)


def _group(table: Table, columns: Sequence[str]) -> dict[tuple[str, ...], np.ndarray]:
    groups: dict[tuple[str, ...], list[int]] = {}
    cols = [table.columns[c] for c in columns]
    for i, key in enumerate(zip(*cols, strict=True)):
        groups.setdefault(tuple(normalize(k) for k in key), []).append(i)
    return {k: np.array(v, dtype=np.int64) for k, v in groups.items()}


def _index(table: Table) -> None:
    spec = table.spec
    keys = [table.columns[c] for c in spec.key]
    file = f"{spec.name}.csv"
    for i, key in enumerate(zip(*keys, strict=True)):
        norm = tuple(normalize(k) for k in key)
        if norm in table.by_key:
            first = table.by_key[norm] + 1
            raise DataError(f"duplicate key {dict(zip(spec.key, key, strict=True))} (first at row {first})",
                            file=file, row=i + 1, column=spec.key[-1], hint="keys must be unique")
        table.by_key[norm] = i
    if "city" in table.columns:
        table.by_city = {k[0]: v for k, v in _group(table, ("city",)).items()}


def _check_foreign_cities(tables: dict[str, Table]) -> None:
    known = {normalize(c) for c in tables["cities"].columns["city"]}
    for name, table in tables.items():
        for column in table.spec.city_columns:
            for i, value in enumerate(table.columns[column]):
                if normalize(value) not in known:
                    raise DataError(f"unknown city {value!r}", file=f"{name}.csv", row=i + 1, column=column,
                                    hint="add it to cities.csv or fix the spelling: "
                                    + ", ".join(suggest(value, tables["cities"].columns["city"])))
