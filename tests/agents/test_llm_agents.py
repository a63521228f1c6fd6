"""The LLM baselines driven by scripted fake chat models through full episodes on the mini sandbox.

No network, no key: every model is a LangChain fake whose replies are scripted. The "good" plan is
the reference planner's plan for a query where it passes every check, written in the paper's JSON
format, so a correct agent must deliver a plan that the evaluator passes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from scripted_llm import MODEL, ScriptedChat, call, scripted

from utp_env.agents.base import Toolkit
from utp_env.agents.llm import prompts
from utp_env.agents.llm.atlas import AtlasAgent, parse_verdict
from utp_env.agents.llm.direct import DirectAgent
from utp_env.agents.llm.reference_info import ReferenceLimits, gather_reference_info, route_legs, transfer_days
from utp_env.agents.llm.tool_calling import ToolCallingAgent, split_answers
from utp_env.agents.registry import (
    NAMES,
    AgentConfigError,
    check_settings,
    import_agent_class,
    load_agent,
    read_config,
)
from utp_env.config import UncertaintyConfig
from utp_env.env.config import query_pool
from utp_env.evaluation import evaluate
from utp_env.itinerary import format_hhmm
from utp_env.plan_format import parse_plan, plan_to_json

PRICE = {"input_per_mtok": 0.15, "output_per_mtok": 0.60}


def usage(inp: int, out: int) -> dict[str, int]:
    return {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out}


def passes(result, query, db) -> bool:
    return result.plan is not None and evaluate(result.plan, query, db).final_pass


# ---------------------------------------------------------------- reference information


def test_reference_info_gathers_through_the_toolkit(mini_db, good) -> None:
    query, _ = good
    toolkit = Toolkit(mini_db)
    info = gather_reference_info(query, toolkit, ReferenceLimits(stays=3))
    assert info.errors == []
    assert toolkit.trace.tool_calls > 0 and all(s.kind == "tool_call" for s in toolkit.trace.steps)
    names = {s.name for s in toolkit.trace.steps}
    assert {"search_stays", "search_restaurants", "search_attractions", "search_events"} <= names
    assert info.legs[0][:2] == (query.org, info.cities[0]) and info.legs[-1][1] == query.org
    assert f"Transport from {query.org} to {info.cities[0]} on {query.dates[0]}" in info.text


def test_reference_info_reads_house_rules_in_both_forms(mini_db, good) -> None:
    query, _ = good
    for rule, allows in (("pets", ["pets"]), ("No_Pets", [])):
        lc = query.local_constraint.model_copy(update={"house_rule": rule})
        toolkit = Toolkit(mini_db)
        info = gather_reference_info(query.model_copy(update={"local_constraint": lc}), toolkit, ReferenceLimits())
        assert info.errors == [], rule
        stays = [s for s in toolkit.trace.steps if s.name == "search_stays"]
        assert stays and all(s.ok and (s.args.get("allows") or []) == allows for s in stays), rule


def test_state_routes_are_served(mini_db) -> None:
    """For 5/7-day queries the chosen route has stays meeting the constraints and a service on every leg."""
    state_queries = [q for q in query_pool(mini_db) if q.days != 3][:8]
    assert {q.days for q in state_queries} == {5, 7}
    for query in state_queries:
        toolkit = Toolkit(mini_db)
        info = gather_reference_info(query, toolkit)
        assert info.errors == [] and "no ordering" not in info.text
        assert len(info.cities) == query.visiting_city_number == len(set(info.cities))
        assert len(info.legs) == query.visiting_city_number + 1
        for origin, dest, date in info.legs:
            section = next(s for s in info.sections if s.startswith(f"## Transport from {origin} to {dest} on {date}"))
            assert " found" in section  # some mode lists at least one service
        calls = [json.dumps([s.name, s.args], sort_keys=True) for s in toolkit.trace.steps if s.kind == "tool_call"]
        assert len(calls) == len(set(calls))  # the cache never repeats a lookup


@pytest.mark.slow
def test_reference_info_on_every_mini_query(mini_db) -> None:
    for query in query_pool(mini_db):
        info = gather_reference_info(query, Toolkit(mini_db))
        assert info.errors == [] and "no ordering" not in info.text, query.query_id


def test_route_split_over_days() -> None:
    assert transfer_days(5, 2) == [2] and transfer_days(7, 3) == [2, 4] and transfer_days(3, 1) == []


def test_route_legs_for_a_state_query(mini_db) -> None:
    query = next(q for q in query_pool(mini_db) if q.days == 7 and q.visiting_city_number == 3)
    legs = route_legs(query, ["A", "B", "C"])
    # out on day 1, moves on days 3 and 5 (indices 2 and 4), home on day 7
    assert legs == [(query.org, "A", query.dates[0]), ("A", "B", query.dates[2]), ("B", "C", query.dates[4]),
                    ("C", query.org, query.dates[6])]


# ---------------------------------------------------------------- direct


def test_direct_delivers_a_good_plan_and_sums_usage(mini_db, good) -> None:
    query, plan_json = good
    fake = scripted(AIMessage(content=plan_json, usage_metadata=usage(12_000, 3_000)))
    agent = DirectAgent(chat_model=fake, **MODEL, price=PRICE)
    result = agent.run(query, Toolkit(mini_db))
    assert result.error is None and passes(result, query, mini_db)
    assert result.plan.query_id == query.query_id
    trace = result.trace
    assert trace.model_calls == 1 and trace.tool_calls > 0
    assert (trace.input_tokens, trace.output_tokens) == (12_000, 3_000)
    assert trace.cost_usd == pytest.approx(12_000 * 0.15e-6 + 3_000 * 0.60e-6)  # 0.0018 + 0.0018
    system, human = fake.received[0]
    assert "Plan for delays and crowds" in system.content and query.text in human.content
    assert "This traveller's range is" not in system.content  # the paper prompt states no metric ranges
    assert "Reference information:" in human.content and "Example" in human.content


def test_direct_repairs_malformed_output(mini_db, good) -> None:
    query, plan_json = good
    fake = scripted(AIMessage(content="Sure! Here is your trip: day one we fly...", usage_metadata=usage(100, 10)),
                    AIMessage(content="```json\n" + plan_json + "\n```", usage_metadata=usage(200, 20)))
    result = DirectAgent(chat_model=fake, **MODEL).run(query, Toolkit(mini_db))
    assert result.error is None and passes(result, query, mini_db)
    assert result.trace.model_calls == 2
    assert (result.trace.input_tokens, result.trace.output_tokens) == (300, 30)
    assert result.trace.cost_usd is None  # no price configured
    repair_request = fake.received[1][-1].content
    assert "could not be read as a plan" in repair_request and "no JSON" in repair_request


def test_direct_malformed_twice_is_not_delivered(mini_db, good) -> None:
    query, _ = good
    fake = scripted("no plan here", '[{"days": 1, "current_city": "from X to Y", "transportation": "Spaceship"}]')
    result = DirectAgent(chat_model=fake, **MODEL).run(query, Toolkit(mini_db))
    assert result.plan is None and "not delivered" in result.error
    assert result.trace.model_calls == 2 and result.raw_output.startswith('[{"days": 1')
    assert result.trace.input_tokens is None and result.trace.cost_usd is None  # fake reports no usage


def test_direct_without_repair_fails_after_one_call(mini_db, good) -> None:
    query, _ = good
    fake = scripted("garbage")
    result = DirectAgent(chat_model=fake, **MODEL, repair=False).run(query, Toolkit(mini_db))
    assert result.plan is None and fake.calls == 1


def test_direct_model_error_is_recorded(mini_db, good) -> None:
    """A failed model call ends the run as agent_error, with the error and the trace so far."""
    query, plan_json = good
    fake = scripted(plan_json, fail_at=0)
    toolkit = Toolkit(mini_db)
    result = DirectAgent(chat_model=fake, **MODEL).run(query, toolkit)
    assert result.plan is None and result.termination_reason == "agent_error"
    assert "scripted failure on call 1" in result.error and result.trace is toolkit.trace
    failed = [s for s in toolkit.trace.steps if s.kind == "model_call"]
    assert len(failed) == 1 and failed[0].ok is False


def test_direct_no_uncertainty_prompt(mini_db, good) -> None:
    query, plan_json = good
    fake = scripted(plan_json)
    agent = DirectAgent(chat_model=fake, **MODEL, uncertainty=False)
    assert agent.name == "direct_no_uncertainty"
    agent.run(query, Toolkit(mini_db))
    system = fake.received[0][0].content
    assert "Plan for delays and crowds" not in system and "risk tolerant" not in system


def test_metric_aware_prompt_quotes_the_metric_parameters(mini_db, good) -> None:
    query, plan_json = good
    cfg = UncertaintyConfig()
    text = prompts.instructions(query, cfg, uncertainty=True, style="metric_aware")
    mine = cfg.risk_multipliers[query.risk_profile]
    assert f"This traveller's range is {mine.low:g}x to {mine.high:g}x" in text
    assert "AA 1.75" in text and "at least 4 hours" in text
    fake = scripted(plan_json)
    agent = DirectAgent(chat_model=fake, **MODEL, prompt="metric_aware")
    assert agent.name == "direct_metric_aware"
    agent.run(query, Toolkit(mini_db))
    assert "This traveller's range is" in fake.received[0][0].content


# ---------------------------------------------------------------- the paper's prompts (C.2, C.4)

PAPER_PROMPTS = Path(__file__).resolve().parents[1] / "support" / "data" / "paper_prompts"
# Content points of the paper's prompts, each as phrases one of which our wording must contain.
C4_POINTS = {
    "only the provided data": ["take every detail from the reference information"],
    "follow the example's format": ["follow the format of the example"],
    "'-' for what does not apply": ['write "-" in a field that does not apply'],
    "nothing after returning home": ["nothing is planned once the traveller is back"],
    "'from A to B' on a travel day": ['"from a to b"'],
    "events of the day": ["events that take place on a day"],
    "ordered, timed point-of-interest list": ["in the order they are visited", "time it starts and the time it ends"],
    "days start and end at the stay": ["begins and ends at the stay"],
}
C2_ONLY_POINTS = {
    "15-30 min at High / Above average crowd": ["15 to 30 minutes"],
    "High and Above average windows": ["high (h) or above average (aa)"],
    "avoid peak hours": ["keep away from a venue's peak window"],
    "road = travel time + estimated delay": ["usual travel time plus the route's estimated historical delay"],
    "train + avg_delay_1month": ["avg_delay_1m"],
    "+30-45 min after an unpunctual flight": ["30 to 45 minutes after its arrival"],
    "flight on-time record": ["on-time record"],
    "breakfast 09:40, ~50 min": ["breakfast at about 09:40 for some 50 minutes"],
    "lunch 14:20, ~1 h": ["lunch at about 14:20 for around an hour"],
    "dinner 20:45, ~1 h 15": ["dinner at about 20:45 for roughly an hour and a quarter"],
    "laid-back: one attraction a day": ["laid-back travellers usually see one attraction a day"],
    "adventure: two or three": ["adventure seekers usually see two or three"],
    "crowd data guide": ["crowd window", "quiet hours", "peak window"],
    "JSON only": ["no explanations, no markdown"],
}
RISK_POINTS = {"tolerant": "tighter schedule with little extra time",
               "optimized": "balanced schedule with moderate slack",
               "averse": "cautious schedule with generous safety margins"}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _shared_runs(ours: str, theirs: str, n: int) -> set[tuple[str, ...]]:
    mine, paper = _words(ours), _words(theirs)
    grams = {tuple(paper[i:i + n]) for i in range(len(paper) - n + 1)}
    return {tuple(mine[i:i + n]) for i in range(len(mine) - n + 1)} & grams


def test_paper_prompt_has_the_content_of_c2(good) -> None:
    query, _ = good
    for risk in ("tolerant", "optimized", "averse"):
        q = query.model_copy(update={"risk_profile": risk})
        text = " ".join(prompts.instructions(q, UncertaintyConfig(), uncertainty=True).lower().split())
        for point, phrases in {**C4_POINTS, **C2_ONLY_POINTS}.items():
            assert all(p in text for p in phrases), f"C.2 content missing: {point}"
        assert RISK_POINTS[risk] in text and f"this traveller is risk {risk}" in text
        assert all(RISK_POINTS[r] in text for r in RISK_POINTS)  # what each profile means


def test_paper_prompts_state_no_metric_formula(good) -> None:
    query, _ = good
    for uncertainty in (True, False):
        text = prompts.instructions(query, UncertaintyConfig(), uncertainty=uncertainty)
        for formula in ("E[D]", "congestion factor", "x base", "This traveller's range", "1.75", "BAS", "TDAS",
                        "at least 4 hours", "exp_delay_min"):
            assert formula not in text, formula


def test_no_uncertainty_prompt_keeps_only_c4(good) -> None:
    query, _ = good
    text = " ".join(prompts.instructions(query, UncertaintyConfig(), uncertainty=False).lower().split())
    for point, phrases in C4_POINTS.items():
        assert all(p in text for p in phrases), f"C.4 content missing: {point}"
    for point, phrases in C2_ONLY_POINTS.items():
        assert not any(p in text for p in phrases), f"C.4 has no {point}"
    assert not any(v in text for v in RISK_POINTS.values())
    # C.4 has no rules beyond its own: no budget, meal-gap, airport-arrival or repetition rules
    for extra in ("budget", "meal", "airport", "repeat", "overlap"):
        assert extra not in text, extra


def test_paper_prompts_are_our_own_words(good) -> None:
    query, _ = good
    c2 = (PAPER_PROMPTS / "c2_instructions.txt").read_text(encoding="utf-8")
    c4 = (PAPER_PROMPTS / "c4_instructions.txt").read_text(encoding="utf-8")
    for uncertainty, paper in ((True, c2), (False, c4)):
        ours = prompts.instructions(query, UncertaintyConfig(), uncertainty=uncertainty)
        assert not _shared_runs(ours, paper, 8), "a run of 8 words copied from the paper's prompt"


def test_example_plans_parse_and_show_the_heuristics(mini_db) -> None:
    for uncertainty in (True, False):
        text = plan_to_json(prompts.example_plan("paper", uncertainty), indent=None)
        plan = parse_plan(text)
        assert len(plan.days) == 3 and plan.days[1].lunch == "Guru Kripa Restaurant"
        lunch = next(i for i in plan.days[1].items if i.meal == "lunch")
        assert (format_hhmm(lunch.start), format_hhmm(lunch.end)) == ("14:20", "15:20")
        block = prompts.example_block("paper", uncertainty)
        assert ("scheduled 07:40" in block) is uncertainty  # flight buffer only with C.2's heuristics
        assert ("High crowd" in block) is uncertainty
    assert "+55 min buffer" in prompts.example_block("metric_aware", True)


def test_prompt_sizes_are_measured() -> None:
    assert prompts.estimated_tokens("") == 0 and prompts.estimated_tokens("abcde") == 2


# ---------------------------------------------------------------- atlas


def atlas_script(query, plan_json: str, checker_reply: str = '{"verdict": "pass", "feedback": ""}') -> list[Any]:
    first_city = query.dest if query.days == 3 else query.org
    return [
        AIMessage(content="", tool_calls=[call("search_stays", {"city": first_city}, 0),
                                          call("search_flights", {"origin": query.org, "destination": "Nowhere",
                                                                  "date": query.dates[0]}, 1)]),
        AIMessage(content="I have what the planner needs."),
        AIMessage(content='{"explicit": ["budget"], "implicit": ["closed loop"]}'),
        AIMessage(content=plan_json),
        AIMessage(content=checker_reply),
    ]


def test_atlas_llm_checker_pass(mini_db, good) -> None:
    query, plan_json = good
    fake = ScriptedChat(responses=atlas_script(query, plan_json), received=[])
    result = AtlasAgent(chat_model=fake, **MODEL).run(query, Toolkit(mini_db))
    assert result.error is None and passes(result, query, mini_db)
    roles = [s.name for s in result.trace.steps if s.kind == "model_call"]
    assert roles == ["search_agent", "search_agent", "constraint_manager", "planner", "checker"]
    tools = [s for s in result.trace.steps if s.kind == "tool_call"]
    assert [t.name for t in tools] == ["search_stays", "search_flights"]
    assert tools[0].ok and not tools[1].ok  # the unknown city is an error result, answered to the model
    # the search agent's second call saw both ToolMessages, with the tool error text
    answered = [m for m in fake.received[1] if isinstance(m, ToolMessage)]
    assert len(answered) == 2 and "Nowhere" in answered[1].content
    assert {t["function"]["name"] for t in fake.bound_tools} >= {"search_flights", "crowd_profile"}
    planner_system = fake.received[3][0].content
    assert AtlasAgent(chat_model=fake, **MODEL).name == "atlas"
    assert "Plan for delays and crowds" not in planner_system  # section 5.2: no uncertainty modelling


def test_atlas_uncertainty_variant_gets_the_c2_heuristics(mini_db, good) -> None:
    query, plan_json = good
    fake = ScriptedChat(responses=atlas_script(query, plan_json), received=[])
    agent = AtlasAgent(chat_model=fake, **MODEL, uncertainty=True)
    assert agent.name == "atlas_uncertainty"
    agent.run(query, Toolkit(mini_db))
    planner_system = fake.received[3][0].content
    assert "Plan for delays and crowds" in planner_system and "This traveller's range" not in planner_system


def test_atlas_revises_after_checker_feedback(mini_db, good) -> None:
    query, plan_json = good
    script = atlas_script(query, "this is not a plan")
    script += [AIMessage(content=plan_json), AIMessage(content='{"verdict": "pass", "feedback": "ok"}')]
    del script[4]  # no checker call for the unparsable plan
    fake = ScriptedChat(responses=script, received=[])
    result = AtlasAgent(chat_model=fake, **MODEL, K=2).run(query, Toolkit(mini_db))
    assert result.error is None and passes(result, query, mini_db)
    roles = [s.name for s in result.trace.steps if s.kind == "model_call"]
    assert roles[3:] == ["planner", "planner_revision", "checker"]
    assert "rejected your previous plan" in fake.received[4][-1].content


def test_atlas_symbolic_checker_unsatisfiable_goes_to_the_search_advisor(mini_db, good) -> None:
    query, plan_json = good
    invented = json.loads(plan_json)
    invented[0]["accommodation"] = "Hotel That Does Not Exist"
    poi = invented[0]["point_of_interest_list"]
    real_stay = json.loads(plan_json)[0]["accommodation"]
    invented[0]["point_of_interest_list"] = poi.replace(real_stay, "Hotel That Does Not Exist")
    script = [
        *atlas_script(query, json.dumps(invented))[:4],
        AIMessage(content="Search stays again in the destination."),  # advisor
        AIMessage(content="", tool_calls=[call("search_stays", {"city": query.dest if query.days == 3
                                                                else query.org}, 5)]),
        AIMessage(content="done"),                                      # search round ends
        AIMessage(content='{"explicit": [], "implicit": []}'),          # constraints again
        AIMessage(content=plan_json),                                   # revised plan
    ]
    fake = ScriptedChat(responses=script, received=[])
    result = AtlasAgent(chat_model=fake, **MODEL, checker="symbolic", K=2, L=5).run(query, Toolkit(mini_db))
    assert result.error is None and passes(result, query, mini_db)
    roles = [s.name for s in result.trace.steps if s.kind == "model_call"]
    assert roles == ["search_agent", "search_agent", "constraint_manager", "planner", "search_advisor",
                     "search_agent", "search_agent", "constraint_manager", "planner_revision"]
    notes = [s.result for s in result.trace.steps if s.kind == "note"]
    assert any("unsatisfiable" in n and "within_sandbox" in n for n in notes)
    assert any("pass" in n for n in notes)


def test_atlas_budgets_k_and_l(mini_db, good) -> None:
    query, plan_json = good
    # the search agent never stops calling tools: L=2 rounds; the checker never passes: K=1 -> 2 planner calls
    searching = AIMessage(content="", tool_calls=[call("list_cities", {"state": "Maharashtra"})])
    script = [searching, searching, AIMessage(content="{}"), AIMessage(content=plan_json),
              AIMessage(content='{"verdict": "fail", "feedback": "too tight"}'), AIMessage(content=plan_json),
              AIMessage(content='{"verdict": "fail", "feedback": "still too tight"}')]
    fake = ScriptedChat(responses=script, received=[])
    result = AtlasAgent(chat_model=fake, **MODEL, K=1, L=2).run(query, Toolkit(mini_db))
    roles = [s.name for s in result.trace.steps if s.kind == "model_call"]
    assert roles == ["search_agent", "search_agent", "constraint_manager", "planner", "checker",
                     "planner_revision", "checker"]
    assert result.trace.tool_calls == 2 and result.plan is not None and result.error is None
    assert any("revision budget K=1 spent" in s.result for s in result.trace.steps if s.kind == "note")


def test_atlas_model_error_mid_episode(mini_db, good) -> None:
    query, plan_json = good
    fake = ScriptedChat(responses=atlas_script(query, plan_json), fail_at=2, received=[])
    toolkit = Toolkit(mini_db)
    result = AtlasAgent(chat_model=fake, **MODEL).run(query, toolkit)  # no plan yet: agent_error
    assert result.plan is None and result.termination_reason == "agent_error"
    assert "scripted failure on call 3" in result.error and result.trace.model_calls == 3
    assert [s.ok for s in toolkit.trace.steps if s.kind == "model_call"] == [True, True, False]


def test_parse_verdict() -> None:
    assert parse_verdict('Result: {"verdict": "PASS", "feedback": "fine"}').verdict == "pass"
    assert parse_verdict("The problem is unsatisfiable: no stay allows pets").verdict == "unsatisfiable"
    assert parse_verdict("hmm, the lunch overlaps").verdict == "fail"


# ---------------------------------------------------------------- tool calling


def test_tool_calling_submits_a_plan(mini_db, good) -> None:
    query, plan_json = good
    fake = scripted(
        AIMessage(content="", tool_calls=[call("search_stays", {"city": query.org}, 0), call("view_plan", {}, 1)],
                  usage_metadata=usage(50, 5)),
        AIMessage(content="", tool_calls=[call("submit_plan", {"plan": plan_json}, 2)], usage_metadata=usage(70, 7)))
    agent = ToolCallingAgent(chat_model=fake, **MODEL, max_steps=5)
    env = agent.make_env(Toolkit(mini_db))
    outcome = agent.run_env(env, {"query": query})
    assert outcome.info["termination_reason"] == "submitted" and outcome.result.error is None
    assert outcome.info["report"] is not None and outcome.reward > 0
    assert passes(outcome.result, query, mini_db)
    trace = outcome.result.trace
    assert trace.model_calls == 2 and trace.tool_calls == 3
    assert (trace.input_tokens, trace.output_tokens) == (120, 12)
    answers = [m for m in fake.received[1] if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in answers] == ["call_search_stays_0", "call_view_plan_1"]
    assert answers[0].content.startswith("[1/2] search_stays") and answers[1].content.startswith("[2/2] view_plan")
    assert {t["function"]["name"] for t in fake.bound_tools} >= {"submit", "submit_plan", "add_item"}


def test_tool_calling_run_protocol(mini_db, good) -> None:
    query, plan_json = good
    fake = scripted(AIMessage(content="", tool_calls=[call("submit_plan", {"plan": plan_json})]))
    result = ToolCallingAgent(chat_model=fake, **MODEL).run(query, Toolkit(mini_db))
    assert result.error is None and passes(result, query, mini_db)


def leg_then_only_looking(plan_json: str) -> tuple[ScriptedChat, Any]:
    """A model that adds the plan's first leg, then only views the plan (never submits); and that leg."""
    leg = parse_plan(plan_json).days[0].transport[0]
    add = {"day": 1, "mode": leg.mode, "number": leg.number, "origin": leg.origin, "destination": leg.destination,
           "departure": format_hhmm(leg.dep)}
    looking = AIMessage(content="", tool_calls=[call("view_plan", {})])
    fake = ScriptedChat(responses=[AIMessage(content="", tool_calls=[call("add_leg", add)]), *[looking] * 10],
                        received=[])
    return fake, leg


def test_tool_calling_never_submits_is_truncated(mini_db, good) -> None:
    """A model that adds one leg and then only looks at the plan is cut at the step limit and scored."""
    query, plan_json = good
    fake, leg = leg_then_only_looking(plan_json)
    agent = ToolCallingAgent(chat_model=fake, **MODEL, max_steps=4)
    outcome = agent.run_env(agent.make_env(Toolkit(mini_db)), {"query": query})
    assert outcome.info["termination_reason"] == "step_limit" and fake.calls == 4
    assert outcome.info["report"] is not None  # the accumulated plan was scored
    plan = outcome.result.plan
    assert plan is not None and plan.days[0].transport[0].number == leg.number
    assert outcome.result.error is None


def test_tool_calling_text_only_replies_end_at_the_turn_limit(mini_db, good) -> None:
    query, _ = good
    fake = scripted("Let me think about this trip.")
    agent = ToolCallingAgent(chat_model=fake, **MODEL, max_steps=2)
    outcome = agent.run_env(agent.make_env(Toolkit(mini_db)), {"query": query})
    assert outcome.info["termination_reason"] == "step_limit" and fake.calls == 2
    assert outcome.result.plan is None and "no plan was built" in outcome.result.error
    assert "Reply with a tool call" in fake.received[1][-1].content


def test_tool_calling_model_error_mid_episode(mini_db, good) -> None:
    query, _ = good
    fake = scripted(AIMessage(content="", tool_calls=[call("list_cities", {"state": "Gujarat"})]), fail_at=2)
    agent = ToolCallingAgent(chat_model=fake, **MODEL, max_steps=10)
    outcome = agent.run_env(agent.make_env(Toolkit(mini_db)), {"query": query})
    assert outcome.info["termination_reason"] == "agent_error"
    assert "turn 3" in outcome.result.error and "scripted failure" in outcome.result.error
    assert outcome.result.trace.tool_calls == 2


def test_models_without_tool_calling_get_a_clear_error(mini_db, good) -> None:
    query, plan_json = good
    plain = GenericFakeChatModel(messages=iter([AIMessage(content=plan_json)] * 3))
    result = AtlasAgent(chat_model=plain, **MODEL).run(query, Toolkit(mini_db))
    assert result.termination_reason == "agent_error" and "does not support tool calling" in result.error
    agent = ToolCallingAgent(chat_model=GenericFakeChatModel(messages=iter([])), **MODEL)
    outcome = agent.run_env(agent.make_env(Toolkit(mini_db)), {"query": query})
    assert outcome.info["termination_reason"] == "agent_error"
    assert "does not support tool calling" in outcome.result.error


def test_split_answers() -> None:
    text = "[1/2] a: first\n\nstill first\n\n[2/2] b: second"
    assert split_answers(text, 2) == ["[1/2] a: first\n\nstill first", "[2/2] b: second"]
    assert split_answers("whole", 1) == ["whole"]
    odd = split_answers("no markers", 2)
    assert odd[0] == "no markers" and "answered together" in odd[1]


# ---------------------------------------------------------------- loading agents


class EchoAgent:
    """A minimal agent for the loader tests."""

    name = "echo"

    def __init__(self, word: str = "hi") -> None:
        self.word = word

    def run(self, query, toolkit):
        raise NotImplementedError


def test_shipped_llm_configs_validate() -> None:
    for name in ("direct", "direct_no_uncertainty", "direct_metric_aware", "atlas", "atlas_uncertainty",
                 "tool_calling", "reference", "deterministic"):
        assert name in NAMES
        data, where = read_config(name)
        cls = import_agent_class(data.pop("agent"), where)
        check_settings(cls, data, where)
    assert read_config("direct_no_uncertainty")[0]["uncertainty"] is False
    assert read_config("direct")[0]["prompt"] == "paper"
    assert read_config("direct_metric_aware")[0]["prompt"] == "metric_aware"
    # ATLAS runs without the uncertainty section by default, as UTP-Bench section 5.2 ran it
    assert read_config("atlas")[0]["uncertainty"] is False and AtlasAgent.Settings(**MODEL).uncertainty is False
    assert read_config("atlas_uncertainty")[0]["uncertainty"] is True


def test_load_agent_by_name_needs_the_key(monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match=r"OPENAI_API_KEY|langchain-openai"):
        load_agent("direct")
    assert load_agent("deterministic").buffers is False


def test_load_agent_errors_name_the_problem() -> None:
    with pytest.raises(AgentConfigError, match=r"unknown setting.*temprature.*valid settings"):
        load_agent("atlas", {"temprature": 0.2})
    with pytest.raises(AgentConfigError, match="setting checker"):
        load_agent("atlas", {"checker": "oracle"})
    with pytest.raises(AgentConfigError, match="not an import path"):
        load_agent("direct", {"agent": "__import__('os').system('true')"})
    with pytest.raises(AgentConfigError, match="unknown agent"):
        load_agent("no_such_agent")
    with pytest.raises(AgentConfigError, match="has no class"):
        load_agent("utp_env.agents.llm.direct:NoSuchAgent")
    with pytest.raises(AgentConfigError, match=r"unknown setting.*colour"):
        load_agent("test_llm_agents:EchoAgent", {"colour": "red"})
    assert load_agent("test_llm_agents:EchoAgent", {"word": "hello"}).word == "hello"


def test_load_agent_from_a_user_file(tmp_path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("agent: test_llm_agents:EchoAgent\nword: yo\n")
    assert load_agent(str(path)).word == "yo"
    bad = tmp_path / "bad.yaml"
    bad.write_text("word: yo\n")
    with pytest.raises(AgentConfigError, match=r"agent: package\.module:ClassName"):
        load_agent(str(bad))


def test_a_broken_user_agent_module_is_one_line_naming_file_and_line(tmp_path, monkeypatch, capsys) -> None:
    """A syntax error (or an exception) in a user's agent module: one line with the file and line."""
    from utp_env.cli import main

    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "broken_agent_syntax.py").write_text("class Mine:\n    def run(self, query, toolkit)\n        pass\n")
    with pytest.raises(AgentConfigError, match=r"syntax error at .*broken_agent_syntax\.py, line 2: "):
        load_agent("broken_agent_syntax:Mine")
    (tmp_path / "broken_agent_raises.py").write_text("X = 1\nY = {}['missing']\n")
    with pytest.raises(AgentConfigError, match=r"raised KeyError: 'missing' \(at .*broken_agent_raises\.py, line 2\)"):
        load_agent("broken_agent_raises:Mine")
    code = main(["run", "--agent", "broken_agent_syntax:Mine", "--profile", "mini", "--limit", "1",
                 "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 and "broken_agent_syntax.py, line 2" in err, err


# ---------------------------------------------------------------- malformed calls, wrapped envs, errors


def bad_call(name: str, raw: str, call_id: str = "bad_1") -> dict[str, Any]:
    """A LangChain invalid tool call: arguments that are not JSON, as langchain-openai files them."""
    return {"name": name, "args": raw, "id": call_id, "error": "Function view_plan arguments are not valid JSON",
            "type": "invalid_tool_call"}


def test_tool_calling_answers_a_malformed_tool_call(mini_db, good) -> None:
    """Arguments that are not JSON get a tool message saying so (every call id answered) and a trace step."""
    query, plan_json = good
    fake = scripted(AIMessage(content="", invalid_tool_calls=[bad_call("add_item", '{"day": 1,')]),
                    AIMessage(content="", tool_calls=[call("submit_plan", {"plan": plan_json})]))
    agent = ToolCallingAgent(chat_model=fake, **MODEL, max_steps=5)
    outcome = agent.run_env(agent.make_env(Toolkit(mini_db)), {"query": query})
    assert outcome.info["termination_reason"] == "submitted"
    answers = [m for m in fake.received[1] if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in answers] == ["bad_1"]
    assert "JSON" in answers[0].content or "json" in answers[0].content
    step = next(s for s in outcome.result.trace.steps if s.kind == "tool_call")
    assert step.name == "add_item" and step.ok is False and step.args == {"invalid_arguments": '{"day": 1,'}


def test_atlas_search_answers_a_malformed_tool_call(mini_db, good) -> None:
    query, plan_json = good
    script = atlas_script(query, plan_json)
    script[0] = AIMessage(content="", tool_calls=[call("search_stays", {"city": query.org}, 0)],
                          invalid_tool_calls=[bad_call("search_trains", '{"origin": ')])
    fake = ScriptedChat(responses=script, received=[])
    result = AtlasAgent(chat_model=fake, **MODEL).run(query, Toolkit(mini_db))
    assert result.plan is not None and result.error is None
    answers = {m.tool_call_id: m.content for m in fake.received[1] if isinstance(m, ToolMessage)}
    assert set(answers) == {"bad_1", "call_search_stays_0"} and "not a JSON object" in answers["bad_1"]
    bad = [s for s in result.trace.steps if s.kind == "tool_call" and not s.ok]
    assert [s.name for s in bad] == ["search_trains"]


def test_run_env_on_a_gym_make_env_with_a_time_limit(mini_db, good) -> None:
    """gym.make wraps the env (OrderEnforcing, TimeLimit ...): run_env reaches end_episode through
    env.unwrapped, and a TimeLimit cut is scored as step_limit with the plan built so far."""
    import gymnasium as gym

    import utp_env  # noqa: F401  (registers utp_env/UTP-v0)

    query, plan_json = good
    fake, leg = leg_then_only_looking(plan_json)
    env = gym.make("utp_env/UTP-v0", db_path=str(mini_db.path), max_episode_steps=3)
    outcome = ToolCallingAgent(chat_model=fake, **MODEL, max_steps=10).run_env(env, {"query": query})
    assert fake.calls == 3 and outcome.info["termination_reason"] == "step_limit"
    assert outcome.info["report"] is not None and outcome.reward > 0
    assert outcome.result.plan is not None and outcome.result.plan.days[0].transport[0].number == leg.number

    fake = scripted(AIMessage(content="", tool_calls=[call("submit_plan", {"plan": plan_json})]))
    outcome = ToolCallingAgent(chat_model=fake, **MODEL).run_env(gym.make("utp_env/UTP-v0", db_path=str(mini_db.path)),
                                                                {"query": query})
    assert outcome.info["termination_reason"] == "submitted" and passes(outcome.result, query, mini_db)


def test_tool_calling_run_ends_as_agent_error_on_a_failed_model_call(mini_db, good) -> None:
    """The agent protocol's run returns no plan, the reason agent_error, the error and the trace."""
    query, _ = good
    fake = scripted(AIMessage(content="", tool_calls=[call("view_plan", {})]), fail_at=1)
    result = ToolCallingAgent(chat_model=fake, **MODEL).run(query, Toolkit(mini_db))
    assert result.plan is None and result.termination_reason == "agent_error"
    assert re.search(r"turn 2.*scripted failure", result.error) and result.trace.model_calls == 2
