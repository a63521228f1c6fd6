"""Monte Carlo robustness of plans (docs/SIMULATION.md).

`simulate(plan, query, db, n, seed)` replays a plan n times under sampled transport delays and
visit overruns and reports how often it holds; `simulate_once(plan, query, db, rng)` draws one
realisation for the env's stochastic episodes.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from utp_env.config import UncertaintyConfig, load_uncertainty
from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.simulation.compile import CAB, KIND_NAMES, LEG, CompiledPlan, compile_plan
from utp_env.simulation.delay_models import sample
from utp_env.simulation.engine import Rollouts, run
from utp_env.simulation.report import RobustnessReport, build_report, held, outgoing_lateness
from utp_env.tools.clock import MINUTES_PER_DAY
from utp_env.tools.database import Database

__all__ = ["Realisation", "RobustnessReport", "StepOutcome", "compile_for", "draw_delays", "simulate",
           "simulate_once"]


def compile_for(plan: Plan, query: Query | None, db: Database, config: UncertaintyConfig | None = None
                ) -> tuple[CompiledPlan, UncertaintyConfig]:
    """The compiled plan and the config used (the shipped `configs/uncertainty.yaml` by default)."""
    config = config or load_uncertainty()
    return compile_plan(plan.days, db, config, query), config


def draw_delays(compiled: CompiledPlan, rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, k) sampled delays of the plan's delay elements: all of a run's randomness."""
    return sample(compiled.delays, rng, n)


def simulate(plan: Plan, query: Query | None, db: Database, n: int = 10_000, seed: int = 0,
             config: UncertaintyConfig | None = None) -> RobustnessReport:
    """Replay `plan` n times with delays drawn from `np.random.default_rng(seed)`; same seed, same report."""
    if n < 1:
        raise ValueError(f"n (rollouts) must be >= 1, got {n}")
    compiled, config = compile_for(plan, query, db, config)
    delays = draw_delays(compiled, np.random.default_rng(seed), n)
    rollouts = run(compiled, delays, config.simulation.skip_passed_items)
    return build_report(compiled, rollouts, seed, config.simulation.late_tolerance_min)


class StepOutcome(BaseModel):
    """What happened to one item or leg in one realisation (minutes from its day's midnight)."""

    model_config = ConfigDict(extra="forbid")

    label: str
    day: int
    kind: str
    planned_start: float
    planned_end: float
    actual_start: float
    actual_end: float
    lost: bool = False
    missed: bool = False


class Realisation(BaseModel):
    """One sampled run of a plan: which legs were missed, what the traveller lost, how late it ended."""

    model_config = ConfigDict(extra="forbid")

    held: bool
    missed_legs: list[str]
    lost_items: list[str]
    lost_minutes: float
    trip_end_lateness: float
    steps: list[StepOutcome] = Field(default_factory=list)
    skipped_untimed: list[str] = Field(default_factory=list)


def simulate_once(plan: Plan, query: Query | None, db: Database, rng: np.random.Generator,
                  config: UncertaintyConfig | None = None) -> Realisation:
    """One realisation of `plan` with draws from `rng` (the env passes its own generator)."""
    compiled, config = compile_for(plan, query, db, config)
    r: Rollouts = run(compiled, draw_delays(compiled, rng, 1), config.simulation.skip_passed_items)

    steps = []
    for j in range(compiled.n_steps):
        off = compiled.day_index[j] * MINUTES_PER_DAY
        steps.append(StepOutcome(
            label=compiled.labels[j], day=compiled.day[j], kind=KIND_NAMES[int(compiled.kind[j])],
            planned_start=float(compiled.start[j] - off), planned_end=float(compiled.end[j] - off),
            actual_start=float(r.start[0, j] - off), actual_end=float(r.end[0, j] - off),
            lost=bool(r.lost[0, j]), missed=bool(r.missed[0, j])))
    items = (compiled.kind != LEG) & (compiled.kind != CAB)
    lost_minutes = float(((compiled.end - compiled.start) * r.lost[0] * items).sum())
    end_late = float(outgoing_lateness(compiled, r)[0, -1]) if compiled.n_steps else 0.0
    return Realisation(
        held=bool(held(compiled, r, config.simulation.late_tolerance_min)[0]),
        missed_legs=[s.label for s in steps if s.missed], lost_items=[s.label for s in steps if s.lost],
        lost_minutes=lost_minutes, trip_end_lateness=end_late, steps=steps, skipped_untimed=list(compiled.skipped))
