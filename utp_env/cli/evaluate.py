"""`utp-env evaluate`: score plans and print the Table 3 summary; one bad line costs one line.

Each line of the plans file is decoded and parsed on its own: a line that is not UTF-8, not JSON
(including nesting too deep or an integer too long to read), not an object with `query_id` and
`plan`, for an unknown query, made on another database (its `db_hash`), or that fails while
scored is skipped and reported with its number and the reason; every other line is scored. A
plan is the paper's JSON day format (`parse_plan`) or the canonical `Plan` JSON that run records
hold (`Plan.model_validate`), so a run's results.jsonl can be scored as it is. Exit status: 0
when every line was scored, 3 when some were skipped (the report is still written), 2 when there
was nothing to score or the plans belong to another database (docs/RUNS.md, "Scoring plans").
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from utp_env.tools.jsonl import decode_json_line

if TYPE_CHECKING:
    from collections.abc import Mapping

    from utp_env.evaluation import EvaluationReport
    from utp_env.itinerary import Plan
    from utp_env.query import Query
    from utp_env.tools.database import Database

EXIT_SKIPPED = 3
RUN_CONFIG = "config.json"  # a run folder's config, which records the database hash of its results


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `evaluate` command."""
    p = sub.add_parser("evaluate", help="score plans (paper JSON format) and print the summary table",
                       description="Score each plan of PLANS.jsonl (lines {\"query_id\": ..., \"plan\": <days "
                       "or text, or a run record's Plan JSON>}) with the commonsense and hard checks, "
                       "BAS/CATS/TDAS and the TripCraft metrics (docs/METRICS.md). A plan that does not "
                       "parse counts as not delivered; a line that cannot be read is skipped and reported "
                       "with its number. Exit status 0: every line scored; 3: some lines skipped (the report "
                       "is still written); 2: nothing to score, or plans made on another database.")
    p.add_argument("--plans", type=Path, required=True, metavar="PLANS.jsonl",
                   help="the plans to score: one JSON object {query_id, plan} per line (a run's "
                   "results.jsonl works too)")
    p.add_argument("--queries", type=Path, metavar="Q.jsonl",
                   help="JSONL of the queries the plans answer (default: the database's query set)")
    p.add_argument("--profile", choices=["full", "mini"], default="full",
                   help="embedded sandbox the plans were made on: full or mini (default: full)")
    p.add_argument("--db", type=Path, metavar="DIR", help="a database directory instead of the embedded sandbox")
    p.add_argument("--config", type=Path, metavar="YAML",
                   help="uncertainty parameters YAML (default: the shipped configs/uncertainty.yaml)")
    p.add_argument("--out", type=Path, metavar="FILE",
                   help="also write the full report (summary, every plan's report, skipped lines) as JSON "
                   "to FILE (written atomically)")
    p.add_argument("--split", metavar="SPLIT",
                   help="count every query of this split of the query set (validation, test, all): a query "
                   "with no line in PLANS is undelivered, as TravelPlanner's eval.py counts it; lines for "
                   "queries of other splits are skipped")
    p.add_argument("--markdown", action="store_true", help="print the summary as a markdown table")
    p.set_defaults(handler=handle)


@dataclass
class PlanLine:
    """One non-blank line of the plans file: its number, and the record or why it was skipped."""

    number: int
    record: dict[str, Any] | None = None
    error: str | None = None


def read_plan_lines(path: Path) -> list[PlanLine]:
    """Every non-blank line of the plans file, each decoded and parsed on its own."""
    if not path.is_file():
        raise FileNotFoundError(f"plans file {str(path)!r} does not exist or is not a file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FileNotFoundError(f"plans file {str(path)!r} cannot be read: {exc.strerror}") from None
    out: list[PlanLine] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        record, error = parse_plan_line(raw)
        out.append(PlanLine(number, record, None if error is None else f"{path.name} line {number}: {error}"))
    return out


def parse_plan_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(record, None) for a line holding a {query_id, plan} object, else (None, the reason)."""
    record, error = decode_json_line(raw)
    if error is not None:
        return None, error
    if not isinstance(record, dict) or "query_id" not in record or "plan" not in record:
        return None, "expected an object with 'query_id' and 'plan'"
    if not isinstance(record["query_id"], str | int) or isinstance(record["query_id"], bool):
        return None, "'query_id' must be a string"
    return record, None


def load_queries(queries: Path | None, db: Database) -> tuple[dict[str, Query], Mapping[str, Plan]]:
    """(queries by id, reference plans by id): from `--queries` (no reference plans), else the
    database's query set with its reference plans; a clear error when neither exists."""
    from utp_env.dataset import dataset_of
    from utp_env.queries import read_queries

    if queries is not None:
        if not queries.is_file():
            raise FileNotFoundError(f"queries file {str(queries)!r} does not exist")
        return {q.query_id: q for q in read_queries(queries)}, {}
    try:
        dataset = dataset_of(db)
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{exc}; or pass --queries Q.jsonl") from None
    return {q.query_id: q for q in dataset.queries}, dataset.references


def split_queries(queries: dict[str, Query], split: str) -> dict[str, Query]:
    """The queries of `split` ('all': every one); a ValueError naming the splits there are when none is."""
    chosen = {qid: q for qid, q in queries.items() if split == "all" or q.split == split}
    if not chosen:
        there = ", ".join(sorted({str(q.split) for q in queries.values()})) or "none"
        raise ValueError(f"--split {split!r}: the query set has no query of that split (splits: {there}, or all)")
    return chosen


def is_plan_json(raw: Any) -> bool:
    """Whether `raw` is the canonical `Plan` JSON (days holding `cities`/`items`), as run records
    hold it, rather than the paper's day format."""
    days = raw.get("days") if isinstance(raw, dict) else None
    return (isinstance(days, list) and bool(days) and isinstance(days[0], dict)
            and ("cities" in days[0] or "items" in days[0]))


def read_plan(raw: Any, query: Query, db: Database) -> Plan:
    """The plan of a line: `Plan` JSON or the paper's format; PlanFormatError when it cannot be read."""
    from pydantic import ValidationError

    from utp_env.itinerary import Plan
    from utp_env.plan_format import PlanFormatError, parse_plan

    if raw is None:
        raise PlanFormatError("no plan (null): nothing was delivered")
    if is_plan_json(raw):
        try:
            return Plan.model_validate(raw)
        except (ValidationError, RecursionError) as exc:
            raise PlanFormatError(f"not a valid Plan JSON: {str(exc).splitlines()[0]}") from None
    return parse_plan(raw, query=query, db=db)


def recorded_db_hash(plans: Path) -> str | None:
    """The database hash recorded by the run folder the plans file is in (its config.json), if any."""
    config = plans.parent / RUN_CONFIG
    try:
        saved = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    value = saved.get("db_hash") if isinstance(saved, dict) else None
    return value if isinstance(value, str) else None


def check_database(plans: Path, lines: list[PlanLine], db: Database, where: str) -> None:
    """Refuse plans made on another database: a ValueError when the run folder's config.json, or
    every readable line (each recording a `db_hash`), names a database other than the one opened
    (query ids mean different trips in another query set). A single such line among others is
    skipped by `score_lines` instead."""
    folder = recorded_db_hash(plans)
    recorded = [line.record.get("db_hash") for line in lines if line.record is not None]
    mismatch = folder if folder is not None and folder != db.content_hash else None
    if mismatch is None and recorded and all(isinstance(h, str) and h != db.content_hash for h in recorded):
        mismatch = sorted(str(h) for h in recorded)[0]
    if mismatch is not None:
        raise ValueError(f"{plans} holds plans made on database {mismatch[:12]}, but {where} is "
                         f"{db.content_hash[:12]}: its query ids name other trips; score them with the --profile "
                         "or --db they were made with")


@dataclass
class Scores:
    """What scoring the lines gave: (query, report or None) pairs, records, skipped lines, warnings."""

    results: list[tuple[Query, EvaluationReport | None]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def score_lines(lines: list[PlanLine], name: str, queries: dict[str, Query], references: Mapping[str, Plan],
                db: Database, config: Any) -> Scores:
    """Score every readable line; every other line is skipped with its reason."""
    from utp_env.env.episode import plan_mismatch
    from utp_env.evaluation import evaluate
    from utp_env.plan_format import PlanFormatError
    from utp_env.tools.progress import progress_bar

    out = Scores()
    # A bar (or one notice line) only for files large enough to take a few seconds.
    for line in progress_bar(len(lines), "scoring plans", "plan", enabled=len(lines) >= 500, iterable=lines):
        record = line.record
        if record is None:
            out.skipped.append({"line": line.number, "reason": line.error or f"{name} line {line.number}: unreadable"})
            continue
        query = queries.get(str(record["query_id"]))
        if query is None:
            out.skipped.append({"line": line.number,
                                "reason": f"{name} line {line.number}: unknown query_id {str(record['query_id'])!r} "
                                          "(not in the query set, or not in --split)"})
            continue
        line_hash = record.get("db_hash")
        if isinstance(line_hash, str) and line_hash != db.content_hash:
            out.skipped.append({"line": line.number, "reason": f"{name} line {line.number}: made on database "
                                f"{line_hash[:12]}, not the one opened ({db.content_hash[:12]})"})
            continue
        try:
            try:
                plan = read_plan(record["plan"], query, db)
            except PlanFormatError as exc:
                out.results.append((query, None))
                out.records.append({"query_id": query.query_id, "line": line.number, "delivered": False,
                                    "error": str(exc), "report": None})
                continue
            wrong = plan_mismatch(plan, query, db)
            if wrong:
                out.warnings.append(f"{name} line {line.number}: the plan does not match query {query.query_id}: "
                                    + "; ".join(wrong))
            report = evaluate(plan, query, db, config, reference=references.get(query.query_id))
            report_json = report.model_dump(mode="json")
        except Exception as exc:  # one line's failure costs that line, never the file
            out.skipped.append({"line": line.number, "reason": f"{name} line {line.number}: could not be scored "
                                f"({type(exc).__name__}: {str(exc)[:200]})"})
            continue
        out.results.append((query, report))
        out.records.append({"query_id": query.query_id, "line": line.number, "delivered": True, "error": None,
                            "report": report_json})
    return out


def open_database(args: argparse.Namespace) -> tuple[Database, str]:
    """The database to score against and how to name it in messages."""
    from utp_env.tools.database import Database

    if args.db is not None:
        return Database.open(args.db), f"--db {args.db}"
    from utp_env.tools.sandbox import open_sandbox

    return open_sandbox(args.profile), f"the embedded {args.profile} sandbox (--profile {args.profile})"


def handle(args: argparse.Namespace) -> int:
    from utp_env.config import load_uncertainty
    from utp_env.evaluation.aggregate import summarize
    from utp_env.tools.atomic import write_text_atomic

    config = load_uncertainty(args.config)
    lines = read_plan_lines(args.plans)
    if not lines:
        raise ValueError(f"plans file {str(args.plans)!r} holds no plans (every line is blank)")
    db, where = open_database(args)
    check_database(args.plans, lines, db, where)
    queries, references = load_queries(args.queries, db)
    if args.split is not None:
        queries = split_queries(queries, args.split)
    scores = score_lines(lines, args.plans.name, queries, references, db, config)
    covered = {q.query_id for q, _ in scores.results}
    missing = [q for q in queries.values() if q.query_id not in covered]
    if args.split is not None:
        scores.results += [(q, None) for q in missing]  # undelivered: no plan for it
    summary = summarize(scores.results, config.readings)
    print(summary.to_markdown() if args.markdown else summary.to_text())
    for r in scores.records:
        if not r["delivered"]:
            print(f"not delivered: {r['query_id']} (line {r['line']}): {r['error']}", file=sys.stderr)
    if args.split is not None:
        print(f"split {args.split}: {len(queries) - len(missing)} of {len(queries)} queries have a plan; "
              f"{len(missing)} without one count as undelivered", file=sys.stderr)
    else:
        print(f"{len(covered)} of the {len(queries)} queries of the set have a plan; the rates are over those "
              "(pass --split to count every query of a split)", file=sys.stderr)
    for warning in scores.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if scores.warnings and len(scores.warnings) == len(scores.records):
        print(f"warning: no plan matches its query: were they made for another query set? (opened: {where})",
              file=sys.stderr)
    for skipped in scores.skipped:
        print(f"skipped: {skipped['reason']}", file=sys.stderr)
    if args.out is not None:
        payload = {"db_hash": db.content_hash, "summary": summary.model_dump(mode="json"),
                   "results": scores.records, "skipped": scores.skipped, "warnings": scores.warnings}
        if args.out.parent != Path(""):
            args.out.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(args.out, json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
        print(f"report written to {args.out}", file=sys.stderr)
    if scores.skipped:
        print(f"{len(scores.skipped)} of {len(lines)} line(s) skipped, {len(lines) - len(scores.skipped)} scored "
              f"(exit status {EXIT_SKIPPED})", file=sys.stderr)
        return EXIT_SKIPPED
    return 0
