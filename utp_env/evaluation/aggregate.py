"""Aggregate many evaluations into the paper's Table 3 layout, rendered as text or markdown.

The pass rates follow TravelPlanner's evaluation/eval.py, which the paper inherits (`AGGREGATION`):

- delivery rate = delivered plans / queries;
- commonsense micro = passed checks / (queries x the paper's 10 checks): an undelivered plan fails
  all ten, a check with nothing to check passes (TravelPlanner's checks return True then);
- commonsense macro = plans passing all ten / queries;
- hard constraints count only for a delivered plan whose complete information and within sandbox
  pass (`EvaluationReport.hard_evaluated`); hard micro = passed hard checks of those plans /
  (sum over all queries of budget + the constraints each query sets); hard macro = plans with
  counted and passing hard checks / queries;
- final pass rate = plans passing every commonsense and hard check / queries.

The extra checks (`report.EXTRA_CHECKS`) are rates over delivered plans, outside every pass rate.
Metric means are over delivered plans whose metric is not None (with the default reading a
delivered plan with nothing to score has 0, as TripCraft's code scores it); every denominator comes
from the data and is reported. The caption names the readings (`EvaluationReadings`).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from utp_env.config import EvaluationReadings
from utp_env.evaluation.hard import OPTIONAL, applicable_hard_checks
from utp_env.evaluation.report import COMMONSENSE_CHECKS, EXTRA_CHECKS, HARD_CHECKS, EvaluationReport
from utp_env.query import Query

AGGREGATION = (f"pass rates as TravelPlanner evaluation/eval.py: fixed denominators (queries x "
               f"{len(COMMONSENSE_CHECKS)} commonsense checks; budget + set hard constraints per query), hard "
               "constraints counted only for delivered plans passing complete information and within sandbox")
# What a summary written before AGGREGATION (without the field) was computed with.
LEGACY_AGGREGATION = ("per-plan applicable checks, 11 commonsense checks (a summary written before the "
                      "TravelPlanner aggregation; rerun or re-evaluate to recompute)")

# What a summary written before the readings were recorded (issue 22) was computed with.
LEGACY_READINGS = ("not recorded (a summary written before issue 22: complete information basic, empty TripCraft "
                   "metrics left out, O_ord day_by_day, P_persona keyword)")

RISK_PROFILES = ("tolerant", "optimized", "averse")
RISK_LABELS = {"tolerant": "Risk_tol", "optimized": "Risk_opt", "averse": "Risk_av"}
QUALITATIVE = ("temporal_meal", "temporal_attraction", "spatial", "persona", "ordering")
QUALITATIVE_LABELS = {"temporal_meal": "T_meal", "temporal_attraction": "T_attr", "spatial": "S_spatial",
                      "persona": "P_persona", "ordering": "O_ord"}
# Higher is better for every rate and metric of the table (T_attr too: TripCraft's formula is a
# likelihood; docs/PAPER.md discusses the paper's section 5.3, which says the opposite).
HIGHER_IS_BETTER = "\u2191"
EXTRA_LABELS = {"transit_before_departure": "Extra: transit point before each departure %",
                "service_schedule": "Extra: services run that day at the stated time %",
                "overlapping_legs": "Extra: no leg leaves before the previous one arrives %",
                "timed_items": "Extra: every PoI item has a start and an end %",
                "open_hours": "Extra: visits within the venue's opening hours and days %",
                "transit_distances": "Extra: stated transit distances as the database's %"}
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
    # Defaults only so that a summary.json written before these fields still loads.
    commonsense_denominator: int = Field(default=0, description="queries x the paper's commonsense checks")
    hard_denominator: int = Field(default=0, description="sum over queries of budget + the hard constraints each sets")
    n_hard_evaluated: int = Field(default=0,
                                  description="delivered plans passing complete information and within sandbox")
    commonsense_checks: dict[str, float | None] = Field(default_factory=dict,
                                                        description="each check: passes / queries")
    hard_checks: dict[str, float | None] = Field(default_factory=dict,
                                                 description="each check: passes / queries that set it")
    extra_checks: dict[str, MetricMean] = Field(default_factory=dict,
                                                description="each extra check: pass rate over delivered plans")
    qualitative: dict[str, MetricMean] = Field(description="TripCraft metric means")
    uncertainty: dict[str, dict[str, MetricMean]] = Field(description="metric -> risk profile -> mean")


class EvaluationSummary(BaseModel):
    """Table 3 of the paper: one column per horizon present in the data, and 'all'."""

    model_config = ConfigDict(extra="forbid")

    groups: dict[str, GroupSummary] = Field(description="'3', '5', '7' (those present) and 'all'")
    aggregation: str = Field(default=LEGACY_AGGREGATION, description="How the pass rates are computed")
    readings: str = Field(default=LEGACY_READINGS,
                          description="Which reading of each inherited definition (EvaluationReadings.describe)")

    def rows(self) -> list[tuple[str, list[str]]]:
        """(label, one cell per group) for every line of the table."""
        groups = list(self.groups.values())

        def pct(v: float | None) -> str:
            return "-" if v is None else f"{100 * v:.2f}"

        def num(m: MetricMean) -> str:
            return "-" if m.mean is None else f"{m.mean:.3f}"

        up = HIGHER_IS_BETTER
        out: list[tuple[str, list[str]]] = [
            ("Plans scored", [str(g.n_queries) for g in groups]),  # one per episode: queries x trials in a run
            (f"Delivery rate % {up}", [pct(g.delivery_rate) for g in groups]),
            (f"CPR micro % {up}", [pct(g.commonsense_micro) for g in groups]),
            (f"CPR macro % {up}", [pct(g.commonsense_macro) for g in groups]),
            (f"HCPR micro % {up}", [pct(g.hard_micro) for g in groups]),
            (f"HCPR macro % {up}", [pct(g.hard_macro) for g in groups]),
            (f"Final pass rate % {up}", [pct(g.final_pass_rate) for g in groups]),
        ]
        out += [(f"{QUALITATIVE_LABELS[m]} {up}", [num(g.qualitative[m]) for g in groups]) for m in QUALITATIVE]
        for metric in UNCERTAINTY:
            for risk in RISK_PROFILES:
                cells = [pct(g.uncertainty[metric][risk].mean) for g in groups]
                out.append((f"{metric.upper()} {RISK_LABELS[risk]} % {up}", cells))
        for name in EXTRA_CHECKS:
            out.append((EXTRA_LABELS.get(name, f"Extra: {name} %"),
                        [pct(g.extra_checks[name].mean) if name in g.extra_checks else "-" for g in groups]))
        return out

    def header(self) -> list[str]:
        return [f"{k}-day" if k.isdigit() else k for k in self.groups]

    def caption(self) -> str:
        """The line above the table: how the pass rates are aggregated, which direction is better."""
        return (f"Aggregation: {self.aggregation}. Readings: {self.readings}. {HIGHER_IS_BETTER} = higher is "
                "better (every row). Extra checks are outside the pass rates.")

    def to_text(self) -> str:
        """Fixed-width text table under its caption."""
        rows = self.rows()
        first = max(len(label) for label, _ in rows)
        widths = [max(len(h), *(len(cells[i]) for _, cells in rows)) for i, h in enumerate(self.header())]
        head = "  ".join([" " * first, *(h.rjust(w) for h, w in zip(self.header(), widths, strict=True))])
        lines = [self.caption(), head]
        lines += ["  ".join([label.ljust(first), *(c.rjust(w) for c, w in zip(cells, widths, strict=True))])
                  for label, cells in rows]
        return "\n".join(lines)

    def to_markdown(self) -> str:
        """GitHub markdown table under its caption."""
        lines = [self.caption(), "","| Metric | " + " | ".join(self.header()) + " |",
                 "|---|" + "---:|" * len(self.groups)]
        lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in self.rows()]
        return "\n".join(lines)


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def _mean(values: list[float | None]) -> MetricMean:
    present = [v for v in values if v is not None]
    return MetricMean(mean=sum(present) / len(present) if present else None, n=len(present))


def _passed(report: EvaluationReport, check: str) -> bool:
    """A commonsense check counts as passed unless it failed or is missing (nothing to check passes)."""
    result = report.commonsense.get(check)
    return result is not None and result.passed is not False


def summarize_group(results: list[tuple[Query, EvaluationReport | None]]) -> GroupSummary:
    """Pass rates and metric means of one group (see the module docstring for the denominators)."""
    n = len(results)
    cs_pass = hard_pass = cs_plans = hard_plans = final = evaluated = 0
    cs_total = n * len(COMMONSENSE_CHECKS)
    hard_total = sum(applicable_hard_checks(q.local_constraint) for q, _ in results)
    per_cs = dict.fromkeys(COMMONSENSE_CHECKS, 0)
    per_hard = dict.fromkeys(HARD_CHECKS, 0)
    hard_set = {name: sum(1 for q, _ in results if name == "budget"
                          or q.local_constraint.is_set(OPTIONAL[name][0])) for name in HARD_CHECKS}
    extra: dict[str, list[float | None]] = {name: [] for name in EXTRA_CHECKS}
    delivered = [(q, r) for q, r in results if r is not None]
    for _, report in delivered:
        passed = [c for c in COMMONSENSE_CHECKS if _passed(report, c)]
        for c in passed:
            per_cs[c] += 1
        cs_pass += len(passed)
        cs_ok = len(passed) == len(COMMONSENSE_CHECKS)
        cs_plans += cs_ok
        for name in EXTRA_CHECKS:
            result = report.extra.get(name)
            extra[name].append(None if result is None else float(result.passed is not False))
        if not report.hard_evaluated:
            continue
        evaluated += 1
        hard = {name: c.passed for name, c in report.hard.items() if c.passed is not None}
        for name, ok in hard.items():
            per_hard[name] += bool(ok)
        hard_pass += sum(bool(ok) for ok in hard.values())
        hard_ok = all(hard.values())
        hard_plans += hard_ok
        final += cs_ok and hard_ok
    return GroupSummary(
        n_queries=n, n_delivered=len(delivered), delivery_rate=_rate(len(delivered), n),
        commonsense_micro=_rate(cs_pass, cs_total), commonsense_macro=_rate(cs_plans, n),
        hard_micro=_rate(hard_pass, hard_total), hard_macro=_rate(hard_plans, n), final_pass_rate=_rate(final, n),
        commonsense_denominator=cs_total, hard_denominator=hard_total, n_hard_evaluated=evaluated,
        commonsense_checks={c: _rate(k, n) for c, k in per_cs.items()},
        hard_checks={c: _rate(k, hard_set[c]) for c, k in per_hard.items()},
        extra_checks={name: _mean(values) for name, values in extra.items()},
        qualitative={m: _mean([getattr(r, m) for _, r in delivered]) for m in QUALITATIVE},
        uncertainty={m: {risk: _mean([getattr(r, m) for q, r in delivered if q.risk_profile == risk])
                         for risk in RISK_PROFILES} for m in UNCERTAINTY})


def summarize(results: Iterable[tuple[Query, EvaluationReport | None]],
              readings: EvaluationReadings | None = None) -> EvaluationSummary:
    """Summary by horizon (those present, ascending) and over all queries; `readings`: those the
    reports were computed with (the defaults when not given), named in the caption."""
    results = list(results)
    horizons = sorted({q.days for q, _ in results})
    groups = {str(h): summarize_group([(q, r) for q, r in results if q.days == h]) for h in horizons}
    groups["all"] = summarize_group(results)
    return EvaluationSummary(groups=groups, aggregation=AGGREGATION,
                             readings=(readings or EvaluationReadings()).describe())
