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
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from utp_env.config import EvaluationReadings
from utp_env.evaluation.hard import OPTIONAL, applicable_hard_checks
from utp_env.evaluation.intervals import CellInterval
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
    intervals: dict[str, dict[str, CellInterval]] = Field(
        default_factory=dict, description="column -> cell key (aggregate.CELLS) -> its 95% interval and n")
    interval_method: str | None = Field(default=None, description="How the intervals are computed "
                                                                  "(intervals.METHOD); None: not computed")

    def row_cells(self) -> list[tuple[str, str | None, str]]:
        """(label, cell key of `CELLS` or None for the count row, kind 'count'|'pct'|'num') of every
        line of the table, in order."""
        up = HIGHER_IS_BETTER
        out: list[tuple[str, str | None, str]] = [
            ("Plans scored", None, "count"),  # one per episode: queries x trials in a run
            (f"Delivery rate % {up}", "delivery_rate", "pct"),
            (f"CPR micro % {up}", "commonsense_micro", "pct"),
            (f"CPR macro % {up}", "commonsense_macro", "pct"),
            (f"HCPR micro % {up}", "hard_micro", "pct"),
            (f"HCPR macro % {up}", "hard_macro", "pct"),
            (f"Final pass rate % {up}", "final_pass_rate", "pct"),
        ]
        out += [(f"{QUALITATIVE_LABELS[m]} {up}", f"qualitative.{m}", "num") for m in QUALITATIVE]
        out += [(f"{metric.upper()} {RISK_LABELS[risk]} % {up}", f"uncertainty.{metric}.{risk}", "pct")
                for metric in UNCERTAINTY for risk in RISK_PROFILES]
        out += [(EXTRA_LABELS.get(name, f"Extra: {name} %"), f"extra_checks.{name}", "pct") for name in EXTRA_CHECKS]
        return out

    def value(self, column: str, key: str) -> float | None:
        """The value of cell `key` (of `CELLS`) in `column`."""
        group = self.groups[column]
        family, _, rest = key.partition(".")
        if not rest:
            value: float | None = getattr(group, key)
            return value
        table = getattr(group, family)
        if family == "uncertainty":
            metric, risk = rest.split(".")
            mean: float | None = table[metric][risk].mean
            return mean
        entry = table.get(rest)
        found: float | None = entry.mean if isinstance(entry, MetricMean) else entry
        return found

    @property
    def has_intervals(self) -> bool:
        """Whether the summary carries intervals (a summary written before them does not)."""
        return bool(self.intervals)

    def rows(self, ci: bool = True) -> list[tuple[str, list[str]]]:
        """(label, one cell per group) for every line of the table; with `ci` (and intervals in the
        summary) each cell is `value [low, high] n=N`, a cell with nothing to count `n/a`."""
        show_ci = ci and self.has_intervals
        out: list[tuple[str, list[str]]] = []
        for label, key, kind in self.row_cells():
            cells = []
            for column, group in self.groups.items():
                if key is None:
                    cells.append(str(group.n_queries))
                    continue
                value = self.value(column, key)
                interval = self.intervals.get(column, {}).get(key) if show_ci else None
                cells.append(format_cell(value, kind, interval, show_ci))
            out.append((label, cells))
        return out

    def header(self) -> list[str]:
        return [f"{k}-day" if k.isdigit() else k for k in self.groups]

    def caption(self, ci: bool = True) -> str:
        """The line above the table: how the pass rates are aggregated, which direction is better,
        and (with `ci`) how the intervals are computed."""
        text = (f"Aggregation: {self.aggregation}. Readings: {self.readings}. {HIGHER_IS_BETTER} = higher is "
                "better (every row). Extra checks are outside the pass rates; n/a: nothing to count.")
        if ci:
            text += (f" Cells: value [{self.interval_method}]." if self.has_intervals else
                     " Intervals: not recorded (a summary written before they were; `utp-env run` on the folder "
                     "writes them).")
        return text

    def to_text(self, ci: bool = True) -> str:
        """Fixed-width text table under its caption (`ci`: with intervals and n, else the paper's layout)."""
        rows = self.rows(ci)
        first = max(len(label) for label, _ in rows)
        widths = [max(len(h), *(len(cells[i]) for _, cells in rows)) for i, h in enumerate(self.header())]
        head = "  ".join([" " * first, *(h.rjust(w) for h, w in zip(self.header(), widths, strict=True))])
        lines = [self.caption(ci), head]
        lines += ["  ".join([label.ljust(first), *(c.rjust(w) for c, w in zip(cells, widths, strict=True))])
                  for label, cells in rows]
        return "\n".join(lines)

    def to_markdown(self, ci: bool = True) -> str:
        """GitHub markdown table under its caption (`ci` as `to_text`)."""
        lines = [self.caption(ci), "", "| Metric | " + " | ".join(self.header()) + " |",
                 "|---|" + "---:|" * len(self.groups)]
        lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in self.rows(ci)]
        return "\n".join(lines)


def format_cell(value: float | None, kind: str, interval: CellInterval | None = None, ci: bool = False) -> str:
    """One cell of the table: a percentage with two decimals ('pct') or a number with three ('num');
    with `ci`, its interval with one decimal fewer ('[92.1, 98.0]') and `n=`. A cell with nothing to
    count is `n/a` (never a pass)."""
    if value is None:
        return "n/a" if ci else "-"
    scale, digits = (100.0, 2) if kind == "pct" else (1.0, 3)
    text = f"{scale * value:.{digits}f}"
    if not ci or interval is None:
        return text
    if interval.low is None or interval.high is None:
        return f"{text} [-] n={interval.n}"
    inner = digits - 1 if kind == "pct" else digits
    return f"{text} [{scale * interval.low:.{inner}f}, {scale * interval.high:.{inner}f}] n={interval.n}"


def _rate(num: float, den: float) -> float | None:
    return num / den if den else None


RATE_CELLS = ("delivery_rate", "commonsense_micro", "commonsense_macro", "hard_micro", "hard_macro",
              "final_pass_rate")
"""Table 3's pass rates (`GroupSummary` fields of the same names)."""
CELLS: tuple[str, ...] = (
    *RATE_CELLS,
    *(f"commonsense_checks.{c}" for c in COMMONSENSE_CHECKS),
    *(f"hard_checks.{c}" for c in HARD_CHECKS),
    *(f"extra_checks.{name}" for name in EXTRA_CHECKS),
    *(f"qualitative.{m}" for m in QUALITATIVE),
    *(f"uncertainty.{m}.{risk}" for m in UNCERTAINTY for risk in RISK_PROFILES),
)
"""Every cell of a Table 3 column, each a ratio of two sums over the plans (`plan_cells`)."""
CELL_INDEX = {key: i for i, key in enumerate(CELLS)}
RATE_KEYS = frozenset(key for key in CELLS if not key.startswith(("qualitative.", "uncertainty.")))
"""The cells that are rates (a share of checks or plans passed: each query's share lies in [0, 1]);
the others are metric means. `utp_env.evaluation.intervals` gives rates the Wilson interval."""


def counted_report(plan: Any, report: EvaluationReport | None) -> EvaluationReport | None:
    """The report a plan counts with in Table 3: None (not delivered) when there is no plan or it has
    no day, whatever its report says (the evaluator passes every check that has nothing to check, so
    an empty plan's report would pass them). `plan` is a `Plan`, its JSON, the paper's list of days,
    or None. Every path that counts plans (run summaries, the Inspect task) reads it here."""
    if plan is None or report is None:
        return None
    days = plan.get("days") if isinstance(plan, dict) else getattr(plan, "days", plan)
    return report if days else None


def plan_cells(query: Query, report: EvaluationReport | None) -> dict[str, tuple[float, float]]:
    """What one plan adds to each cell of its Table 3 column: (numerator, denominator), by cell
    key of `CELLS` (a cell it adds nothing to is absent). The one definition of the counting of
    the module docstring: a column's rate is the sum of its plans' numerators over the sum of their
    denominators. `report` None: not delivered (it adds to the denominators only)."""
    lc = query.local_constraint
    out: dict[str, tuple[float, float]] = {
        "delivery_rate": (float(report is not None), 1.0),
        "commonsense_micro": (0.0, float(len(COMMONSENSE_CHECKS))),
        "commonsense_macro": (0.0, 1.0), "hard_micro": (0.0, float(applicable_hard_checks(lc))),
        "hard_macro": (0.0, 1.0), "final_pass_rate": (0.0, 1.0),
    }
    hard_set = {name: name == "budget" or lc.is_set(OPTIONAL[name][0]) for name in HARD_CHECKS}
    for c in COMMONSENSE_CHECKS:
        out[f"commonsense_checks.{c}"] = (0.0, 1.0)
    for name in HARD_CHECKS:
        if hard_set[name]:
            out[f"hard_checks.{name}"] = (0.0, 1.0)
    if report is None:
        return out
    passed = [c for c in COMMONSENSE_CHECKS
              if (r := report.commonsense.get(c)) is not None and r.passed is not False]
    for c in passed:
        out[f"commonsense_checks.{c}"] = (1.0, 1.0)
    cs_ok = len(passed) == len(COMMONSENSE_CHECKS)
    out["commonsense_micro"] = (float(len(passed)), float(len(COMMONSENSE_CHECKS)))
    out["commonsense_macro"] = (float(cs_ok), 1.0)
    for name in EXTRA_CHECKS:
        result = report.extra.get(name)
        if result is not None and result.passed is not None:  # nothing to check: n/a, not a pass
            out[f"extra_checks.{name}"] = (float(result.passed), 1.0)
    for m in QUALITATIVE:
        value = getattr(report, m)
        if value is not None:
            out[f"qualitative.{m}"] = (float(value), 1.0)
    if query.risk_profile in RISK_PROFILES:
        for m in UNCERTAINTY:
            value = getattr(report, m)
            if value is not None:
                out[f"uncertainty.{m}.{query.risk_profile}"] = (float(value), 1.0)
    if not report.hard_evaluated:
        return out
    hard = {name: c.passed for name, c in report.hard.items() if c.passed is not None}
    for name, ok in hard.items():
        if hard_set.get(name):
            out[f"hard_checks.{name}"] = (float(bool(ok)), 1.0)
    hard_ok = all(hard.values())
    out["hard_micro"] = (float(sum(bool(ok) for ok in hard.values())), out["hard_micro"][1])
    out["hard_macro"] = (float(hard_ok), 1.0)
    out["final_pass_rate"] = (float(cs_ok and hard_ok), 1.0)
    return out


class _Group:
    """The sums of one column of Table 3, one (query, report) at a time (module docstring)."""

    def __init__(self) -> None:
        self.n = self.delivered = self.evaluated = 0
        self.num = dict.fromkeys(CELLS, 0.0)
        self.den = dict.fromkeys(CELLS, 0.0)

    def add(self, report: EvaluationReport | None, cells: dict[str, tuple[float, float]]) -> None:
        """Count one plan: its report (None: not delivered) and its `plan_cells`."""
        self.n += 1
        self.delivered += report is not None
        self.evaluated += report is not None and report.hard_evaluated
        for key, (num, den) in cells.items():
            self.num[key] += num
            self.den[key] += den

    def _mean(self, key: str) -> MetricMean:
        return MetricMean(mean=_rate(self.num[key], self.den[key]), n=int(self.den[key]))

    def result(self) -> GroupSummary:
        rate = {key: _rate(self.num[key], self.den[key]) for key in CELLS}
        return GroupSummary(
            n_queries=self.n, n_delivered=self.delivered,
            **{key: rate[key] for key in RATE_CELLS},
            commonsense_denominator=int(self.den["commonsense_micro"]),
            hard_denominator=int(self.den["hard_micro"]), n_hard_evaluated=self.evaluated,
            commonsense_checks={c: rate[f"commonsense_checks.{c}"] for c in COMMONSENSE_CHECKS},
            hard_checks={c: rate[f"hard_checks.{c}"] for c in HARD_CHECKS},
            extra_checks={name: self._mean(f"extra_checks.{name}") for name in EXTRA_CHECKS},
            qualitative={m: self._mean(f"qualitative.{m}") for m in QUALITATIVE},
            uncertainty={m: {risk: self._mean(f"uncertainty.{m}.{risk}") for risk in RISK_PROFILES}
                         for m in UNCERTAINTY})


class _QuerySums:
    """One query's sums over its plans (its trials) in every cell: the unit the intervals resample."""

    __slots__ = ("days", "den", "num", "plans")

    def __init__(self, days: int) -> None:
        import numpy as np

        self.days = days
        self.num = np.zeros(len(CELLS))
        self.den = np.zeros(len(CELLS))
        self.plans = np.zeros(len(CELLS))

    def add(self, cells: dict[str, tuple[float, float]]) -> None:
        for key, (num, den) in cells.items():
            i = CELL_INDEX[key]
            self.num[i] += num
            self.den[i] += den
            self.plans[i] += den > 0


class SummaryAccumulator:
    """Table 3 by horizon and over all, one (query, report or None for undelivered) at a time.

    Besides the column sums it keeps each query's sums (a few hundred bytes per query, whatever
    the number of plans), from which `summary` computes every cell's interval
    (`utp_env.evaluation.intervals`)."""

    def __init__(self) -> None:
        self._groups: dict[int, _Group] = defaultdict(_Group)
        self._all = _Group()
        self._queries: dict[tuple[str, int], _QuerySums] = {}

    def add(self, query: Query, report: EvaluationReport | None) -> None:
        """Count one plan of `query` (None: nothing delivered)."""
        cells = plan_cells(query, report)
        self._groups[query.days].add(report, cells)
        self._all.add(report, cells)
        key = (query.query_id, query.days)
        sums = self._queries.get(key)
        if sums is None:
            sums = self._queries[key] = _QuerySums(query.days)
        sums.add(cells)

    @property
    def count(self) -> int:
        """How many plans were added."""
        return self._all.n

    def intervals(self) -> dict[str, dict[str, CellInterval]]:
        """Every cell's 95% interval by column ('3', '5', '7' present, and 'all')."""
        import numpy as np

        from utp_env.evaluation.intervals import cell_intervals

        out: dict[str, dict[str, CellInterval]] = {}
        ordered = [self._queries[q] for q in sorted(self._queries)]  # resampling order: by query id
        columns = [(str(h), [q for q in ordered if q.days == h]) for h in sorted(self._groups)]
        for column, members in [*columns, ("all", ordered)]:
            if not members:
                continue
            stack = [np.vstack([getattr(q, part) for q in members]) for part in ("num", "den", "plans")]
            out[column] = cell_intervals(CELLS, RATE_KEYS, stack[0], stack[1], stack[2], column)
        return out

    def summary(self, readings: EvaluationReadings | None = None, intervals: bool = True) -> EvaluationSummary:
        """The summary of everything added (what `summarize` gives for the same pairs), with every
        cell's interval unless `intervals` is False."""
        from utp_env.evaluation.intervals import METHOD

        groups = {str(h): self._groups[h].result() for h in sorted(self._groups)}
        groups["all"] = self._all.result()
        return EvaluationSummary(groups=groups, aggregation=AGGREGATION,
                                 readings=(readings or EvaluationReadings()).describe(),
                                 intervals=self.intervals() if intervals else {},
                                 interval_method=METHOD if intervals else None)


def summarize_group(results: Iterable[tuple[Query, EvaluationReport | None]]) -> GroupSummary:
    """Pass rates and metric means of one group (see the module docstring for the denominators)."""
    group = _Group()
    for query, report in results:
        group.add(report, plan_cells(query, report))
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
