"""The benchmark dataset: a database directory plus its query set (`QUERIES_FILE`) and reference
plans (utp_env/reference_plans.py), and the train split when asked for (utp_env/train_split.py).

`queries.jsonl` and `reference_plans.jsonl` live next to the tables and are covered by the
database's content hash. `open_dataset` builds the embedded sandbox and its query set on first use.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from utp_env.itinerary import Plan
from utp_env.queries.generate import TRAIN_SPLIT
from utp_env.queries.io import QUERIES_FILE
from utp_env.query import Query
from utp_env.reference_plans import REFERENCE_SOURCE, REFERENCES_FILE, gold_planner, parse_reference, read_references
from utp_env.tools.atomic import write_text_atomic
from utp_env.tools.database import Database, collector_paused, require_directory
from utp_env.tools.sandbox.cache import build_command, read_manifest
from utp_env.train_split import is_train_id, read_train_split, train_number, train_split_size

# Bump when query generation or the reference planner changes what a fresh build writes, so that
# the embedded sandboxes cached on users' machines rebuild their query set.
QUERY_SET_VERSION = "12"


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
    _train_complete: bool = field(default=False, repr=False, compare=False)
    _train_size: int = field(default=0, repr=False, compare=False)

    def query(self, query_id: str) -> Query:
        for q in self.queries:
            if q.query_id == query_id:
                return q
        if is_train_id(query_id):
            for q in self._train_for(query_id).queries:
                if q.query_id == query_id:
                    return q
        raise LookupError(f"unknown query id {query_id!r} (the query set has {len(self.queries)} queries)")

    def split(self, name: str, limit: int | None = None) -> list[Query]:
        """The queries of split `name` in file order (the first `limit` of them); for `train` only
        those are built when the split is not (`train`)."""
        if name == TRAIN_SPLIT:
            return list(self.train(at_least=limit).queries[:limit])
        return [q for q in self.queries if name == "all" or q.split == name][:limit]

    def reference(self, query_id: str) -> Plan | None:
        """The reference plan of a query of any split, or None."""
        if is_train_id(query_id):
            return self._train_for(query_id).references.get(query_id)
        return self.references.get(query_id)

    def train(self, progress: bool = True, at_least: int | None = None) -> Dataset:
        """The train split (queries and reference plans), built next to the query set on first use
        (`build_train_set`; minutes on the full sandbox) and read once per opened database. With
        `at_least`, its first `at_least` queries suffice (a seeded prefix of the whole split; a
        later call for more extends it)."""
        if self._train is None or (not self._train_complete and (
                at_least is None or len(self._train.queries) < at_least)):
            self._train = load_train_set(self.db, progress=progress, at_least=at_least)
            self._train_size = train_split_size(self.db.path)
            self._train_complete = len(self._train.queries) >= self._train_size
        return self._train

    def _train_for(self, query_id: str) -> Dataset:
        """The train split as far as it must be built to tell whether `query_id` is in it: up to the
        id's number (`train_number`), or whole when the number is past the split's size."""
        number = train_number(query_id)
        if self._train is not None and (self._train_complete or (number is not None
                                        and len(self._train.queries) >= number)):
            return self._train
        size = self._train_size or train_split_size(self.db.path)
        return self.train(at_least=None if number is None or number >= size else number)


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
        parse_reference(json.loads(lines[-1]), query, db)
    write_text_atomic(db_path / QUERIES_FILE, dumps_queries(kept))
    write_text_atomic(db_path / REFERENCES_FILE, "\n".join(lines) + ("\n" if lines else ""))
    _record_in_manifest(db_path, len(kept), seed)
    return len(kept)


def load_train_set(db: Database, progress: bool = True, at_least: int | None = None) -> Dataset:
    """The train split next to `db` as a `Dataset` (`train_split.read_train_split`: with `at_least`,
    at least its first `at_least` queries; what is missing or stale is built first)."""
    return Dataset(db, *read_train_split(db, progress=progress, at_least=at_least))


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


def _query_set_version(db_path: Path) -> str | None:
    try:
        manifest = read_manifest(db_path)
    except (OSError, json.JSONDecodeError):
        return None
    return (manifest.get("query_set") or {}).get("version")


def load_dataset(db: Database) -> Dataset:
    """The query set and reference plans stored next to an opened database."""
    from utp_env.queries import read_queries

    path = Path(db.path)
    if not (path / QUERIES_FILE).exists():
        raise FileNotFoundError(f"no {QUERIES_FILE} next to the database in {path}: build the query set with "
                                f"`{build_command(path)}` (or utp_env.dataset.build_query_set)")
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
    def missing() -> bool:
        return (not (db_path / QUERIES_FILE).exists()
                or (embedded and _query_set_version(db_path) != QUERY_SET_VERSION))

    if missing():
        from utp_env.tools.sandbox.cache import directory_lock

        with directory_lock(db_path):  # processes that open it at once build it once
            if missing():
                if progress:
                    print(f"utp-env: building the query set and reference plans once into {db_path}",
                          file=sys.stderr)
                build_query_set(db_path, seed=seed, progress=progress)
    with collector_paused():
        dataset = dataset_of(Database.open(db_path))
        if split == TRAIN_SPLIT:
            dataset.train(progress=progress)
        return dataset


def dataset_of(db: Database) -> Dataset:
    """The dataset stored next to `db`, read once per opened database (`Database.derived`)."""
    return db.derived(load_dataset)


__all__ = ["QUERIES_FILE", "QUERY_SET_VERSION", "REFERENCES_FILE", "Dataset", "build_query_set", "dataset_of",
           "load_dataset", "load_train_set", "open_dataset"]
