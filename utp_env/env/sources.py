"""Where an env gets its database, queries and reference plans: the dataset (`utp_env.dataset`)
of a database path or of the embedded sandbox profile, built on first use, loaded once per process.

Constructors receive only paths and profile names (picklable, so `AsyncVectorEnv` workers can
build their own env); the opened databases are cached per process here and each database keeps
its dataset (`utp_env.dataset.dataset_of`).
"""

from __future__ import annotations

import functools
from pathlib import Path

from utp_env.dataset import dataset_of, open_dataset
from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.tools.database import Database


@functools.lru_cache(maxsize=8)
def _open(path: str | None, profile: str) -> Database:
    return open_dataset(path, profile=profile, progress=False).db


def open_database(db_path: str | Path | None = None, profile: str = "full") -> Database:
    """The database at `db_path`, else the embedded sandbox of `profile` (cached per process)."""
    if db_path is None:
        return _open(None, profile)
    resolved = Path(db_path).expanduser().resolve()
    if not resolved.is_dir():
        raise FileNotFoundError(f"db_path {str(db_path)!r} is not a directory holding the database CSV files; "
                                "build one with `utp-env data build` or pass profile='mini'|'full'")
    return _open(str(resolved), profile)


def query_pool(db: Database) -> tuple[Query, ...]:
    """Every query of the database's query set."""
    return tuple(dataset_of(db).queries)


def split_pool(db: Database, split: str) -> list[Query]:
    """The queries of one split, in query-id order; ValueError naming the known splits otherwise."""
    pool = query_pool(db)
    chosen = sorted((q for q in pool if q.split == split), key=lambda q: q.query_id)
    if not chosen:
        known = sorted({str(q.split) for q in pool})
        raise ValueError(f"split {split!r} has no queries; known splits: {', '.join(known) or 'none'}")
    return chosen


def reference_plan(db: Database, query_id: str) -> Plan | None:
    """The dataset's reference plan of a query, or None."""
    return dataset_of(db).references.get(query_id)
