"""The database: a directory of tables, validated against `utp_env.tools.schema`, indexed, hashed.

`Database.open` validates every file column by column (`utp_env.tools.columns`) and against the
cross-field, bound and reference rules (`utp_env.tools.integrity`), remembers a successful
validation in a checksummed cache keyed by the files' hash (`utp_env.tools.validated_cache`), checks
`manifest.json`, and answers keyed lookups (city, city pair, venue name) through sorted-group
indices (`utp_env.tools.grouping`), never through scans.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import json
import os
import stat
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from utp_env.tools import validated_cache
from utp_env.tools.columns import read_table
from utp_env.tools.errors import DataError, UnknownNameError
from utp_env.tools.grouping import EMPTY, Grouping, group
from utp_env.tools.integrity import DataBounds, check_references, check_table, load_bounds, rules_key
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
    json_text: dict[str, list[str]] = field(default_factory=dict, repr=False)  # for the cache, then dropped

    @property
    def by_key(self) -> dict[tuple[str, ...], int]:
        """Row index by the normalized unique key (a duplicate key is a DataError, also for
        columns that came from the validated cache)."""
        if self._by_key is None:
            _index(self)
        return self._by_key  # type: ignore[return-value]

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


PAIR_TABLES = ("flights", "trains", "buses", "road_routes", "distances")
INDEX_CACHE = ".indices.npz"
_INDEX_FORMAT = "utp-indices-1"
_INDEX_META = "__meta__"


class PairIndex:
    """Row indices of a table by (origin city, destination city): the rows sorted by the code of
    their pair (stably, so a pair's rows keep their file order) and the sorted codes, so a lookup
    is two binary searches. A city's code is its position in the cities table. Built from the
    columns with one C-level pass per column and one sort (no per-pair Python objects, which for
    the 250k pairs of `distances` cost more than the rest of a worker's start), and kept in
    `.indices.npz` (`Database.derived_arrays`) so later processes only load it."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        # stored as int32 (half the file to read); held as int64: rows are handed out as int64, like
        # every index, and a search of int64 keys needs no cast of the whole array per lookup
        self.order, self.keys = arrays["order"].astype(np.int64), arrays["keys"].astype(np.int64)
        self.width = int(arrays["width"])

    @staticmethod
    def arrays(table: Table, city_code: dict[str, int]) -> dict[str, np.ndarray]:
        width = len(city_code) + 1  # code len(city_code): a city the cities table lacks
        pair = _city_codes(table.columns["origin_city"], city_code) * width
        pair += _city_codes(table.columns["dest_city"], city_code)
        order = np.argsort(pair, kind="stable")
        return {"order": order.astype(np.int32), "keys": pair[order].astype(np.int32), "width": np.array(width)}

    def rows(self, origin: int, dest: int) -> np.ndarray:
        """Rows of the pair (origin code, destination code), in file order."""
        key = origin * self.width + dest
        return self.order[self.keys.searchsorted(key):self.keys.searchsorted(key, "right")]


def _city_codes(values: list[str], city_code: dict[str, int]) -> np.ndarray:
    unknown = len(city_code)
    code = {v: city_code.get(normalize(v), unknown) for v in dict.fromkeys(values)}
    return np.fromiter(map(code.__getitem__, values), dtype=np.int64, count=len(values))


def require_directory(path: str | Path) -> Path:
    """`path` as a Path when it is a directory; else the one-line `DataError` a database path that does not
    exist gets (before anything is built into it or read from it)."""
    path = Path(path)
    if not path.is_dir():
        raise DataError(f"database directory {str(path)!r} does not exist",
                        hint="run `utp-env data build --out DIR` or pass the right path")
    return path


class Database:
    """All tables of one database directory, validated and indexed, with a content hash."""

    def __init__(self, path: Path, tables: dict[str, Table], content_hash: str, manifest: dict,
                 tables_hash: str | None = None) -> None:
        self.path = path
        self.tables = tables
        self.content_hash = content_hash
        self.tables_hash = tables_hash  # of the table files only; keys the stored indices (None: not stored)
        self.manifest = manifest
        self._stored: dict[str, np.ndarray] | None = None
        self._city_names = {normalize(c): c for c in tables["cities"].columns["city"]}
        self._city_code = {key: i for i, key in enumerate(self._city_names)}
        self._pairs: dict[str, PairIndex] = {}
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

    def derived_arrays(self, name: str, build: Callable[[Database], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
        """The arrays `build(self)` returns, kept in `.indices.npz` beside the tables so that every
        later process loads them instead of building them again.

        The file is keyed by the hash of the table files and holds each array's CRC-32; a file
        for other tables, of another format, damaged or unreadable is ignored and written again
        (atomically; not at all in a read-only folder). Structures derived from the tables that
        cost more to build than to load belong here (the pair indices, the lookup index)."""
        stored = self._stored_arrays()
        prefix = f"{name}/"
        found = {k[len(prefix):]: v for k, v in stored.items() if k.startswith(prefix)}
        if found:
            return found
        arrays = {k: np.asarray(v) for k, v in build(self).items()}
        stored.update({prefix + k: v for k, v in arrays.items()})
        if self.tables_hash is not None:
            _save_indices(self.path, self.tables_hash, stored)
        return arrays

    def _stored_arrays(self) -> dict[str, np.ndarray]:
        if self._stored is None:
            self._stored = _load_indices(self.path, self.tables_hash) if self.tables_hash is not None else {}
        return self._stored

    # -- opening

    @classmethod
    def open(cls, path: str | Path, use_cache: bool = True, *, bounds: DataBounds | None = None,
             check_manifest: bool = True) -> Database:
        """Load, validate and index the database in `path`; raise DataError naming any bad cell.

        A successful validation is remembered in `.validated.npz` beside the tables, keyed by the
        content hash of the tables and the rules in force, with a checksum of every array:
        reopening unchanged files loads the validated columns from it (no pickle) instead of
        parsing the CSVs again. Any change to any table changes the key and revalidates; a cache
        that fails its checks (rewritten, truncated, unreadable) is reported in one line on stderr
        and the tables are validated again. `use_cache=False` always validates from the files (and
        neither reads nor writes the stored indices, `derived_arrays`).
        `bounds` replaces configs/data_bounds.yaml. When `manifest.json` records a `content_hash`
        it must equal the files' (`check_manifest=False` skips that, for the writers of the
        manifest).
        """
        path = require_directory(path)
        root = path.resolve()
        files, raws, digest = {}, {}, hashlib.sha256()
        for name in TABLES:
            file = next((path / f"{name}{ext}" for ext in (".csv", ".parquet")
                         if _present(path / f"{name}{ext}")), None)
            if file is None:
                raise DataError(f"table {name!r} is missing", file=f"{path / name}.csv",
                                hint="every table of docs/DATA.md must be present")
            files[name], raws[name] = file, _read_regular(root, file)
            digest.update(name.encode() + b"\0" + hashlib.sha256(raws[name]).digest())
        tables_hash = digest.hexdigest()  # keys the validated cache: companions do not need revalidation
        for name in COMPANION_FILES:
            if _present(path / name):
                digest.update(name.encode() + b"\0" + hashlib.sha256(_read_regular(root, path / name)).digest())
        content_hash = digest.hexdigest()
        manifest = _read_manifest(root, path)
        bounds = bounds or load_bounds()
        key = f"{tables_hash}|{rules_key(bounds)}"
        with collector_paused():
            tables = _load_tables(path, key, use_cache, files, raws, bounds, manifest)
        recorded = manifest.get("content_hash")
        if check_manifest and recorded is not None and recorded != content_hash:
            raise DataError(f"content_hash {_short(recorded)} does not match the files ({content_hash})",
                            file=MANIFEST, column="content_hash",
                            hint="the tables or query files changed after the manifest was written: rebuild "
                            "with `utp-env data build`, or, if the edit was intended, set content_hash to "
                            "the files' hash (or remove it)")
        return cls(path, tables, content_hash, manifest, tables_hash if use_cache else None)

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
        index = self._pairs.get(table)
        if index is None:
            index = self._pairs[table] = PairIndex(self.derived_arrays(
                f"pairs/{table}", lambda db: PairIndex.arrays(db.tables[table], db._city_code)))
        o, d = self._city_code.get(normalize(origin)), self._city_code.get(normalize(dest))
        return EMPTY if o is None or d is None else index.rows(o, d)

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

    def build_indices(self) -> None:
        """Build now every keyed index that lookups and evaluation would otherwise build on first
        use (city pairs of the transport tables, venues by city and by name), so that a worker's
        first episode costs what later ones do."""
        for name in PAIR_TABLES:
            self.pair_rows(name, "", "")
        for table in self.tables.values():
            if "city" in table.columns:
                table.by_city  # noqa: B018 - built and kept on first access
                table.by_key  # noqa: B018

    def counts(self) -> dict[str, int]:
        return {name: t.n for name, t in self.tables.items()}


def _load_tables(path: Path, key: str, use_cache: bool, files: dict[str, Path], raws: dict[str, bytes],
                 bounds: DataBounds, manifest: dict[str, Any]) -> dict[str, Table]:
    """The validated tables: from the validated cache when it holds `key`, else validated from the
    files (and cached)."""
    cached = None
    if use_cache:
        try:
            cached = validated_cache.load(path, key)
        except validated_cache.CacheError as exc:
            print(f"utp-env: ignoring the validated cache {path / VALIDATED_CACHE} ({_one_line(exc)}); "
                  "validating the tables again", file=sys.stderr)
    if cached is not None:
        return {name: Table(TABLES[name], columns, n) for name, (columns, n) in cached.items()}
    tables = _validate(files, raws, bounds, manifest)
    if use_cache:
        validated_cache.save(path, key, {n: (t.columns, t.n) for n, t in tables.items()},
                             {n: t.json_text for n, t in tables.items()})
    for table in tables.values():
        table.json_text = {}
    return tables


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a database or dataset is loaded.

    Loading builds hundreds of thousands of long-lived containers (column lists, crowd windows,
    keyed indices) and no garbage cycles; each allocation burst would otherwise trigger
    collections that walk everything built so far (about a third of a worker's start-up on the
    full sandbox, benchmarks/runs.py). Nested uses are fine: the collector is re-enabled only by
    the use that disabled it, also when loading raises.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _load_indices(path: Path, key: str) -> dict[str, np.ndarray]:
    """The arrays of `.indices.npz` when it was written for tables of hash `key` and every array
    matches its recorded CRC-32; {} otherwise (absent, stale, damaged, not a regular file)."""
    file = path / INDEX_CACHE
    try:
        if not stat.S_ISREG(os.stat(file).st_mode):
            return {}
        with np.load(io.BytesIO(file.read_bytes()), allow_pickle=False) as archive:
            meta = json.loads(archive[_INDEX_META].tobytes())
            if meta.get("format") != _INDEX_FORMAT or meta.get("key") != key:
                return {}
            arrays = {name: archive[name] for name in meta["crc"]}
    except Exception:  # any failure to read it means: build the indices again
        return {}
    for name, array in arrays.items():
        if zlib.crc32(np.ascontiguousarray(array).tobytes()) != meta["crc"][name]:
            return {}
    return arrays


def _save_indices(path: Path, key: str, arrays: dict[str, np.ndarray]) -> None:
    """Write `.indices.npz` (best effort, atomically; a read-only folder is simply not written)."""
    meta = {"format": _INDEX_FORMAT, "key": key,
            "crc": {name: zlib.crc32(np.ascontiguousarray(a).tobytes()) for name, a in arrays.items()}}
    tmp = path / f"{INDEX_CACHE}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            members: dict[str, Any] = {**arrays, _INDEX_META: np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}
            np.savez(fh, **members)
        os.replace(tmp, path / INDEX_CACHE)
    except OSError:
        tmp.unlink(missing_ok=True)


def _present(file: Path) -> bool:
    """Whether `file` exists as a name (a broken symlink counts: opening it reports the error)."""
    return file.is_symlink() or file.exists()


def _read_regular(root: Path, file: Path) -> bytes:
    """The bytes of a regular file inside the database folder `root`; a one-line DataError for a
    symlink pointing outside it, a directory, a FIFO, a device or an unreadable file (never a hang)."""
    name = file.name
    if file.is_symlink():
        try:
            target = file.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            raise DataError(f"broken symlink ({_one_line(exc)})", file=name,
                            hint="replace it with the table file") from None
        if not target.is_relative_to(root):
            raise DataError(f"is a symlink pointing outside the database folder (to {str(target)!r})",
                            file=name, hint="copy the file into the folder instead")
    try:
        mode = os.stat(file).st_mode
        if stat.S_ISDIR(mode):
            raise DataError("is a directory, not a file", file=name, hint="put the table file in its place")
        if not stat.S_ISREG(mode):
            raise DataError("is not a regular file (a FIFO, device or socket)", file=name,
                            hint="put the table file in its place")
        return file.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read the file ({_one_line(exc)})", file=name) from None


def _read_manifest(root: Path, path: Path) -> dict[str, Any]:
    """`manifest.json` as a dict ({} when absent); a DataError when it is not a JSON object or its
    `content_hash` / `empty_tables` are malformed."""
    if not _present(path / MANIFEST):
        return {}
    raw = _read_regular(root, path / MANIFEST)
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 at byte {exc.start}", file=MANIFEST, hint="save the file as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"invalid JSON: {exc.msg}", file=MANIFEST, row=exc.lineno) from None
    except RecursionError:
        raise DataError("invalid JSON: nested too deeply", file=MANIFEST) from None
    if not isinstance(manifest, dict):
        raise DataError(f"must hold a JSON object, found {_json_kind(manifest)}", file=MANIFEST,
                        hint='write {"content_hash": ..., ...} or delete the file')
    recorded = manifest.get("content_hash")
    if recorded is not None and not isinstance(recorded, str):
        raise DataError(f"content_hash must be a string, found {_json_kind(recorded)}", file=MANIFEST,
                        column="content_hash")
    empty = manifest.get("empty_tables", [])
    if not isinstance(empty, list) or not all(isinstance(t, str) and t in TABLES for t in empty):
        raise DataError(f"empty_tables must be a list of table names, found {_short(empty)}", file=MANIFEST,
                        column="empty_tables", hint=f"table names: {', '.join(TABLES)}")
    return manifest


def _json_kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _validate(files: dict[str, Path], raws: dict[str, bytes], bounds: DataBounds,
              manifest: dict[str, Any]) -> dict[str, Table]:
    """Every table validated from its file: cells, then rows (bounds and cross-field rules), then
    keys and references between tables."""
    allowed_empty = set(manifest.get("empty_tables", []))
    tables = {}
    for name, spec in TABLES.items():
        columns, n, json_text = read_table(files[name], raws[name], spec)
        if n == 0 and name not in allowed_empty:
            raise DataError("has a header and no rows", file=files[name].name, row=1,
                            hint=f'add its rows, or list it in manifest.json "empty_tables" if {name} '
                            "is meant to be empty")
        check_table(name, columns, n, bounds)
        tables[name] = Table(spec, columns, n, json_text=json_text)
    for table in tables.values():
        _index(table)
    _check_foreign_cities(tables)
    check_references(tables)
    return tables


def _group(table: Table, keys: tuple[str, ...]) -> Grouping:
    return group(table.columns, keys, table.n)


def _index(table: Table) -> None:
    """The unique-key index of `table` (one dict built in one pass over the key columns); a
    duplicate key is a DataError naming the rows of its first duplicate."""
    spec = table.spec
    keys = zip(*(_normalized(table.columns[c]) for c in spec.key), strict=True)
    by_key = dict(zip(keys, range(table.n), strict=True))
    if len(by_key) == table.n:
        table._by_key = by_key
        return
    grouping = _group(table, spec.key)
    if len(grouping) < table.n:
        for _key, rows in grouping.items():
            if len(rows) > 1:
                first, dup = int(rows[0]), int(rows[1])
                shown = {c: table.columns[c][dup] for c in spec.key}
                raise DataError(f"duplicate key {shown} (first at row {first + 1})", file=f"{spec.name}.csv",
                                row=dup + 1, column=spec.key[-1], hint="keys must be unique")
    table._by_key = dict(zip(grouping.spans, grouping.order.tolist(), strict=True))


def _normalized(values: list[Any]) -> list[str]:
    """`normalize` of every value of a column, computed once per distinct value."""
    distinct = {value: normalize(value) for value in set(values)}
    return list(map(distinct.__getitem__, values))


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
