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
import os
import re
import typing
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from pydantic import TypeAdapter, ValidationError
from pydantic.fields import FieldInfo

from tools.errors import DataError, UnknownNameError
from tools.schema import TABLES, Row, TableSpec, unwrap_optional

MANIFEST = "manifest.json"
T = TypeVar("T")
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
        ann, optional = unwrap_optional(info.annotation)
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


def _read_table(path: Path, raw: bytes, spec: TableSpec) -> tuple[dict[str, Any], int, dict[str, list[str]]]:
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
    specs = _columns(spec.model)
    columns = {col.name: _convert(col, rows_by_col[col.name], file) for col in specs}
    json_text = {col.name: rows_by_col[col.name] for col in specs if col.kind == "json"}
    return columns, n, json_text


# ---------------------------------------------------------------- tables and the database


@dataclass
class Table:
    """One validated table held as columns, with a unique-key index and per-city row lists
    (built on first use when the table came from the validated cache)."""

    spec: TableSpec
    columns: dict[str, Any]
    n: int
    _by_key: dict[tuple[str, ...], int] | None = field(default=None, repr=False)
    _by_city: dict[str, np.ndarray] | None = field(default=None, repr=False)

    @property
    def by_key(self) -> dict[tuple[str, ...], int]:
        """Row index by the normalized unique key."""
        if self._by_key is None:
            grouping = _group(self, self.spec.key)
            self._by_key = dict(zip(grouping.spans, grouping.order.tolist(), strict=True))
        return self._by_key

    @property
    def by_city(self) -> dict[str, np.ndarray]:
        """Row indices by normalized city (venue tables)."""
        if self._by_city is None:
            self._by_city = ({k[0]: v for k, v in _group(self, ("city",)).items()}
                             if "city" in self.columns else {})
        return self._by_city

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
        """Rows as dicts of Python values, converted column by column (fast for many rows)."""
        idx = np.fromiter((int(i) for i in indices), dtype=np.int64)
        if idx.size == 0:
            return []
        positions = idx.tolist()
        columns: list[list[Any]] = []
        for name, col in self.columns.items():
            if isinstance(col, np.ndarray):
                values = col[idx].tolist()
                if col.dtype.kind == "f":
                    as_int = self.spec.model.model_fields[name].annotation in (int, int | None)
                    values = [None if v != v else (int(v) if as_int else v) for v in values]
                columns.append(values)
            else:
                columns.append([col[i] for i in positions])
        names = list(self.columns)
        return [dict(zip(names, vals, strict=True)) for vals in zip(*columns, strict=True)]

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
        self._pairs: dict[str, Grouping] = {}
        self._derived: dict[Callable[[Database], Any], Any] = {}
        self._cities_by_state = _group(tables["cities"], ("state",))

    def derived(self, build: Callable[[Database], T]) -> T:
        """`build(self)`, computed once per database and kept with it: the place for structures
        derived from the tables (E[D] of every row, lookup and evaluation indices, pooled
        statistics), so each is built once and none is recomputed on a hot path."""
        try:
            return self._derived[build]
        except KeyError:
            value = self._derived[build] = build(self)
            return value

    # -- opening

    @classmethod
    def open(cls, path: str | Path, use_cache: bool = True) -> Database:
        """Load, validate and index the database in `path`; raise DataError naming any bad cell.

        A successful validation is remembered in `.validated.npz` beside the tables, keyed by the
        content hash: reopening unchanged files loads the validated columns from it (no pickle)
        instead of parsing the CSVs again. Any change to any file changes the hash and
        revalidates. `use_cache=False` always validates from the files.
        """
        path = Path(path)
        if not path.is_dir():
            raise DataError(f"database directory {str(path)!r} does not exist",
                            hint="run `utp-env data build --out DIR` or pass the right path")
        files, raws, digest = {}, {}, hashlib.sha256()
        for name in TABLES:
            file = next((path / f"{name}{ext}" for ext in (".csv", ".parquet")
                         if (path / f"{name}{ext}").exists()), None)
            if file is None:
                raise DataError(f"table {name!r} is missing", file=f"{path / name}.csv",
                                hint="every table of docs/DATA.md must be present")
            files[name], raws[name] = file, file.read_bytes()
            digest.update(name.encode() + b"\0" + hashlib.sha256(raws[name]).digest())
        tables_hash = digest.hexdigest()  # keys the validated cache: companions do not need revalidation
        for name in COMPANION_FILES:
            if (path / name).exists():
                digest.update(name.encode() + b"\0" + hashlib.sha256((path / name).read_bytes()).digest())
        content_hash = digest.hexdigest()
        manifest = {}
        if (path / MANIFEST).exists():
            try:
                manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
            except json.JSONDecodeError as exc:
                raise DataError(f"invalid JSON: {exc.msg}", file=MANIFEST, row=exc.lineno) from exc
        tables = _load_validated(path, tables_hash) if use_cache else None
        if tables is None:
            tables, json_text = {}, {}
            for name, spec in TABLES.items():
                columns, n, json_text[name] = _read_table(files[name], raws[name], spec)
                tables[name] = Table(spec, columns, n)
            for table in tables.values():
                _index(table)
            _check_foreign_cities(tables)
            if use_cache:
                _save_validated(path, tables_hash, tables, json_text)
        return cls(path, tables, content_hash, manifest)

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
        grouping = self._pairs.get(table)
        if grouping is None:
            grouping = self._pairs[table] = _group(self.tables[table], ("origin_city", "dest_city"))
        return grouping.get((normalize(origin), normalize(dest)), _EMPTY)

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


def _codes(values: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Integer codes of the normalized values and the normalized names they stand for."""
    raw_code: dict[str, int] = {}
    raw = np.fromiter((raw_code.setdefault(v, len(raw_code)) for v in values), dtype=np.int64, count=len(values))
    names: list[str] = []
    code_of: dict[str, int] = {}
    remap = np.empty(len(raw_code), dtype=np.int64)
    for value, i in raw_code.items():
        key = normalize(value)
        if key not in code_of:
            code_of[key] = len(names)
            names.append(key)
        remap[i] = code_of[key]
    return remap[raw], names


class Grouping:
    """Row indices grouped by normalized key: one sorted order array and a (start, end) per key,
    so that grouping a 250k-row table costs a sort, not 250k small arrays."""

    def __init__(self, order: np.ndarray, spans: dict[tuple[str, ...], tuple[int, int]]) -> None:
        self.order = order
        self.spans = spans

    def get(self, key: tuple[str, ...], default: np.ndarray | None = None) -> np.ndarray | None:
        span = self.spans.get(key)
        return default if span is None else self.order[span[0]:span[1]]

    def __contains__(self, key: object) -> bool:
        return key in self.spans

    def __len__(self) -> int:
        return len(self.spans)

    def items(self) -> Iterator[tuple[tuple[str, ...], np.ndarray]]:
        return ((k, self.order[a:b]) for k, (a, b) in self.spans.items())


def _group(table: Table, columns: Sequence[str]) -> Grouping:
    """Row indices by the normalized value(s) of `columns`, rows in table order within a group."""
    if table.n == 0:
        return Grouping(_EMPTY, {})
    combined = np.zeros(table.n, dtype=np.int64)
    parts = []
    for column in columns:
        codes, names = _codes(table.columns[column])
        combined = combined * max(len(names), 1) + codes
        parts.append((codes, np.array(names, dtype=object)))
    order = np.argsort(combined, kind="stable")
    sorted_keys = combined[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    ends = np.r_[starts[1:], table.n]
    first_rows = order[starts]
    keys = zip(*(names[codes[first_rows]].tolist() for codes, names in parts), strict=True)
    return Grouping(order, dict(zip(keys, zip(starts.tolist(), ends.tolist(), strict=True), strict=True)))


def _index(table: Table) -> None:
    spec = table.spec
    grouping = _group(table, spec.key)
    if len(grouping) < table.n:
        for _key, rows in grouping.items():
            if len(rows) > 1:
                first, dup = int(rows[0]), int(rows[1])
                shown = {c: table.columns[c][dup] for c in spec.key}
                raise DataError(f"duplicate key {shown} (first at row {first + 1})", file=f"{spec.name}.csv",
                                row=dup + 1, column=spec.key[-1], hint="keys must be unique")
    table._by_key = dict(zip(grouping.spans, grouping.order.tolist(), strict=True)) if table.n else {}


def _check_foreign_cities(tables: dict[str, Table]) -> None:
    known = {normalize(c) for c in tables["cities"].columns["city"]}
    for name, table in tables.items():
        for column in table.spec.city_columns:
            values = table.columns[column]
            for value in set(values):
                if normalize(value) not in known:
                    raise DataError(f"unknown city {value!r}", file=f"{name}.csv", row=values.index(value) + 1,
                                    column=column, hint="add it to cities.csv or fix the spelling: "
                                    + ", ".join(suggest(value, tables["cities"].columns["city"])))


# ---------------------------------------------------------------- the validated cache

VALIDATED_CACHE = ".validated.npz"
_CACHE_FORMAT = "utp-validated-1"


def _save_validated(path: Path, content_hash: str, tables: dict[str, Table],
                    json_text: dict[str, dict[str, list[str]]]) -> None:
    """Remember validated columns (numbers as arrays, text as categories); best effort."""
    arrays: dict[str, np.ndarray] = {"__meta__": np.array([_CACHE_FORMAT, content_hash])}
    for name, table in tables.items():
        arrays[f"{name}|__n__"] = np.array([table.n], dtype=np.int64)
        for column, values in table.columns.items():
            if isinstance(values, np.ndarray):
                arrays[f"{name}|{column}|num"] = values
                continue
            text = json_text[name].get(column, values)
            code_of: dict[str, int] = {}
            codes = np.fromiter((code_of.setdefault(v, len(code_of)) for v in text), dtype=np.int32, count=len(text))
            arrays[f"{name}|{column}|cat"] = np.array(list(code_of), dtype=str)
            arrays[f"{name}|{column}|codes"] = codes
    tmp = path / f"{VALIDATED_CACHE}.{os.getpid()}.tmp.npz"
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path / VALIDATED_CACHE)
    except OSError:  # a read-only database directory simply is not cached
        tmp.unlink(missing_ok=True)


def _load_validated(path: Path, content_hash: str) -> dict[str, Table] | None:
    """The validated tables remembered for exactly this content hash, or None."""
    file = path / VALIDATED_CACHE
    if not file.exists():
        return None
    try:
        with np.load(file, allow_pickle=False) as npz:
            meta = npz["__meta__"].tolist()
            if meta != [_CACHE_FORMAT, content_hash]:
                return None
            tables = {}
            for name, spec in TABLES.items():
                columns: dict[str, Any] = {}
                for col in _columns(spec.model):
                    key = f"{name}|{col.name}"
                    if col.kind in ("int", "float", "bool"):
                        columns[col.name] = npz[f"{key}|num"]
                        continue
                    categories = npz[f"{key}|cat"].tolist()
                    if col.kind == "json":  # validated when cached: parse each distinct text once
                        categories = [None if c == "" and col.optional else col.adapter.validate_json(c)  # type: ignore[union-attr]
                                      for c in categories]
                    lookup = np.empty(len(categories), dtype=object)
                    lookup[:] = categories
                    columns[col.name] = lookup[npz[f"{key}|codes"]].tolist()
                tables[name] = Table(spec, columns, int(npz[f"{name}|__n__"][0]))
            return tables
    except (OSError, KeyError, ValueError):  # unreadable or from another version: validate again
        return None
