"""Table 3 of many evaluations, added one at a time: memory independent of how many.

`SummaryAccumulator.add(query, report)` keeps only counts and sums; `summary()` gives the
`EvaluationSummary` that `utp_env.evaluation.aggregate.summarize` gives for the same (query,
report) pairs in the same order: the same denominators and rates (see that module's docstring),
and metric means equal up to floating-point summation order (tests/test_evaluate_stream.py
checks both on real reports). `utp-env evaluate` streams its plans file through it, so scoring a
file of any size holds one plan at a time.
"""

from __future__ import annotations

from collections import defaultdict

from utp_env.config import EvaluationReadings
from utp_env.evaluation.aggregate import (
    AGGREGATION,
    QUALITATIVE,
    RISK_PROFILES,
    UNCERTAINTY,
    EvaluationSummary,
    GroupSummary,
    MetricMean,
)
from utp_env.evaluation.hard import OPTIONAL, applicable_hard_checks
from utp_env.evaluation.report import COMMONSENSE_CHECKS, EXTRA_CHECKS, HARD_CHECKS, EvaluationReport
from utp_env.query import Query


class _Mean:
    """A running mean of the values that are not None."""

    __slots__ = ("n", "total")

    def __init__(self) -> None:
        self.total = 0.0
        self.n = 0

    def add(self, value: float | None) -> None:
        if value is not None:
            self.total += value
            self.n += 1

    def result(self) -> MetricMean:
        return MetricMean(mean=self.total / self.n if self.n else None, n=self.n)


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


class _Group:
    """The counts and sums of one column of Table 3 (`aggregate.summarize_group`, incrementally)."""

    def __init__(self) -> None:
        self.n = self.delivered = self.cs_pass = self.cs_plans = self.hard_pass = self.hard_plans = 0
        self.final = self.evaluated = self.hard_total = 0
        self.per_cs = dict.fromkeys(COMMONSENSE_CHECKS, 0)
        self.per_hard = dict.fromkeys(HARD_CHECKS, 0)
        self.hard_set = dict.fromkeys(HARD_CHECKS, 0)
        self.extra = {name: _Mean() for name in EXTRA_CHECKS}
        self.qualitative = {m: _Mean() for m in QUALITATIVE}
        self.uncertainty = {m: {risk: _Mean() for risk in RISK_PROFILES} for m in UNCERTAINTY}

    def add(self, query: Query, report: EvaluationReport | None) -> None:
        self.n += 1
        self.hard_total += applicable_hard_checks(query.local_constraint)
        for name in HARD_CHECKS:
            self.hard_set[name] += name == "budget" or query.local_constraint.is_set(OPTIONAL[name][0])
        if report is None:
            return
        self.delivered += 1
        passed = [c for c in COMMONSENSE_CHECKS
                  if (r := report.commonsense.get(c)) is not None and r.passed is not False]
        for c in passed:
            self.per_cs[c] += 1
        self.cs_pass += len(passed)
        cs_ok = len(passed) == len(COMMONSENSE_CHECKS)
        self.cs_plans += cs_ok
        for name in EXTRA_CHECKS:
            result = report.extra.get(name)
            self.extra[name].add(None if result is None else float(result.passed is not False))
        for m in QUALITATIVE:
            self.qualitative[m].add(getattr(report, m))
        if query.risk_profile in RISK_PROFILES:
            for m in UNCERTAINTY:
                self.uncertainty[m][query.risk_profile].add(getattr(report, m))
        if not report.hard_evaluated:
            return
        self.evaluated += 1
        hard = {name: c.passed for name, c in report.hard.items() if c.passed is not None}
        for name, ok in hard.items():
            if name in self.per_hard:
                self.per_hard[name] += bool(ok)
        self.hard_pass += sum(bool(ok) for ok in hard.values())
        hard_ok = all(hard.values())
        self.hard_plans += hard_ok
        self.final += cs_ok and hard_ok

    def result(self) -> GroupSummary:
        n = self.n
        cs_total = n * len(COMMONSENSE_CHECKS)
        return GroupSummary(
            n_queries=n, n_delivered=self.delivered, delivery_rate=_rate(self.delivered, n),
            commonsense_micro=_rate(self.cs_pass, cs_total), commonsense_macro=_rate(self.cs_plans, n),
            hard_micro=_rate(self.hard_pass, self.hard_total), hard_macro=_rate(self.hard_plans, n),
            final_pass_rate=_rate(self.final, n), commonsense_denominator=cs_total,
            hard_denominator=self.hard_total, n_hard_evaluated=self.evaluated,
            commonsense_checks={c: _rate(k, n) for c, k in self.per_cs.items()},
            hard_checks={c: _rate(k, self.hard_set[c]) for c, k in self.per_hard.items()},
            extra_checks={name: mean.result() for name, mean in self.extra.items()},
            qualitative={m: mean.result() for m, mean in self.qualitative.items()},
            uncertainty={m: {risk: mean.result() for risk, mean in by_risk.items()}
                         for m, by_risk in self.uncertainty.items()})


class SummaryAccumulator:
    """Table 3 by horizon and over all, one (query, report or None for undelivered) at a time."""

    def __init__(self) -> None:
        self._groups: dict[int, _Group] = defaultdict(_Group)
        self._all = _Group()

    def add(self, query: Query, report: EvaluationReport | None) -> None:
        """Count one plan of `query` (None: nothing delivered)."""
        self._groups[query.days].add(query, report)
        self._all.add(query, report)

    @property
    def count(self) -> int:
        """How many plans were added."""
        return self._all.n

    def summary(self, readings: EvaluationReadings | None = None) -> EvaluationSummary:
        """The summary of everything added (`aggregate.summarize` of the same pairs)."""
        groups = {str(h): self._groups[h].result() for h in sorted(self._groups)}
        groups["all"] = self._all.result()
        return EvaluationSummary(groups=groups, aggregation=AGGREGATION,
                                 readings=(readings or EvaluationReadings()).describe())
