"""The episode reward: a weighted mean of the evaluation's metrics (weights in `configs/env.yaml`).

Metrics that do not apply to a plan (None in the `EvaluationReport`, e.g. CATS when no visited
venue has crowd data) are left out and the remaining weights renormalised, so a plan is neither
rewarded nor punished for what the query does not ask. Two pass rates join the eight metrics:
`commonsense_pass_rate` and `hard_pass_rate`, each the share of applicable checks passed. An
empty plan (nothing delivered) scores 0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from utp_env.env.episode import Episode
    from utp_env.evaluation.report import CheckResult, EvaluationReport
    from utp_env.itinerary import Plan

PASS_RATES = ("commonsense_pass_rate", "hard_pass_rate")


def pass_rate(checks: dict[str, CheckResult]) -> float | None:
    """Share of applicable checks (passed is not None) that passed; None when none applies."""
    applicable = [c.passed for c in checks.values() if c.passed is not None]
    return sum(applicable) / len(applicable) if applicable else None


def metric_values(report: EvaluationReport) -> dict[str, float | None]:
    """The rewardable numbers of a report: the two pass rates and the eight metrics."""
    from utp_env.evaluation.report import METRICS

    values: dict[str, float | None] = {"commonsense_pass_rate": pass_rate(report.commonsense),
                                       "hard_pass_rate": pass_rate(report.hard)}
    values.update({m: getattr(report, m) for m in METRICS})
    return values


def weighted_reward(values: dict[str, float | None], weights: dict[str, float]) -> float:
    """Σ w·m / Σ w over the metrics with a value and a positive weight; 0 when none has both."""
    num = den = 0.0
    for name, weight in weights.items():
        value = values.get(name)
        if value is None or weight <= 0:
            continue
        num += weight * float(value)
        den += weight
    return num / den if den > 0 else 0.0


def evaluate_plan(plan: Plan, ep: Episode) -> EvaluationReport:
    """Evaluate `plan` for the episode's query with `utp_env.evaluation.evaluate` (the only evaluator),
    against the dataset's reference plan of that query when there is one (for the Ordering score)."""
    from utp_env.env.sources import reference_plan
    from utp_env.evaluation import evaluate

    return evaluate(plan, ep.query, ep.db, reference=reference_plan(ep.db, ep.query.query_id))


def plan_reward(plan: Plan, ep: Episode, weights: dict[str, float]) -> tuple[float, EvaluationReport]:
    """(reward, report) of a final plan; an empty plan (nothing delivered) is evaluated but scores 0."""
    report = evaluate_plan(plan, ep)
    if not plan.days:
        return 0.0, report
    return weighted_reward(metric_values(report), weights), report


def report_text(report: EvaluationReport) -> str:
    """A short account of a report for the agent: failed checks with reasons, then the metrics."""
    lines: list[str] = []
    for group, checks in (("commonsense", report.commonsense), ("hard", report.hard)):
        failed = [(name, c.reason) for name, c in checks.items() if c.passed is False]
        applicable = sum(c.passed is not None for c in checks.values())
        lines.append(f"{group} checks: {applicable - len(failed)}/{applicable} passed")
        lines.extend(f"  FAILED {name}: {reason or 'no reason given'}" for name, reason in failed)
    values = metric_values(report)
    lines.append("metrics: " + ", ".join(f"{k}={_fmt(v)}" for k, v in values.items() if k not in PASS_RATES))
    lines.append(f"cost: {report.cost.total:.0f} INR")
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{float(value):.3f}"
