"""The robustness report (pydantic) and its computation from a batch of rollouts."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from utp_env.itinerary import format_hhmm
from utp_env.simulation.compile import CAB, KIND_NAMES, LEG, MINUTES_PER_DAY, CompiledPlan
from utp_env.simulation.engine import Rollouts


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
    """Monte Carlo robustness of one plan (DESIGN section 6)."""

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


def _lateness(values: np.ndarray) -> Lateness:
    if values.size == 0:
        return Lateness(mean=0.0, p50=0.0, p95=0.0)
    p50, p95 = np.quantile(values, [0.5, 0.95])
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
    return ~(rollouts.missed.any(axis=1) | rollouts.lost.any(axis=1) | late)


def build_report(plan: CompiledPlan, rollouts: Rollouts, seed: int, tolerance: float) -> RobustnessReport:
    """Summarise rollouts of `plan` into a RobustnessReport."""
    n = int(rollouts.start.shape[0])
    out = outgoing_lateness(plan, rollouts)
    late_in = np.concatenate([np.zeros((n, 1)), out[:, :-1]], axis=1) if plan.n_steps else out
    slate = start_lateness(plan, rollouts)
    absorbed = np.maximum(late_in - out, 0.0).mean(axis=0) if n else np.zeros(plan.n_steps)
    passed = out.mean(axis=0) if n else np.zeros(plan.n_steps)
    lost_p = rollouts.lost.mean(axis=0) if n else np.zeros(plan.n_steps)
    missed_p = rollouts.missed.mean(axis=0) if n else np.zeros(plan.n_steps)
    if n and plan.n_steps:
        q_start = np.quantile(slate, [0.5, 0.95], axis=0)
        q_end = np.quantile(out, [0.5, 0.95], axis=0)
        m_start, m_end = slate.mean(axis=0), out.mean(axis=0)
    else:
        q_start = q_end = np.zeros((2, plan.n_steps))
        m_start = m_end = np.zeros(plan.n_steps)
    steps = [
        StepReport(index=j, day=plan.day[j], label=plan.labels[j], kind=KIND_NAMES[int(plan.kind[j])],
                   planned_start=_clock(plan.start[j], plan.day[j]), planned_end=_clock(plan.end[j], plan.day[j]),
                   start_lateness=Lateness(mean=float(m_start[j]), p50=float(q_start[0, j]), p95=float(q_start[1, j])),
                   end_lateness=Lateness(mean=float(m_end[j]), p50=float(q_end[0, j]), p95=float(q_end[1, j])),
                   absorbed_mean=float(absorbed[j]), passed_on_mean=float(passed[j]),
                   lost_probability=float(lost_p[j]), missed_probability=float(missed_p[j]))
        for j in range(plan.n_steps)
    ]
    legs = plan.leg_steps
    items = np.flatnonzero((plan.kind != LEG) & (plan.kind != CAB))
    hold = held(plan, rollouts, tolerance)
    lost_minutes = (rollouts.lost * (plan.end - plan.start)).sum(axis=1)
    return RobustnessReport(
        n=n, seed=seed, hold_rate=float(hold.mean()) if n else 1.0, late_tolerance_min=tolerance,
        any_missed_leg_probability=float(rollouts.missed.any(axis=1).mean()) if n else 0.0,
        missed_legs=[LegRisk(label=plan.labels[j], missed_probability=float(missed_p[j])) for j in legs],
        item_start_lateness=_lateness(slate[:, items]),
        trip_end_lateness=_lateness(out[:, -1] if plan.n_steps else np.zeros(0)),
        expected_lost_items=float(rollouts.lost.sum(axis=1).mean()) if n else 0.0,
        expected_lost_minutes=float(lost_minutes.mean()) if n else 0.0,
        steps=steps, skipped_untimed=list(plan.skipped))


def _clock(minutes: float, day: int) -> str:
    """`HH:MM` on the step's own day, with a `+Nd` suffix for times N days after it."""
    days, rest = divmod(round(float(minutes)) - (day - 1) * MINUTES_PER_DAY, MINUTES_PER_DAY)
    return format_hhmm(rest) + (f" +{days}d" if days else "")
