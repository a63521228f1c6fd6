"""The robustness report (pydantic) and its computation from a batch of rollouts."""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from utp_env.itinerary import format_hhmm
from utp_env.simulation.compile import CAB, KIND_NAMES, LEG, CompiledPlan
from utp_env.simulation.engine import Rollouts
from utp_env.tools.clock import MINUTES_PER_DAY


class Lateness(BaseModel):
    """Lateness in minutes over the rollouts (0 = on time)."""

    model_config = ConfigDict(extra="forbid")

    mean: float
    p50: float
    p95: float


class StepReport(BaseModel):
    """One item or leg of the plan: how late it starts and ends, and what it does to lateness."""

    model_config = ConfigDict(extra="forbid")

    index: int
    day: int
    label: str
    kind: str = Field(description="visit | elastic (stay, rest, event) | fixed | leg | cab")
    planned_start: str
    planned_end: str
    start_lateness: Lateness = Field(description="Actual start minus planned start (legs: departure)")
    end_lateness: Lateness = Field(description="max(0, actual end - planned end); legs: vs planned arrival")
    absorbed_mean: float = Field(description="Mean of max(0, incoming lateness - outgoing lateness)")
    passed_on_mean: float = Field(description="Mean outgoing lateness handed to the next step")
    lost_probability: float = Field(description="Items: P(reached after its planned end, so skipped)")
    missed_probability: float = Field(description="Legs: P(reached after departure - boarding margin)")


class LegRisk(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str
    missed_probability: float


class RobustnessReport(BaseModel):
    """Monte Carlo robustness of one plan (docs/SIMULATION.md)."""

    model_config = ConfigDict(extra="forbid")

    n: int
    seed: int
    hold_rate: float = Field(description="P(no missed leg, no lost item, no item starting > tolerance late)")
    late_tolerance_min: float
    any_missed_leg_probability: float
    missed_legs: list[LegRisk]
    item_start_lateness: Lateness = Field(description="Over all items and rollouts")
    trip_end_lateness: Lateness = Field(description="Outgoing lateness of the plan's last step")
    expected_lost_items: float
    expected_lost_minutes: float
    steps: list[StepReport]
    skipped_untimed: list[str] = Field(description="Untimed items, not simulated")


QUANTILES = (0.5, 0.95)


def outgoing_lateness(plan: CompiledPlan, rollouts: Rollouts) -> np.ndarray:
    """(n, S) lateness each step hands on: max(0, actual end - planned end)."""
    return np.maximum(rollouts.end - plan.end, 0.0)


def start_lateness(plan: CompiledPlan, rollouts: Rollouts) -> np.ndarray:
    """(n, S) actual start minus planned start (never negative: nothing starts early)."""
    return rollouts.start - plan.start


def held(plan: CompiledPlan, rollouts: Rollouts, tolerance: float) -> np.ndarray:
    """(n,) whether each rollout holds: no missed leg, no lost item, no item starting > tolerance late."""
    items = (plan.kind != LEG) & (plan.kind != CAB)
    late = (start_lateness(plan, rollouts)[:, items] > tolerance).any(axis=1)
    return np.asarray(~(rollouts.missed.any(axis=1) | rollouts.lost.any(axis=1) | late))


HIST_MINUTES = 4 * MINUTES_PER_DAY
"""Lateness histograms are dense for 0 .. HIST_MINUTES - 1 whole minutes; rarer larger values are
counted exactly in a sparse overflow (memory stays bounded by the plan, not by the rollouts)."""


class ReportAccumulator:
    """Running statistics of rollouts of one plan: feed blocks of rollouts, then `report()`.

    Memory is O(steps x HIST_MINUTES), whatever the number of rollouts. Sums are taken per block of
    `block` rollouts (numpy's sum over the block) and added block after block in rollout order, and
    quantiles come from exact counts, so the report does not depend on how the rollouts are batched
    into `add` calls: one call with every rollout gives the same bytes as one call per block.
    Quantiles are those of lateness rounded to the nearest whole minute (`np.rint`), with numpy's
    linear interpolation between order statistics.
    """

    def __init__(self, plan: CompiledPlan, tolerance: float, block: int) -> None:
        steps = plan.n_steps
        self.plan, self.tolerance, self.block = plan, tolerance, block
        self.n = 0
        self.items = np.flatnonzero((plan.kind != LEG) & (plan.kind != CAB))
        self.sum_start = np.zeros(steps)
        self.sum_out = np.zeros(steps)
        self.sum_absorbed = np.zeros(steps)
        self.lost = np.zeros(steps, dtype=np.int64)
        self.missed = np.zeros(steps, dtype=np.int64)
        self.held = 0
        self.any_missed = 0
        # histogram rows 0..S-1: start lateness of each step; rows S..2S-1: outgoing (end) lateness.
        # `zero[r]` counts values that round to 0 minutes, `hist[r][v]` those that round to v
        # (1 <= v < len, grown as needed up to HIST_MINUTES), `overflow[r]` those >= HIST_MINUTES
        self.zero = np.zeros(2 * steps, dtype=np.int64)
        self.hist: list[np.ndarray | None] = [None] * (2 * steps)
        self.overflow: dict[int, dict[int, int]] = {}

    def add(self, rollouts: Rollouts) -> None:
        """Add rollouts (the next ones in rollout order); any count, split here into blocks."""
        m = int(rollouts.start.shape[0])
        for lo in range(0, m, self.block):
            hi = min(lo + self.block, m)
            self._add_block(rollouts.start[lo:hi].T, rollouts.end[lo:hi].T,
                            rollouts.lost[lo:hi].T, rollouts.missed[lo:hi].T)

    def _add_block(self, start: np.ndarray, end: np.ndarray, lost: np.ndarray, missed: np.ndarray) -> None:
        plan = self.plan
        if self.n % self.block:
            raise ValueError("rollouts must be added in whole blocks (only the last one may be short)")
        start, end = np.ascontiguousarray(start), np.ascontiguousarray(end)
        steps, m = start.shape
        self.n += m
        if steps == 0:
            return
        out = np.maximum(end - plan.end[:, None], 0.0)
        slate = start - plan.start[:, None]
        self.sum_start += slate.sum(axis=1)
        self.sum_out += out.sum(axis=1)
        self.sum_absorbed[1:] += np.maximum(out[:-1] - out[1:], 0.0).sum(axis=1)
        self.lost += lost.sum(axis=1)
        self.missed += missed.sum(axis=1)
        any_missed = missed.any(axis=0)
        too_late = (slate[self.items] > self.tolerance).any(axis=0)
        self.held += int((~(any_missed | lost.any(axis=0) | too_late)).sum())
        self.any_missed += int(any_missed.sum())
        self._count(slate, 0)
        self._count(out, steps)

    def _count(self, values: np.ndarray, first_row: int) -> None:
        """Add (r, m) lateness values, rounded to whole minutes, to histogram rows first_row.. .

        Most lateness is 0: only values that round to >= 1 minute are binned, row by row.
        """
        m = values.shape[1]
        busy = values.max(axis=1) >= 0.5
        self.zero[first_row:first_row + values.shape[0]] += m * ~busy
        for r in np.flatnonzero(busy):
            row = values[r]
            minutes = np.rint(row[row >= 0.5])
            at = first_row + int(r)
            big = minutes >= HIST_MINUTES
            if big.any():
                vals, counts = np.unique(minutes[big].astype(np.int64), return_counts=True)
                over = self.overflow.setdefault(at, {})
                for v, c in zip(vals.tolist(), counts.tolist(), strict=True):
                    over[v] = over.get(v, 0) + c
                minutes = minutes[~big]
            counts = np.bincount(minutes.astype(np.int64))
            self.zero[at] += m - minutes.size - int(big.sum()) + (int(counts[0]) if counts.size else 0)
            if counts.size > 1:
                counts[0] = 0
                h = self.hist[at]
                if h is None or h.size < counts.size:
                    grown = np.zeros(counts.size, dtype=np.int64)
                    if h is not None:
                        grown[:h.size] = h
                    h = self.hist[at] = grown
                h[:counts.size] += counts

    def _quantiles(self, rows: list[int], total: int) -> tuple[float, float]:
        """(p50, p95) of the values counted in histogram `rows` together (`total` values)."""
        hists = [h for h in (self.hist[r] for r in rows) if h is not None]
        tails = [self.overflow[r] for r in rows if r in self.overflow]
        if not hists and not tails:
            return 0.0, 0.0  # every value rounds to 0
        if len(hists) == 1:
            counts = hists[0].copy()
        else:
            counts = np.zeros(max((h.size for h in hists), default=1), dtype=np.int64)
            for h in hists:
                counts[:h.size] += h
        counts[0] = int(self.zero[rows[0]]) if len(rows) == 1 else int(self.zero[rows].sum())
        cum = np.cumsum(counts)
        dense = int(cum[-1])
        ranks = []
        for q in QUANTILES:
            lo = math.floor(q * (total - 1))
            ranks += [lo, min(lo + 1, total - 1)]
        values = np.searchsorted(cum, ranks, side="right").astype(float)
        if ranks[-1] >= dense:  # some ranks fall in the sparse tail (>= HIST_MINUTES)
            extra: dict[int, int] = {}
            for tail in tails:
                for v, c in tail.items():
                    extra[v] = extra.get(v, 0) + c
            for i, k in enumerate(ranks):
                k -= dense
                for v, c in sorted(extra.items()):
                    if k < 0:
                        break
                    if k < c:
                        values[i] = v
                        break
                    k -= c
        out: list[float] = []
        for qi, q in enumerate(QUANTILES):
            pos = q * (total - 1)
            a, b = float(values[2 * qi]), float(values[2 * qi + 1])
            out.append(a + (pos - math.floor(pos)) * (b - a))
        return out[0], out[1]

    def report(self, seed: int) -> RobustnessReport:
        """The RobustnessReport of every rollout added so far."""
        plan, n, steps = self.plan, self.n, self.plan.n_steps
        if n == 0 or steps == 0:
            return _empty_report(plan, n, seed, self.tolerance)
        m_start, passed, absorbed = self.sum_start / n, self.sum_out / n, self.sum_absorbed / n
        lost_p, missed_p = self.lost / n, self.missed / n
        q_start = [self._quantiles([j], n) for j in range(steps)]
        q_end = [self._quantiles([steps + j], n) for j in range(steps)]
        items = [int(j) for j in self.items]
        if items:
            p50, p95 = self._quantiles(items, n * len(items))
            item_start = Lateness(mean=float(self.sum_start[items].sum() / (n * len(items))), p50=p50, p95=p95)
        else:
            item_start = Lateness(mean=0.0, p50=0.0, p95=0.0)
        trip_end = Lateness(mean=float(passed[-1]), p50=q_end[-1][0], p95=q_end[-1][1])
        steps_out = [
            StepReport(index=j, day=plan.day[j], label=plan.labels[j], kind=KIND_NAMES[int(plan.kind[j])],
                       planned_start=_clock(plan.start[j], plan.day_index[j]),
                       planned_end=_clock(plan.end[j], plan.day_index[j]),
                       start_lateness=Lateness(mean=float(m_start[j]), p50=q_start[j][0], p95=q_start[j][1]),
                       end_lateness=Lateness(mean=float(passed[j]), p50=q_end[j][0], p95=q_end[j][1]),
                       absorbed_mean=float(absorbed[j]), passed_on_mean=float(passed[j]),
                       lost_probability=float(lost_p[j]), missed_probability=float(missed_p[j]))
            for j in range(steps)
        ]
        return RobustnessReport(
            n=n, seed=seed, hold_rate=self.held / n, late_tolerance_min=self.tolerance,
            any_missed_leg_probability=self.any_missed / n,
            missed_legs=[LegRisk(label=plan.labels[j], missed_probability=float(missed_p[j]))
                         for j in plan.leg_steps],
            item_start_lateness=item_start, trip_end_lateness=trip_end,
            expected_lost_items=float(self.lost.sum() / n),
            expected_lost_minutes=float((plan.end - plan.start) @ lost_p),  # = mean of the lost sum
            steps=steps_out, skipped_untimed=list(plan.skipped))


def build_report(plan: CompiledPlan, rollouts: Rollouts, seed: int, tolerance: float,
                 block: int) -> RobustnessReport:
    """Summarise rollouts of `plan` (all in memory) into a RobustnessReport, block by block.

    The same numbers as feeding the rollouts to a `ReportAccumulator` in any batches of whole blocks.
    """
    acc = ReportAccumulator(plan, tolerance, block)
    acc.add(rollouts)
    return acc.report(seed)


def _empty_report(plan: CompiledPlan, n: int, seed: int, tolerance: float) -> RobustnessReport:
    """The report of a plan with no timed steps: it trivially holds."""
    zero = Lateness(mean=0.0, p50=0.0, p95=0.0)
    return RobustnessReport(n=n, seed=seed, hold_rate=1.0, late_tolerance_min=tolerance,
                            any_missed_leg_probability=0.0, missed_legs=[], item_start_lateness=zero,
                            trip_end_lateness=zero, expected_lost_items=0.0, expected_lost_minutes=0.0, steps=[],
                            skipped_untimed=list(plan.skipped))


def _clock(minutes: float, day_index: int) -> str:
    """`HH:MM` on the step's own day, with a `+Nd` suffix for times N days after it."""
    days, rest = divmod(round(float(minutes)) - day_index * MINUTES_PER_DAY, MINUTES_PER_DAY)
    return format_hhmm(rest) + (f" +{days}d" if days else "")


def _untimed_caveat(report: RobustnessReport) -> str:
    """The warning the headline carries when items were not simulated: an untimed item cannot be late or
    lost, so a plan without times would otherwise hold in every rollout."""
    n = len(report.skipped_untimed)
    if not n:
        return ""
    return (f"\nwarning: {n} untimed item{'s' if n > 1 else ''} not simulated (listed below): the hold rate covers "
            f"only the {len(report.steps)} timed step{'s' if len(report.steps) != 1 else ''}; give every item its "
            "times to simulate it")


def render_table(report: RobustnessReport) -> str:
    """The report as a readable plain-text table (the CLI's output)."""
    lines = [
        f"rollouts {report.n}  seed {report.seed}",
        f"hold rate {report.hold_rate:.1%}  (no missed leg, no lost item, no item > "
        f"{report.late_tolerance_min:g} min late)" + _untimed_caveat(report),
        f"P(any missed leg) {report.any_missed_leg_probability:.1%}  expected lost items "
        f"{report.expected_lost_items:.2f} ({report.expected_lost_minutes:.0f} min)",
        f"item start lateness  mean {report.item_start_lateness.mean:.1f}  p50 {report.item_start_lateness.p50:.1f}"
        f"  p95 {report.item_start_lateness.p95:.1f} min",
        f"trip end lateness    mean {report.trip_end_lateness.mean:.1f}  p50 {report.trip_end_lateness.p50:.1f}"
        f"  p95 {report.trip_end_lateness.p95:.1f} min",
        "",
        f"{'step':<58} {'planned':>15} {'late mean':>9} {'p50':>6} {'p95':>6} {'absorb':>7} {'pass':>6} "
        f"{'lost/missed':>11}",
    ]
    for s in report.steps:
        risk = s.missed_probability if s.kind in ("leg", "cab") else s.lost_probability
        label = s.label if len(s.label) <= 58 else s.label[:55] + "..."
        lines.append(f"{label:<58} {s.planned_start + '-' + s.planned_end:>15} {s.start_lateness.mean:>9.1f} "
                     f"{s.start_lateness.p50:>6.1f} {s.start_lateness.p95:>6.1f} {s.absorbed_mean:>7.1f} "
                     f"{s.passed_on_mean:>6.1f} {risk:>11.1%}")
    if report.skipped_untimed:
        lines += ["", "not simulated (untimed): " + "; ".join(report.skipped_untimed)]
    return "\n".join(lines)
