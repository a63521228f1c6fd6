"""Nothing repaired silently (utp_env/plan_format/repairs.py): the parser reports every repair; a plan read
only by dropping part of its text is refused by `evaluate` and `simulate` with the line and the repair it
needs (unless --lenient); the env's answer, the agents and the run record say what was repaired; a reply cut
off at the token limit is named; `tool_calling` runs the task's own JSON text actions and says why nothing
happened otherwise."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from scripted_llm import MODEL, scripted

from utp_env.agents.base import Toolkit
from utp_env.agents.llm.direct import DirectAgent
from utp_env.agents.llm.tool_calling import ToolCallingAgent, text_action
from utp_env.cli import main
from utp_env.dataset import dataset_of
from utp_env.env.core import UTPEnv
from utp_env.plan_format import lossy, parse_plan_repaired
from utp_env.tools.database import Database

DAY = {"current_city": "Mumbai", "transportation": "-", "breakfast": "-", "attraction": "-", "lunch": "-",
       "dinner": "-", "accommodation": "-", "point_of_interest_list": "-"}


def plan_text(n: int = 3) -> str:
    return json.dumps([{"days": i, **DAY} for i in range(1, n + 1)], indent=2)


BROKEN = {
    "missing colon in day 2": (lambda t: t.replace('"days": 2', '"days" 2'), "a key is not followed by ':'",
                               "insert ':' between the key and its value"),
    "truncated last day": (lambda t: t[: t.rindex('"accommodation"')], "it was cut off (truncated",
                           "send the complete plan"),
    "unquoted key": (lambda t: t.replace('"current_city"', "current_city", 1), "a key is not in double quotes",
                     "write the key in double quotes"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_plan_is_read_only_with_a_lossy_repair_naming_where_and_what(case: str) -> None:
    edit, what, fix = BROKEN[case]
    text = edit(plan_text())
    plan, repairs = parse_plan_repaired(text)
    first = lossy(repairs)
    assert len(plan.days) < 3 and first is not None
    assert re.match(r"line \d+ column \d+: ", first.message) and what in first.message and fix in first.message
    assert first.line is not None and 1 <= first.line <= text.count("\n") + 1


@pytest.mark.parametrize(("text", "kind"), [
    ("Here it is:\n```json\n" + plan_text() + "\n```\nEnjoy.", "fence"),
    ("The plan: " + plan_text() + " Enjoy.", "prose"),
    (plan_text().replace('"point_of_interest_list": "-"\n  }\n]', '"point_of_interest_list": "-"\n  },\n]'),
     "trailing_comma"),
])
def test_tolerated_forms_are_reported_and_lose_nothing(text: str, kind: str) -> None:
    plan, repairs = parse_plan_repaired(text)
    assert len(plan.days) == 3 and [r.kind for r in repairs] == [kind] and lossy(repairs) is None
    assert parse_plan_repaired(plan_text())[1] == []  # valid JSON: nothing to report


@given(st.integers(min_value=1, max_value=400))
def test_a_plan_cut_anywhere_is_never_read_silently(cut: int) -> None:
    """Whatever prefix of a plan is given, the parser either refuses it, reads all of it, or says what it
    dropped: a shorter plan never comes back without a lossy repair."""
    text = plan_text()[:cut]
    try:
        plan, repairs = parse_plan_repaired(text)
    except ValueError:
        return
    assert len(plan.days) == 3 or lossy(repairs) is not None


@pytest.fixture(scope="module")
def broken_files(mini_db_path: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    dataset = dataset_of(Database.open(mini_db_path))
    query = sorted(dataset.queries, key=lambda q: q.query_id)[0]
    from utp_env.plan_format import plan_to_json

    text = plan_to_json(dataset.references[query.query_id])
    broken = text.replace('"days": 2,', '"days" 2,', 1)
    assert broken != text
    root = tmp_path_factory.mktemp("broken")
    (root / "plan.json").write_text(broken)
    (root / "plans.jsonl").write_text(json.dumps({"query_id": query.query_id, "plan": broken}) + "\n")
    return root / "plan.json", root / "plans.jsonl", query.query_id


def test_evaluate_and_simulate_refuse_a_broken_plan_with_the_line_and_the_repair(
        broken_files: tuple[Path, Path, str], mini_db_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan, plans, qid = broken_files
    simulate = ["simulate", "--plan", str(plan), "--db", str(mini_db_path), "--query-id", qid, "--rollouts", "10"]
    assert main(simulate) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert re.match(rf"utp-env simulate: error: {re.escape(str(plan))}: the plan is not valid JSON at line \d+ "
                    r"column \d+: a key is not followed by ':'; insert ':' between the key and its value\. .*"
                    r"pass --lenient to score what could be read$", err), err
    assert main(["evaluate", "--plans", str(plans), "--db", str(mini_db_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert re.match(rf"utp-env evaluate: error: plans\.jsonl line 1 \(query {qid}\): the plan is not valid JSON at "
                    r"line \d+ column \d+: a key is not followed by ':'", err), err
    # --lenient scores what could be read, and says what it dropped
    assert main(["evaluate", "--plans", str(plans), "--db", str(mini_db_path), "--lenient"]) == 0
    assert "dropped: plans.jsonl line 1" in capsys.readouterr().err
    assert main([*simulate, "--lenient"]) == 0
    assert "note: " in capsys.readouterr().err


def test_the_envs_answer_to_submit_plan_says_what_was_dropped(mini_db_path: Path) -> None:
    env = UTPEnv(db_path=mini_db_path)
    env.reset(seed=0)
    text = BROKEN["missing colon in day 2"][0](plan_text())
    observation, *_ = env.step({"tool": "submit_plan", "args": {"plan": text}})
    assert "Read after repairs: DROPPED: line " in observation and "a key is not followed by ':'" in observation


def test_the_direct_agent_asks_again_naming_the_break_and_records_repairs(good, mini_db: Database) -> None:
    query, plan = good
    broken = plan.replace('"days": 2,', '"days" 2,', 1)
    fake = scripted(broken, "```json\n" + plan + "\n```")
    result = DirectAgent(chat_model=fake, **MODEL).run(query, Toolkit(mini_db))
    assert result.plan is not None and len(result.plan.days) == query.days
    repair_prompt = fake.received[1][-1].content
    assert "the reply is not valid JSON at line " in repair_prompt and "a key is not followed by ':'" in repair_prompt
    assert result.repairs == ["read the JSON inside a ``` fence and ignored the text around it"]


def test_a_reply_cut_at_the_token_limit_is_named(good, mini_db: Database) -> None:
    query, plan = good
    cut = AIMessage(content=plan[: len(plan) // 2], response_metadata={"finish_reason": "length"})
    fake = scripted(cut, cut)
    result = DirectAgent(chat_model=fake, **MODEL, max_tokens=100).run(query, Toolkit(mini_db))
    assert result.plan is None and result.error is not None
    assert "cut off at the token limit (finish_reason length, max_tokens 100)" in result.error
    assert "cut off at the token limit" in fake.received[1][-1].content
    names = [s.name for s in result.trace.steps if s.kind == "model_call"]
    assert names == ["planner (cut at the token limit)", "repair (cut at the token limit)"]  # in the record's trace


def test_tool_calling_runs_the_tasks_own_json_text_actions(mini_db: Database) -> None:
    query = sorted(dataset_of(mini_db).queries, key=lambda q: q.query_id)[0]
    cut = AIMessage(content="", response_metadata={"finish_reason": "length"})
    fake = scripted('{"tool": "view_plan", "args": {}}', "I am thinking.", cut, '```json\n{"tool": "submit"}\n```')
    result = ToolCallingAgent(chat_model=fake, **MODEL, max_steps=6, max_tokens=50).run(query, Toolkit(mini_db))
    assert result.termination_reason == "submitted"
    answers = [m[-1].content for m in fake.received[1:]]
    assert answers[0].startswith("Result of your action (sent as text):\nThe plan is empty")
    assert "called no tool and held no JSON action" in answers[1]
    assert "cut off at the token limit (finish_reason length, max_tokens 50)" in answers[2]
    names = [s.name for s in result.trace.steps if s.kind == "tool_call"]
    assert names == ["view_plan", "submit"]


@pytest.mark.parametrize(("text", "calls"), [
    ('{"tool": "view_plan", "args": {}}', 1), ('[{"tool": "view_plan"}, {"tool": "check_plan"}]', 2),
    ("```json\n{\"tool\": \"submit\"}\n```", 1), ("Let me think about {this}.", None), ("", None),
    ('{"plan": []}', None),
])
def test_text_actions_are_recognised_only_in_the_tasks_form(text: str, calls: int | None) -> None:
    parsed = text_action(text)
    assert (None if parsed is None else len(parsed)) == calls


class FencedAgent:
    """Returns the reference plan written inside a ``` fence, read with the direct agent's parser."""

    def run(self, query, toolkit, seed=None):  # type: ignore[no-untyped-def]
        from utp_env.agents.base import AgentResult
        from utp_env.agents.llm.direct import parse_reply
        from utp_env.plan_format import plan_to_json

        text = "```json\n" + plan_to_json(dataset_of(toolkit.db).references[query.query_id]) + "\n```"
        plan, repairs = parse_reply(text, query, toolkit)
        return AgentResult(plan=plan, repairs=repairs)


def test_the_run_record_holds_the_repairs(mini_db_path: Path) -> None:
    from utp_env.runs.config import RunConfig
    from utp_env.runs.episode import run_episode
    from utp_env.runs.records import check_record

    qid = sorted(dataset_of(Database.open(mini_db_path)).references)[0]
    config = RunConfig(agent="test_plan_repairs:FencedAgent", db=str(mini_db_path), rollouts=0)
    record = run_episode(config, qid, 0)
    assert record["termination_reason"] == "submitted"
    assert record["repairs"] == ["read the JSON inside a ``` fence and ignored the text around it"]
    assert check_record(json.loads(json.dumps(record))) is None
    bad = {**json.loads(json.dumps(record)), "repairs": "x"}
    assert check_record(bad) == "repairs: Input should be a valid list (got 'x')"
