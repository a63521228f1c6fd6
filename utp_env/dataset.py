"""The benchmark dataset: a database directory plus its query set and reference plans.

`queries.jsonl` and `reference_plans.jsonl` live next to the tables and are covered by the
database's content hash. The reference plans are made by a gold planner and stand in for the
paper's human gold plans; they are labelled `planner-made`. The core never imports an agent: the
gold planner is found through the entry-point group `utp_env.gold_planners` (pyproject.toml
registers `reference`, the no-LLM reference planner of `agents/reference/`), so the dependency
points from the agents layer to the core, and a user can register a planner of their own.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from utp_env.itinerary import Plan
from utp_env.plan_format.errors import PlanFormatError
from utp_env.queries.generate import TRAIN_SPLIT
from utp_env.query import Query
from utp_env.tools.atomic import write_text_atomic
from utp_env.tools.database import Database, collector_paused, require_directory

QUERIES_FILE = "queries.jsonl"
REFERENCES_FILE = "reference_plans.jsonl"
GOLD_PLANNERS = "utp_env.gold_planners"  # entry-point group: name -> callable(query, db) -> Plan | None
GOLD_PLANNER = "reference"
REFERENCE_SOURCE = "planner-made"
# Bump when query generation or the reference planner changes what a fresh build writes, so that
# the embedded sandboxes cached on users' machines rebuild their query set.
QUERY_SET_VERSION = "11"
# The train split (docs/RL.md): its own files, built when first asked for, not covered by the
# content hash (the benchmark's hash, recorded by every run, does not move when it is built).
TRAIN_QUERIES_FILE = "train_queries.jsonl"
TRAIN_REFERENCES_FILE = "train_reference_plans.jsonl"
TRAIN_MANIFEST = "train_set.json"
TRAIN_SIZE = 5000
# Bump when the train split's generation changes what a build writes (cached train splits rebuild).
TRAIN_SET_VERSION = "1"


@dataclass
class Dataset:
    """A database with its queries (in file order) and reference plans by query id.

    `queries` and `references` are the benchmark's (validation and test). The train split lives
    in files of its own and is read, or built, when first asked for (`train()`, `split("train")`,
    a train query id); `all` means validation and test.
    """

    db: Database
    queries: list[Query]
    references: Mapping[str, Plan] = field(default_factory=dict)
    _train: Dataset | None = field(default=None, repr=False, compare=False)

    def query(self, query_id: str) -> Query:
        for q in self.queries:
            if q.query_id == query_id:
                return q
        if is_train_id(query_id):
            for q in self.train().queries:
                if q.query_id == query_id:
                    return q
        raise LookupError(f"unknown query id {query_id!r} (the query set has {len(self.queries)} queries)")

    def split(self, name: str) -> list[Query]:
        if name == TRAIN_SPLIT:
            return list(self.train().queries)
        return [q for q in self.queries if name == "all" or q.split == name]

    def reference(self, query_id: str) -> Plan | None:
        """The reference plan of a query of any split, or None."""
        if is_train_id(query_id):
            return self.train().references.get(query_id)
        return self.references.get(query_id)

    def train(self, progress: bool = True) -> Dataset:
        """The train split (queries and reference plans), built next to the query set on first use
        (`build_train_set`; minutes on the full sandbox) and read once per opened database."""
        if self._train is None:
            self._train = load_train_set(self.db, progress=progress)
        return self._train


GoldPlanner = Callable[[Query, Database], "Plan | None"]


def gold_planner(name: str = GOLD_PLANNER) -> GoldPlanner:
    """The gold planner registered under `name` in the entry-point group `utp_env.gold_planners`."""
    found = entry_points(group=GOLD_PLANNERS, name=name)
    if not found:
        raise LookupError(f"no gold planner {name!r} is registered in the entry-point group {GOLD_PLANNERS!r}; "
                          "reinstall utp-env (`pip install -e .` in a checkout) so that its entry points exist")
    planner: GoldPlanner = next(iter(found)).load()
    return planner


def build_query_set(db_path: str | Path, n: int = 1000, seed: int = 0, progress: bool = True) -> int:
    """Generate `n` queries for the database at `db_path`, plan each with the reference planner,
    keep the queries it plans, and write both files. Returns the number of queries kept."""
    from utp_env.plan_format import format_plan
    from utp_env.queries import dumps_queries, generate_queries
    from utp_env.tools.progress import progress_bar

    db_path = Path(db_path)
    db = Database.open(db_path, check_manifest=False)  # this function rewrites the manifest
    queries = generate_queries(db, n=n, seed=seed)
    plan_gold = gold_planner()
    kept, lines = [], []
    for query in progress_bar(len(queries), "reference plans", "query", enabled=progress, iterable=queries):
        plan = plan_gold(query, db)
        if plan is None:
            continue
        kept.append(query)
        lines.append(json.dumps({"query_id": query.query_id, "source": REFERENCE_SOURCE,
                                 "plan": format_plan(plan)}, ensure_ascii=False, sort_keys=True))
        # Validated here, once: readers parse a reference plan only when it is asked for.
        _parse_reference(json.loads(lines[-1]), query, db)
    write_text_atomic(db_path / QUERIES_FILE, dumps_queries(kept))
    write_text_atomic(db_path / REFERENCES_FILE, "\n".join(lines) + ("\n" if lines else ""))
    _record_in_manifest(db_path, len(kept), seed)
    return len(kept)


def is_train_id(query_id: str) -> bool:
    """Whether `query_id` names a query of the train split (`utp-train-NNNNN`)."""
    return query_id.startswith("utp-train-")


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def train_set_state(db_path: str | Path) -> dict[str, Any] | None:
    """The train split's record (`train_set.json`) when it is current for this query set, else None.

    Current: written by this `TRAIN_SET_VERSION`, for the query set now on disk (its SHA-256), and
    its two files are the ones recorded (their SHA-256)."""
    db_path = Path(db_path)
    try:
        record = json.loads((db_path / TRAIN_MANIFEST).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(record, dict) or record.get("version") != TRAIN_SET_VERSION:
        return None
    if record.get("benchmark_sha256") != _sha256(db_path / QUERIES_FILE):
        return None
    if (record.get("queries_sha256") != _sha256(db_path / TRAIN_QUERIES_FILE)
            or record.get("references_sha256") != _sha256(db_path / TRAIN_REFERENCES_FILE)):
        return None
    return record


def build_train_set(db_path: str | Path, n: int = TRAIN_SIZE, seed: int = 0, progress: bool = True) -> int:
    """Draw the train split: `n` queries from the benchmark's generator and grid (per-query
    generators of another stream, ids `utp-train-NNNNN`), none sharing (origin, dates, destination)
    with a validation or test query or with another train query, each kept only when the
    reference planner plans it (drawing on until `n` are kept), and write them with their
    reference plans and `train_set.json`. Returns the number kept (`n`)."""
    import time

    from utp_env.plan_format import format_plan
    from utp_env.queries import dumps_queries, generate_queries, read_queries
    from utp_env.queries.generate import trip_key
    from utp_env.tools.progress import progress_bar

    if n < 1:
        raise ValueError(f"the train split needs at least 1 query, not {n}")
    db_path = Path(db_path)
    if not (db_path / QUERIES_FILE).exists():
        raise FileNotFoundError(f"no {QUERIES_FILE} in {db_path}: build the query set first "
                                f"(`utp-env data build --out {db_path}`); the train split is drawn apart from it")
    started = time.perf_counter()
    db = Database.open(db_path)
    held_out = {trip_key(q) for q in read_queries(db_path / QUERIES_FILE)}
    exclude = set(held_out)
    plan_gold = gold_planner()
    kept: list[Query] = []
    lines: list[str] = []
    index = 0
    bar = progress_bar(n, "train split", "query", enabled=progress)
    with bar:
        while len(kept) < n:
            skipped: list[int] = []  # indices whose cell ran out of fresh trips (a small sandbox)
            batch = generate_queries(db, n=n - len(kept), seed=seed, train=True, start=index, exclude=exclude,
                                     skipped=skipped)
            index += len(batch) + len(skipped)
            for query in batch:
                plan = plan_gold(query, db)
                if plan is None:
                    continue
                record = {"query_id": query.query_id, "source": REFERENCE_SOURCE, "plan": format_plan(plan)}
                lines.append(json.dumps(record, ensure_ascii=False, sort_keys=True))
                _parse_reference(json.loads(lines[-1]), query, db)
                kept.append(query)
                bar.update(1)
    write_text_atomic(db_path / TRAIN_QUERIES_FILE, dumps_queries(kept))
    write_text_atomic(db_path / TRAIN_REFERENCES_FILE, "\n".join(lines) + "\n")
    state = {"version": TRAIN_SET_VERSION, "seed": seed, "queries": len(kept), "drawn": index,
              "reference_source": REFERENCE_SOURCE,
              "benchmark_sha256": _sha256(db_path / QUERIES_FILE),
              "queries_sha256": _sha256(db_path / TRAIN_QUERIES_FILE),
              "references_sha256": _sha256(db_path / TRAIN_REFERENCES_FILE),
              "build_seconds": round(time.perf_counter() - started, 1)}
    write_text_atomic(db_path / TRAIN_MANIFEST, json.dumps(state, indent=2, sort_keys=True) + "\n")
    return len(kept)


def load_train_set(db: Database, progress: bool = True) -> Dataset:
    """The train split next to `db` (queries and reference plans), built first when it is missing
    or stale (`train_set_state`)."""
    from utp_env.queries import read_queries

    path = Path(db.path)
    if train_set_state(path) is None:
        seed = int((db.manifest.get("query_set") or {}).get("seed", db.manifest.get("seed", 0)) or 0)
        if progress:
            print(f"utp-env: building the train split ({TRAIN_SIZE} queries with reference plans) once into "
                  f"{path}", file=sys.stderr)
        if not os.access(path, os.W_OK):  # before minutes of planning, not after
            raise PermissionError(f"cannot write the train split into {path} (the folder is read-only); build it "
                                  "where the database is writable: `utp-env data build --out DIR --train`")
        build_train_set(path, n=TRAIN_SIZE, seed=seed, progress=progress)
    queries = read_queries(path / TRAIN_QUERIES_FILE)
    by_id = {q.query_id: q for q in queries}
    return Dataset(db, queries, read_references(path / TRAIN_REFERENCES_FILE, by_id, db))


def _record_in_manifest(db_path: Path, n_queries: int, seed: int) -> None:
    """Keep manifest.json's content hash equal to Database.content_hash now that the query set
    (a companion file covered by the hash) exists."""
    from utp_env.tools.database import MANIFEST

    path = db_path / MANIFEST
    manifest = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    manifest["content_hash"] = Database.open(db_path, check_manifest=False).content_hash
    manifest["query_set"] = {"queries": n_queries, "seed": seed, "reference_source": REFERENCE_SOURCE,
                             "version": QUERY_SET_VERSION}
    write_text_atomic(path, json.dumps(manifest, indent=2, sort_keys=True) + "\n")


class ReferencePlans(Mapping[str, Plan]):
    """Reference plans by query id, each parsed with `parse_plan` (against the database) when it
    is first asked for and kept.

    Opening a dataset reads the file and checks every line's JSON and query id (a bad line is an
    error naming the file and the line, at once); the plans themselves were validated when the
    query set was built (`build_query_set` parses each line it writes). Parsing all 1,000 plans
    of the full sandbox on every open cost a run worker 1.3 s of CPU before its first episode,
    which needs one plan; a grammar error in a hand-edited line is reported, with its
    file and line, when that plan is read.
    """

    def __init__(self, path: Path, queries: dict[str, Query], db: Database) -> None:
        self._path, self._queries, self._db = path, queries, db
        self._lines: dict[str, tuple[int, str]] = {}
        self._plans: dict[str, Plan] = {}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = self._decode(line)
                query_id = record["query_id"]
                if query_id not in queries:
                    raise ValueError(f"unknown query id {query_id!r}")
                if "plan" not in record:
                    raise ValueError("no 'plan' field")
            except (json.JSONDecodeError, KeyError, TypeError, ValueError, RecursionError) as exc:
                raise ValueError(f"{path.name} line {number}: {_describe(exc)}") from exc
            self._lines[query_id] = (number, line)

    @staticmethod
    def _decode(line: str) -> dict[str, Any]:
        record = json.loads(line)
        if not isinstance(record, dict):
            raise TypeError(f"a JSON object with query_id, source and plan was expected, found {type(record).__name__}")
        return record

    def __getitem__(self, query_id: str) -> Plan:
        plan = self._plans.get(query_id)
        if plan is None:
            number, line = self._lines[query_id]
            record = self._decode(line)
            try:
                plan = _parse_reference(record, self._queries[query_id], self._db)
            except PlanFormatError as exc:
                raise ValueError(f"{self._path.name} line {number}: {exc}") from exc
            self._plans[query_id] = plan
        return plan

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._lines

    def __iter__(self) -> Iterator[str]:
        return iter(self._lines)

    def __len__(self) -> int:
        return len(self._lines)


def _describe(exc: BaseException) -> str:
    return f"no {exc.args[0]!r} field" if isinstance(exc, KeyError) else str(exc)


def _parse_reference(record: dict[str, Any], query: Query, db: Database) -> Plan:
    """The Plan of one reference_plans.jsonl record (PlanFormatError when its plan does not parse)."""
    from utp_env.plan_format import parse_plan

    plan = parse_plan(record["plan"], query=query, db=db)
    return plan.model_copy(update={"query_id": query.query_id, "source": record.get("source", REFERENCE_SOURCE)})


def read_references(path: Path, queries: dict[str, Query], db: Database) -> ReferencePlans:
    """Reference plans by query id (parsed when asked for); a bad line is an error naming the file
    and line."""
    return ReferencePlans(path, queries, db)


def _query_set_version(db_path: Path) -> str | None:
    from utp_env.tools.database import MANIFEST

    try:
        manifest = json.loads((db_path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return (manifest.get("query_set") or {}).get("version")


def load_dataset(db: Database) -> Dataset:
    """The query set and reference plans stored next to an opened database."""
    from utp_env.queries import read_queries

    path = Path(db.path)
    if not (path / QUERIES_FILE).exists():
        raise FileNotFoundError(f"no {QUERIES_FILE} next to the database in {path}: build the query set with "
                                f"`utp-env data build --out {path}` (or utp_env.dataset.build_query_set)")
    queries = read_queries(path / QUERIES_FILE)
    by_id = {q.query_id: q for q in queries}
    references = read_references(path / REFERENCES_FILE, by_id, db) if (path / REFERENCES_FILE).exists() else {}
    return Dataset(db, queries, references)


def open_dataset(db_path: str | Path | None = None, profile: str = "full", seed: int = 0,
                 progress: bool = True, split: str | None = None) -> Dataset:
    """The database at `db_path` (default: the embedded sandbox of `profile`) with its query set,
    building the sandbox and the query set on first use. `split="train"` also reads the train
    split, building it first when it is missing (`Dataset.train`); it is otherwise built only when
    first asked for, so opening the benchmark never waits for it."""
    embedded = db_path is None
    if db_path is None:
        from utp_env.tools.sandbox.cache import ensure_sandbox

        db_path = ensure_sandbox(profile, seed, quiet=not progress)
    db_path = require_directory(db_path)  # a wrong path is said before anything is built into it
    if not (db_path / QUERIES_FILE).exists() or (embedded and _query_set_version(db_path) != QUERY_SET_VERSION):
        if progress:
            print(f"utp-env: building the query set and reference plans once into {db_path}", file=sys.stderr)
        build_query_set(db_path, seed=seed, progress=progress)
    with collector_paused():
        dataset = dataset_of(Database.open(db_path))
        if split == TRAIN_SPLIT:
            dataset.train(progress=progress)
        return dataset


def dataset_of(db: Database) -> Dataset:
    """The dataset stored next to `db`, read once per opened database (`Database.derived`)."""
    return db.derived(load_dataset)
