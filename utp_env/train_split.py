"""The train split (docs/RL.md): queries drawn apart from the benchmark's validation and test
queries, each with a reference plan, in files of their own next to the query set
(`TRAIN_QUERIES_FILE`, `TRAIN_REFERENCES_FILE`, the record `TRAIN_MANIFEST`). It is built when first
asked for (`read_train_split`, `build_train_set`: a seeded prefix, in worker processes for large
builds) and is not covered by the database's content hash (the benchmark's hash, recorded by every
run, does not move when it is built).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utp_env.queries.generate import MAX_TRAIN_SKIPS, TripKey
from utp_env.queries.io import QUERIES_FILE
from utp_env.query import Query
from utp_env.reference_plans import REFERENCE_SOURCE, ReferencePlans, gold_planner, parse_reference, read_references
from utp_env.tools.atomic import write_text_atomic
from utp_env.tools.database import Database
from utp_env.tools.sandbox.cache import build_command

TRAIN_QUERIES_FILE = "train_queries.jsonl"
TRAIN_REFERENCES_FILE = "train_reference_plans.jsonl"
TRAIN_MANIFEST = "train_set.json"
TRAIN_SIZE = 5000
# Bump when the train split's generation changes what a build writes (cached train splits rebuild).
TRAIN_SET_VERSION = "2"


def train_number(query_id: str) -> int | None:
    """How many train queries must exist for a train id to be known or known not to exist: its
    number (`utp-train-00042` is the 42nd index drawn, so the first 42 queries reach past it);
    None (the whole split) when the id has no number."""
    tail = query_id.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() and int(tail) > 0 else None


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


def build_train_set(db_path: str | Path, n: int = TRAIN_SIZE, seed: int = 0, progress: bool = True, *,
                    size: int | None = None, workers: int | None = None) -> int:
    """Make the first `n` queries of the train split exist: drawn from the benchmark's generator and
    grid (per-query generators of another stream, ids `utp-train-NNNNN`; `queries.generate.TrainDraws`),
    none sharing (origin, dates, destination) with a validation or test query or with another train
    query, each kept only when the reference planner plans it, written with their reference plans and
    `train_set.json`. Returns the number of queries the split now holds (at least `n`).

    The split is a seeded sequence: the query kept k-th is the same whatever `n` a build asks for,
    so a build of 20 is the first 20 of a build of 5,000, and a current split of the same seed is
    extended, not drawn again. `size` is the split's whole size (what `Dataset.train()` without a
    count builds); default `n`, or the split's own when it has one and is larger. With `workers` > 1
    (default: the machine's cores, for builds of more than `PARALLEL_MIN` queries) the indices are
    drawn and planned by worker processes and merged in index order; a draw that tested a trip an
    earlier train query took is drawn again here, so the split is the one a single process draws
    (`_merge`).
    """
    import time

    from utp_env.queries import read_queries
    from utp_env.queries.generate import trip_key
    from utp_env.tools.progress import progress_bar

    if n < 1:
        raise ValueError(f"the train split needs at least 1 query, not {n}")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    db_path = Path(db_path)
    if not (db_path / QUERIES_FILE).exists():
        raise FileNotFoundError(f"no {QUERIES_FILE} in {db_path}: build the query set first "
                                f"(`{build_command(db_path)}`); the train split is drawn apart from it")
    started = time.perf_counter()
    db = Database.open(db_path)
    held_out = frozenset(trip_key(q) for q in read_queries(db_path / QUERIES_FILE))
    built = _TrainBuild.resume(db_path, seed) or _TrainBuild(seed=seed)
    size = max(n, size or 0, built.size)
    if len(built.query_lines) >= n:
        if size > built.size:
            built.size = size
            built.write(db_path, 0.0)
        return len(built.query_lines)
    exclude = set(held_out) | built.taken
    todo = n - len(built.query_lines)
    processes = 1 if todo <= PARALLEL_MIN else (workers or min(os.cpu_count() or 1, MAX_TRAIN_WORKERS))
    bar = progress_bar(n, "train split", "query", enabled=progress, initial=len(built.query_lines))
    with bar:
        for drawn in _merge(db, seed, exclude, built.drawn, processes):
            built.drawn = drawn.index + 1
            if drawn.query_line is None:
                built.skipped += 1
                if built.skipped > n + MAX_TRAIN_SKIPS:
                    from utp_env.queries.generate import QueryConfig, undrawable

                    raise undrawable(QueryConfig(), drawn.index)
            elif drawn.plan_line is None:
                built.unplanned.append(drawn.trip)
            else:
                built.query_lines.append(drawn.query_line)
                built.plan_lines.append(drawn.plan_line)
                bar.update(1)
            bar.set_postfix_str(f"drawn {built.drawn:,}, planned {len(built.query_lines):,}", refresh=False)
            if len(built.query_lines) >= n:
                break
    built.size = size
    built.write(db_path, time.perf_counter() - started)
    return len(built.query_lines)


PARALLEL_MIN = 200
"""A build of at most this many queries runs in one process: starting workers costs more than it saves."""
MAX_TRAIN_WORKERS = 8
TRAIN_CHUNK = 20  # indices per worker task


@dataclass
class _TrainBuild:
    """The train split as built so far: its lines, the next index to draw, and what a resumed build
    must know to draw on exactly as one build would (the skipped indices' count, the trips of the
    queries the planner could not plan: they stay excluded)."""

    seed: int
    size: int = 0
    drawn: int = 0
    skipped: int = 0
    query_lines: list[str] = field(default_factory=list)
    plan_lines: list[str] = field(default_factory=list)
    unplanned: list[TripKey] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def taken(self) -> set[TripKey]:
        """The trips of every train query drawn so far (kept or not planned)."""
        kept = {(str(q["org"]), tuple(q["dates"]), str(q["dest"])) for q in map(json.loads, self.query_lines)}
        return kept | set(self.unplanned)

    @classmethod
    def resume(cls, db_path: Path, seed: int) -> _TrainBuild | None:
        """The current train split of `seed` at `db_path` (`train_set_state`), or None."""
        record = train_set_state(db_path)
        if record is None or record.get("seed") != seed:
            return None
        return cls(seed=seed, size=int(record.get("size", record["queries"])), drawn=int(record["drawn"]),
                   skipped=int(record.get("skipped", 0)),
                   query_lines=(db_path / TRAIN_QUERIES_FILE).read_text(encoding="utf-8").splitlines(),
                   plan_lines=(db_path / TRAIN_REFERENCES_FILE).read_text(encoding="utf-8").splitlines(),
                   unplanned=[(str(o), tuple(d), str(t)) for o, d, t in record.get("unplanned", [])],
                   seconds=float(record.get("build_seconds", 0.0)))

    def write(self, db_path: Path, seconds: float) -> None:
        """The two files, then `train_set.json` naming their hashes (written last: a build killed
        before it leaves a split `train_set_state` calls stale)."""
        write_text_atomic(db_path / TRAIN_QUERIES_FILE, "".join(line + "\n" for line in self.query_lines))
        write_text_atomic(db_path / TRAIN_REFERENCES_FILE, "".join(line + "\n" for line in self.plan_lines))
        state = {"version": TRAIN_SET_VERSION, "seed": self.seed, "queries": len(self.query_lines),
                 "size": self.size, "drawn": self.drawn, "skipped": self.skipped,
                 "unplanned": [[o, list(d), t] for o, d, t in self.unplanned],
                 "reference_source": REFERENCE_SOURCE,
                 "benchmark_sha256": _sha256(db_path / QUERIES_FILE),
                 "queries_sha256": _sha256(db_path / TRAIN_QUERIES_FILE),
                 "references_sha256": _sha256(db_path / TRAIN_REFERENCES_FILE),
                 "build_seconds": round(self.seconds + seconds, 1)}
        write_text_atomic(db_path / TRAIN_MANIFEST, json.dumps(state, indent=2, sort_keys=True) + "\n")


@dataclass(frozen=True)
class _Drawn:
    """One index of the train split as drawn and planned: its query's JSONL line (None: the index
    is skipped), the reference plan's line (None: the planner could not plan it), the query's trip,
    and the trips the draw tested against the exclusion set."""

    index: int
    query_line: str | None
    plan_line: str | None
    trip: TripKey
    tested: tuple[TripKey, ...]


class _TrainWorker:
    """What draws and plans train indices in one process: the database, the draws, the planner."""

    def __init__(self, db: Database, seed: int, exclude: set[TripKey]) -> None:
        from utp_env.queries.generate import TrainDraws

        self.db = db
        self.draws = TrainDraws(db, seed, exclude)
        self.plan_gold = gold_planner()

    def run(self, index: int) -> _Drawn:
        """Draw index `index` and plan its query."""
        from utp_env.plan_format import format_plan
        from utp_env.queries import dumps_queries
        from utp_env.queries.generate import trip_key

        query, tested = self.draws.draw(index)
        if query is None:
            return _Drawn(index, None, None, ("", (), ""), tested)
        plan = self.plan_gold(query, self.db)
        line = None
        if plan is not None:
            record = {"query_id": query.query_id, "source": REFERENCE_SOURCE, "plan": format_plan(plan)}
            line = json.dumps(record, ensure_ascii=False, sort_keys=True)
            parse_reference(json.loads(line), query, self.db)  # validated here, once, as it is written
        return _Drawn(index, dumps_queries([query]).rstrip("\n"), line, trip_key(query), tested)


_WORKER: _TrainWorker | None = None  # the worker process's own (forked from the parent, or made by `_start_worker`)


def _start_worker(db_path: str, seed: int, exclude: set[TripKey], parent: int) -> None:
    global _WORKER
    from utp_env.tools.worker_lifetime import die_with_parent

    die_with_parent(parent)
    if _WORKER is None:  # spawned: open the database here
        _WORKER = _TrainWorker(Database.open(db_path), seed, exclude)


def _run_chunk(start: int, count: int) -> list[_Drawn]:
    assert _WORKER is not None
    return [_WORKER.run(i) for i in range(start, start + count)]


def _merge(db: Database, seed: int, exclude: set[TripKey], start: int, processes: int) -> Iterator[_Drawn]:
    """The train split's indices from `start` on, drawn and planned, in index order, each as one
    process with `exclude` growing by every drawn trip would draw it (the caller stops the iteration).

    Workers draw with the exclusion set of the start; an index whose draw tested a trip taken since
    (by an earlier index) is drawn again in this process with the whole set (`TrainDraws`: draws
    differ only at such a test)."""
    global _WORKER
    base = frozenset(exclude)
    here = _TrainWorker(db, seed, exclude)  # `exclude` is the live set: this process's draws see it grow
    if processes <= 1:
        index = start
        while True:
            drawn = here.run(index)
            if drawn.query_line is not None:
                exclude.add(drawn.trip)
            yield drawn
            index += 1
    import multiprocessing as mp
    from concurrent.futures import Future, ProcessPoolExecutor

    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    if method == "fork":
        _WORKER = _TrainWorker(db, seed, set(base))  # inherited by the forked workers
    pool = ProcessPoolExecutor(max_workers=processes, mp_context=mp.get_context(method), initializer=_start_worker,
                               initargs=(str(db.path), seed, set(base), os.getpid()))
    pending: dict[int, Future[list[_Drawn]]] = {}
    next_chunk = start
    try:
        chunk = start
        while True:
            while len(pending) < 2 * processes:
                pending[next_chunk] = pool.submit(_run_chunk, next_chunk, TRAIN_CHUNK)
                next_chunk += TRAIN_CHUNK
            for drawn in pending.pop(chunk).result():
                if any(t in exclude and t not in base for t in drawn.tested):
                    drawn = here.run(drawn.index)  # it met a trip an earlier train query took
                if drawn.query_line is not None:
                    exclude.add(drawn.trip)
                yield drawn
            chunk += TRAIN_CHUNK
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        _WORKER = None


def read_train_split(db: Database, progress: bool = True, at_least: int | None = None
                     ) -> tuple[list[Query], ReferencePlans]:
    """The train split next to `db` (its queries and reference plans): with `at_least`, at least its
    first `at_least` queries (a seeded prefix: a later, larger build extends it); without, the whole
    split (its recorded size, or `TRAIN_SIZE`). What is missing or stale (`train_set_state`) is
    built first."""
    from utp_env.queries import read_queries

    path = Path(db.path)
    state = train_set_state(path)
    wanted = at_least if at_least is not None else recorded_size(state)
    if state is None or int(state["queries"]) < wanted:
        seed = int((db.manifest.get("query_set") or {}).get("seed", db.manifest.get("seed", 0)) or 0)
        if progress:
            count = f"{wanted:,} queries" if wanted != 1 else "query"
            what = f"its first {count}" if at_least is not None else count
            print(f"utp-env: building the train split ({what} with reference plans) once into {path}",
                  file=sys.stderr)
        if not os.access(path, os.W_OK):  # before minutes of planning, not after
            raise PermissionError(f"cannot write the train split into {path} (the folder is read-only); build it "
                                  "where the database is writable: `utp-env data build --out DIR --train`")
        # a first build of a prefix declares the whole split's size; an extension keeps the recorded one
        size = TRAIN_SIZE if state is None and at_least is not None else None
        build_train_set(path, n=wanted, seed=seed, progress=progress, size=size)
    queries = read_queries(path / TRAIN_QUERIES_FILE)
    by_id = {q.query_id: q for q in queries}
    return queries, read_references(path / TRAIN_REFERENCES_FILE, by_id, db)


def recorded_size(state: dict[str, Any] | None) -> int:
    """The whole train split's size: the one its record (`train_set_state`) states, else `TRAIN_SIZE`."""
    return int((state or {}).get("size") or TRAIN_SIZE)


def train_split_size(db_path: str | Path) -> int:
    """The whole train split's size at `db_path` (`recorded_size` of its current record)."""
    return recorded_size(train_set_state(db_path))
