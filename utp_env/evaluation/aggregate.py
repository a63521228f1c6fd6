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

The counting is done once, by `SummaryAccumulator` (one (query, report) pair at a time, keeping
only counts and sums): `summarize` and `summarize_group` fold their pairs through it, and
`utp-env evaluate` streams its plans file through it, so scoring a file of any size holds one
plan at a time.
"""

from __future__ import annotations

from collections import defaultdict
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


class _Group:
    """The counts and sums of one column of Table 3, one (query, report) at a time (module docstring)."""

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
        """The summary of everything added (what `summarize` gives for the same pairs)."""
        groups = {str(h): self._groups[h].result() for h in sorted(self._groups)}
        groups["all"] = self._all.result()
        return EvaluationSummary(groups=groups, aggregation=AGGREGATION,
                                 readings=(readings or EvaluationReadings()).describe())


def summarize_group(results: Iterable[tuple[Query, EvaluationReport | None]]) -> GroupSummary:
    """Pass rates and metric means of one group (see the module docstring for the denominators)."""
    group = _Group()
    for query, report in results:
        group.add(query, report)
    return group.result()


def summarize(results: Iterable[tuple[Query, EvaluationReport | None]],
              readings: EvaluationReadings | None = None) -> EvaluationSummary:
    """Summary by horizon (those present, ascending) and over all queries; `readings`: those the
    reports were computed with (the defaults when not given), named in the caption. Streams:
    memory is independent of how many pairs (`SummaryAccumulator`)."""
    accumulator = SummaryAccumulator()
    for query, report in results:
        accumulator.add(query, report)
    return accumulator.summary(readings)
