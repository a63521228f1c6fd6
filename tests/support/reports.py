"""`EvaluationReport`s built by hand for the aggregation, interval and comparison tests."""

from __future__ import annotations

from utp_env.evaluation.report import COMMONSENSE_CHECKS, HARD_CHECKS, CheckResult, EvaluationReport


def report(cs_none: tuple[str, ...] = (), cs_fail: tuple[str, ...] = (), hard_set: tuple[str, ...] = ("budget",),
           hard_fail: tuple[str, ...] = (), **metrics: float) -> EvaluationReport:
    cs = {c: CheckResult(passed=None if c in cs_none else c not in cs_fail) for c in COMMONSENSE_CHECKS}
    hard = {c: CheckResult(passed=(c not in hard_fail) if c in hard_set else None) for c in HARD_CHECKS}
    return EvaluationReport(query_id="x", commonsense=cs, hard=hard, **metrics)
