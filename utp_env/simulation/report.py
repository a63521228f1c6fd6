"""The robustness report (pydantic) and its computation from a batch of rollouts."""

from __future__ import annotations

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


def nonneg_quantiles(rows: np.ndarray, qs: tuple[float, ...] = QUANTILES) -> np.ndarray:
    """Per-row quantiles (numpy's default linear interpolation) of a 2-D array of values >= 0.

    Lateness is mostly exactly 0, so each row's zeros are counted rather than sorted and only its
    positive values are partitioned: several times faster than `np.quantile` on typical rollouts.
    Returns shape (len(qs), rows).
    """
    n_rows, n = rows.shape
    out = np.zeros((len(qs), n_rows))
    if n == 0:
        return out
    ranks = [q * (n - 1) for q in qs]
    needed = sorted({int(np.floor(h)) for h in ranks} | {min(int(np.floor(h)) + 1, n - 1) for h in ranks})
    for r in range(n_rows):
        positive = rows[r][rows[r] > 0]
        zeros = n - positive.size
        kth = [i - zeros for i in needed if i >= zeros]
        if not kth:
            continue
        part = np.partition(positive, kth)
        value = {i: (part[i - zeros] if i >= zeros else 0.0) for i in needed}
        for qi, h in enumerate(ranks):
            lo = int(np.floor(h))
            hi = min(lo + 1, n - 1)
            out[qi, r] = value[lo] + (h - lo) * (value[hi] - value[lo])
    return out


def _lateness(values: np.ndarray) -> Lateness:
    """Mean, p50 and p95 of a 1-D array of lateness values (>= 0)."""
    if values.size == 0:
        return Lateness(mean=0.0, p50=0.0, p95=0.0)
    p50, p95 = nonneg_quantiles(values[None, :])[:, 0]
    return Lateness(mean=float(values.mean()), p50=float(p50), p95=float(p95))


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


def build_report(plan: CompiledPlan, rollouts: Rollouts, seed: int, tolerance: float) -> RobustnessReport:
    """Summarise rollouts of `plan` into a RobustnessReport.

    Works on step-major (S, n) arrays so that every per-step reduction runs over a contiguous row.
    """
    n, steps = int(rollouts.start.shape[0]), plan.n_steps
    if n == 0 or steps == 0:
        return _empty_report(plan, n, seed, tolerance)
    start, end = np.ascontiguousarray(rollouts.start.T), np.ascontiguousarray(rollouts.end.T)
    lost, missed = np.ascontiguousarray(rollouts.lost.T), np.ascontiguousarray(rollouts.missed.T)
    out = np.maximum(end - plan.end[:, None], 0.0)
    slate = start - plan.start[:, None]
    # absorbed by step j: mean of max(0, lateness handed in by step j-1 - lateness handed on by j)
    absorbed = np.zeros(steps)
    absorbed[1:] = np.maximum(out[:-1] - out[1:], 0.0).mean(axis=1)
    passed = out.mean(axis=1)
    lost_p, missed_p = lost.mean(axis=1), missed.mean(axis=1)
    m_start = slate.mean(axis=1)
    items = np.flatnonzero((plan.kind != LEG) & (plan.kind != CAB))
    item_late = slate[items]
    too_late = (item_late > tolerance).any(axis=0)
    hold = ~(missed.any(axis=0) | lost.any(axis=0) | too_late)
    expected_lost_minutes = float((plan.end - plan.start) @ lost_p)  # = mean over rollouts of the lost sum
    trip_end = _lateness(out[-1])
    item_start = _lateness(item_late.ravel())
    q_start = nonneg_quantiles(slate)
    q_end = nonneg_quantiles(out)
    steps_out = [
        StepReport(index=j, day=plan.day[j], label=plan.labels[j], kind=KIND_NAMES[int(plan.kind[j])],
                   planned_start=_clock(plan.start[j], plan.day_index[j]),
                   planned_end=_clock(plan.end[j], plan.day_index[j]),
                   start_lateness=Lateness(mean=float(m_start[j]), p50=float(q_start[0, j]), p95=float(q_start[1, j])),
                   end_lateness=Lateness(mean=float(passed[j]), p50=float(q_end[0, j]), p95=float(q_end[1, j])),
                   absorbed_mean=float(absorbed[j]), passed_on_mean=float(passed[j]),
                   lost_probability=float(lost_p[j]), missed_probability=float(missed_p[j]))
        for j in range(steps)
    ]
    return RobustnessReport(
        n=n, seed=seed, hold_rate=float(hold.mean()), late_tolerance_min=tolerance,
        any_missed_leg_probability=float(missed.any(axis=0).mean()),
        missed_legs=[LegRisk(label=plan.labels[j], missed_probability=float(missed_p[j])) for j in plan.leg_steps],
        item_start_lateness=item_start, trip_end_lateness=trip_end,
        expected_lost_items=float(lost.sum() / n), expected_lost_minutes=expected_lost_minutes,
        steps=steps_out, skipped_untimed=list(plan.skipped))


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


def render_table(report: RobustnessReport) -> str:
    """The report as a readable plain-text table (the CLI's output)."""
    lines = [
        f"rollouts {report.n}  seed {report.seed}",
        f"hold rate {report.hold_rate:.1%}  (no missed leg, no lost item, no item > "
        f"{report.late_tolerance_min:g} min late)",
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
