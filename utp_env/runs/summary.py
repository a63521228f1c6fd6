"""A run's summary: the paper's Table 3 (via `utp_env.evaluation.aggregate`), Monte Carlo hold
rates, pass^k over trials, per-query spread, and how episodes ended. Shared by `utp-env run`,
`utp-env show` and the plots."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from utp_env.env.episode import TerminationReason
from utp_env.evaluation.aggregate import EvaluationSummary, summarize
from utp_env.evaluation.report import EvaluationReport
from utp_env.tools.atomic import write_text_atomic

SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"


class QuerySpread(BaseModel):
    """How one query fared over its trials."""

    model_config = ConfigDict(extra="forbid")

    query_id: str
    trials: int
    passes: int
    final_score_min: float | None
    final_score_max: float | None


class RunSummary(BaseModel):
    """Everything `summary.json` holds."""

    model_config = ConfigDict(extra="forbid")

    agent: str
    split: str
    episodes: int
    trials: int
    evaluation: EvaluationSummary
    pass_hat_k: dict[str, float | None] = Field(description="pass^k for k = 1..trials (tau-bench definition)")
    hold_rate: dict[str, float | None] = Field(description="Mean Monte Carlo hold rate by horizon and 'all'")
    termination: dict[str, int] = Field(description="Episodes by `TerminationReason` value")
    errors: list[dict[str, str]] = Field(description="query_id, trial and error of episodes not submitted")
    usage: dict[str, float | None]
    mean_duration_s: float | None
    per_query: list[QuerySpread]


def pass_hat_k(passes_per_query: list[tuple[int, int]], k: int) -> float | None:
    """pass^k = mean over queries of C(c, k) / C(n, k): the chance that k i.i.d. trials all pass."""
    eligible = [(n, c) for n, c in passes_per_query if n >= k]
    if not eligible:
        return None
    return sum(math.comb(c, k) / math.comb(n, k) for n, c in eligible) / len(eligible)


def _score(record: dict[str, Any]) -> float | None:
    """The mean of an episode's BAS, CATS and TDAS that apply (its `metrics`); None when none does."""
    metrics = record.get("metrics") or {}
    values = [metrics.get(m) for m in ("bas", "cats", "tdas")]
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _has_days(plan: Any) -> bool:
    """Whether a record's plan (the Plan model's JSON, or the paper's list of days) has a day."""
    if isinstance(plan, dict):
        return bool(plan.get("days"))
    return bool(plan)


def summarize_run(records: list[dict[str, Any]], queries: dict[str, Any], agent: str, split: str,
                  trials: int) -> RunSummary:
    """The RunSummary of a run's records (in canonical order) with their queries by id."""
    pairs = []
    for record in records:
        # A plan with no days delivered nothing: counted as undelivered, as `utp-env evaluate`
        # counts it (its report would pass every check that has nothing to check).
        report = record.get("report") if _has_days(record.get("plan")) else None
        pairs.append((queries[record["query_id"]],
                      EvaluationReport.model_validate(report) if report is not None else None))
    by_query: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        by_query[record["query_id"]].append(record)
    counts = [(len(rs), sum(bool(r.get("final_pass")) for r in rs)) for rs in by_query.values()]
    holds: dict[str, list[float]] = defaultdict(list)
    for record in records:
        robustness = record.get("robustness")
        if robustness is not None and robustness.get("hold_rate") is not None:
            holds[str(queries[record["query_id"]].days)].append(robustness["hold_rate"])
            holds["all"].append(robustness["hold_rate"])
    usage_keys = ("tool_calls", "model_calls", "input_tokens", "output_tokens", "cost_usd")
    usage: dict[str, float | None] = {}
    for key in usage_keys:
        values = [r["usage"][key] for r in records if r.get("usage") and r["usage"].get(key) is not None]
        usage[key] = float(sum(values)) if values else None
    durations = [r["duration_s"] for r in records if r.get("duration_s") is not None]
    per_query = []
    for qid, rs in by_query.items():
        scores = [s for s in (_score(r) for r in rs) if s is not None]
        per_query.append(QuerySpread(query_id=qid, trials=len(rs), passes=sum(bool(r.get("final_pass")) for r in rs),
                                     final_score_min=min(scores) if scores else None,
                                     final_score_max=max(scores) if scores else None))
    return RunSummary(
        agent=agent, split=split, episodes=len(records), trials=trials,
        evaluation=summarize(pairs),
        pass_hat_k={str(k): pass_hat_k(counts, k) for k in range(1, trials + 1)},
        hold_rate={key: sum(v) / len(v) for key, v in sorted(holds.items())},
        termination=dict(sorted(Counter(str(r.get("termination_reason")) for r in records).items())),
        errors=[{"query_id": r["query_id"], "trial": str(r["trial"]), "reason": str(r.get("error"))}
                for r in records if r.get("termination_reason") != TerminationReason.SUBMITTED],
        usage=usage,
        mean_duration_s=sum(durations) / len(durations) if durations else None,
        per_query=per_query,
    )


def summary_notes(summary: RunSummary) -> list[str]:
    """The lines under Table 3, shared by the terminal and the HTML report: robustness, pass^k, endings."""
    notes = []
    if summary.hold_rate:
        notes.append("Monte Carlo hold rate: " + ", ".join(
            f"{k}{'-day' if k.isdigit() else ''} {v:.1%}" for k, v in summary.hold_rate.items() if v is not None))
    if summary.trials > 1:
        notes.append("pass^k: " + ", ".join(f"k={k} {v:.1%}" for k, v in summary.pass_hat_k.items() if v is not None))
    notes.append("endings: " + ", ".join(f"{k} {v}" for k, v in summary.termination.items()))
    return notes


def render_text(summary: RunSummary) -> str:
    """The summary as the terminal shows it: Table 3, then robustness, pass^k and endings."""
    lines = [f"agent {summary.agent} | split {summary.split} | {summary.episodes} episodes", "",
             summary.evaluation.to_text(), "", *summary_notes(summary)]
    for error in summary.errors[:5]:
        lines.append(f"  {error['query_id']}#{error['trial']}: {error['reason'][:160]}")
    if len(summary.errors) > 5:
        lines.append(f"  ... {len(summary.errors) - 5} more in summary.json")
    return "\n".join(lines)


def render_markdown(summary: RunSummary) -> str:
    """The summary as `summary.md`: Table 3, the hold rates and the endings as markdown."""
    parts = [f"# Run summary: {summary.agent} on {summary.split}", "",
             f"{summary.episodes} episodes, {summary.trials} trial(s) per query.", "",
             summary.evaluation.to_markdown(), ""]
    if summary.hold_rate:
        parts += ["| Monte Carlo hold rate | " + " | ".join(summary.hold_rate) + " |",
                  "|---|" + "---:|" * len(summary.hold_rate),
                  "| | " + " | ".join(f"{v:.1%}" for v in summary.hold_rate.values()) + " |", ""]
    parts.append("Endings: " + ", ".join(f"{k} {v}" for k, v in summary.termination.items()))
    return "\n".join(parts) + "\n"


def write_summary(run_dir: Path, ctx: Any, records: list[dict[str, Any]], progress: bool = False) -> RunSummary:
    """Write summary.json, summary.md and the plots of a finished run (`progress`: say so first)."""
    config = ctx.config
    summary = summarize_run(records, ctx.queries, config.agent, config.split, config.trials)
    write_text_atomic(run_dir / SUMMARY_JSON, summary.model_dump_json(indent=2) + "\n")
    write_text_atomic(run_dir / SUMMARY_MD, render_markdown(summary))
    from utp_env.runs.plots import write_plots

    write_plots(run_dir, summary, records, ctx, progress=progress)
    return summary


def all_failed(summary: RunSummary) -> str | None:
    """When no episode of a run delivered a plan and some ended in an error: a one-line message
    with the first error (`utp-env run` then exits non-zero); else None."""
    if not summary.episodes or summary.termination.get(TerminationReason.SUBMITTED.value):
        return None
    if not summary.errors:
        return None
    first = summary.errors[0]
    reason = " ".join(first["reason"].split())[:300]
    return (f"every one of the {summary.episodes} episodes failed; the first, {first['query_id']}#{first['trial']}: "
            f"{reason} (all errors in summary.json)")


def load_summary(run_dir: str | Path) -> RunSummary:
    """Read a run folder's summary.json, with a clear error when it is not a finished run."""
    path = Path(run_dir) / SUMMARY_JSON
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: is {run_dir} a finished run folder? "
                                "(rerun `utp-env run --out` on it to finish it)")
    return RunSummary.model_validate(json.loads(path.read_text(encoding="utf-8")))
