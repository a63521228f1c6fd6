"""Monte Carlo robustness of plans (docs/SIMULATION.md).

`simulate(plan, query, db, n, seed)` replays a plan n times under sampled transport delays and
visit overruns and reports how often it holds; `simulate_once(plan, query, db, rng)` draws one
realisation for the env's stochastic episodes.

Rollouts run in blocks of `BLOCK_ROLLOUTS`: block b draws from its own generator `block_rng(seed, b)`
and is summarised into running statistics (`robustness.ReportAccumulator`) before the next block is
drawn, so memory is bounded by the plan's size whatever n is, and a report depends only on
(plan, n, seed, config).
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from utp_env.config import UncertaintyConfig, load_uncertainty
from utp_env.itinerary import Plan, check_plan_query
from utp_env.query import Query
from utp_env.simulation.compile import CAB, KIND_NAMES, LEG, CompiledPlan, compile_plan
from utp_env.simulation.delay_models import sample
from utp_env.simulation.engine import Rollouts, run
from utp_env.simulation.robustness import ReportAccumulator, RobustnessReport, held, outgoing_lateness
from utp_env.tools.clock import MINUTES_PER_DAY
from utp_env.tools.database import Database

__all__ = [
    "BLOCK_ROLLOUTS",
    "MAX_ROLLOUTS",
    "Realisation",
    "RobustnessReport",
    "StepOutcome",
    "block_rng",
    "check_rollouts",
    "compile_for",
    "draw_block_delays",
    "draw_delays",
    "simulate",
    "simulate_compiled",
    "simulate_once",
]

BLOCK_ROLLOUTS = 16_384
"""Rollouts per block: part of the definition of a seed's draws (block b has its own generator)."""

MAX_ROLLOUTS = 100_000_000
"""Upper bound on rollouts per plan (`simulate`, `utp-env simulate --rollouts`, RunConfig.rollouts):
10^8 rollouts of a 7-day plan take some minutes and bounded memory; above it is surely a typo."""


def check_rollouts(n: int, what: str = "n (rollouts)") -> int:
    """`n` when 1 <= n <= MAX_ROLLOUTS, else a ValueError naming the bound."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise TypeError(f"{what} must be an integer, got {n!r}")
    if n < 1:
        raise ValueError(f"{what} must be >= 1, got {n}")
    if n > MAX_ROLLOUTS:
        raise ValueError(f"{what} must be <= {MAX_ROLLOUTS:,} (utp_env.simulation.MAX_ROLLOUTS), got {n:,}")
    return int(n)


def compile_for(plan: Plan, query: Query | None, db: Database, config: UncertaintyConfig | None = None
                ) -> tuple[CompiledPlan, UncertaintyConfig]:
    """The compiled plan and the config used (the shipped `configs/uncertainty.yaml` by default); a plan
    that names another query than `query` is refused (`itinerary.check_plan_query`)."""
    if query is not None:
        check_plan_query(plan, query.query_id)
    config = config or load_uncertainty()
    return compile_plan(plan.days, db, config, query), config


def draw_delays(compiled: CompiledPlan, rng: np.random.Generator, n: int) -> np.ndarray:
    """(n, k) sampled delays of the plan's delay elements: all of a run's randomness."""
    return sample(compiled.delays, rng, n)


def block_rng(seed: int, block: int) -> np.random.Generator:
    """The generator of rollout block `block`: block 0 uses `np.random.default_rng(seed)` (so n up to
    one block draws exactly as a single generator would), block b >= 1 the b-th child of the seed's
    `SeedSequence` (spawn key (b,)): independent streams, fixed by (seed, b) alone."""
    if block == 0:
        return np.random.default_rng(seed)
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(block,)))


def draw_block_delays(compiled: CompiledPlan, seed: int, n: int, block: int = BLOCK_ROLLOUTS) -> np.ndarray:
    """(n, k) delays of the first n rollouts of `seed`, block by block (all in memory: for tests)."""
    parts = [draw_delays(compiled, block_rng(seed, b), min(block, n - lo))
             for b, lo in enumerate(range(0, n, block))]
    return np.concatenate(parts) if parts else np.zeros((0, compiled.delays.k))


def simulate_compiled(compiled: CompiledPlan, config: UncertaintyConfig, n: int, seed: int,
                      block: int = BLOCK_ROLLOUTS) -> RobustnessReport:
    """n rollouts of a compiled plan, one block at a time, summarised as they go."""
    n = check_rollouts(n)
    sim = config.simulation
    acc = ReportAccumulator(compiled, sim.late_tolerance_min, block)
    for b, lo in enumerate(range(0, n, block)):
        delays = draw_delays(compiled, block_rng(seed, b), min(block, n - lo))
        acc.add(run(compiled, delays, sim.skip_passed_items))
    return acc.report(seed)


def simulate(plan: Plan, query: Query | None, db: Database, n: int = 10_000, seed: int = 0,
             config: UncertaintyConfig | None = None) -> RobustnessReport:
    """Replay `plan` n times (1 <= n <= MAX_ROLLOUTS) with delays drawn block by block from
    `block_rng(seed, b)`; same seed, same report, in memory bounded by the plan's size."""
    n = check_rollouts(n)
    compiled, config = compile_for(plan, query, db, config)
    return simulate_compiled(compiled, config, n, seed)


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
