"""The three LLM agents run through `utp-env run` against a scripted OpenAI-compatible server
(`tests/support/fault_server.py`) on 127.0.0.1, with faults injected on the wire.

Transient faults (5xx, 429, a response slower than the client timeout, a dropped connection, a
truncated body, a 200 whose JSON is cut) are retried with a tiny backoff and the episode completes;
permanent faults (401, no `choices`) end the episode as `agent_error` with the message recorded;
malformed tool-call JSON and unknown tool names are answered with a tool message and the episode
goes on. Every request body is checked as OpenAI would (valid tool schemas, roles, a tool message
for every tool-call id, JSON arguments in the history) and every episode appears in results.jsonl.
No assertion on durations.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("langchain_openai")

from fault_server import FaultServer, check_request
from wire_fixtures import KEY_ENV, run

from utp_env.cli import main

SHORT_TIMEOUT = 1.5


def assert_wire_ok(server: FaultServer) -> None:
    """Every request the agents sent is one OpenAI would accept."""
    assert server.refused == []
    for body in server.requests:
        check_request(body)
        for msg in body["messages"]:
            assert msg["role"] in {"system", "user", "assistant", "tool"}


AGENTS = ["direct", "atlas", "tool_calling"]


@pytest.mark.parametrize("agent", AGENTS)
def test_happy_path_submits(fresh: FaultServer, agent: str, tmp_path: Path, mini_db_path: Path) -> None:
    price = "price={input_per_mtok: 1000000, output_per_mtok: 2000000}"  # $1 per input token, $2 per output
    records = run(fresh, agent, tmp_path / "run", mini_db_path, limit=2, settings=[price])
    assert len(records) == 2
    assert [r["termination_reason"] for r in records] == ["submitted", "submitted"]
    assert all(r["plan"] is not None and r["error"] is None for r in records)
    assert_wire_ok(fresh)
    # token and cost accounting read the server's usage block
    sent_in = sum(u["prompt_tokens"] for u in fresh.usage)
    sent_out = sum(u["completion_tokens"] for u in fresh.usage)
    assert sum(r["usage"]["input_tokens"] for r in records) == sent_in
    assert sum(r["usage"]["output_tokens"] for r in records) == sent_out
    assert sum(r["usage"]["model_calls"] for r in records) == len(fresh.usage) == len(fresh.requests)
    assert sum(r["usage"]["cost_usd"] for r in records) == pytest.approx(sent_in + 2 * sent_out)
    if agent != "direct":
        assert any(m["role"] == "tool" for body in fresh.requests for m in body["messages"])
        assert all(body.get("tools") for body in fresh.requests if any(
            m["role"] == "tool" for m in body["messages"]))


TRANSIENT = ["500", "429", "slow", "drop", "truncated", "cut_json"]
PERMANENT = ["401", "no_choices"]
ANSWERED = ["bad_args", "unknown_tool", "empty"]  # content faults: the agent answers and goes on


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("fault", TRANSIENT)
def test_transient_fault_is_retried_and_the_episode_completes(fresh: FaultServer, agent: str, fault: str,
                                                              tmp_path: Path, mini_db_path: Path) -> None:
    fresh.inject(fault)
    settings = [f"timeout={SHORT_TIMEOUT}"] if fault == "slow" else []
    records = run(fresh, agent, tmp_path / "run", mini_db_path, settings=settings)
    assert [r["termination_reason"] for r in records] == ["submitted"]
    assert records[0]["plan"] is not None and records[0]["error"] is None
    assert fresh.log[0][0] == fault and fresh.log[1] == ("ok", 200)
    assert fresh.requests[0] == fresh.requests[1]  # the retry resends the same request
    failed = records[0]["trace"]["failed"]
    assert not [k for k in failed if k.startswith("model_call")]  # a retried call is one call that succeeded
    assert_wire_ok(fresh)


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("fault", PERMANENT)
def test_permanent_fault_ends_the_episode_as_agent_error(fresh: FaultServer, agent: str, fault: str,
                                                         tmp_path: Path, mini_db_path: Path) -> None:
    fresh.inject(fault)
    records = run(fresh, agent, tmp_path / "run", mini_db_path)
    assert [r["termination_reason"] for r in records] == ["agent_error"]
    assert len(fresh.requests) == 1  # not retried
    error = records[0]["error"]
    assert "model call failed" in error
    assert ("Incorrect API key" in error) if fault == "401" else ("choices" in error or "NoneType" in error)


def test_retries_are_bounded(fresh: FaultServer, tmp_path: Path, mini_db_path: Path) -> None:
    """A server that keeps failing gets 1 + retries requests, then the episode is infrastructure_error (the
    server's fault, not the agent's: a resumed run runs it again, tests/runs/test_resume_retry.py)."""
    fresh.inject(*["500"] * 10)
    records = run(fresh, "direct", tmp_path / "run", mini_db_path, settings=["retries=2"])
    assert [r["termination_reason"] for r in records] == ["infrastructure_error"]
    assert len(fresh.requests) == 3 and "Error code: 500" in records[0]["error"]


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("fault", ANSWERED)
def test_content_faults_are_answered(fresh: FaultServer, agent: str, fault: str, tmp_path: Path,
                                     mini_db_path: Path) -> None:
    fresh.inject(fault)
    records = run(fresh, agent, tmp_path / "run", mini_db_path)
    assert [r["termination_reason"] for r in records] == ["submitted"]
    assert_wire_ok(fresh)  # in particular: the malformed or unknown call got its tool message
    if fault in ("bad_args", "unknown_tool") and agent != "direct":
        answered = next(body["messages"] for body in fresh.requests if any(m["role"] == "tool"
                                                                            for m in body["messages"]))
        answer = next(m for m in answered if m["role"] == "tool")
        calls = {c["id"]: c["function"] for m in answered if m["role"] == "assistant"
                 for c in m.get("tool_calls") or []}
        assert answer["tool_call_id"] in calls  # the call the server sent, answered by its id
        if fault == "bad_args":  # the history sends the call back with {} (a strict server re-parses it)
            assert calls[answer["tool_call_id"]]["arguments"] == "{}"
            assert '{"day": 1,' in answer["content"] or "JSON" in answer["content"]
        assert ("JSON" in answer["content"] or "json" in answer["content"]) if fault == "bad_args" \
            else "teleport" in answer["content"]
        failed = records[0]["trace"]["failed"]  # the bad call is recorded as a failed tool call
        assert failed.get("tool_call:teleport" if fault == "unknown_tool" else
                          ("tool_call:view_plan" if agent == "tool_calling" else "tool_call:list_cities"))


def test_a_failed_episode_keeps_the_usage_and_trace_of_its_calls(fresh: FaultServer, tmp_path: Path,
                                                                  mini_db_path: Path) -> None:
    """ATLAS: three calls answered (search, search, constraints), the planner's call refused for good:
    the episode is agent_error and its record still counts (and bills) the three calls."""
    fresh.inject("ok", "ok", "ok", "401")
    price = "price={input_per_mtok: 1000000, output_per_mtok: 2000000}"
    records = run(fresh, "atlas", tmp_path / "run", mini_db_path, settings=[price])
    assert [r["termination_reason"] for r in records] == ["agent_error"]
    record = records[0]
    assert record["usage"] is not None and record["trace"] is not None
    assert record["usage"]["model_calls"] == 4 and len(fresh.usage) == 3
    assert record["usage"]["input_tokens"] == sum(u["prompt_tokens"] for u in fresh.usage)
    assert record["usage"]["cost_usd"] == pytest.approx(sum(u["prompt_tokens"] + 2 * u["completion_tokens"]
                                                            for u in fresh.usage))
    failed_calls = {k: n for k, n in record["trace"]["failed"].items() if k.startswith("model_call")}
    assert failed_calls == {"model_call:planner": 1}
    assert "Incorrect API key" in record["error"]


def test_the_config_price_bills_only_its_own_model(fresh: FaultServer, tmp_path: Path, mini_db_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """configs/agents/direct.yaml prices openai:gpt-4o-mini; `--set model=fault-model` is another
    model, so its cost is unknown (None), not billed at gpt-4o-mini's price; tokens are still counted,
    and one line says why the cost is unknown."""
    records = run(fresh, "direct", tmp_path / "run", mini_db_path)
    assert [r["termination_reason"] for r in records] == ["submitted"]
    assert records[0]["usage"]["input_tokens"] and records[0]["usage"]["cost_usd"] is None
    notes = [line for line in capsys.readouterr().err.splitlines() if "cost unknown" in line]
    assert notes == ["utp-env: note: agent direct: cost unknown: the configured price is for openai:gpt-4o-mini, "
                     "the model is fault-model (set price={model: fault-model, input_per_mtok: ..., "
                     "output_per_mtok: ...} to bill it)"]


def test_a_dead_server_fails_fast_naming_its_url(tmp_path: Path, mini_db_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing listens at base_url (a port bound on 127.0.0.1 but not listening): the call is not
    retried, and every episode ends as infrastructure_error, its error naming the URL."""
    import socket

    from utp_env.agents.llm.models import ModelSpec, RetryingModel, describe_failure

    monkeypatch.setenv(KEY_ENV, "sk-test-not-a-real-key")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        slept: list[float] = []
        model = RetryingModel.from_spec(ModelSpec(model="m", base_url=url, api_key_env=KEY_ENV, retries=3),
                                        sleep=slept.append)
        with pytest.raises(Exception) as caught:
            model.invoke("hello")
        assert model.attempts == 1 and slept == []  # no backoff ladder for a refused connection
        assert f"connection refused at {url}/chat/completions" in describe_failure(caught.value)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        out = tmp_path / "run"
        argv = ["run", "--agent", "direct", "--db", str(mini_db_path), "--limit", "2", "--rollouts", "0",
                "--out", str(out), "--quiet", "--set", f"base_url={url}", "--set", "model=fault-model",
                "--set", f"api_key_env={KEY_ENV}", "--set", "backoff_initial=5"]
        main(argv)
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    assert [r["termination_reason"] for r in records] == ["infrastructure_error", "infrastructure_error"]
    for record in records:
        assert f"connection refused at {url}/chat/completions" in record["error"], record["error"]
        assert record["usage"]["model_calls"] == 1
