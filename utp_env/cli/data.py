"""`utp-env data build|validate|stats`: make, check and describe a database directory."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from utp_env.cli import positive_int
from utp_env.query import SPLITS
from utp_env.tools.database import Database
from utp_env.tools.errors import DataError
from utp_env.tools.sandbox import PROFILES, build_sandbox, ensure_sandbox, sandbox_path
from utp_env.tools.sandbox.calibration import Check, calibrate
from utp_env.tools.sandbox.realism import realism
from utp_env.tools.sandbox.traveller import Figure, traveller
from utp_env.train_split import TRAIN_SIZE


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `data` command group."""
    data = subparsers.add_parser("data", help="build, validate or describe a database",
                                 description="Build the India sandbox database, check a database directory, "
                                 "or print its row counts and calibration figures (docs/DATA.md).")
    sub = data.add_subparsers(dest="data_command", required=True, metavar="ACTION", title="actions")
    build = sub.add_parser("build", help="generate the India sandbox",
                           description="Generate the India sandbox (tables of cities, flights, trains, buses, "
                           "stays, restaurants, attractions, events, delay statistics) and, by default, its "
                           "query set with reference plans. Same profile and seed, same files.")
    build.add_argument("--profile", default="full",
                       help=f"sandbox profile: {' | '.join(PROFILES)} or a profile YAML path (default: full)")
    build.add_argument("--seed", type=_seed, default=0, help="generator seed (default: 0)")
    build.add_argument("--out", type=Path, default=None,
                       help="output directory (default: the embedded sandbox cache used by the env)")
    build.add_argument("--queries", type=_count, default=1000, metavar="N",
                       help="also build N queries with reference plans beside the tables, at most 100,000 "
                       "(default: 1000; 0 skips)")
    build.add_argument("--train", nargs="?", type=_train_count, const=TRAIN_SIZE, default=0, metavar="N",
                       help=f"also build the train split: N queries (default {TRAIN_SIZE}) with reference plans, "
                       "disjoint from validation and test (docs/RL.md); otherwise it is built when first asked for")
    build.set_defaults(handler=cmd_build)
    demos = sub.add_parser("demos", help="write the reference planner's episodes as tool-calling transcripts",
                           description="Write one chat transcript per query of a split: the env's task, the "
                           "reference planner's lookups and the submission of its plan as assistant tool calls, "
                           "each answered by the env, with the final reward and report (docs/RL.md). The format "
                           "is the one TRL's SFTTrainer and OpenAI fine-tuning read.")
    demos.add_argument("--split", default="train", choices=SPLITS,
                       help="which queries (default: train, built first if it is missing)")
    demos.add_argument("--out", type=Path, required=True, help="the JSONL file to write")
    demos.add_argument("--profile", default="full", choices=["full", "mini"],
                       help="embedded sandbox when --db is not given (default: full)")
    demos.add_argument("--db", type=Path, default=None, metavar="DIR", help="a database directory")
    demos.add_argument("--limit", type=positive_int, default=None, metavar="N", help="the first N queries of the split")
    demos.add_argument("--max-tokens", type=positive_int, default=None, metavar="N",
                       help="cap on a transcript's approximate tokens (characters / 4 of messages and tool schemas): "
                       "lookups are dropped from the end until it fits, else the transcript is left out")
    demos.add_argument("--max-observation-chars", type=positive_int, default=None, metavar="N",
                       help="the env's cap on each tool answer (default: 8000)")
    demos.add_argument("--compact", action="store_true",
                       help="the env's compact mode: short tool schemas and task text (docs/RL.md \"Prompt length\")")
    demos.add_argument("--closed-loop", action="store_true",
                       help="the closed-loop env (utp_env/UTP-Replan-v0): after the submission the trip is lived "
                       "through and the reference planner's repairs are recorded too (docs/RL.md)")
    demos.add_argument("--seed", type=int, default=0,
                       help="every episode's reset seed; in the closed loop, the reality lived (default 0)")
    demos.add_argument("--format", dest="fmt", default="trl", choices=["trl", "openai"],
                       help="trl: messages, tools, reward, report and the replay keys; openai: messages and tools "
                       "only (the fine-tuning upload format) (default: trl)")
    demos.set_defaults(handler=cmd_demos)
    example = sub.add_parser("example-plan", help="print reference plans to try evaluate and simulate with",
                             description="Print the reference plan of a query in the paper's JSON day format (the "
                             "input of `utp-env simulate --plan`), or with --jsonl one line {query_id, plan} per "
                             "query (the input of `utp-env evaluate --plans`). The reference plans are the reference "
                             "planner's (docs/DATA.md); edit one to see how the numbers move.")
    example.add_argument("query_ids", nargs="*", metavar="QUERY_ID",
                         help="the queries (default with --jsonl: every query of --split)")
    example.add_argument("--jsonl", action="store_true",
                         help="one JSON line {query_id, plan} per query, for `utp-env evaluate --plans`")
    example.add_argument("--split", default="validation", choices=["validation", "test", "all"],
                         help="with --jsonl and no QUERY_ID: the split whose queries to print (default: validation)")
    example.add_argument("--limit", type=positive_int, default=None, metavar="N", help="at most N queries")
    example.add_argument("--profile", default="full", choices=["full", "mini"],
                         help="embedded sandbox when --db is not given (default: full)")
    example.add_argument("--db", type=Path, default=None, metavar="DIR", help="a database directory")
    example.set_defaults(handler=cmd_example_plan)
    validate = sub.add_parser("validate", help="open a database directory and check every file",
                              description="Open a database directory and check every file against the table "
                              "schemas (columns, types, keys, references); print the row counts and the content "
                              "hash. Exit status 2 when a file is invalid.")
    validate.add_argument("path", type=Path, metavar="DIR", help="the database directory to check")
    validate.set_defaults(handler=cmd_validate)
    stats = sub.add_parser("stats", help="row counts and calibration figures with their targets",
                           description="Print a database's row counts and its calibration figures (delay "
                           "means, connectivity, crowd data) against their targets, then the realism figures of the "
                           "network, venues and prices, and of the query set when there is one (for the embedded "
                           "sandbox it is built on first use). Exit status 1 when a calibration check or a figure "
                           "fails (a figure short for the known reason it prints does not).")
    stats.add_argument("path", type=Path, nargs="?", default=None, metavar="DIR",
                       help="database directory (default: the embedded sandbox of --profile)")
    stats.add_argument("--profile", choices=["full", "mini"], default=None,
                       help="the embedded sandbox to describe when no DIR is given (default: full)")
    stats.set_defaults(handler=cmd_stats)


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--seed must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"--seed must be a non-negative integer, got {text!r}")
    return value


MAX_QUERIES = 100_000
"""Upper bound on `data build --queries` (the shipped set has 1,000; every query is generated, planned
and held in memory before the files are written)."""


def _bounded_count(flag: str) -> Callable[[str], int]:
    """An argparse type for `flag`: a whole number from 0 to `MAX_QUERIES`, else one line naming the flag."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = -1
        if value < 0:
            raise argparse.ArgumentTypeError(f"{flag} must be a non-negative integer, got {text!r}")
        if value > MAX_QUERIES:
            raise argparse.ArgumentTypeError(f"{flag} must be at most {MAX_QUERIES:,}, got {value:,}")
        return value
    return parse


_count = _bounded_count("--queries")
_train_count = _bounded_count("--train")


def cmd_build(args: argparse.Namespace) -> int:
    """Build (or find) the sandbox and its query set, then print, once, the content hash that the
    manifest check, `data validate`, the env's `db_hash` and run records use (`Database.content_hash`,
    which covers the query set, so it is read after the query set is built)."""
    if args.train and not args.queries:
        print("utp-env data build: error: --train needs the query set it is held apart from; drop --queries 0",
              file=sys.stderr)
        return 2
    started = time.perf_counter()
    if args.out is None:
        target = sandbox_path(args.profile, args.seed)
        existed = (target / "manifest.json").exists()
        path = ensure_sandbox(args.profile, args.seed)
        manifest = Database.open(path).manifest
    else:
        existed = False
        path = args.out
        manifest = build_sandbox(args.profile, args.seed, path)
    if existed:
        print(f"already built: {manifest['profile']} sandbox (seed {manifest['seed']}) in {path}")
    else:
        print(f"built {manifest['profile']} sandbox (seed {manifest['seed']}) in {path} "
              f"[{time.perf_counter() - started:.1f} s]")
    print(_counts_text(manifest["row_counts"]))
    if args.queries:
        from utp_env.dataset import QUERIES_FILE, build_query_set

        if args.out is None and (path / QUERIES_FILE).exists():
            print(f"query set already built: {path / QUERIES_FILE}")
        else:
            kept = build_query_set(path, n=args.queries, seed=args.seed, progress=True)
            print(f"query set: {kept} of {args.queries} queries kept with reference plans in {path / QUERIES_FILE}")
    if args.train:
        from utp_env.train_split import TRAIN_QUERIES_FILE, build_train_set, train_set_state

        state = train_set_state(path)
        if state is not None and state.get("seed") == args.seed and int(state.get("queries", 0)) >= args.train:
            print(f"train split already built: {state['queries']} queries in {path / TRAIN_QUERIES_FILE} (its first "
                  f"{args.train} are the split's first {args.train})")
        else:
            started = time.perf_counter()
            kept = build_train_set(path, n=args.train, seed=args.seed, progress=True)
            print(f"train split: {kept} queries with reference plans in {path / TRAIN_QUERIES_FILE} "
                  f"[{time.perf_counter() - started:.1f} s]")
    print(f"content hash: {Database.open(path).content_hash}")
    return 0


def cmd_demos(args: argparse.Namespace) -> int:
    """Write the demonstrations of a split (utp_env.rl.demos) and print what was written."""
    from utp_env.rl.demos import DEFAULT_OBSERVATION_CHARS, write_demos

    if args.db is not None and not args.db.is_dir():
        print(f"utp-env data demos: error: --db {str(args.db)!r} is not a database directory", file=sys.stderr)
        return 2
    wrong = _not_a_file(args.out)
    if wrong is not None:
        print(f"utp-env data demos: error: --out {str(args.out)!r} {wrong}", file=sys.stderr)
        return 2
    with _terminated_as_exit():  # a kill (SIGTERM, SIGHUP) unwinds, so the half-written file is removed
        summary = write_demos(args.out, args.split, fmt=args.fmt, db_path=args.db, profile=args.profile,
                              limit=args.limit, max_tokens=args.max_tokens,
                              max_observation_chars=args.max_observation_chars or DEFAULT_OBSERVATION_CHARS,
                              compact=args.compact,
                              closed_loop=args.closed_loop, seed=args.seed)
    kind = "closed-loop transcripts" if args.closed_loop else "transcripts"
    means = ("nothing to average" if summary.tokens_mean is None or summary.reward_mean is None else
             f"approx. tokens mean {summary.tokens_mean:,.0f}, max {summary.tokens_max:,}; "
             f"reward mean {summary.reward_mean:.3f}")
    print(f"{summary.written} {kind} of {summary.queries} {args.split} queries in {args.out} "
          f"[{summary.seconds:.1f} s]: {means}")
    if args.max_tokens is not None:
        print(f"--max-tokens {args.max_tokens}: {summary.lookups_dropped} lookups dropped, "
              f"{summary.over_cap} transcripts left out (over the cap without lookups)")
    if not summary.written:
        why = [f"{summary.over_cap} over --max-tokens {args.max_tokens} (raise it)"] if summary.over_cap else []
        why += [f"{len(summary.skipped)} without a reference plan"] if summary.skipped else []
        print(f"utp-env data demos: error: no transcript written to {args.out}"
              + (f": of {summary.queries} queries, {' and '.join(why)}" if why else ""), file=sys.stderr)
        return 1
    return 0


def _not_a_file(path: Path) -> str | None:
    """What is wrong with `path` as a file to write (None: nothing): a folder, or something that is not a
    regular file (a device such as /dev/full, a pipe, a socket), which a rename would replace."""
    if path.is_dir():
        return f"is a folder; name the JSONL file to write in it, e.g. {str(path / 'demos.jsonl')!r}"
    if path.exists() and not path.is_file():
        return "is not a regular file (a device, pipe or socket); name a JSONL file to write"
    return None


@contextlib.contextmanager
def _terminated_as_exit() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise `SystemExit` (exit status 128 + the signal) instead
    of ending the process on the spot, so the `finally` of an atomic write removes its temporary file."""
    def leave(signum: int, _frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = {s: signal.signal(s, leave) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        started = time.perf_counter()
        db = Database.open(args.path)
    except DataError as exc:
        print(f"INVALID {args.path}: {exc}", file=sys.stderr)
        return 2
    print(f"OK {args.path} (opened in {time.perf_counter() - started:.2f} s)")
    print(_counts_text(db.counts()))
    print(f"content hash: {db.content_hash}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    if args.path is not None and args.profile is not None:
        raise ValueError(f"give a database directory ({args.path}) or --profile {args.profile}, not both")
    path = args.path if args.path is not None else ensure_sandbox(args.profile or "full", 0)
    try:
        db = Database.open(path)
    except DataError as exc:
        print(f"INVALID {path}: {exc}", file=sys.stderr)
        return 2
    report = calibrate(db)
    print(f"{path}  (profile {db.manifest.get('profile', '?')}, hash {db.content_hash[:12]})")
    print(_counts_text(db.counts()))
    print()
    width = max(len(c.name) for c in report.checks)
    print(f"{'figure':<{width}}  {'value':>18}  {'target':<16}  result")
    for c in report.checks:
        print(f"{c.name:<{width}}  {c.value!s:>18}  {c.target:<16}  {'pass' if c.passed else 'FAIL'}")
    failed = sum(not c.passed for c in report.checks)
    print(f"\n{len(report.checks) - failed}/{len(report.checks)} checks pass")
    failed += _print_traveller(db)
    failed += _print_query_figures(db, embedded=args.path is None)
    return 0 if failed == 0 else 1


def _print_figures(title: str, figures: Sequence[Check]) -> int:
    """One table of figures: name, value, target, pass/FAIL, and the source of a traveller figure's target;
    returns how many FAIL (a figure short for its known reason does not)."""
    if not figures:
        return 0
    width = max(len(c.name) for c in figures)
    vwidth = min(40, max(len(str(c.value)) for c in figures))
    twidth = max(len(c.target) for c in figures)
    print(f"\n{title:<{width}}  {'value':>{vwidth}}  {'target':<{twidth}}  result  source")
    for c in figures:
        source = getattr(c, "source", "")
        print(f"{c.name:<{width}}  {c.value!s:>{vwidth}}  {c.target:<{twidth}}  {_result(c):<6}  "
              f"{source}")
    reasons = sorted({c.shortfall for c in figures if isinstance(c, Figure) and c.result == "short" and c.shortfall})
    short = sum(isinstance(c, Figure) and c.result == "short" for c in figures)
    known = f", {short} short for a known reason:\n  " + "\n  ".join(reasons) if short else ""
    print(f"\n{sum(c.passed for c in figures)}/{len(figures)} {title}s pass{known}")
    failing = [c.name for c in figures if _result(c) == "FAIL"]
    if failing:
        print(f"FAIL ({len(failing)} of the {title}s, outside the target): {'; '.join(failing)}")
    return len(failing)


def _result(figure: Check) -> str:
    """pass, FAIL, or short: a traveller figure missed for the known reason it names (`Figure.shortfall`)."""
    return figure.result if isinstance(figure, Figure) else ("pass" if figure.passed else "FAIL")


def _print_traveller(db: Database) -> int:
    """The database's traveller figures (tools/sandbox/traveller/) and the remaining realism figures
    (tools/sandbox/realism.py), their targets the full sandbox's; returns how many FAIL."""
    return _print_figures("traveller figure", traveller(db)) + _print_figures("realism figure", realism(db))


def _print_query_figures(db: Database, embedded: bool) -> int:
    """The query set's traveller figures (utp_env/queries/traveller.py), when the database has a query set
    (the embedded sandbox's is built on first use)."""
    from utp_env.dataset import QUERIES_FILE, dataset_of, open_dataset
    from utp_env.queries.traveller import query_figures

    if embedded:
        ds = open_dataset(db.path, progress=True)
    elif (Path(db.path) / QUERIES_FILE).exists():
        ds = dataset_of(db)
    else:
        print(f"\nno query set ({QUERIES_FILE}) next to the database: no query figures")
        return 0
    return _print_figures("query figure", query_figures(ds.queries, ds.references, ds.db))


def _counts_text(counts: dict[str, int]) -> str:
    width = max(len(k) for k in counts)
    return "\n".join(f"  {name:<{width}}  {n:>9,}" for name, n in counts.items())


def cmd_example_plan(args: argparse.Namespace) -> int:
    """Print reference plans (module `register`): one plan's day format, or JSONL lines for evaluate."""
    import json

    from utp_env.dataset import open_dataset
    from utp_env.plan_format import format_plan, plan_to_json
    from utp_env.tools.database import suggest

    dataset = open_dataset(None if args.db is None else str(args.db), profile=args.profile, progress=False)
    known = {q.query_id: q for q in dataset.queries}
    ids = list(args.query_ids)
    repeated = sorted({qid for qid in ids if ids.count(qid) > 1})
    if repeated:  # two lines of one query: `evaluate` refuses the file they make
        raise ValueError(f"query {repeated[0]!r} is named {ids.count(repeated[0])} times; name each query once")
    for qid in ids:
        if qid not in known:
            close = ", ".join(suggest(qid, list(known))) or "none close"
            raise LookupError(f"query {qid!r} is not in the query set ({len(known)} queries; closest: {close}); "
                              "`utp-env data example-plan --jsonl` lists plans of every query")
    if not ids:
        if not args.jsonl:
            raise ValueError("give a QUERY_ID (e.g. the first one: "
                             f"{min(known) if known else 'utp-q-0001'}), or --jsonl for a split's plans")
        ids = sorted(q.query_id for q in dataset.queries if args.split == "all" or q.split == args.split)
    if not args.jsonl and len(ids) > 1:
        raise ValueError("several QUERY_IDs: pass --jsonl (one line per query, for `utp-env evaluate --plans`)")
    ids = ids[: args.limit]
    missing = [qid for qid in ids if dataset.references.get(qid) is None]
    if missing:
        raise LookupError(f"query {missing[0]} has no reference plan (the reference planner found none)")
    for qid in ids:
        plan = dataset.references[qid]
        if args.jsonl:
            print(json.dumps({"query_id": qid, "plan": format_plan(plan)}, ensure_ascii=False))
        else:
            print(plan_to_json(plan))
    return 0
