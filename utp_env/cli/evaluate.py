"""`utp-env evaluate`: score plans in the paper's JSON day format and print the Table 3 summary."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from utp_env.evaluation import EvaluationReport
    from utp_env.itinerary import Plan
    from utp_env.query import Query
    from utp_env.tools.database import Database


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `evaluate` command."""
    p = sub.add_parser("evaluate", help="score plans (paper JSON format) and print the summary table",
                       description="Score each plan of PLANS.jsonl (lines {\"query_id\": ..., \"plan\": <days "
                       "or text>}) with the commonsense and hard checks, BAS/CATS/TDAS and the TripCraft "
                       "metrics (docs/METRICS.md). A plan that does not parse counts as not delivered.")
    p.add_argument("--plans", type=Path, required=True, metavar="PLANS.jsonl",
                   help="the plans to score: one JSON object {query_id, plan} per line")
    p.add_argument("--queries", type=Path, metavar="Q.jsonl",
                   help="JSONL of the queries the plans answer (default: the database's query set)")
    p.add_argument("--db", type=Path, metavar="DIR", help="database directory (default: the embedded full sandbox)")
    p.add_argument("--config", type=Path, metavar="YAML",
                   help="uncertainty parameters YAML (default: the shipped configs/uncertainty.yaml)")
    p.add_argument("--out", type=Path, metavar="FILE",
                   help="also write the full report (summary, every plan's report) as JSON to FILE")
    p.add_argument("--markdown", action="store_true", help="print the summary as a markdown table")
    p.set_defaults(handler=handle)


def read_plan_lines(path: Path) -> list[tuple[int, dict[str, Any] | None, str | None]]:
    """(line number, record or None, error or None) for every non-blank line of the plans file."""
    if not path.is_file():
        raise FileNotFoundError(f"plans file {str(path)!r} does not exist")
    out: list[tuple[int, dict[str, Any] | None, str | None]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            out.append((number, None, f"{path.name} line {number}: invalid JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(record, dict) or "query_id" not in record or "plan" not in record:
            out.append((number, None, f"{path.name} line {number}: expected an object with 'query_id' and 'plan'"))
            continue
        out.append((number, record, None))
    return out


def load_queries(queries: Path | None, db: Database) -> tuple[dict[str, Query], dict[str, Plan]]:
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


def handle(args: argparse.Namespace) -> int:
    from utp_env.config import load_uncertainty
    from utp_env.evaluation import evaluate
    from utp_env.evaluation.aggregate import summarize
    from utp_env.plan_format import PlanFormatError, parse_plan
    from utp_env.tools.database import Database

    config = load_uncertainty(args.config)
    if args.db is not None:
        db = Database.open(args.db)
    else:
        from utp_env.tools.sandbox import open_sandbox

        db = open_sandbox("full")
    queries, references = load_queries(args.queries, db)
    results: list[tuple[Query, EvaluationReport | None]] = []
    records: list[dict[str, Any]] = []
    errors: list[str] = []
    for number, record, error in read_plan_lines(args.plans):
        if record is None:
            errors.append(error or f"{args.plans.name} line {number}: unreadable")
            continue
        query = queries.get(str(record["query_id"]))
        if query is None:
            errors.append(f"{args.plans.name} line {number}: unknown query_id {record['query_id']!r}")
            continue
        try:
            plan = parse_plan(record["plan"], query=query, db=db)
        except PlanFormatError as exc:
            results.append((query, None))
            records.append({"query_id": query.query_id, "line": number, "delivered": False, "error": str(exc),
                            "report": None})
            continue
        report = evaluate(plan, query, db, config, reference=references.get(query.query_id))
        results.append((query, report))
        records.append({"query_id": query.query_id, "line": number, "delivered": True, "error": None,
                        "report": report.model_dump(mode="json")})
    summary = summarize(results)
    print(summary.to_markdown() if args.markdown else summary.to_text())
    undelivered = [r for r in records if not r["delivered"]]
    for r in undelivered:
        print(f"not delivered: {r['query_id']} (line {r['line']}): {r['error']}", file=sys.stderr)
    for e in errors:
        print(f"skipped: {e}", file=sys.stderr)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        payload = {"db_hash": db.content_hash, "summary": summary.model_dump(mode="json"),
                   "results": records, "skipped": errors}
        args.out.write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")
        print(f"report written to {args.out}", file=sys.stderr)
    return 0 if results else 2
