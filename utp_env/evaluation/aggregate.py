"""Aggregate many evaluations into the paper's Table 3 layout, rendered as text or markdown.

Pass rates count every query: an undelivered plan fails every check (commonsense: all of them;
hard: budget plus those its query sets). Micro rates divide passed checks by applicable checks,
macro rates count plans passing all applicable checks, the final pass rate counts plans passing
everything. Metric means are over delivered plans whose metric is not None; every denominator
comes from the data and is reported.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from utp_env.evaluation.hard import applicable_hard_checks
from utp_env.evaluation.report import COMMONSENSE_CHECKS, EvaluationReport
from utp_env.query import Query

RISK_PROFILES = ("tolerant", "optimized", "averse")
RISK_LABELS = {"tolerant": "Risk_tol", "optimized": "Risk_opt", "averse": "Risk_av"}
QUALITATIVE = ("temporal_meal", "temporal_attraction", "spatial", "persona", "ordering")
QUALITATIVE_LABELS = {"temporal_meal": "T_meal", "temporal_attraction": "T_attr", "spatial": "S_spatial",
                      "persona": "P_persona", "ordering": "O_ord"}
UNCERTAINTY = ("bas", "cats", "tdas")


class MetricMean(BaseModel):
    """Mean of a metric and how many plans it averages (None when no plan had a value)."""

    model_config = ConfigDict(extra="forbid")

    mean: float | None = None
    n: int = 0


class GroupSummary(BaseModel):
    """Pass rates and metric means of one group of queries (one horizon, or all)."""

    model_config = ConfigDict(extra="forbid")

    n_queries: int
    n_delivered: int
    delivery_rate: float | None
    commonsense_micro: float | None
    commonsense_macro: float | None
    hard_micro: float | None
    hard_macro: float | None
    final_pass_rate: float | None
    qualitative: dict[str, MetricMean] = Field(description="TripCraft metric means")
    uncertainty: dict[str, dict[str, MetricMean]] = Field(description="metric -> risk profile -> mean")


class EvaluationSummary(BaseModel):
    """Table 3 of the paper: one column per horizon present in the data, and 'all'."""

    model_config = ConfigDict(extra="forbid")

    groups: dict[str, GroupSummary] = Field(description="'3', '5', '7' (those present) and 'all'")

    def rows(self) -> list[tuple[str, list[str]]]:
        """(label, one cell per group) for every line of the table."""
        groups = list(self.groups.values())

        def pct(v: float | None) -> str:
            return "-" if v is None else f"{100 * v:.2f}"

        def num(m: MetricMean) -> str:
            return "-" if m.mean is None else f"{m.mean:.3f}"

        out: list[tuple[str, list[str]]] = [
            ("Queries", [str(g.n_queries) for g in groups]),
            ("Delivery rate %", [pct(g.delivery_rate) for g in groups]),
            ("CPR micro %", [pct(g.commonsense_micro) for g in groups]),
            ("CPR macro %", [pct(g.commonsense_macro) for g in groups]),
            ("HCPR micro %", [pct(g.hard_micro) for g in groups]),
            ("HCPR macro %", [pct(g.hard_macro) for g in groups]),
            ("Final pass rate %", [pct(g.final_pass_rate) for g in groups]),
        ]
        out += [(QUALITATIVE_LABELS[m], [num(g.qualitative[m]) for g in groups]) for m in QUALITATIVE]
        for metric in UNCERTAINTY:
            for risk in RISK_PROFILES:
                cells = [pct(g.uncertainty[metric][risk].mean) for g in groups]
                out.append((f"{metric.upper()} {RISK_LABELS[risk]} %", cells))
        return out

    def header(self) -> list[str]:
        return [f"{k}-day" if k.isdigit() else k for k in self.groups]

    def to_text(self) -> str:
        """Fixed-width text table."""
        rows = self.rows()
        first = max(len(label) for label, _ in rows)
        widths = [max(len(h), *(len(cells[i]) for _, cells in rows)) for i, h in enumerate(self.header())]
        lines = ["  ".join([" " * first, *(h.rjust(w) for h, w in zip(self.header(), widths, strict=True))])]
        lines += ["  ".join([label.ljust(first), *(c.rjust(w) for c, w in zip(cells, widths, strict=True))])
                  for label, cells in rows]
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """GitHub markdown table."""
        lines = ["| Metric | " + " | ".join(self.header()) + " |",
                 "|---|" + "---:|" * len(self.groups)]
        lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in self.rows()]
        return "\n".join(lines)


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def _mean(values: list[float | None]) -> MetricMean:
    present = [v for v in values if v is not None]
    return MetricMean(mean=sum(present) / len(present) if present else None, n=len(present))


def summarize_group(results: list[tuple[Query, EvaluationReport | None]]) -> GroupSummary:
    """Pass rates and metric means of one group (see the module docstring for the denominators)."""
    cs_pass = cs_total = hard_pass = hard_total = cs_plans = hard_plans = final = 0
    delivered = [(q, r) for q, r in results if r is not None]
    for query, report in results:
        if report is None:
            cs_total += len(COMMONSENSE_CHECKS)
            hard_total += applicable_hard_checks(query.local_constraint)
            continue
        cs = [c.passed for c in report.commonsense.values() if c.passed is not None]
        hard = [c.passed for c in report.hard.values() if c.passed is not None]
        cs_pass, cs_total = cs_pass + sum(cs), cs_total + len(cs)
        hard_pass, hard_total = hard_pass + sum(hard), hard_total + len(hard)
        cs_plans += all(cs)
        hard_plans += all(hard)
        final += all(cs) and all(hard)
    n = len(results)
    return GroupSummary(
        n_queries=n, n_delivered=len(delivered), delivery_rate=_rate(len(delivered), n),
        commonsense_micro=_rate(cs_pass, cs_total), commonsense_macro=_rate(cs_plans, n),
        hard_micro=_rate(hard_pass, hard_total), hard_macro=_rate(hard_plans, n), final_pass_rate=_rate(final, n),
        qualitative={m: _mean([getattr(r, m) for _, r in delivered]) for m in QUALITATIVE},
        uncertainty={m: {risk: _mean([getattr(r, m) for q, r in delivered if q.risk_profile == risk])
                         for risk in RISK_PROFILES} for m in UNCERTAINTY})


def summarize(results: Iterable[tuple[Query, EvaluationReport | None]]) -> EvaluationSummary:
    """Summary by horizon (those present, ascending) and over all queries."""
    results = list(results)
    horizons = sorted({q.days for q, _ in results})
    groups = {str(h): summarize_group([(q, r) for q, r in results if q.days == h]) for h in horizons}
    groups["all"] = summarize_group(results)
    return EvaluationSummary(groups=groups)
