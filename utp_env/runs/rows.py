"""The rows a run is measured by, episode by episode: Table 3's cells, the reward, the Monte Carlo hold
rate and (closed loop) the realised outcome. `utp-env compare` (utp_env/runs/compare.py) and the
noise floor of `--trials` (utp_env/runs/noise.py) read every row through `episode_cells`, so a row
means the same in both and Table 3's rows are exactly `utp_env.evaluation.aggregate.plan_cells`.
Each row is a ratio of two sums over episodes: (value, 1) per episode for the episode rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from utp_env.query import Query


def _number(value: Any) -> float | None:
    return None if value is None or isinstance(value, bool) else float(value)


def replan_block(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """A closed-loop record's `replan` block; for an episode without one (no plan delivered, or it failed
    before the trip) a realised score of 0 and nothing kept, as an undelivered plan fails every check of
    Table 3. The run summary's realised table reads it too (`utp_env.runs.summary.summarize_replan`)."""
    return record.get("replan") or {"realised_score": 0.0, "items_kept": 0.0}


def _replan_value(key: str) -> Callable[[Mapping[str, Any]], float | None]:
    def value(record: Mapping[str, Any]) -> float | None:
        return _number(replan_block(record).get(key))
    return value


EPISODE_ROWS: tuple[tuple[str, str, str, Callable[[Mapping[str, Any]], float | None]], ...] = (
    ("Reward (of the plan, UTP-v0)", "reward", "num", lambda r: _number(r.get("plan_reward", r.get("reward")))),
    ("MC hold rate %", "hold_rate", "pct", lambda r: _number((r.get("robustness") or {}).get("hold_rate"))),
)
"""(label, key, kind, value of a record or None) of the rows every run has besides Table 3."""
REPLAN_ROWS: tuple[tuple[str, str, str, Callable[[Mapping[str, Any]], float | None]], ...] = (
    ("Realised score", "replan.realised_score", "num", _replan_value("realised_score")),
    ("Items kept (share) %", "replan.items_kept", "pct", _replan_value("items_kept")),
    ("Rebookings", "replan.rebookings", "num", _replan_value("rebookings")),
    ("Late minutes", "replan.late_minutes", "num", _replan_value("late_minutes")),
    ("Extra cost (INR)", "replan.extra_cost", "num", _replan_value("extra_cost")),
)


def row_specs(replan: bool) -> list[tuple[str, str, str]]:
    """(label, key, kind) of every compared row: Table 3's rows, the reward, the realised rows."""
    from utp_env.evaluation.aggregate import EvaluationSummary

    rows = [(label, key, kind) for label, key, kind in EvaluationSummary(groups={}).row_cells() if key is not None]
    rows += [(label, key, kind) for label, key, kind, _ in EPISODE_ROWS]
    if replan:
        rows += [(label, key, kind) for label, key, kind, _ in REPLAN_ROWS]
    return rows


def episode_cells(record: Mapping[str, Any], query: Query, replan: bool) -> dict[str, tuple[float, float]]:
    """What one episode adds to every compared row: Table 3's `plan_cells` of its counted report (an
    empty or missing plan is not delivered), then its reward and realised values (value over 1)."""
    from utp_env.evaluation.aggregate import counted_report, plan_cells
    from utp_env.evaluation.report import EvaluationReport

    raw = record.get("report")
    report = counted_report(record.get("plan"), None if raw is None else EvaluationReport.model_validate(raw))
    out = dict(plan_cells(query, report))
    for _, key, _, value in EPISODE_ROWS + (REPLAN_ROWS if replan else ()):
        got = value(record)
        if got is not None:
            out[key] = (got, 1.0)
    return out
