"""The database: a directory of tables, validated against `utp_env.tools.schema`, indexed, hashed.

`Database.open` validates every file column by column (`utp_env.tools.columns`), remembers a successful
validation in a cache keyed by the files' hash (`utp_env.tools.validated_cache`), and answers keyed
lookups (city, city pair, venue name) through sorted-group indices (`utp_env.tools.grouping`), never
through scans.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from utp_env.tools import validated_cache
from utp_env.tools.columns import read_table
from utp_env.tools.errors import DataError, UnknownNameError
from utp_env.tools.grouping import EMPTY, Grouping, group
from utp_env.tools.names import normalize, suggest
from utp_env.tools.schema import NUMBER_COLUMN, TABLES, Row, TableSpec
from utp_env.tools.validated_cache import VALIDATED_CACHE

__all__ = [
    "COMPANION_FILES",
    "MANIFEST",
    "VALIDATED_CACHE",
    "DataError",
    "Database",
    "Table",
    "normalize",
    "suggest",
]

MANIFEST = "manifest.json"
T = TypeVar("T")
# Files a benchmark keeps beside the tables (utp_env's query set); covered by the content hash.
COMPANION_FILES = ("queries.jsonl", "reference_plans.jsonl")



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
            grouping = group(self.columns, self.spec.key, self.n)
            self._by_key = dict(zip(grouping.spans, grouping.order.tolist(), strict=True))
        return self._by_key

    @property
    def by_city(self) -> dict[str, np.ndarray]:
        """Row indices by normalized city (venue tables)."""
        if self._by_city is None:
            self._by_city = ({k[0]: v for k, v in group(self.columns, ("city",), self.n).items()}
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
        cached = validated_cache.load(path, tables_hash) if use_cache else None
        if cached is not None:
            tables = {name: Table(TABLES[name], columns, n) for name, (columns, n) in cached.items()}
        else:
            tables, json_text = {}, {}
            for name, spec in TABLES.items():
                columns, n, json_text[name] = read_table(files[name], raws[name], spec)
                tables[name] = Table(spec, columns, n)
            for table in tables.values():
                _index(table)
            _check_foreign_cities(tables)
            if use_cache:
                validated_cache.save(path, tables_hash, {n: (t.columns, t.n) for n, t in tables.items()}, json_text)
        return cls(path, tables, content_hash, manifest)

    # -- names

    def city(self, name: str) -> str:
        """The canonical spelling of a city; UnknownNameError with suggestions otherwise."""
        found = self.known_city(name)
        if found is None:
            raise UnknownNameError("city", name, suggest(name, self._city_names.values()))
        return found

    def known_city(self, name: str) -> str | None:
        """The canonical spelling of a city, or None when the database has no such city."""
        return self._city_names.get(normalize(name))

    def has_city(self, name: str) -> bool:
        return self.known_city(name) is not None

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
        return grouping.get((normalize(origin), normalize(dest)), EMPTY)

    def services(self, table: str, origin: str, dest: str, number: str) -> list[int]:
        """Rows of `table` (flights, trains, buses) numbered `number` between two cities."""
        numbers = self.tables[table].columns[NUMBER_COLUMN[table]]
        wanted = normalize(number)
        return [int(i) for i in self.pair_rows(table, origin, dest) if normalize(numbers[i]) == wanted]

    def city_rows(self, table: str, city: str) -> np.ndarray:
        """Row indices of a venue table (accommodations, attractions, ...) in one city."""
        return self.tables[table].by_city.get(normalize(city), EMPTY)

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


def _group(table: Table, keys: tuple[str, ...]) -> Grouping:
    return group(table.columns, keys, table.n)


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
