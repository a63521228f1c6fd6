"""`utp-env simulate`: Monte Carlo robustness of one plan, printed as a table, optionally plotted."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from utp_env.itinerary import Plan
    from utp_env.plan_format import Repair
    from utp_env.query import Query
    from utp_env.tools.database import Database


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `simulate` command."""
    p = sub.add_parser("simulate", help="replay a plan under sampled delays and report its robustness",
                       description="Replay a plan (the paper's JSON day format, or the canonical Plan JSON) "
                       "N times under sampled transport delays and visit overruns; print the hold rate, "
                       "missed-leg probabilities and lateness per item (docs/SIMULATION.md).")
    p.add_argument("--plan", type=Path, required=True, metavar="FILE",
                   help="the plan, as JSON (paper day format or canonical Plan)")
    p.add_argument("--query-id", dest="query_id", metavar="ID",
                   help="the query the plan answers, for its dates and traveller (default: the plan's query_id; a plan "
                   "that names another query is refused)")
    p.add_argument("--queries", type=Path, metavar="Q.jsonl",
                   help="JSONL of queries to find --query-id in (default: the database's query set)")
    p.add_argument("--db", metavar="DIR", help="a database directory instead of the embedded sandbox")
    p.add_argument("--profile", choices=["full", "mini"], default="full",
                   help="embedded sandbox: full or mini (default: full)")
    p.add_argument("--rollouts", type=int, default=10_000, metavar="N",
                   help="number of rollouts, 1 to 100,000,000 (utp_env.simulation.MAX_ROLLOUTS; default: 10000)")
    p.add_argument("--seed", type=int, default=0,
                   help="random seed, a non-negative integer; the same seed gives the same report (default: 0)")
    p.add_argument("--config", type=Path, metavar="YAML",
                   help="uncertainty parameters YAML (default: the shipped configs/uncertainty.yaml)")
    p.add_argument("--plot", type=Path, metavar="PNG", help="also write a timeline with lateness bands to PNG")
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    p.add_argument("--lenient", action="store_true",
                   help="simulate a plan the parser could read only by dropping part of its text (a day with "
                   "broken JSON, a last day cut off); refused by default, naming where the text breaks")
    p.set_defaults(handler=handle)


def load_plan(path: Path, query: Query | None, db: Database, lenient: bool = False) -> tuple[Plan, list[Repair]]:
    """The plan in `path`: canonical `Plan` JSON (days holding `items`) or the paper's day format. A plan
    the parser could read only by dropping part of the text is refused (`LossyPlanError`, one line with
    where the text breaks and what it needs) unless `lenient`. Returns the plan and the parser's repairs."""
    from utp_env.itinerary import Plan
    from utp_env.plan_format import parse_plan_repaired, refuse_lossy

    if not path.exists():
        raise FileNotFoundError(f"plan file {str(path)!r} does not exist")
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    days = data.get("days") if isinstance(data, dict) else None
    if isinstance(days, list) and days and isinstance(days[0], dict) and "items" in days[0]:
        try:
            return Plan.model_validate(data), []
        except ValueError as exc:
            raise ValueError(f"{path}: not a valid canonical plan: {exc}") from exc
    try:
        plan, repairs = parse_plan_repaired(text, query=query, db=db)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from exc
    if not lenient:
        refuse_lossy(repairs, str(path))
    return plan, repairs


def find_query(query_id: str | None, queries_path: Path | None, db: Database,
               embedded: str | None = None) -> Query | None:
    """The query `query_id` from `--queries` or the database's query set (with `embedded`, the profile of the
    embedded sandbox `db` is, built on first use as by every other command); None without an id."""
    if query_id is None:
        return None
    if queries_path is not None:
        from utp_env.queries import read_queries

        pool = read_queries(queries_path)
        where = str(queries_path)
    else:
        from utp_env.dataset import QUERIES_FILE, dataset_of, open_dataset

        if embedded is not None and not (Path(db.path) / QUERIES_FILE).exists():
            open_dataset(None, profile=embedded)  # the embedded sandbox's query set: built on first use
        pool = dataset_of(db).queries
        where = "the database's query set"
    for q in pool:
        if q.query_id == query_id:
            return q
    from utp_env.tools.database import suggest

    hint = ", ".join(suggest(query_id, [q.query_id for q in pool])) or "none close"
    raise LookupError(f"query {query_id!r} is not in {where}; closest: {hint}")


def unknown_warning(unknown: list[str], no_query: bool) -> str | None:
    """One line about the plan's legs and visits this database does not know (a plan made on another
    database, or with invented names): their hold rate uses the mode's median delay and no crowd
    overrun, so it says little. None when every leg and visit is known."""
    if not unknown:
        return None
    hint = ("give --query-id to check the plan against its query, and " if no_query else "") + \
        "check --profile/--db"
    return (f"{len(unknown)} leg(s)/visit(s) of the plan are not in this database (first: {unknown[0]}); "
            f"their delays are guessed, so the hold rate says little (was the plan made on another database? "
            f"{hint})")


def handle(args: argparse.Namespace) -> int:
    from utp_env.config import load_uncertainty
    from utp_env.itinerary import check_plan_query
    from utp_env.simulation import check_rollouts, compile_for, simulate_compiled
    from utp_env.simulation.robustness import render_table
    from utp_env.tools.database import Database

    check_rollouts(args.rollouts, "--rollouts")  # before opening anything: a bad count fails fast
    if args.seed < 0:  # numpy's generators take non-negative seeds ("expected non-negative integer")
        raise ValueError(f"--seed {args.seed}: must be a non-negative integer; e.g. --seed 0")
    if args.db is not None:
        db = Database.open(args.db)
    else:
        from utp_env.tools.sandbox import open_sandbox

        db = open_sandbox(args.profile)
    config = load_uncertainty(args.config)
    plan, repairs = load_plan(args.plan, None, db, args.lenient)
    if args.query_id is not None:
        try:
            check_plan_query(plan, args.query_id)
        except ValueError:  # said with the flag: the plan and --query-id contradict each other
            raise ValueError(f"--query-id {args.query_id}: {args.plan} names query {plan.query_id}; drop "
                             f"--query-id, or give --query-id {plan.query_id}") from None
    query = find_query(args.query_id or plan.query_id, args.queries, db,
                       embedded=args.profile if args.db is None else None)
    if query is None:
        print(f"utp-env simulate: note: {args.plan} names no query and --query-id is not given: the plan is "
              "simulated without one (no dates, so no timetable's run days, and no check that it fits a query); "
              "give --query-id to simulate it for its query", file=sys.stderr)
    for repair in repairs:
        print(f"utp-env simulate: note: {args.plan}: {'dropped' if repair.lossy else 'repaired'}: {repair}",
              file=sys.stderr)
    if query is not None:
        plan, _ = load_plan(args.plan, query, db, args.lenient)  # with the query's dates
        from utp_env.env.episode import plan_mismatch

        wrong = plan_mismatch(plan, query, db)
        if wrong:
            print(f"utp-env simulate: warning: the plan does not match query {query.query_id}: {'; '.join(wrong)} "
                  "(was it made for another query, or on another database? check --query-id and --profile/--db)",
                  file=sys.stderr)
    compiled, config = compile_for(plan, query, db, config)
    warning = unknown_warning(compiled.unknown, query is None)
    if warning:
        print(f"utp-env simulate: warning: {warning}", file=sys.stderr)
    report = simulate_compiled(compiled, config, args.rollouts, args.seed)
    print(report.model_dump_json(indent=2) if args.json else render_table(report))
    if args.plot is not None:
        from utp_env.simulation.plot import plot_timeline

        title = query.query_id if query else args.plan.name  # the plot adds the hold rate and rollouts
        from utp_env.tools.atomic import write_with_atomic

        write_with_atomic(args.plot, lambda tmp: plot_timeline(compiled, report, tmp, title))
        print(f"timeline written to {args.plot}", file=sys.stderr)
    return 0
