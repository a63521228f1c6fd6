"""The vectorised rollout engine: loop over the plan's steps, vector over n rollouts.

Semantics (docs/SIMULATION.md). `t` is the time the traveller is free:
- an item starts at s = max(planned start, t + gap); a skippable item (a visit, stay, rest or
  event of positive length) reached at or after its planned end is lost when `skip_passed_items`:
  it takes no time (end = s). Check-in, checkout and arrivals are never skipped;
- VISIT ends at max(planned end, s + v + overrun); ELASTIC at max(planned end, s);
  FIXED at max(planned end, s + planned length);
- the traveller reaches the departure point at the end of the previous item, or at the start of
  an `arrive` item (at the airport/station from then on);
- LEG: missed when that is later than departure - margin; then rebooked w whole days later, w the
  fewest that make it reachable; arrival = scheduled arrival + 1440 w + delay;
- CAB: leaves when the traveller is there (not before departure), arrives after its scheduled
  duration plus delay; never missed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from utp_env.simulation.compile import CAB, ELASTIC, LEG, VISIT, CompiledPlan
from utp_env.tools.clock import MINUTES_PER_DAY


@dataclass
class Rollouts:
    """Actual start/end of every step in every rollout, shape (n, S); `lost` flags skipped items and
    `missed` flags missed legs (always False for items)."""

    start: np.ndarray
    end: np.ndarray
    lost: np.ndarray
    missed: np.ndarray


def run(plan: CompiledPlan, delays: np.ndarray, skip_passed_items: bool = True) -> Rollouts:
    """Walk all rollouts at once. `delays` has shape (n, k): one column per delay element."""
    n, steps = delays.shape[0], plan.n_steps
    # step-major (S, n) storage keeps each step's row contiguous; Rollouts exposes (n, S) views
    start = np.empty((steps, n))
    end = np.empty((steps, n))
    lost = np.zeros((steps, n), dtype=bool)
    missed = np.zeros((steps, n), dtype=bool)
    t = np.full(n, -np.inf)  # the traveller is ready for the first step whenever it starts
    reach = t  # when the traveller is at the next leg's departure point
    zero = np.zeros(n)
    for j in range(steps):
        d = delays[:, plan.draw[j]] if plan.draw[j] >= 0 else zero
        start[j], end[j], lost[j], missed[j], t, reach = advance(plan, j, d, t, reach, skip_passed_items)
    return Rollouts(start.T, end.T, lost.T, missed.T)


def advance(plan: CompiledPlan, j: int, d: np.ndarray, t: np.ndarray, reach: np.ndarray,
            skip_passed_items: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                     np.ndarray, np.ndarray]:
    """Step j of every rollout: the one definition of the semantics above, shared by `run` (all
    rollouts, vectors of shape (n,)) and the closed-loop realisation (`utp_env/simulation/realise.py`,
    one rollout, shape (1,)).

    `d` is the step's delay (zeros when it has no delay element), `t` when the traveller is free and
    `reach` when they are at the next departure point. Returns (start, end, lost, missed, t, reach)
    with the new `t` and `reach`; `end` is the new `t`.
    """
    kind = plan.kind[j]
    ps, pe = plan.start[j], plan.end[j]
    no = np.zeros(np.shape(t), dtype=bool)
    if kind == LEG:
        latest = ps - plan.margin[j]
        wait = np.where(reach > latest, np.ceil((reach - latest) / MINUTES_PER_DAY), 0.0)
        start = ps + MINUTES_PER_DAY * wait
        t = reach = plan.sched_arr[j] + MINUTES_PER_DAY * wait + d
        return start, t, no, wait > 0, t, reach
    if kind == CAB:
        start = np.maximum(ps, reach)
        t = reach = start + (plan.sched_arr[j] - ps) + d
        return start, t, no, no, t, reach
    s = np.maximum(ps, t + plan.gap[j])
    if kind == VISIT:
        e = np.maximum(pe, s + plan.base[j] + d)
    elif kind == ELASTIC:
        e = np.maximum(pe, s)
    else:  # FIXED
        e = np.maximum(pe, s + (pe - ps))
    lost = no
    # `plan.skippable[j]` for this one step: the property builds the whole (S,) mask, which would make
    # each step O(S) and a walk over S steps quadratic
    if skip_passed_items and kind in (VISIT, ELASTIC) and pe > ps:
        lost = s >= pe
        e = np.where(lost, s, e)
    return s, e, lost, no, e, (s if plan.arrive[j] else e)
