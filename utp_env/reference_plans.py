"""Reference plans: who makes them and how they are read.

The reference plans stand in for the paper's human gold plans and are labelled `planner-made`
(`REFERENCE_SOURCE`). They are made by a gold planner found through the entry-point group
`utp_env.gold_planners` (pyproject.toml registers `reference`, the no-LLM reference planner of
`agents/reference/`), so the core never imports an agent and a user can register a planner of their
own. `ReferencePlans` reads a file of them (`REFERENCES_FILE`, one JSON record per line) and parses
each plan when it is first asked for.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from utp_env.itinerary import Plan
from utp_env.plan_format.errors import PlanFormatError
from utp_env.query import Query
from utp_env.tools.database import Database

REFERENCES_FILE = "reference_plans.jsonl"
GOLD_PLANNERS = "utp_env.gold_planners"  # entry-point group: name -> callable(query, db) -> Plan | None
GOLD_PLANNER = "reference"
REFERENCE_SOURCE = "planner-made"


GoldPlanner = Callable[[Query, Database], "Plan | None"]


def gold_planner(name: str = GOLD_PLANNER) -> GoldPlanner:
    """The gold planner registered under `name` in the entry-point group `utp_env.gold_planners`."""
    found = entry_points(group=GOLD_PLANNERS, name=name)
    if not found:
        raise LookupError(f"no gold planner {name!r} is registered in the entry-point group {GOLD_PLANNERS!r}; "
                          "reinstall utp-env (`pip install -e .` in a checkout) so that its entry points exist")
    planner: GoldPlanner = next(iter(found)).load()
    return planner


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
                plan = parse_reference(record, self._queries[query_id], self._db)
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


def parse_reference(record: dict[str, Any], query: Query, db: Database) -> Plan:
    """The Plan of one reference_plans.jsonl record (PlanFormatError when its plan does not parse)."""
    from utp_env.plan_format import parse_plan

    plan = parse_plan(record["plan"], query=query, db=db)
    return plan.model_copy(update={"query_id": query.query_id, "source": record.get("source", REFERENCE_SOURCE)})


def read_references(path: Path, queries: dict[str, Query], db: Database) -> ReferencePlans:
    """Reference plans by query id (parsed when asked for); a bad line is an error naming the file
    and line."""
    return ReferencePlans(path, queries, db)
