"""The itinerary tools through the env: building a plan step by step, errors that leave the plan
unchanged, scoring (the env's report equals `evaluate`'s), step limit, stochastic and robustness ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from env_episodes import plan_actions, three_day_query

from utp_env.config import EvaluationReadings, UncertaintyConfig
from utp_env.env.config import DEFAULT_REWARD_WEIGHTS, query_pool, reference_plan
from utp_env.env.core import UTPEnv
from utp_env.env.episode import TerminationReason, finish, pass_rate
from utp_env.env.reward import score_plan, weighted_reward
from utp_env.evaluation import evaluate
from utp_env.evaluation.report import METRICS, CheckResult
from utp_env.itinerary import Plan
from utp_env.plan_format import format_plan, parse_plan
from utp_env.tools.database import Database


@pytest.fixture(scope="module")
def env(mini_db_path: Path) -> UTPEnv:
    return UTPEnv(db_path=mini_db_path)


def run_actions(env: UTPEnv, actions: list[dict[str, Any]]) -> None:
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        assert not obs.startswith("Error"), (action, obs)
        assert (reward, terminated, truncated) == (0.0, False, False)


def test_building_a_plan_and_submitting_scores_it_like_evaluate(env: UTPEnv) -> None:
    query = three_day_query(env.db)
    env.reset(seed=0, options={"query_id": query.query_id})
    run_actions(env, plan_actions(env.db, query))
    plan = env.episode.plan
    assert [d.day for d in plan.days] == [1, 2, 3]
    assert plan.days[0].cities[0] == query.org and plan.days[2].end_city == query.org
    assert plan.days[1].breakfast and plan.days[1].lunch and plan.days[1].dinner
    assert len(plan.days[1].attractions) == 2
    view = env.step({"tool": "view_plan", "args": {}})[0]
    assert "item 1." in view and "leg 1." in view
    checked = env.step({"tool": "check_plan"})[0]
    assert "commonsense checks:" in checked and "metrics:" in checked
    _, reward, terminated, truncated, info = env.step({"tool": "submit"})
    assert terminated and not truncated and info["termination_reason"] == "submitted"
    reference = reference_plan(env.db, query.query_id)
    expected = evaluate(plan, query, env.db, reference=reference)
    assert info["report"] == expected.model_dump(mode="json")
    assert reward == pytest.approx(score_plan(plan, query, env.db, weights=env.config.reward_weights,
                                              reference=reference).reward)
    assert 0.0 < reward <= 1.0
    assert expected.commonsense["within_sandbox"].passed is True


def test_submit_plan_in_paper_format_equals_evaluate_of_the_parsed_plan(env: UTPEnv) -> None:
    query = three_day_query(env.db)
    env.reset(seed=0, options={"query_id": query.query_id})
    run_actions(env, plan_actions(env.db, query))
    data = format_plan(env.episode.plan)
    env.reset(seed=1, options={"query_id": query.query_id})
    obs, reward, terminated, _, info = env.step({"tool": "submit_plan", "args": {"plan": data}})
    assert terminated, obs
    parsed = parse_plan(data, query=query, db=env.db)
    reference = reference_plan(env.db, query.query_id)
    assert info["report"] == evaluate(parsed, query, env.db, reference=reference).model_dump(mode="json")
    assert reward > 0


def test_failed_tool_calls_explain_and_leave_the_plan_unchanged(env: UTPEnv) -> None:
    query = three_day_query(env.db)
    env.reset(seed=0, options={"query_id": query.query_id})
    run_actions(env, plan_actions(env.db, query)[:3])
    before = env.episode.snapshot()
    city = env.episode.plan.days[0].end_city
    bad = [
        ({"tool": "add_item", "args": {"day": 2, "name": "No Such Palace", "activity": "visit",
                                       "start": "10:00", "end": "11:00"}}, "no attraction called"),
        ({"tool": "add_item", "args": {"day": 9, "name": "x", "activity": "visit", "start": "10:00",
                                       "end": "11:00"}}, "argument 'day'"),
        ({"tool": "add_item", "args": {"day": 2, "name": "x", "activity": "visit", "start": "25:99",
                                       "end": "11:00"}}, "not a time"),
        ({"tool": "add_leg", "args": {"day": 1, "mode": "flight", "number": "ZZ-000", "origin": query.org,
                                      "destination": city}}, "search_flights"),
        # a bus's search tool is search_buses (the message once said search_buss)
        ({"tool": "add_leg", "args": {"day": 1, "mode": "bus", "number": "ZZ-000", "origin": query.org,
                                      "destination": city}}, "list them with search_buses"),
        ({"tool": "add_leg", "args": {"day": 1, "mode": "bus", "origin": query.org, "destination": city}},
         "(see search_buses)"),
        ({"tool": "add_leg", "args": {"day": 1, "mode": "cab", "origin": query.org, "destination": "Atlantis"}},
         "argument 'destination'"),
        ({"tool": "remove_item", "args": {"day": 1, "index": 50}}, "give a number from 1"),
        ({"tool": "remove_leg", "args": {"day": 3, "index": 1}}, "nothing planned"),
        ({"tool": "set_stay", "args": {"name": "Hotel Nowhere", "city": city, "from_day": 1, "to_day": 2}},
         "search_stays"),
        ({"tool": "set_stay", "args": {"name": "x", "city": city, "from_day": 2, "to_day": 1}}, "before from_day"),
        ({"tool": "submit_plan", "args": {"plan": "this is not a plan"}}, "could not be read"),
        ({"tool": "move_item", "args": {"day": 1, "index": 1, "to_day": 5}}, "past the end"),
    ]
    for action, fragment in bad:
        obs, reward, terminated, truncated, _ = env.step(action)
        assert obs.startswith("Error") and fragment in obs, (action, obs)
        assert "plan is unchanged" in obs
        assert env.episode.snapshot() == before and not (terminated or truncated) and reward == 0.0


def test_every_mode_names_a_registered_search_tool() -> None:
    from utp_env.tools.lookup import LOOKUP_TOOLS
    from utp_env.tools.lookup.transport import SEARCH_TOOL_OF_MODE
    from utp_env.tools.schema import SERVICE_TABLE

    assert set(SEARCH_TOOL_OF_MODE) == set(SERVICE_TABLE)
    assert all(tool in LOOKUP_TOOLS for tool in SEARCH_TOOL_OF_MODE.values()), SEARCH_TOOL_OF_MODE


def test_move_and_remove_items(env: UTPEnv) -> None:
    query = three_day_query(env.db)
    env.reset(seed=0, options={"query_id": query.query_id})
    run_actions(env, plan_actions(env.db, query))
    day2 = env.episode.plan.days[1]
    first = day2.items[0].name
    obs = env.step({"tool": "move_item", "args": {"day": 2, "index": 1, "start": "07:00"}})[0]
    assert obs.startswith("Moved"), obs
    assert (day2.items[0].name, day2.items[0].start, day2.items[0].end) == (first, 7 * 60, 7 * 60 + 50)
    n = len(day2.items)
    assert env.step({"tool": "remove_item", "args": {"day": 2, "index": 1}})[0].startswith("Removed")
    assert len(day2.items) == n - 1 and day2.breakfast is None
    legs = len(env.episode.plan.days[2].transport)
    assert env.step({"tool": "remove_leg", "args": {"day": 3, "index": 1}})[0].startswith("Removed")
    assert len(env.episode.plan.days[2].transport) == legs - 1
    assert env.episode.plan.days[2].cities == [env.episode.plan.days[2].cities[0]]


def test_step_limit_truncates_and_scores_the_plan_so_far(mini_db_path: Path) -> None:
    env = UTPEnv(db_path=mini_db_path, config={"step_limit": 3})
    env.reset(seed=4)
    for _ in range(2):
        assert env.step({"tool": "view_plan"})[1:4] == (0.0, False, False)
    obs, reward, terminated, truncated, info = env.step("not json")
    assert truncated and not terminated and "Step limit (3)" in obs
    assert info["termination_reason"] == "step_limit" and reward == 0.0  # nothing delivered
    assert info["report"]["query_id"] == env.episode.query.query_id


def test_check_plan_can_be_switched_off(mini_db_path: Path) -> None:
    env = UTPEnv(db_path=mini_db_path, config={"check_plan": False})
    _, info = env.reset(seed=0)
    assert "check_plan" not in {t["function"]["name"] for t in info["tools"]}
    obs = env.step({"tool": "check_plan"})[0]
    assert obs.startswith("Error: unknown tool 'check_plan'")


def test_stochastic_and_robustness_reports_are_seeded(mini_db_path: Path) -> None:
    query = None
    infos = []
    for _ in range(2):
        env = UTPEnv(db_path=mini_db_path, config={"robustness": True, "robustness_rollouts": 200})
        query = query or three_day_query(env.db)
        env.reset(seed=11, options={"query_id": query.query_id, "stochastic": True})
        run_actions(env, plan_actions(env.db, query))
        infos.append(env.step({"tool": "submit"})[4])
    first, second = infos
    assert first["robustness"]["n"] == 200 and 0.0 <= first["robustness"]["hold_rate"] <= 1.0
    assert first["realisation"] == second["realisation"] and first["robustness"] == second["robustness"]
    assert first["realisation_text"].startswith("The plan")


def test_end_episode_records_the_reason(env: UTPEnv) -> None:
    env.reset(seed=2)
    reward, info = env.end_episode("agent_error", "model crashed")
    assert info["termination_reason"] == "agent_error" and info["message"] == "model crashed" and reward == 0.0
    env.reset(seed=2)
    assert env.end_episode(TerminationReason.STEP_LIMIT)[1]["termination_reason"] == TerminationReason.STEP_LIMIT
    with pytest.raises(ValueError, match="reason must be one of"):
        env.reset(seed=2) and env.end_episode("bored")


def test_the_final_info_is_the_outcome_of_the_shared_finish_step(env: UTPEnv) -> None:
    """The env ends through `finish`: its final info holds exactly `EpisodeOutcome.to_json()`
    (the keys of a results.jsonl line), and `metrics` is the report's eight metrics."""
    query = three_day_query(env.db)
    env.reset(seed=3, options={"query_id": query.query_id})
    run_actions(env, plan_actions(env.db, query))
    plan = env.episode.plan.model_copy(deep=True)
    info = env.step({"tool": "submit"})[4]
    expected = finish(TerminationReason.SUBMITTED, plan, query, env.db, weights=env.config.reward_weights,
                      reference=reference_plan(env.db, query.query_id)).to_json()
    assert {k: info[k] for k in expected} == expected
    assert list(info["metrics"]) == list(METRICS) and "evaluation" not in info  # one name: `report`
    assert Plan.model_validate(info["plan"]) == plan


def test_an_evaluator_failure_ends_the_episode_as_infrastructure_error(env: UTPEnv, monkeypatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("evaluator bug")

    monkeypatch.setattr("utp_env.env.reward.evaluate_context", broken)
    env.reset(seed=5)
    _, reward, terminated, truncated, info = env.step({"tool": "submit"})
    assert terminated and not truncated and reward == 0.0  # the agent did submit; the benchmark failed to score it
    assert info["termination_reason"] == TerminationReason.INFRASTRUCTURE_ERROR
    assert info["report"] is None and info["metrics"] is None and "evaluator bug" in info["error"]
    assert env.episode.status == TerminationReason.INFRASTRUCTURE_ERROR


def test_reward_is_a_renormalised_weighted_mean() -> None:
    # (1*0.5 + 3*1.0) / (1 + 3) = 0.875; cats is None (left out), persona has weight 0.
    values = {"bas": 0.5, "cats": None, "tdas": 1.0, "persona": 0.2}
    assert weighted_reward(values, {"bas": 1.0, "cats": 5.0, "tdas": 3.0, "persona": 0.0}) == 0.875
    assert weighted_reward({"bas": None}, {"bas": 1.0}) == 0.0
    checks = {"a": CheckResult(passed=True), "b": CheckResult(passed=False), "c": CheckResult(passed=None),
              "d": CheckResult(passed=True)}
    assert pass_rate(checks) == pytest.approx(2 / 3)
    assert pass_rate({"c": CheckResult(passed=None)}) is None


def test_a_crashing_tool_ends_the_episode_as_infrastructure_error(env: UTPEnv, monkeypatch) -> None:
    from dataclasses import replace

    def broken(db: Database, args: Any) -> Any:
        raise RuntimeError("index corrupted")

    monkeypatch.setitem(env.tools, "distance", replace(env.tools["distance"], fn=broken))
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step({"tool": "distance", "args": {"origin": "a",
                                                                                      "destination": "b"}})
    assert "internal error in tool 'distance': RuntimeError: index corrupted" in obs
    assert truncated and not terminated and reward == 0.0
    assert info["termination_reason"] == "infrastructure_error" and "traceback" in info["calls"][0]


def test_reference_plans_submitted_in_paper_format_score_like_evaluate(mini_db_path: Path, tmp_path: Path) -> None:
    """With a dataset (queries + planner-made reference plans) beside the tables, the env draws its
    queries from it, and a reference plan submitted via submit_plan gets evaluate's exact report,
    Ordering included (1.0 against itself)."""
    import shutil

    from utp_env.dataset import build_query_set

    db_dir = tmp_path / "db"
    shutil.copytree(mini_db_path, db_dir)
    kept = build_query_set(db_dir, n=12, seed=0, progress=False)
    assert kept > 0
    env = UTPEnv(db_path=db_dir)
    assert len(query_pool(env.db)) == kept
    for seed, query in enumerate(query_pool(env.db)[:3]):
        env.reset(seed=seed, options={"query_id": query.query_id})
        reference = reference_plan(env.db, query.query_id)
        assert reference is not None and reference.source == "planner-made"
        data = format_plan(reference)
        _, reward, terminated, _, info = env.step({"tool": "submit_plan", "args": {"plan": data}})
        assert terminated
        expected = evaluate(parse_plan(data, query=query, db=env.db), query, env.db, reference=reference)
        assert info["report"] == expected.model_dump(mode="json")
        assert expected.commonsense_pass and expected.hard_pass
        day_by_day = UncertaintyConfig(readings=EvaluationReadings(ordering="day_by_day"))
        assert evaluate(parse_plan(data, query=query, db=env.db), query, env.db, day_by_day,
                        reference=reference).ordering == 1.0  # TripCraft's reading compares days 1 and 2 too
        parsed = parse_plan(data, query=query, db=env.db)
        assert reward == pytest.approx(score_plan(parsed, query, env.db, weights=env.config.reward_weights,
                                                  reference=reference).reward)


def test_the_reward_gates_hard_constraints_like_the_paper(tmp_path: Path) -> None:
    """An invented stay costs nothing, so its budget check 'passes'; the reward must not pay for it
    (hard constraints count only when complete information and within sandbox pass)."""
    from tiny_world import HOTEL, build_tiny_db, good_plan, make_query

    db = build_tiny_db(tmp_path / "db")
    invented = good_plan()
    for day in invented.days:
        day.accommodation = "Hotel Nowhere" if day.accommodation else day.accommodation
        day.items = [i.model_copy(update={"name": "Hotel Nowhere"}) if i.name == HOTEL else i for i in day.items]
    basic = UncertaintyConfig(readings=EvaluationReadings(complete_information="basic"))  # day 2 has one meal
    good, fake = evaluate(good_plan(), make_query(), db, basic), evaluate(invented, make_query(), db, basic)
    assert fake.hard["budget"].passed is True and not fake.hard_evaluated

    def hard_term(plan: Plan) -> float | None:
        return score_plan(plan, make_query(), db, weights=DEFAULT_REWARD_WEIGHTS, config=basic).terms["hard_pass_rate"]
    assert hard_term(invented) == 0.0
    assert hard_term(good_plan()) == pass_rate(good.hard) == 1.0
