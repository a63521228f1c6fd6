"""`utp-env evaluate`: score plans and print the Table 3 summary; one bad line costs one line.

The plans file is streamed: read line by line, each line decoded, parsed, scored and added to the
summary (`utp_env.evaluation.aggregate.SummaryAccumulator`), and its report appended to `--out`'s
temporary file, so memory does not grow with the file (what is kept per line: the query and trial
it answers, to refuse duplicates). A line that is not UTF-8, not JSON (including nesting too deep
or an integer too long to read), not an object with `query_id` and `plan` (and an optional
non-negative integer `trial`), for an unknown query, made on another database (its `db_hash`),
or that fails while scored is skipped and reported with its number and the reason; every other
line is scored. A plan is the paper's JSON day format (`parse_plan`) or the canonical `Plan` JSON
that run records hold (`Plan.model_validate`), so a run's results.jsonl can be scored as it is.

Two lines for the same query and trial (`trial` 0 when absent) are refused (exit 2, naming both
line numbers): nine copies of one good plan would otherwise count nine times in the pass rates.
For the same reason queries with different numbers of trials are refused (exit 2, naming them and
their counts); with `--split`, a query of the split without a plan counts as undelivered once per trial.
Exit status: 0 when every line was scored, 3 when some were skipped (the report is still written),
2 when no line could be scored, the plans belong to another database, a query repeats, queries have
different numbers of trials, or a file is missing (docs/RUNS.md, "Scoring plans").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from utp_env.tools.jsonl import decode_json_line

if TYPE_CHECKING:
    from collections.abc import Mapping

    from utp_env.evaluation.aggregate import SummaryAccumulator
    from utp_env.itinerary import Plan
    from utp_env.plan_format import Repair
    from utp_env.query import Query
    from utp_env.tools.database import Database

EXIT_SKIPPED = 3
EXIT_MISMATCHED = 4  # most plans do not match their queries: scored and printed, but likely another database
SHOWN_REPAIRS = 20  # repaired plans named one by one on stderr; the rest are counted (all are in --out)
RUN_CONFIG = "config.json"  # a run folder's config, which records the database hash of its results


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `evaluate` command."""
    p = sub.add_parser("evaluate", help="score plans (paper JSON format) and print the summary table",
                       description="Score each plan of PLANS.jsonl (lines {\"query_id\": ..., \"plan\": <days "
                       "or text, or a run record's Plan JSON>}) with the commonsense and hard checks, "
                       "BAS/CATS/TDAS and the TripCraft metrics (docs/METRICS.md). A plan that does not "
                       "parse counts as not delivered; a line that cannot be read is skipped and reported "
                       "with its number; two lines for the same query and trial, and queries with different "
                       "numbers of trials, are refused. The file is read "
                       "line by line (memory does not grow with it). Exit status 0: every line scored; 3: some "
                       "lines skipped (the report is still written); 2: no line could be scored, a query and "
                       "trial repeat, trial counts differ, or plans made on another database (their runs' records "
                       "say so); 4: most plans do not match their queries (their start, dates or days are another "
                       "trip's: made on another database?), the table is printed all the same.")
    p.add_argument("--plans", type=Path, required=True, metavar="PLANS.jsonl",
                   help="the plans to score: one JSON object {query_id, plan} per line, with an optional "
                   "integer trial (a run's results.jsonl works too)")
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
    p.add_argument("--lenient", action="store_true",
                   help="score plans the parser could read only by dropping part of their text (a day with broken "
                   "JSON, a last day cut off), as what could be read; refused by default, naming the line and what "
                   "the text needs")
    from utp_env.cli import add_layout_options

    add_layout_options(p)
    p.set_defaults(handler=handle)


@dataclass
class PlanLine:
    """One non-blank line of the plans file: its number, and the record or why it was skipped."""

    number: int
    record: dict[str, Any] | None = None
    error: str | None = None


def iter_plan_lines(path: Path) -> Iterator[PlanLine]:
    """Every non-blank line of the plans file, read one at a time, each decoded and parsed on its own."""
    if not path.is_file():
        raise FileNotFoundError(f"plans file {str(path)!r} does not exist or is not a file")
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise FileNotFoundError(f"plans file {str(path)!r} cannot be read: {exc.strerror}") from None
    with fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            record, error = parse_plan_line(raw)
            yield PlanLine(number, record, None if error is None else f"{path.name} line {number}: {error}")


def count_lines(path: Path) -> int:
    """How many lines the file has (for the progress bar), read in blocks."""
    count = 0
    last = b"\n"
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


def parse_plan_line(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(record, None) for a line holding a {query_id, plan} object, else (None, the reason)."""
    record, error = decode_json_line(raw)
    if error is not None:
        return None, error
    if not isinstance(record, dict) or "query_id" not in record or "plan" not in record:
        return None, "expected an object with 'query_id' and 'plan'"
    if not isinstance(record["query_id"], str | int) or isinstance(record["query_id"], bool):
        return None, "'query_id' must be a string"
    trial = record.get("trial", 0)
    if not isinstance(trial, int) or isinstance(trial, bool) or trial < 0:
        return None, f"'trial' must be a non-negative integer, got {str(trial)[:40]!r}"
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


def read_plan(raw: Any, query: Query, db: Database) -> tuple[Plan, list[Repair]]:
    """The plan of a line (`Plan` JSON or the paper's format) and the parser's repairs (of a plan given as
    text); PlanFormatError when it cannot be read."""
    from pydantic import ValidationError

    from utp_env.itinerary import Plan
    from utp_env.plan_format import PlanFormatError, parse_plan_repaired

    if raw is None:
        raise PlanFormatError("no plan (null): nothing was delivered")
    if is_plan_json(raw):
        try:
            return Plan.model_validate(raw), []
        except (ValidationError, RecursionError) as exc:
            raise PlanFormatError(f"not a valid Plan JSON: {str(exc).splitlines()[0]}") from None
    return parse_plan_repaired(raw, query=query, db=db)


def recorded_db_hash(plans: Path) -> str | None:
    """The database hash recorded by the run folder the plans file is in (its config.json), if any."""
    config = plans.parent / RUN_CONFIG
    try:
        saved = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    value = saved.get("db_hash") if isinstance(saved, dict) else None
    return value if isinstance(value, str) else None


def foreign_database(plans: Path, mismatch: str, db: Database, where: str) -> ValueError:
    """The one-line refusal of plans made on database `mismatch` rather than the one opened."""
    return ValueError(f"{plans} holds plans made on database {mismatch[:12]}, but {where} is "
                      f"{db.content_hash[:12]}: its query ids name other trips; score them with the --profile "
                      "or --db they were made with")


class DuplicatePlanError(ValueError):
    """Two lines of the plans file hold plans for the same query and trial."""


class ReportSink:
    """The `--out` report, written as the lines are scored: `{"db_hash", "results": [...], "skipped":
    [...], "warnings": [...], "summary": {...}}`. Results go straight to the (temporary) file,
    skipped lines and warnings to anonymous temporary files copied in at the end, so nothing
    grows in memory; `utp_env.tools.atomic.write_with_atomic` renames the file into place only
    when everything was written."""

    def __init__(self, fh: BinaryIO, db_hash: str) -> None:
        self.fh = fh
        self.parts = {name: tempfile.TemporaryFile() for name in ("skipped", "warnings")}  # noqa: SIM115 (closed by finish/close)
        self.counts = {"results": 0, "skipped": 0, "warnings": 0}
        fh.write(b'{"db_hash": ' + _json(db_hash) + b', "results": [')

    def _item(self, part: str, out: BinaryIO, value: Any) -> None:
        out.write((b",\n" if self.counts[part] else b"\n") + _json(value))
        self.counts[part] += 1

    def result(self, record: dict[str, Any]) -> None:
        self._item("results", self.fh, record)

    def skipped(self, entry: dict[str, Any]) -> None:
        self._item("skipped", self.parts["skipped"], entry)

    def warning(self, text: str) -> None:
        self._item("warnings", self.parts["warnings"], text)

    def finish(self, summary: dict[str, Any]) -> None:
        """Close the arrays, copy the skipped lines and warnings in, add the summary."""
        for name in ("skipped", "warnings"):
            self.fh.write(b"\n], \"" + name.encode() + b"\": [")
            part = self.parts[name]
            part.seek(0)
            shutil.copyfileobj(part, self.fh)
            part.close()
        self.fh.write(b"\n], \"summary\": " + _json(summary) + b"}\n")
        self.fh.flush()
        os.fsync(self.fh.fileno())

    def close(self) -> None:
        for part in self.parts.values():
            part.close()


def _json(value: Any) -> bytes:
    """Compact JSON as UTF-8, a lone surrogate as its `\\udXXX` escape (as write_text_atomic does)."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8", errors="backslashreplace")


@dataclass
class Tally:
    """What scoring the file gave, in counts (the plans themselves are not kept)."""

    summary: SummaryAccumulator = field(default_factory=lambda: _accumulator())
    lines: int = 0
    scored: int = 0
    skipped: int = 0
    warnings: int = 0
    readable: int = 0
    foreign: int = 0
    first_foreign: str | None = None
    covered: set[str] = field(default_factory=set)
    seen: dict[tuple[str, int], int] = field(default_factory=dict)
    repaired: int = 0
    refused: list[str] = field(default_factory=list)  # plans read only by dropping part of them (not --lenient)
    other_split: dict[str, int] = field(default_factory=dict)  # split -> lines for its queries, outside --split


def trials_per_query(tally: Tally, name: str) -> int:
    """How many trials each scored query has; ValueError when queries have different numbers: every
    line counts once in the rates and means, so a query tried more often would weigh more than the rest."""
    by_count: dict[int, list[str]] = {}
    for query_id, count in Counter(query_id for query_id, _ in tally.seen).items():
        by_count.setdefault(count, []).append(query_id)
    if len(by_count) <= 1:
        return next(iter(by_count), 1)
    parts = []
    for count, ids in sorted(by_count.items(), key=lambda kv: (len(kv[1]), kv[0])):
        shown = ", ".join(sorted(ids)[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
        parts.append(f"{len(ids)} {'query has' if len(ids) == 1 else 'queries have'} {count} "
                     f"trial{'s' if count != 1 else ''} ({shown})")
    skipped = (f" ({tally.skipped} line(s) were skipped, the reasons above: a skipped line leaves its query a trial "
               "short)") if tally.skipped else ""
    raise ValueError(f"{name}: queries have different numbers of trials: {'; '.join(parts)}{skipped}; every line "
                     "counts once in the table, so a query tried more often would weigh more than the others: give "
                     "every query the same number of trials, or score the extra trials in a file of their own")


def _accumulator() -> SummaryAccumulator:
    from utp_env.evaluation.aggregate import SummaryAccumulator

    return SummaryAccumulator()


def score_file(path: Path, queries: dict[str, Query], references: Mapping[str, Plan], db: Database, config: Any,
               sink: ReportSink | None = None, lenient: bool = False,
               outside: Mapping[str, Query] | None = None) -> Tally:
    """Score every readable line of the plans file, one at a time; every other line is skipped
    with its reason. Skipped lines, undelivered plans, repairs and warnings are printed to stderr as
    they come; each line's report (with its repairs) goes to `sink`. A plan the parser read only by
    dropping part of its text is not scored but kept in `Tally.refused` unless `lenient`. A
    DuplicatePlanError at the second line for a query and trial. `outside`: the queries of the set that
    `--split` left out; a line for one of them is skipped and counted by split (one line at the end),
    not reported one by one as unknown."""
    from utp_env.env.episode import plan_mismatch
    from utp_env.evaluation import evaluate
    from utp_env.itinerary import check_plan_query
    from utp_env.plan_format import LossyPlanError, PlanFormatError, lossy, refuse_lossy
    from utp_env.tools.progress import progress_bar

    name = path.name
    out = Tally()
    total = count_lines(path)

    def skip(number: int, reason: str) -> None:
        out.skipped += 1
        print(f"skipped: {reason}", file=sys.stderr)
        if sink is not None:
            sink.skipped({"line": number, "reason": reason})

    def warn(text: str) -> None:
        out.warnings += 1
        print(f"warning: {text}", file=sys.stderr)
        if sink is not None:
            sink.warning(text)

    # A bar (or one notice line) only for files large enough to take a few seconds.
    with progress_bar(total, "scoring plans", "line", enabled=total >= 500) as bar:
        for line in iter_plan_lines(path):
            bar.update(line.number - bar.n)
            out.lines += 1
            record = line.record
            if record is None:
                skip(line.number, line.error or f"{name} line {line.number}: unreadable")
                continue
            out.readable += 1
            given_hash = record.get("db_hash")
            line_hash = given_hash if isinstance(given_hash, str) else db.content_hash
            foreign = line_hash != db.content_hash
            if foreign:
                out.foreign += 1
                out.first_foreign = min(out.first_foreign or line_hash, line_hash)
            query = queries.get(str(record["query_id"]))
            if query is None:
                elsewhere = (outside or {}).get(str(record["query_id"]))
                if elsewhere is not None:
                    split = str(elsewhere.split)
                    out.other_split[split] = out.other_split.get(split, 0) + 1
                    out.skipped += 1
                    if sink is not None:
                        sink.skipped({"line": line.number, "reason": f"{name} line {line.number}: query "
                                      f"{elsewhere.query_id} is of split {split}, outside --split"})
                    continue
                skip(line.number, f"{name} line {line.number}: unknown query_id {str(record['query_id'])!r} "
                                  "(not in the query set)")
                continue
            if foreign:
                skip(line.number, f"{name} line {line.number}: made on database {line_hash[:12]}, not the one "
                                  f"opened ({db.content_hash[:12]})")
                continue
            trial = int(record.get("trial", 0))
            first = out.seen.setdefault((query.query_id, trial), line.number)
            if first != line.number:
                raise DuplicatePlanError(
                    f"{name} lines {first} and {line.number} both hold a plan for query {query.query_id} trial "
                    f"{trial}: each query (and trial) is scored once, so a repeated plan would count several "
                    "times in the rates; keep one line per query, or give repeated runs distinct 'trial' numbers")
            try:
                try:
                    plan, repairs = read_plan(record["plan"], query, db)
                except PlanFormatError as exc:
                    result: dict[str, Any] = {"query_id": query.query_id, "line": line.number, "delivered": False,
                                              "error": str(exc), "report": None}
                    report = None
                    print(f"not delivered: {query.query_id} (line {line.number}): {exc}", file=sys.stderr)
                else:
                    where = f"{name} line {line.number} (query {query.query_id})"
                    if lossy(repairs) and not lenient:
                        del out.seen[(query.query_id, trial)]
                        try:
                            refuse_lossy(repairs, where)
                        except LossyPlanError as exc:
                            out.refused.append(str(exc))
                            print(f"refused: {exc}", file=sys.stderr)
                        continue
                    for repair in repairs:
                        out.repaired += 1
                        if out.repaired <= SHOWN_REPAIRS:
                            print(f"{'dropped' if repair.lossy else 'repaired'}: {where}: {repair}", file=sys.stderr)
                    try:
                        check_plan_query(plan, query.query_id)
                    except ValueError:  # the line contradicts itself: which query is it for?
                        del out.seen[(query.query_id, trial)]
                        skip(line.number, f"{name} line {line.number}: its plan names query {plan.query_id!r} and "
                                          f"the line {query.query_id!r}; make the two agree")
                        continue
                    report = evaluate(plan, query, db, config, reference=references.get(query.query_id))
                    wrong = plan_mismatch(plan, query, db)  # (counted once the plan is scored)
                    if wrong:
                        warn(f"{name} line {line.number}: the plan does not match query {query.query_id}: "
                             + "; ".join(wrong) + " (was it made on another database? check --profile/--db)")
                    result = {"query_id": query.query_id, "line": line.number, "delivered": True, "error": None,
                              "repairs": [str(r) for r in repairs], "report": report.model_dump(mode="json")}
            except Exception as exc:  # one line's failure costs that line, never the file
                del out.seen[(query.query_id, trial)]
                skip(line.number, f"{name} line {line.number}: could not be scored "
                                  f"({type(exc).__name__}: {str(exc)[:200]})")
                continue
            if "trial" in record:
                result["trial"] = trial
            out.scored += 1
            out.covered.add(query.query_id)
            out.summary.add(query, report)
            if sink is not None:
                sink.result(result)
        bar.update(total - bar.n)
    return out


def open_database(args: argparse.Namespace) -> tuple[Database, str]:
    """The database to score against and how to name it in messages."""
    from utp_env.tools.database import Database

    if args.db is not None:
        return Database.open(args.db), f"--db {args.db}"
    where = f"the embedded {args.profile} sandbox (--profile {args.profile})"
    if args.queries is None:  # its query set is read: built on first use, as by every other command
        from utp_env.dataset import open_dataset

        return open_dataset(None, profile=args.profile).db, where
    from utp_env.tools.sandbox import open_sandbox

    return open_sandbox(args.profile), where


def handle(args: argparse.Namespace) -> int:
    from utp_env.cli import with_intervals
    from utp_env.config import load_uncertainty
    from utp_env.tools.atomic import write_with_atomic

    ci = with_intervals(args)  # (a conflict of layout options is refused before any plan is scored)
    config = load_uncertainty(args.config)
    if not args.plans.is_file():
        raise FileNotFoundError(f"plans file {str(args.plans)!r} does not exist or is not a file")
    db, where = open_database(args)
    folder = recorded_db_hash(args.plans)
    if folder is not None and folder != db.content_hash:
        raise foreign_database(args.plans, folder, db, where)
    queries, references = load_queries(args.queries, db)
    outside: dict[str, Query] = {}
    if args.split is not None:
        chosen = split_queries(queries, args.split)
        outside = {qid: q for qid, q in queries.items() if qid not in chosen}
        queries = chosen
    done: dict[str, Any] = {}

    def score(sink: ReportSink | None) -> None:
        tally = score_file(args.plans, queries, references, db, config, sink, lenient=args.lenient, outside=outside)
        for split, count in sorted(tally.other_split.items()):
            print(f"skipped: {count} line(s) of {args.plans.name} hold plans for queries of split {split}; --split "
                  f"{args.split} counts only its own queries", file=sys.stderr)
        if tally.refused:
            from utp_env.plan_format import LossyPlanError

            more = f" (and {len(tally.refused) - 1} more above)" if len(tally.refused) > 1 else ""
            raise LossyPlanError(tally.refused[0] + more)
        if not tally.lines:
            raise ValueError(f"plans file {str(args.plans)!r} holds no plans (every line is blank)")
        if tally.readable and tally.foreign == tally.readable and tally.first_foreign is not None:
            raise foreign_database(args.plans, tally.first_foreign, db, where)
        if not tally.scored:
            raise ValueError(f"no line of {args.plans.name} could be scored: all {tally.lines} were skipped (the "
                             "reasons above); nothing to summarise")
        trials = trials_per_query(tally, args.plans.name)
        missing = [q for q in queries.values() if q.query_id not in tally.covered]
        if args.split is not None:
            for query in missing:  # undelivered: no plan for it, as often as every other query was tried
                for _ in range(trials):
                    tally.summary.add(query, None)
        summary = tally.summary.summary(config.readings)
        if sink is not None:
            sink.finish(summary.model_dump(mode="json"))
        done.update(tally=tally, summary=summary, missing=missing)

    if args.out is None:
        score(None)
    else:
        def write(tmp: Path) -> None:
            with tmp.open("wb") as fh:
                sink = ReportSink(fh, db.content_hash)
                try:
                    score(sink)
                finally:
                    sink.close()

        write_with_atomic(args.out, write)
    tally, summary, missing = done["tally"], done["summary"], done["missing"]
    print(summary.to_markdown(ci) if args.markdown else summary.to_text(ci))
    if args.split is not None:
        print(f"split {args.split}: {len(queries) - len(missing)} of {len(queries)} queries have a plan; "
              f"{len(missing)} without one count as undelivered", file=sys.stderr)
    else:
        print(f"{len(tally.covered)} of the {len(queries)} queries of the set have a plan; the rates are over those "
              "(pass --split to count every query of a split)", file=sys.stderr)
    if tally.repaired:
        print(f"{tally.repaired} repair(s) made to read the plans (each in --out under 'repairs')"
              + (f"; the first {SHOWN_REPAIRS} shown above" if tally.repaired > SHOWN_REPAIRS else ""),
              file=sys.stderr)
    mismatched = tally.warnings * 2 > tally.scored  # most plans are another trip's than their query's
    if mismatched:
        print(f"utp-env evaluate: error: {tally.warnings} of {tally.scored} plans do not match their queries (the "
              f"warnings above): were they made on another database or query set? (opened: {where}; check "
              f"--profile/--db); if they are this set's, the table scores them as they are (exit status "
              f"{EXIT_MISMATCHED})", file=sys.stderr)
    if args.out is not None:
        print(f"report written to {args.out}", file=sys.stderr)
    if tally.skipped:
        print(f"{tally.skipped} of {tally.lines} line(s) skipped, {tally.scored} scored "
              f"(exit status {EXIT_SKIPPED if not mismatched else EXIT_MISMATCHED})", file=sys.stderr)
    return EXIT_MISMATCHED if mismatched else EXIT_SKIPPED if tally.skipped else 0
