"""The reward cannot be gamed: degenerate policies, tricks that add content, mutation searches, an
optimiser, extreme weights.

Degenerate policies (`tests/support/degenerate_policies.py`: no times, the point-of-interest list left
out, legs only, one item per day, copies of one venue, everything invented, another query's plan,
maximal items, submitting at once) score below the reference planner on every query and below the
honest deterministic baseline on average; worse variants of the honest plan (stated distances of
0 m, attractions at night, zero-length visits, legs padded by hours) below it on every query; on
UTP-v0 and in the closed loop (UTP-Replan-v0, where the traveller then does nothing but continue).
Tricks that add content (names only in the summary fields, invented stops, zero-length copies of a
stay, notes dropped after padding, forged timetables, renumbered days, all of them at once) score
below the honest plan on every query, and the lateness sink below the reference repair policy in
every closed-loop episode. Hypothesis searches over mutations that remove content, and over edits
that add or replace content with what is unscheduled, unresolvable, zero-length, duplicate or
forged, find none that raises the reward; a seeded hill-climb accepts only legitimate edits.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import gymnasium as gym
import pytest
from degenerate_policies import (
    ADDING,
    ADDITIVE,
    ALTERNATIVES,
    LEGITIMATE,
    POLICIES,
    REPLACING,
    VARIANTS,
    hill_climb,
    lateness_sink,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from utp_env.agents.base import Toolkit
from utp_env.agents.reference import ReferencePlanner
from utp_env.dataset import Dataset, open_dataset
from utp_env.env.config import DEFAULT_REWARD_WEIGHTS, EnvConfig, split_pool
from utp_env.env.episode import TerminationReason, finish
from utp_env.env.replan import ReplanConfig
from utp_env.env.reward import weighted_reward
from utp_env.itinerary import Day, Plan
from utp_env.query import Query


@functools.cache
def mini() -> Dataset:
    return open_dataset(profile="mini", progress=False)


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return mini()


def plan_reward(plan: Plan | None, query: Query, dataset: Dataset) -> float:
    reference = dataset.references.get(query.query_id)
    return finish(TerminationReason.SUBMITTED, plan, query, dataset.db, weights=DEFAULT_REWARD_WEIGHTS,
                  reference=reference).reward


def check_policies(dataset: Dataset, queries: list[Query]) -> dict[str, float]:
    """Mean reward of each policy over `queries`; fails on any query where a policy reaches the reference."""
    deterministic = ReferencePlanner(buffers=False)
    sums = dict.fromkeys(["reference", "deterministic", *POLICIES, *VARIANTS], 0.0)
    beaten: list[tuple[str, str, float, float]] = []
    for n, query in enumerate(queries):
        honest_plan = dataset.references[query.query_id]
        other = dataset.references[queries[(n + 1) % len(queries)].query_id]
        honest = plan_reward(honest_plan, query, dataset)
        sums["reference"] += honest
        sums["deterministic"] += plan_reward(deterministic.run(query, Toolkit(dataset.db)).plan, query, dataset)
        for name, policy in {**POLICIES, **VARIANTS}.items():
            value = plan_reward(policy(honest_plan, query, dataset.db, other), query, dataset)
            sums[name] += value
            if value >= honest:
                beaten.append((name, query.query_id, value, honest))
    assert beaten == [], beaten[:10]
    means = {name: total / len(queries) for name, total in sums.items()}
    assert all(means[name] < means["deterministic"] for name in POLICIES), means
    return means


def passing_queries(dataset: Dataset, limit: int | None = None) -> list[Query]:
    return [q for q in dataset.queries if q.query_id in dataset.references][:limit]


def test_degenerate_policies_score_below_honest_plans(dataset: Dataset) -> None:
    means = check_policies(dataset, passing_queries(dataset, 120))
    assert means["reference"] > means["deterministic"] > means["submit at once"] == 0.0


@pytest.mark.slow
def test_degenerate_policies_score_below_honest_plans_on_every_mini_query(dataset: Dataset) -> None:
    check_policies(dataset, passing_queries(dataset))


# ---------------------------------------------------------------- the closed loop


def lived_reward(env: Any, query_id: str, plan: Plan, seed: int) -> float:
    """Submit `plan` to UTP-Replan-v0 and live through the trip without repairing anything."""
    env.reset(seed=seed, options={"query_id": query_id, "plan": plan})
    while True:
        _, reward, terminated, truncated, _ = env.step({"tool": "continue_trip"})
        if terminated or truncated:
            return float(reward)


def test_doing_nothing_in_the_closed_loop_scores_below_living_an_honest_plan(dataset: Dataset) -> None:
    env = gym.make("utp_env/UTP-Replan-v0", profile="mini").unwrapped
    queries = [q for q in split_pool(env.db, "validation") if q.query_id in dataset.references][:30]
    deterministic = ReferencePlanner(buffers=False)
    sums = dict.fromkeys(["reference", "deterministic", *POLICIES, *VARIANTS], 0.0)
    for n, query in enumerate(queries):
        honest_plan = dataset.references[query.query_id]
        other = dataset.references[queries[(n + 1) % len(queries)].query_id]
        honest = lived_reward(env, query.query_id, honest_plan, n)
        sums["reference"] += honest
        det_plan = deterministic.run(query, Toolkit(dataset.db)).plan
        assert det_plan is not None
        sums["deterministic"] += lived_reward(env, query.query_id, det_plan, n)
        for name, policy in {**POLICIES, **VARIANTS}.items():
            plan = policy(honest_plan, query, dataset.db, other)
            value = lived_reward(env, query.query_id, plan, n) if plan.days else 0.0
            sums[name] += value
            if name in POLICIES:
                assert value < honest, (name, query.query_id, value, honest)
    assert all(sums[name] < sums["deterministic"] for name in POLICIES), sums
    # The variants lose on average; legs padded by 10 h can still come out level or slightly ahead on
    # a rare trip whose realised lateness the padding reduces (utp-q-0201 of mini: 0.906 against
    # 0.898), though its plan reward on UTP-v0 collapses (TDAS 0). docs/ENV.md says so.
    assert all(sums[name] < sums["reference"] for name in VARIANTS), sums


# ---------------------------------------------------------------- tricks that add content


def check_tricks(dataset: Dataset, queries: list[Query]) -> dict[str, int]:
    """How many of `queries` each trick of `ADDITIVE` applies to; fails on any query where one reaches
    the honest plan's reward."""
    applied = dict.fromkeys(ADDITIVE, 0)
    beaten: list[tuple[str, str, float, float]] = []
    for n, query in enumerate(queries):
        honest_plan = dataset.references[query.query_id]
        other = dataset.references[queries[(n + 1) % len(queries)].query_id]
        honest = plan_reward(honest_plan, query, dataset)
        for name, trick in ADDITIVE.items():
            plan = trick(honest_plan, query, dataset.db, other)
            if plan is None:
                continue
            applied[name] += 1
            value = plan_reward(plan, query, dataset)
            if value >= honest:
                beaten.append((name, query.query_id, value, honest))
    assert beaten == [], beaten[:10]
    return applied


def test_tricks_that_add_content_score_below_honest_plans(dataset: Dataset) -> None:
    applied = check_tricks(dataset, passing_queries(dataset, 60))
    assert all(applied.values()), applied


@pytest.mark.slow
def test_tricks_that_add_content_score_below_honest_plans_on_every_mini_query(dataset: Dataset) -> None:
    check_tricks(dataset, passing_queries(dataset))


def test_a_luxury_travellers_cheapest_stay_never_wins_by_fitting_the_persona_worse(dataset: Dataset) -> None:
    """Where swapping the reference plan's stays for the cheapest ones that meet the query's
    constraints does not lose reward, the cheap stays fit the spending persona (`reward.measures.STAY_STARS`)
    as well as the reference plan's: what it gains is real (a stay nearer its stop)."""
    from utp_env.env.reward import PLAN_TERMS
    from utp_env.env.reward.measures import read_plan
    from utp_env.evaluation.context import build_context

    persona = next(t.measure for t in PLAN_TERMS if t.name == "persona")
    assert persona is not None
    swapped = 0
    for query in passing_queries(dataset):
        honest_plan = dataset.references[query.query_id]
        cheap = ALTERNATIVES["cheapest stay (luxury)"](honest_plan, query, dataset.db, honest_plan)
        if cheap is None:
            continue
        honest, value = plan_reward(honest_plan, query, dataset), plan_reward(cheap, query, dataset)
        swapped += 1
        if value >= honest:
            fit = [persona(read_plan(build_context(p, query, dataset.db))).total for p in (honest_plan, cheap)]
            assert fit[1] >= fit[0], (query.query_id, fit)
    assert swapped > 0


def sink_episodes(dataset: Dataset, queries: int, seeds: int) -> list[tuple[float, float]]:
    """(the reference plan lived with the reference repair policy, the lateness sink lived without
    repairs) over the first `queries` queries the sink applies to, `seeds` realities each."""
    from utp_env.env.replan import UTPReplanEnv
    from utp_env.runs.episode import episode_seed
    from utp_env.runs.replan_episode import live_trip

    env = UTPReplanEnv(profile="mini")
    repair = ReferencePlanner().repair
    pairs = []
    chosen = [q for q in passing_queries(dataset)
              if lateness_sink(dataset.references[q.query_id], q, dataset.db) is not None][:queries]
    for query in chosen:
        honest_plan = dataset.references[query.query_id]
        sink = lateness_sink(honest_plan, query, dataset.db)
        assert sink is not None
        for trial in range(seeds):
            seed = episode_seed(0, query.query_id, trial)
            pairs.append((live_trip(env, query, honest_plan, seed, repair)[0],
                          live_trip(env, query, sink, seed, None)[0]))
    return pairs


def test_the_lateness_sink_lives_below_the_reference_repair(dataset: Dataset) -> None:
    """A rest at a hotel of the origin after the flight home absorbed the flight's delay (the trip's
    lateness was measured at its last step); now lateness is measured at the trip's real end, and a
    stay that is no night of the trip breaks a rule."""
    pairs = sink_episodes(dataset, 6, 2)
    assert all(sink < honest for honest, sink in pairs), pairs


@pytest.mark.slow
def test_the_lateness_sink_lives_below_the_reference_repair_in_every_episode(dataset: Dataset) -> None:
    pairs = sink_episodes(dataset, 50, 4)
    assert len(pairs) == 200 and all(sink < honest for honest, sink in pairs), [p for p in pairs if p[1] >= p[0]]


# ---------------------------------------------------------------- the mutation search


def _remove(plan: Plan, day_index: int, change: str, pick: int) -> Plan:
    """One mutation that removes content from day `day_index` of `plan`."""
    days = [d.model_copy(deep=True) for d in plan.days]
    day: Day = days[day_index % len(days)]
    items = day.items
    if change == "item" and items:
        del items[pick % len(items)]
    elif change == "times" and items:
        i = pick % len(items)
        items[i] = items[i].model_copy(update={"start": None, "end": None})
    elif change == "transit" and items:
        i = pick % len(items)
        items[i] = items[i].model_copy(update={"transit_distance_m": None, "transit_stop": None})
    elif change == "leg" and day.transport:
        del day.transport[pick % len(day.transport)]
    elif change == "meal_field":
        setattr(day, ("breakfast", "lunch", "dinner")[pick % 3], None)
    elif change == "attraction_field" and day.attractions:
        del day.attractions[pick % len(day.attractions)]
    elif change == "stay":
        day.accommodation = None
    elif change == "event_field" and day.events:
        del day.events[pick % len(day.events)]
    elif change == "day" and len(days) > 1:
        del days[day_index % len(days)]
        days = [d.model_copy(update={"day": n}) for n, d in enumerate(days, 1)]
    return plan.model_copy(update={"days": days})


REMOVALS = ("item", "times", "transit", "leg", "meal_field", "attraction_field", "stay", "event_field", "day")


@settings(max_examples=150, deadline=None)
@given(which=st.integers(0, 39),
       mutations=st.lists(st.tuples(st.integers(0, 8), st.sampled_from(REMOVALS), st.integers(0, 50)),
                          min_size=1, max_size=4))
def test_no_mutation_that_removes_content_raises_the_reward(which: int, mutations: list[tuple[int, str, int]]) -> None:
    dataset = mini()
    queries = passing_queries(dataset, 40)
    query = queries[which % len(queries)]
    plan = dataset.references[query.query_id]
    honest = plan_reward(plan, query, dataset)
    for day_index, change, pick in mutations:
        plan = _remove(plan, day_index, change, pick)
    assert plan_reward(plan, query, dataset) <= honest + 1e-12, mutations


BAD_EDITS = {**ADDING, **REPLACING}


@settings(max_examples=150, deadline=None)
@given(which=st.integers(0, 39),
       edits=st.lists(st.tuples(st.sampled_from(sorted(BAD_EDITS)), st.integers(0, 500)), min_size=1, max_size=4))
def test_no_edit_that_adds_or_forges_content_raises_the_reward(which: int, edits: list[tuple[str, int]]) -> None:
    """Inserting, duplicating, renaming, retiming or restating content so that it is unscheduled,
    unresolvable, zero-length, duplicate or forged (`ADDING`, `REPLACING`) never raises the reward."""
    dataset = mini()
    queries = passing_queries(dataset, 40)
    query = queries[which % len(queries)]
    plan = dataset.references[query.query_id]
    honest = plan_reward(plan, query, dataset)
    for name, pick in edits:
        plan = BAD_EDITS[name](plan, query, dataset.db, pick) or plan
    assert plan_reward(plan, query, dataset) <= honest + 1e-12, edits


@pytest.mark.slow
def test_a_hill_climb_accepts_only_legitimate_edits(dataset: Dataset) -> None:
    """A seeded hill-climb over every edit (`LEGITIMATE`, `ADDING`, `REPLACING`), bounded at 120
    evaluations per query over 12 queries, keeps an edit only when it raises the reward: every edit it
    keeps is a legitimate one (it may well find some)."""
    import numpy as np

    rng = np.random.default_rng(0)
    kept: list[str] = []
    for query in passing_queries(dataset, 12):
        def reward(plan: Plan, query: Query = query) -> float:
            return plan_reward(plan, query, dataset)
        kept += hill_climb(dataset.references[query.query_id], query, dataset.db, reward, 120, rng)[2]
    assert set(kept) <= set(LEGITIMATE), sorted(set(kept) - set(LEGITIMATE))
    assert kept, "the optimiser found no legitimate improvement either: it is not searching"


# ---------------------------------------------------------------- weights


@pytest.mark.parametrize("weights", [{"commonsense_pass_rate": math.inf}, {"bas": math.nan}, {"tdas": -1.0},
                                     {"cats": -math.inf}])
def test_weights_that_are_not_finite_non_negative_numbers_are_refused(weights: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        EnvConfig(reward_weights={**DEFAULT_REWARD_WEIGHTS, **weights})


@pytest.mark.parametrize("term", ["completion", "hard"])
def test_realised_weights_that_are_not_finite_are_refused(term: str) -> None:
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        ReplanConfig(reward_weights={term: math.inf})


def test_huge_finite_weights_give_the_same_mean_as_their_ratios() -> None:
    values = {"bas": 0.9, "cats": 0.5, "tdas": None, "persona": 0.2}
    huge = weighted_reward(values, {"bas": 1e308, "cats": 1e308, "tdas": 1e308, "persona": 0.0})
    assert huge == pytest.approx(0.7) and math.isfinite(huge)
    assert weighted_reward(values, {"bas": 1e-320, "cats": 1e-320}) == pytest.approx(0.7)
    with pytest.raises(ValueError, match="finite"):
        weighted_reward(values, {"bas": math.inf})


def test_the_env_scores_the_reference_plan_with_huge_weights_as_with_equal_ones(dataset: Dataset) -> None:
    query = passing_queries(dataset, 1)[0]
    plan = dataset.references[query.query_id]
    equal = {name: 1.0 for name in ("bas", "cats")}
    huge = {name: 1e308 for name in ("bas", "cats")}
    rewards = [finish(TerminationReason.SUBMITTED, plan, query, dataset.db, weights=w, reference=plan).reward
               for w in (equal, huge)]
    assert rewards[0] == pytest.approx(rewards[1]) and rewards[1] > 0.5


# ---------------------------------------------------------------- the reward's own checks and bounds


def test_a_visit_when_the_venue_is_closed_fails_open_hours_and_costs_reward(dataset: Dataset) -> None:
    from degenerate_policies import night_visits

    from utp_env.evaluation import evaluate

    query = passing_queries(dataset, 1)[0]
    honest = dataset.references[query.query_id]
    assert evaluate(honest, query, dataset.db).extra["open_hours"].passed is True
    night = evaluate(night_visits(honest), query, dataset.db).extra["open_hours"]
    assert night.passed is False and "outside its opening hours" in str(night.reason)
    assert plan_reward(night_visits(honest), query, dataset) < plan_reward(honest, query, dataset)


def test_a_stated_distance_the_database_refutes_fails_and_s_spatial_reads_the_database(dataset: Dataset) -> None:
    from degenerate_policies import zero_distances

    from utp_env.evaluation import evaluate

    query = passing_queries(dataset, 1)[0]
    honest = dataset.references[query.query_id]
    lie = evaluate(zero_distances(honest), query, dataset.db)
    truth = evaluate(honest, query, dataset.db)
    assert lie.extra["transit_distances"].passed is False and "the database says" in str(lie.extra[
        "transit_distances"].reason)
    assert lie.spatial == truth.spatial  # the number the plan states does not move the metric


@pytest.mark.parametrize("field,value", [("start", 10**400), ("end", 10 * 1440 + 1)])
def test_a_time_beyond_ten_days_is_refused_with_the_field_named(field: str, value: int) -> None:
    from pydantic import ValidationError

    from utp_env.itinerary import PlanItem

    with pytest.raises(ValidationError, match=field):
        PlanItem.model_validate({"name": "Fort, Pune", "activity": "visit", field: value})


def test_a_distance_that_is_not_a_number_is_refused_and_a_non_finite_term_is_an_error() -> None:
    from pydantic import ValidationError

    from utp_env.itinerary import PlanItem

    with pytest.raises(ValidationError, match="transit_distance_m"):
        PlanItem.model_validate({"name": "Fort, Pune", "activity": "visit", "transit_distance_m": math.nan})
    with pytest.raises(ValueError, match="bas is nan, not a finite number"):
        weighted_reward({"bas": math.nan}, {"bas": 1.0})
