"""Where an env gets its database, queries and reference plans: a path or a sandbox profile,
loaded once per process. The query set and reference plans are the dataset's files next to the
tables (`utp_env.dataset`, built by `utp-env data build`); without them queries are generated in
memory and the Ordering metric, which needs a reference plan, is None.

Constructors receive only paths and profile names (picklable, so `AsyncVectorEnv` workers can
build their own env); the opened `Database` and query pools are cached per process here.
"""

from __future__ import annotations

import functools
from pathlib import Path

from tools.database import Database
from utp_env.itinerary import Plan
from utp_env.query import Query

QUERIES_FILE = "queries.jsonl"
GENERATED_QUERIES = 200
GENERATED_SEED = 0


@functools.lru_cache(maxsize=8)
def _open_path(path: str) -> Database:
    return Database.open(path)


def open_database(db_path: str | Path | None = None, profile: str = "full") -> Database:
    """The database at `db_path`, else the embedded sandbox of `profile` (cached per process)."""
    if db_path is not None:
        path = Path(db_path).expanduser().resolve()
        if not path.is_dir():
            raise FileNotFoundError(f"db_path {str(db_path)!r} is not a directory holding the database CSV files; "
                                    "build one with `utp-env data build` or pass profile='mini'|'full'")
        return _open_path(str(path))
    return _open_profile(profile)


@functools.lru_cache(maxsize=4)
def _open_profile(profile: str) -> Database:
    from tools.sandbox import open_sandbox

    return open_sandbox(profile)


@functools.lru_cache(maxsize=8)
def _queries_of(db_key: str, db: Database) -> tuple[Query, ...]:
    path = Path(db.path) / QUERIES_FILE
    if path.exists():
        from utp_env.queries import read_queries

        return tuple(read_queries(path))
    from utp_env.queries import generate_queries

    return tuple(generate_queries(db, GENERATED_QUERIES, GENERATED_SEED))


def query_pool(db: Database) -> tuple[Query, ...]:
    """Every query of the database: `queries.jsonl` next to it, else generated in memory (cached)."""
    return _queries_of(db.content_hash, db)


def split_pool(db: Database, split: str) -> list[Query]:
    """The queries of one split, in query-id order; ValueError naming the known splits otherwise."""
    pool = query_pool(db)
    chosen = sorted((q for q in pool if q.split == split), key=lambda q: q.query_id)
    if not chosen:
        known = sorted({str(q.split) for q in pool})
        raise ValueError(f"split {split!r} has no queries; known splits: {', '.join(known) or 'none'}")
    return chosen


@functools.lru_cache(maxsize=8)
def _references_of(db_key: str, db: Database) -> dict[str, Plan]:
    from utp_env.dataset import REFERENCES_FILE, read_references

    path = Path(db.path) / REFERENCES_FILE
    if not path.exists():
        return {}
    return read_references(path, {q.query_id: q for q in query_pool(db)}, db)


def reference_plan(db: Database, query_id: str) -> Plan | None:
    """The dataset's reference plan of a query (read once per database), or None."""
    return _references_of(db.content_hash, db).get(query_id)
