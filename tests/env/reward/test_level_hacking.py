"""The reward cannot be gamed at any level (utp_env/env/levels.py), and shaping cannot change which plan wins.

At levels 1-3 each degenerate policy, worse variant and trick that adds content of
tests/support/degenerate_policies.py is applied to the reference plan and the result read as the level's
plan (`LevelTask.view`: the level's given part and the policy's version of what the level asks). A policy
that leaves what the level asks unchanged (legs only, at level 1) is no attack there; every other scores
below the honest level plan on every query, and the degenerate ones below the deterministic baseline on
average ("another query's plan" plans a trip to other cities: `another_trip`). Hypothesis searches over
edits that add or replace content at every level find none that raises the level's reward.

Shaping (utp_env/env/potential.py): complete episodes of random plans, played through the env with
`shaping: true`, return exactly their plan's reward (γ = 1) or their discounted reward (γ < 1), so every
pair of plans is ranked as the final reward ranks it, at every level.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np
import pytest
from degenerate_policies import ADDING, ADDITIVE, POLICIES, REPLACING, VARIANTS
from hypothesis import given, settings
from hypothesis import strategies as st

from utp_env.agents.base import Toolkit
from utp_env.agents.reference import ReferencePlanner
from utp_env.dataset import Dataset, open_dataset
from utp_env.env.config import DEFAULT_REWARD_WEIGHTS, level_pool
from utp_env.env.core import UTPEnv
from utp_env.env.levels import LEVELS, LevelTask, level_task
from utp_env.env.reward import score_plan
from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.rl.scripted import level_calls

PART_LEVELS = (1, 2, 3)


@functools.cache
def mini() -> Dataset:
    return open_dataset(profile="mini", progress=False)


@functools.cache
def deterministic_plan(query_id: str) -> Plan | None:
    dataset = mini()
    return ReferencePlanner(buffers=False).run(dataset.query(query_id), Toolkit(dataset.db)).plan


def level_reward(task: LevelTask, plan: Plan) -> float:
    """The level's reward of a plan of the whole trip (its part the level asks)."""
    dataset = mini()
    reference = dataset.references[task.query.query_id]
    return score_plan(task.view(plan), task.query, dataset.db, weights=DEFAULT_REWARD_WEIGHTS,
                      reference=reference, task=task).reward


def tasks(number: int, limit: int | None) -> list[tuple[LevelTask, Query]]:
    dataset = mini()
    pool = [q for q in level_pool(dataset.db, "validation", LEVELS[number]) if q.query_id in dataset.references]
    return [(level_task(LEVELS[number], q, dataset.references[q.query_id]), q) for q in pool[:limit]]


def cities(plan: Plan) -> set[str]:
    return {city for day in plan.days for city in day.cities}


def another_trip(dataset: Dataset, chosen: list[tuple[LevelTask, Query]], n: int) -> Plan:
    """The honest plan of the next query (cyclically) that visits none of query `n`'s cities: "another query's
    plan" is an attack only when it plans another trip. A level views a part of the trip (at level 2 one day in
    the destination), and the same part of a trip to the same city is a legitimate plan of it, not a trick."""
    own = cities(dataset.references[chosen[n][1].query_id])
    for k in range(1, len(chosen)):
        plan = dataset.references[chosen[(n + k) % len(chosen)][1].query_id]
        if not cities(plan) & own:
            return plan
    raise AssertionError(f"every query of the level visits a city of {chosen[n][1].query_id}")


def check_level(number: int, limit: int | None) -> dict[str, float]:
    """Mean level reward of each policy where it attacks what the level asks; fails on any query where one
    reaches the honest level plan."""
    dataset = mini()
    chosen = tasks(number, limit)
    sums: dict[str, list[float]] = {"reference": [], "deterministic": []}
    beaten: list[tuple[str, str, float, float]] = []
    for n, (task, query) in enumerate(chosen):
        honest_plan = dataset.references[query.query_id]
        other = another_trip(dataset, chosen, n)
        honest = level_reward(task, honest_plan)
        sums["reference"].append(honest)
        det = deterministic_plan(query.query_id)
        sums["deterministic"].append(level_reward(task, det) if det is not None else 0.0)
        for name, policy in {**POLICIES, **VARIANTS, **ADDITIVE}.items():
            plan = policy(honest_plan, query, dataset.db, other)
            if plan is None or task.view(plan) == task.view(honest_plan):
                continue  # nothing of what the level asks is changed: no attack at this level
            value = level_reward(task, plan)
            sums.setdefault(name, []).append(value)
            if value >= honest:
                beaten.append((name, query.query_id, value, honest))
    assert beaten == [], beaten[:10]
    means = {name: sum(v) / len(v) for name, v in sums.items() if v}
    applied = {name for name in POLICIES if len(sums.get(name, [])) > len(chosen) // 2}
    assert all(means[name] < means["deterministic"] for name in applied), means
    return means


@pytest.mark.parametrize("number", PART_LEVELS)
def test_degenerate_policies_and_tricks_score_below_honest_plans_at_every_level(number: int) -> None:
    means = check_level(number, 40)
    assert means["reference"] >= means["deterministic"] > means["submit at once"] == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("number", PART_LEVELS)
def test_degenerate_policies_and_tricks_score_below_honest_plans_at_every_level_on_every_query(number: int) -> None:
    check_level(number, None)


EDITS = {**ADDING, **REPLACING}


@pytest.mark.parametrize("number", PART_LEVELS)
@settings(max_examples=25, deadline=None, derandomize=True)
@given(which=st.integers(0, 39), edits=st.lists(st.tuples(st.sampled_from(sorted(EDITS)), st.integers(0, 50)),
                                                min_size=1, max_size=3))
def test_no_edit_that_adds_or_forges_content_raises_a_levels_reward(number: int, which: int,
                                                                      edits: list[tuple[str, int]]) -> None:
    dataset = mini()
    task, query = tasks(number, 40)[which % len(tasks(number, 40))]
    honest_plan = dataset.references[query.query_id]
    honest = level_reward(task, honest_plan)
    plan: Plan = honest_plan
    for name, pick in edits:
        edited = EDITS[name](plan, query, dataset.db, pick)
        plan = edited if edited is not None else plan
    assert level_reward(task, plan) <= honest + 1e-12


# ---------------------------------------------------------------- shaping ranks plans as the reward does


def random_call_sequences(task: LevelTask, plan: Plan, rng: np.random.Generator, n: int
                          ) -> list[list[tuple[str, dict[str, Any]]]]:
    """`n` random episodes' tool calls around the honest plan's: subsets in shuffled order, some with a
    call repeated, one removed again or retimed, and the empty episode."""
    calls = level_calls(task, plan)[:-1]  # without the final submit
    out: list[list[tuple[str, dict[str, Any]]]] = [[]]
    while len(out) < n:
        keep = [c for c in calls if rng.random() < 0.7]
        order = list(rng.permutation(len(keep)))
        chosen = [keep[i] for i in order]
        if chosen and rng.random() < 0.3:
            chosen.append(chosen[int(rng.integers(len(chosen)))])  # a repeat (refused or not counted)
        if chosen and rng.random() < 0.3 and chosen[0][0] == "add_item":  # moved an hour later
            name, args = chosen[0]
            start, end = args["start"].split()[0], args["end"].split()[0]
            later = {**args, "start": f"{(int(start[:2]) + 1) % 24:02d}{start[2:]}",
                     "end": f"{(int(end[:2]) + 1) % 24:02d}{end[2:]}"}
            chosen[0] = (name, later)
        out.append(chosen)
    return out


def shaped_episode(env: UTPEnv, query_id: str, calls: list[tuple[str, dict[str, Any]]], gamma: float
                   ) -> tuple[float, float, int]:
    """(Σ_t γ^t r_t of the shaped rewards, the plan's reward, the number of steps) of one episode that makes
    `calls` (each refused one included) and submits."""
    env.reset(seed=0, options={"query_id": query_id})
    total, steps = 0.0, 0
    info: dict[str, Any] = {}
    for t, (name, args) in enumerate([*calls, ("submit", {})]):
        _, reward, terminated, truncated, info = env.step({"tool": name, "args": args})
        total += gamma ** t * float(reward)
        steps = t + 1
        if terminated or truncated:
            break
    return total, float(info["unshaped_reward"]), steps


@pytest.mark.parametrize("number", [1, 2, 3, 4])
def test_complete_episode_returns_rank_random_plans_as_the_final_reward_does(number: int) -> None:
    dataset = mini()
    rng = np.random.default_rng(number)
    env = UTPEnv(profile="mini", level=number, config={"shaping": True})
    discounted = UTPEnv(profile="mini", level=number, config={"shaping": True, "shaping_gamma": 0.9})
    for task, query in tasks(number, 3):
        episodes = random_call_sequences(task, dataset.references[query.query_id], rng, 6)
        results = [shaped_episode(env, query.query_id, calls, 1.0) for calls in episodes]
        for ret, reward, _ in results:
            assert ret == pytest.approx(reward, abs=1e-9)  # Φ(s_0) = 0 and Φ(s_T) = 0: the return is the reward
        for (ret_a, reward_a, _), (ret_b, reward_b, _) in itertools.combinations(results, 2):
            assert (ret_a > ret_b + 1e-9) == (reward_a > reward_b + 1e-9)
            assert (ret_a < ret_b - 1e-9) == (reward_a < reward_b - 1e-9)
        for calls in episodes[:3]:
            ret, reward, steps = shaped_episode(discounted, query.query_id, calls, 0.9)
            assert ret == pytest.approx(0.9 ** (steps - 1) * reward, abs=1e-9)  # the unshaped discounted return
        assert len({round(r, 9) for _, r, _ in results}) > 1  # the random plans do differ
