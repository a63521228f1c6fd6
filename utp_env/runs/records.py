"""The schema of a run's episode record (one line of results.jsonl), checked on every read.

A record is trusted only after `check_record` has found nothing wrong with it. Two kinds of check:

- **The record alone** (`EpisodeRecord`, a pydantic model): the type of every field the benchmark
  reads (`metrics.tdas = "abc"`, `metrics: [1]` or `replan: "zzz"` are refused, never a crash
  later), the range of every value (each metric, the reward, the realised score, items kept and
  the hold rate in [0, 1]; counts, minutes, costs and durations not negative; every number
  finite), and what must agree inside it (the `metrics` are the `report`'s, `final_pass` is the
  report's, a closed-loop record's `reward` is its realised score, done items are at most the
  planned ones).
- **The record in its run** (`RecordContext`): its query is one of the run's queries and its
  trial one of the run's trials, it was made on the run's database (`db_hash`) and by an agent
  the run accepts (`agent_hash`, `utp_env/runs/agent_identity.py`), and it is of the run's env
  (a replan run's records carry a `replan` block key, a plan run's do not).

Unknown extra keys are allowed (a newer version may add some); every key the benchmark reads is
typed. `check_record` returns None or a one-line reason naming the field, its value and the rule.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from utp_env.env.episode import TerminationReason
from utp_env.evaluation.report import METRICS, EvaluationReport
from utp_env.itinerary import Plan
from utp_env.simulation.robustness import RobustnessReport
from utp_env.tools.jsonl import decode_json_line

TOLERANCE = 1e-9  # slack on [0, 1] for values computed in floating point
LEGACY_AGENT = "unrecorded"
"""In a run's accepted agent hashes (`RecordContext.agent_hashes`, config.json `agent_hashes`): its
records without `agent_hash` (made before utp-env recorded agents, or adopted) are kept."""


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError(f"must be a finite number, got {value!r}")
    return value


def _unit(value: float) -> float:
    _finite(value)
    if not -TOLERANCE <= value <= 1 + TOLERANCE:
        raise ValueError(f"must lie in [0, 1], got {value!r}")
    return value


def _not_negative(value: float) -> float:
    _finite(value)
    if value < 0:
        raise ValueError(f"must not be negative, got {value!r}")
    return value


def _termination(value: str) -> str:
    if value not in REASONS:
        raise ValueError(f"must be one of {', '.join(REASONS)}, got {value!r}")
    return value


REASONS = tuple(reason.value for reason in TerminationReason)
Unit = Annotated[float, AfterValidator(_unit)]
"""A share or score: a finite number in [0, 1]."""
NonNegative = Annotated[float, AfterValidator(_not_negative)]
"""Minutes, money, seconds: a finite number >= 0."""
Count = Annotated[StrictInt, Field(ge=0)]


class TraceSummary(BaseModel):
    """The record's `trace`: how many steps of each kind and name, and which failed."""

    model_config = ConfigDict(extra="allow", strict=True)

    steps: Count = 0
    by_name: dict[str, Count] = Field(default_factory=dict)
    failed: dict[str, Count] = Field(default_factory=dict)


class ReplanBlock(BaseModel):
    """A closed-loop record's `replan` block (`utp_env.runs.replan_episode.replan_block`)."""

    model_config = ConfigDict(extra="allow", strict=True)

    realised_score: Unit
    terms: dict[str, Any] = Field(default_factory=dict)
    items_kept: Unit | None = None
    items_done: Count | None = None
    items_planned: Count | None = None
    rebookings: Count | None = None
    late_minutes: NonNegative | None = None
    extra_cost: NonNegative | None = None
    disruptions: Count = 0
    reports: list[Any] = Field(default_factory=list)
    realised: dict[str, Any] | None = None
    repair_steps: Count = 0
    repair_error: str | None = None


class EpisodeRecord(BaseModel):
    """One episode of a run as results.jsonl holds it (docs/RUNS.md, "The run folder")."""

    model_config = ConfigDict(extra="allow", strict=True)

    query_id: Annotated[str, Field(min_length=1)]
    trial: Count
    seed: StrictInt
    db_hash: Annotated[str, Field(min_length=1)]
    termination_reason: Annotated[str, AfterValidator(_termination)]
    plan: Plan | list[dict[str, Any]] | None = Field(description="Plan JSON; a list of days: the paper's day "
                                                                 "format (run folders of old versions)")
    report: EvaluationReport | None
    final_pass: StrictBool
    metrics: dict[str, Unit | None] | None
    reward: Unit
    plan_reward: Unit | None = None
    robustness: RobustnessReport | None = None
    realisation: dict[str, Any] | None = None
    error: str | None = None
    replan: ReplanBlock | None = None
    trace: TraceSummary | None = None
    usage: dict[str, NonNegative | None] | None = None
    duration_s: NonNegative | None = None
    agent_hash: str | None = None
    repairs: list[str] | None = Field(default=None, description="What the plan parser repaired to read the agent's "
                                                                "plan (utp_env/plan_format/repairs.py)")


@dataclass(frozen=True)
class RecordContext:
    """What a record must agree with to belong to a run (None: not checked)."""

    queries: frozenset[str] | None = None
    trials: int | None = None
    db_hash: str | None = None
    agent_hashes: frozenset[str] | None = None  # LEGACY_AGENT in it: records without agent_hash pass
    env: str | None = None  # "plan" or "replan"


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _first_error(exc: ValidationError) -> str:
    """The first validation error as 'field.path: message (got value)'."""
    error = exc.errors(include_url=False)[0]
    # a key is shown as repr when it is not a plain name (a forged key may hold a newline)
    where = ".".join(str(part) if str(part).isidentifier() or isinstance(part, int) else repr(part)
                     for part in error["loc"]) or "record"
    message = error["msg"].removeprefix("Value error, ")
    got = error.get("input")
    shown = "" if isinstance(got, dict) or "got " in message else f" (got {_show(got)})"
    return f"{where}: {message}{shown}"


def _report_ranges(report: EvaluationReport) -> str | None:
    """The report's metrics and pass rates out of [0, 1]: the first one, or None."""
    for name in METRICS:
        value = getattr(report, name)
        if value is not None:
            try:
                _unit(value)
            except ValueError as exc:
                return f"report.{name}: {exc}"
    return None


def _agreement(model: EpisodeRecord) -> str | None:
    """What must agree inside one record: the first disagreement, or None."""
    report = model.report
    if report is not None:
        wrong = _report_ranges(report)
        if wrong is not None:
            return wrong
        if model.metrics is not None:
            for name, value in report.metrics().items():
                given = model.metrics.get(name)
                if (given is None) != (value is None) or (
                        given is not None and value is not None and abs(given - value) > TOLERANCE):
                    return f"metrics.{name} is {_show(given)} but its report says {_show(value)}"
        if model.final_pass != report.final_pass:
            return f"final_pass is {model.final_pass} but its report says {report.final_pass}"
    elif model.final_pass:
        return "final_pass is true but the record has no report"
    block = model.replan
    if block is not None:
        if abs(block.realised_score - model.reward) > TOLERANCE:
            return (f"reward is {_show(model.reward)} but replan.realised_score is {_show(block.realised_score)} "
                    "(a closed-loop record's reward is its realised score)")
        if block.items_done is not None and block.items_planned is not None and block.items_done > block.items_planned:
            return f"replan.items_done ({block.items_done}) exceeds replan.items_planned ({block.items_planned})"
    hold = model.robustness
    if hold is not None:
        for name in ("hold_rate", "any_missed_leg_probability"):
            try:
                _unit(getattr(hold, name))
            except ValueError as exc:
                return f"robustness.{name}: {exc}"
    return None


def _in_run(record: dict[str, Any], context: RecordContext) -> str | None:
    """Whether the record belongs to the run of `context`: the first reason it does not, or None."""
    qid, trial = record["query_id"], record["trial"]
    if context.queries is not None and qid not in context.queries:
        return f"unknown query {qid!r}: not one of this run's {len(context.queries)} queries"
    if context.trials is not None and trial >= context.trials:
        return f"trial {trial}, but the run has {context.trials} trial(s) per query (0..{context.trials - 1})"
    if context.db_hash is not None and record["db_hash"] != context.db_hash:
        return (f"made on database {str(record['db_hash'])[:12]}, not this run's ({context.db_hash[:12]})")
    if context.agent_hashes is not None:
        agent = record.get("agent_hash")
        if agent is None and LEGACY_AGENT not in context.agent_hashes:
            return "no agent_hash: nothing says which agent made it"
        if agent is not None and agent not in context.agent_hashes:
            return f"made by agent {agent[:12]}, not this run's agent (code or settings differ)"
    if context.env == "replan" and "replan" not in record:
        return "no 'replan' block key in a closed-loop (--env replan) run"
    if context.env == "plan" and record.get("replan") is not None:
        return "a closed-loop 'replan' block in a plan (UTP-v0) run"
    return None


def check_record(record: Any, context: RecordContext | None = None) -> str | None:
    """None when `record` (a decoded results.jsonl line) is a valid episode record of the run of
    `context` (no run checks without one), else a one-line reason naming the field."""
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not an episode record object"
    try:
        model = EpisodeRecord.model_validate(record)
    except ValidationError as exc:
        return _first_error(exc)
    except RecursionError:
        return "nested too deep to check"
    wrong = _agreement(model)
    if wrong is None and context is not None:
        wrong = _in_run(record, context)
    return wrong


RESULTS = "results.jsonl"
"""A run folder's episode records, one JSON line each (`utp_env/runs/store.py` appends and repairs it)."""


def episode_key(query_id: str, trial: int) -> str:
    """The identity of an episode inside a run."""
    return f"{query_id}#{trial}"


def read_record(raw: bytes, context: RecordContext | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """(record, None) for a valid results line (of the run of `context`, when given), else
    (None, the one-line reason it is not one)."""
    record, error = decode_json_line(raw)
    if error is not None:
        return None, error
    if not isinstance(record, dict):
        return None, f"a JSON {type(record).__name__}, not an episode record object"
    if not isinstance(record.get("query_id"), str) or not record["query_id"]:
        return None, "no string 'query_id'"
    trial = record.get("trial")
    if not isinstance(trial, int) or isinstance(trial, bool) or trial < 0:
        return None, "no non-negative integer 'trial'"
    reason = check_record(record, context)
    if reason is not None:
        return None, reason
    return record, None


def checked_records(lines: Iterable[bytes], context: RecordContext | None = None) -> tuple[list[dict[str, Any]],
                                                                              list[tuple[int, str]]]:
    """(valid records, first per episode, in file order; [(line number, reason)] of the others)
    of an iterable of raw results.jsonl lines, for readers that never rewrite the file."""
    seen: dict[str, int] = {}
    kept: list[dict[str, Any]] = []
    bad: list[tuple[int, str]] = []
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        record, reason = read_record(raw, context)
        if record is None:
            bad.append((number, reason or "unreadable"))
            continue
        key = episode_key(record["query_id"], record["trial"])
        if key in seen:
            bad.append((number, f"a second record of episode {key} (first on line {seen[key]})"))
            continue
        seen[key] = number
        kept.append(record)
    return kept, bad


CONFIG_FILE = "config.json"
"""A run folder's configuration file (the runner writes it, `read_run_config` reads it)."""
SHOWN_BAD = 10  # bad lines named one by one by a reader; the rest are counted


def read_run_config(run_dir: str | Path, fix: str = "restore it, or rerun `utp-env run` into a new folder",
                    ) -> dict[str, Any]:
    """A run folder's config.json ({} when absent); a one-line ValueError naming the file when it
    cannot be read or is not a JSON object, ending with `fix` (what the caller's user can do)."""
    path = Path(run_dir) / CONFIG_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{path} cannot be read ({type(exc).__name__}: {str(exc)[:120]}); {fix}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} is not a run's config (a JSON {type(data).__name__}); {fix}")
    return data


def run_context(config: dict[str, Any], queries: Iterable[str] | None = None) -> RecordContext:
    """The `RecordContext` a run folder's config.json (read by `read_run_config`) gives its records:
    its trials, database, accepted agents and env; `queries`, when known, the query set."""
    given = config.get("config")
    settings: dict[str, Any] = given if isinstance(given, dict) else {}
    trials = settings.get("trials")
    hashes = config.get("agent_hashes")
    db_hash = config.get("db_hash")
    return RecordContext(
        queries=None if queries is None else frozenset(queries),
        trials=trials if isinstance(trials, int) and not isinstance(trials, bool) and trials >= 1 else None,
        db_hash=db_hash if isinstance(db_hash, str) else None,
        agent_hashes=frozenset(h for h in hashes if isinstance(h, str)) if isinstance(hashes, list) else None,
        env=settings.get("env", "plan") if settings else None)


def read_checked_records(run_dir: str | Path, command: str, queries: Iterable[str] | None = None,
                         ) -> tuple[list[dict[str, Any]], list[str]]:
    """The valid records of a run folder's results.jsonl (checked against its config.json and,
    when given, the query set), without changing the folder, and the warnings about the lines
    skipped (printed to stderr, at most `SHOWN_BAD` one by one, then a count)."""
    path = Path(run_dir) / RESULTS
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: is {run_dir} a run folder made by `utp-env run`?")
    context = run_context(read_run_config(run_dir), queries)
    with path.open("rb") as fh:
        records, bad = checked_records(fh, context)
    notes = [f"{path} line {number}: {reason}; skipped" for number, reason in bad[:SHOWN_BAD]]
    if len(bad) > SHOWN_BAD:
        notes.append(f"{path}: {len(bad) - SHOWN_BAD} more bad line(s) skipped")
    if bad:
        notes.append(f"{len(bad)} bad line(s) of {path} skipped; `utp-env run` with the run's options moves them to "
                     "results.rejected.jsonl and runs their episodes again")
    for note in notes:
        print(f"utp-env {command}: warning: {note}", file=sys.stderr)
    return records, notes


def run_dataset(run_dir: str | Path, config: dict[str, Any], command: str) -> Any:
    """The dataset (`utp_env.dataset.Dataset`) a run folder was made on, opened (built once if
    missing) from its config.json's `db`, `profile` and `world`; a one-line ValueError naming the file
    when those are not what a run writes. `command` names the caller in the progress line."""
    from utp_env.dataset import open_dataset

    given = config.get("config")
    settings: dict[str, Any] = given if isinstance(given, dict) else {}
    bars = sys.stderr.isatty()  # progress bars on a terminal; else one line, not hundreds of \r updates
    if not bars:
        print(f"utp-env {command}: opening the database of {run_dir} for its queries (built once if missing) ...",
              file=sys.stderr, flush=True)
    db_setting, profile, world = settings.get("db"), settings.get("profile", "full"), settings.get("world", 0)
    if (not (db_setting is None or isinstance(db_setting, str)) or profile not in ("full", "mini")
            or isinstance(world, bool) or not isinstance(world, int) or world < 0):
        raise ValueError(f"{Path(run_dir) / CONFIG_FILE}: config.db must be a folder path, config.profile full or "
                         "mini and config.world a non-negative int; restore the file")
    return open_dataset(db_setting, profile=profile, seed=world, progress=bars)
