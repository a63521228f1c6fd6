"""The RL building blocks without a trainer: the TRL env class, its tool subset, the dataset, the warm-up data.

The GRPO runs themselves are in tests/rl/test_rl_grpo.py (slow; need the `rl` extra).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from utp_env.env.adapters import UTPToolEnv, tool_method_names
from utp_env.env.config import reference_plan, split_pool
from utp_env.rl.env import UNFINISHED_MESSAGE, RLToolEnv, rl_env_class
from utp_env.rl.scripted import DONE, REFUSAL, add_leg_args, multi_turn_conversations, single_turn_conversations
from utp_env.tools.database import Database


def trl_tools(cls: type) -> list[str]:
    """The tools TRL's GRPOTrainer takes from an environment class: its public functions but reset and
    get_reward (trl/trainer/grpo_trainer.py lists them with inspect.getmembers(..., inspect.isfunction))."""
    return sorted(n for n, _ in inspect.getmembers(cls, inspect.isfunction)
                  if not n.startswith("_") and n not in ("reset", "get_reward"))


@pytest.fixture
def first_query(mini_db: Database) -> tuple[str, object]:
    query = split_pool(mini_db, "validation")[0]
    plan = reference_plan(mini_db, query.query_id)
    assert plan is not None and plan.days[0].transport
    return query.query_id, plan.days[0].transport[0]


def test_get_reward_scores_an_unfinished_rollout_as_a_step_limit_cut(mini_db_path: Path, first_query) -> None:
    query_id, leg = first_query
    cls = rl_env_class(db_path=str(mini_db_path))
    env = cls()
    assert env.get_reward() == 0.0 and cls.episodes == []  # before any reset: nothing planned, nothing logged
    env.reset(query_id=query_id)
    answer = env.add_leg(**add_leg_args(1, leg))
    assert not answer.startswith("Error"), answer
    assert env.reward == 0.0 and not env.done  # UTPToolEnv alone would leave this rollout at 0
    reward = env.get_reward()
    assert reward > 0 and env.done and env.reward == reward
    assert env.final_info["termination_reason"] == "step_limit"
    assert env.final_info["message"] == UNFINISHED_MESSAGE and env.final_info["report"] is not None
    [record] = cls.episodes
    assert (record.query_id, record.steps, record.tools, record.termination_reason) == \
        (query_id, 1, ("add_leg",), "step_limit")
    assert record.reward == reward and record.to_json()["tools"] == ("add_leg",)


def test_get_reward_after_submit_is_the_env_reward(mini_db_path: Path, first_query) -> None:
    query_id, _ = first_query
    cls = rl_env_class(db_path=str(mini_db_path))
    env = cls()
    env.reset(query_id=query_id)
    env.view_plan()
    assert env.submit().startswith("Plan submitted")
    assert env.done and env.get_reward() == env.reward == 0.0  # an empty plan scores 0
    assert [r.termination_reason for r in cls.episodes] == ["submitted"]
    assert rl_env_class().episodes == []  # each class keeps its own log


def test_tool_subset_is_what_trl_sees(mini_db_path: Path) -> None:
    everything = rl_env_class(db_path=str(mini_db_path))
    assert trl_tools(everything) == sorted(tool_method_names(UTPToolEnv))
    chosen = rl_env_class(tools=["view_plan", "submit", "add_leg"], db_path=str(mini_db_path))
    assert trl_tools(chosen) == ["add_leg", "submit", "view_plan"]
    assert issubclass(chosen, RLToolEnv) and inspect.isfunction(chosen.get_reward)


@pytest.mark.parametrize("tools", [["teleport", "submit"], []])
def test_tool_subset_refuses_unknown_names(tools: list[str]) -> None:
    with pytest.raises(ValueError, match=r"tools: unknown tool names .*choose from"):
        rl_env_class(tools=tools)


def test_query_dataset_rows(mini_db_path: Path, mini_db: Database) -> None:
    pytest.importorskip("datasets", reason="the rl extra (pip install 'utp-env[rl]') is not installed")
    from utp_env.rl.data import MULTI_TURN_SYSTEM, day_format_keys, query_dataset

    queries = split_pool(mini_db, "validation")[:3]
    multi = query_dataset("multi_turn", limit=3, db_path=mini_db_path)
    assert multi.column_names == ["prompt", "query_id"]
    assert multi["query_id"] == [q.query_id for q in queries]
    assert [m["role"] for m in multi[0]["prompt"]] == ["system", "user"]
    assert multi[0]["prompt"][0]["content"] == MULTI_TURN_SYSTEM
    single = query_dataset("single_turn", limit=3, db_path=mini_db_path)
    request = single[1]["prompt"][-1]["content"]
    assert queries[1].text in request and "HOW TO ACT" not in request
    assert all(key in request for key in day_format_keys()) and day_format_keys()[0] == "days"
    assert f"from {queries[1].org} to " in request  # the fields' examples are written from the query's own data
    assert len(query_dataset("single_turn", db_path=mini_db_path)) == len(split_pool(mini_db, "validation"))


def test_query_dataset_skips_the_first_queries(mini_db_path: Path, mini_db: Database) -> None:
    """`skip` leaves out the split's first queries (the SFT demonstrations'); `limit` counts after them."""
    pytest.importorskip("datasets", reason="the rl extra (pip install 'utp-env[rl]') is not installed")
    from utp_env.rl.data import query_dataset

    queries = [q.query_id for q in split_pool(mini_db, "validation")]
    assert query_dataset(limit=3, skip=2, db_path=mini_db_path)["query_id"] == queries[2:5]
    assert query_dataset(skip=len(queries) - 1, db_path=mini_db_path)["query_id"] == queries[-1:]


def test_single_turn_examples_are_this_trips_data_in_the_form_the_parser_reads(mini_db: Database) -> None:
    """The example of each field is written from the query's own data (its origin, a destination city,
    its first date, a real service and venues there) and, put together as a day, parses and evaluates
    as a day whose leg and venues the database knows."""
    import json

    from utp_env.dataset import dataset_of
    from utp_env.evaluation import evaluate
    from utp_env.plan_format import parse_plan
    from utp_env.rl.data import EXAMPLE_HEAD, day_format_keys, field_examples

    checked = 0
    for query in split_pool(mini_db, "validation")[:12]:
        text = field_examples(mini_db, query)
        if not text:
            continue
        lines = text.splitlines()
        assert lines[0] == EXAMPLE_HEAD and [line.split(":", 1)[0] for line in lines[1:]] == day_format_keys()
        day = {line.split(":", 1)[0]: json.loads(line.split(":", 1)[1]) for line in lines[1:]}
        assert day["current_city"].startswith(f"from {query.org} to ") and query.org in day["transportation"]
        plan = parse_plan([day], query=query, db=mini_db)
        leg = plan.days[0].transport[0]
        assert leg.origin == query.org and plan.days[0].date == query.dates[0]
        from utp_env.tools.schema import SERVICE_TABLE

        assert mini_db.services(SERVICE_TABLE[leg.mode], leg.origin, leg.destination, leg.number or "")  # real
        report = evaluate(plan, query, mini_db, reference=dataset_of(mini_db).reference(query.query_id))
        assert report.commonsense.get("is_valid_transportation", True) is not False
        checked += 1
    assert checked >= 6  # most trips have a service on their first day


@pytest.mark.parametrize(("kwargs", "message"), [({"style": "few_shot"}, "style must be one of"),
                                                 ({"limit": 0}, "limit must be at least 1"),
                                                 ({"skip": -1}, "skip must be 0 or more"),
                                                 ({"skip": 10**6}, "no queries left in split 'validation' after "
                                                  "skipping its first 1000000")])
def test_query_dataset_refuses_bad_arguments(mini_db_path: Path, kwargs: dict, message: str) -> None:
    pytest.importorskip("datasets", reason="the rl extra (pip install 'utp-env[rl]') is not installed")
    from utp_env.rl.data import query_dataset

    with pytest.raises(ValueError, match=message):
        query_dataset(db_path=mini_db_path, **kwargs)


def test_warm_up_conversations_carry_the_envs_answers(mini_db_path: Path, first_query) -> None:
    query_id, leg = first_query
    cls = rl_env_class(tools=["add_leg", "view_plan", "submit"], db_path=str(mini_db_path))
    prompt = [{"role": "system", "content": "s"}, {"role": "user", "content": "plan it\n\n"}]
    row = {"prompt": prompt, "query_id": query_id}
    adds, looks = multi_turn_conversations([row], cls)
    (messages, tools), (other, _) = adds, looks
    assert sorted(t.__name__ for t in tools) == ["add_leg", "submit", "view_plan"]
    assert messages[1]["content"].startswith("plan it\n\nTASK (query " + query_id)  # reset's text appended
    calls = [m["tool_calls"][0]["function"] for m in messages if m.get("tool_calls")]
    assert calls == [{"name": "add_leg", "arguments": add_leg_args(1, leg)}, {"name": "submit", "arguments": {}}]
    answers = [m["content"] for m in messages if m["role"] == "tool"]
    assert not answers[0].startswith("Error") and answers[1].startswith("Plan submitted (1 day")
    assert messages[-1] == {"role": "assistant", "content": DONE}
    assert [m["tool_calls"][0]["function"]["name"] for m in other if m.get("tool_calls")] == ["view_plan", "submit"]
    assert prompt[-1]["content"] == "plan it\n\n"  # the dataset row is not mutated

    plan, refusal = single_turn_conversations([row], cls)
    assert plan[0][-1]["content"].startswith('[{"days": 1') and refusal[0][-1]["content"] == REFUSAL


@pytest.mark.parametrize(("argv", "message"), [
    (["--tiny", "--num-generations", "1"], "--num-generations must be at least 2"),
    (["--tiny", "--max-steps", "0"], "--max-steps must be at least 1"),
    (["--tiny", "--max-completion-length", "-5"], "--max-completion-length must be at least 1"),
    (["--tiny", "--skip", "-1"], "--skip must be 0 or more"),
    (["--tiny", "--vllm"], "the tiny model runs without it"),
])
def test_command_line_refuses_bad_sizes(argv: list[str], message: str) -> None:
    from utp_env.rl.recipe import parser, settings

    with pytest.raises(SystemExit, match=message):
        settings(parser("test").parse_args(argv))


def test_command_line_needs_a_model_or_tiny(capsys: pytest.CaptureFixture[str]) -> None:
    from utp_env.rl.recipe import REAL_DEFAULTS, TINY_DEFAULTS, parser, settings

    for argv in ([], ["--tiny", "--model", "Qwen/Qwen3-0.6B"]):
        with pytest.raises(SystemExit):
            parser("test").parse_args(argv)
    assert "one of the arguments --model --tiny is required" in capsys.readouterr().err
    assert settings(parser("test").parse_args(["--tiny"])) == TINY_DEFAULTS
    real = settings(parser("test").parse_args(["--model", "m", "--learning-rate", "2e-6"]))
    assert real == {**REAL_DEFAULTS, "learning_rate": 2e-6}


def test_vllm_without_vllm_or_a_gpu_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from utp_env.rl.recipe import parser, settings

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "vllm" else real_find_spec(name))
    with pytest.raises(SystemExit, match=r"--vllm needs vLLM: pip install vllm"):
        settings(parser("test").parse_args(["--model", "m", "--vllm"]))
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "vllm" else real_find_spec(name))
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match=r"--vllm needs a CUDA GPU and none is visible"):
        settings(parser("test").parse_args(["--model", "m", "--vllm"]))


def test_a_missing_rl_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from utp_env.rl import grpo_multi_turn

    monkeypatch.setitem(sys.modules, "trl", None)  # `import trl` now fails, as without the extra
    with pytest.raises(SystemExit, match=r"GRPO needs the rl extra, missing: .*trl.*pip install 'utp-env\[rl\]'"):
        grpo_multi_turn.main(["--tiny"])


def test_tiny_tokenizer_is_one_trl_can_train_tool_calling_with() -> None:
    """A tool-calling chat template TRL recognises, its special tokens, left padding."""
    for module in ("torch", "trl", "tokenizers", "transformers"):
        pytest.importorskip(module, reason="the rl extra (pip install 'utp-env[rl]') is not installed")
    from trl.chat_template_utils import add_response_schema, supports_tool_calling

    from utp_env.rl.tiny import MARKUP_TOKENS, SPECIAL_TOKENS, build_model, train_tokenizer

    call = '{"name": "view_plan", "arguments": {"format": "json"}}'
    tokenizer = train_tokenizer([f"<tool_call>\n{call}\n</tool_call>", "plan a trip to Pune"] * 20, vocab_size=600,
                                words=["view_plan"])
    assert supports_tool_calling(tokenizer) and tokenizer.padding_side == "left"
    assert tokenizer.eos_token == "<|im_end|>" and tokenizer.pad_token == "<|endoftext|>"
    assert all(len(tokenizer.encode(t)) == 1 for t in (*SPECIAL_TOKENS, *MARKUP_TOKENS, "view_plan"))
    text = f"<tool_call>\n{call}\n</tool_call><|im_end|>"
    assert tokenizer.decode(tokenizer.encode(text)) == text  # byte-level: round-trips exactly
    parsed = add_response_schema(tokenizer).parse_response(text, prefix="<|im_start|>assistant\n")
    assert parsed["tool_calls"][0]["function"] == {"name": "view_plan", "arguments": {"format": "json"}}
    model = build_model(tokenizer, seed=3)
    assert model.config.vocab_size == len(tokenizer) and model.generation_config.eos_token_id == tokenizer.eos_token_id
    with pytest.raises(ValueError, match="vocab_size must be at least 512"):
        train_tokenizer(["x"], vocab_size=100)


def test_a_model_that_cannot_be_loaded_is_one_line(tmp_path: Path) -> None:
    """`--model` of a hub name while offline (an empty hub cache, HF_HUB_OFFLINE=1: nothing is
    downloaded) exits with one line naming the model, not transformers' OSError traceback."""
    import os
    import subprocess
    import sys

    for module in ("torch", "trl", "transformers"):
        pytest.importorskip(module, reason="the rl extra (pip install 'utp-env[rl]') is not installed")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "utp_env.rl.grpo_multi_turn", "--model", "Qwen/Qwen3-0.6B",
                           "--profile", "mini", "--limit", "1"], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr and len(lines) == 1, done.stderr
    assert lines[0].startswith("--model 'Qwen/Qwen3-0.6B': cannot load it (") and "hub cache" in lines[0]
