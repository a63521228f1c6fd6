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
from utp_env.queries.generate import MAX_TRAIN_SKIPS, TRAIN_SPLIT, TripKey
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
TRAIN_SET_VERSION = "2"


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
            self._train_size = int((train_set_state(self.db.path) or {}).get("size") or TRAIN_SIZE)
            self._train_complete = len(self._train.queries) >= self._train_size
        return self._train

    def _train_for(self, query_id: str) -> Dataset:
        """The train split as far as it must be built to tell whether `query_id` is in it: up to the
        id's number (`train_number`), or whole when the number is past the split's size."""
        number = train_number(query_id)
        if self._train is not None and (self._train_complete or (number is not None
                                        and len(self._train.queries) >= number)):
            return self._train
        size = self._train_size or int((train_set_state(self.db.path) or {}).get("size") or TRAIN_SIZE)
        return self.train(at_least=None if number is None or number >= size else number)


def train_number(query_id: str) -> int | None:
    """How many train queries must exist for a train id to be known or known not to exist: its
    number (`utp-train-00042` is the 42nd index drawn, so the first 42 queries reach past it);
    None (the whole split) when the id has no number."""
    tail = query_id.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() and int(tail) > 0 else None


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
                                f"(`utp-env data build --out {db_path}`); the train split is drawn apart from it")
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
            _parse_reference(json.loads(line), query, self.db)  # validated here, once, as it is written
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


def load_train_set(db: Database, progress: bool = True, at_least: int | None = None) -> Dataset:
    """The train split next to `db` (queries and reference plans): with `at_least`, at least its
    first `at_least` queries (a seeded prefix: a later, larger build extends it); without, the whole
    split (its recorded size, or `TRAIN_SIZE`). What is missing or stale (`train_set_state`) is
    built first."""
    from utp_env.queries import read_queries

    path = Path(db.path)
    state = train_set_state(path)
    wanted = at_least if at_least is not None else int((state or {}).get("size") or TRAIN_SIZE)
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
