"""A plain per-rollout Python reference implementation of the engine (the benchmark's baseline).

It walks the same compiled plan with the same delay draws, one rollout and one step at a time,
with scalar arithmetic only; the tests check it equals `engine.run` on the same draws.
"""

from __future__ import annotations

import math

import numpy as np

from utp_env.simulation.compile import CAB, ELASTIC, LEG, VISIT, CompiledPlan
from utp_env.simulation.engine import Rollouts
from utp_env.tools.clock import MINUTES_PER_DAY


def run_loop(plan: CompiledPlan, delays: np.ndarray, skip_passed_items: bool = True) -> Rollouts:
    """Same contract as `engine.run`, computed rollout by rollout."""
    n, steps = delays.shape[0], plan.n_steps
    kinds = [int(k) for k in plan.kind]
    ps_all, pe_all = plan.start.tolist(), plan.end.tolist()
    base, gap, margin = plan.base.tolist(), plan.gap.tolist(), plan.margin.tolist()
    sched_arr, draws, skippable = plan.sched_arr.tolist(), plan.draw.tolist(), plan.skippable.tolist()
    arrive = plan.arrive.tolist()
    table = delays.tolist()
    start = [[0.0] * steps for _ in range(n)]
    end = [[0.0] * steps for _ in range(n)]
    lost = [[False] * steps for _ in range(n)]
    missed = [[False] * steps for _ in range(n)]
    for r in range(n):
        row = table[r]
        t = reach = -math.inf
        for j in range(steps):
            ps, pe, kind = ps_all[j], pe_all[j], kinds[j]
            d = row[draws[j]] if draws[j] >= 0 else 0.0
            if kind == LEG:
                latest = ps - margin[j]
                wait = math.ceil((reach - latest) / MINUTES_PER_DAY) if reach > latest else 0
                missed[r][j] = wait > 0
                start[r][j] = ps + MINUTES_PER_DAY * wait
                t = reach = sched_arr[j] + MINUTES_PER_DAY * wait + d
            elif kind == CAB:
                start[r][j] = max(ps, reach)
                t = reach = start[r][j] + (sched_arr[j] - ps) + d
            else:
                s = max(ps, t + gap[j])
                if kind == VISIT:
                    e = max(pe, s + base[j] + d)
                elif kind == ELASTIC:
                    e = max(pe, s)
                else:
                    e = max(pe, s + (pe - ps))
                if skip_passed_items and skippable[j] and s >= pe:
                    lost[r][j] = True
                    e = s
                start[r][j] = s
                t = e
                reach = s if arrive[j] else e
            end[r][j] = t
    shape = (n, steps)
    return Rollouts(np.array(start, dtype=float).reshape(shape), np.array(end, dtype=float).reshape(shape),
                    np.array(lost, dtype=bool).reshape(shape), np.array(missed, dtype=bool).reshape(shape))
