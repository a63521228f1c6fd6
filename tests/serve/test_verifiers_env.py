"""The verifiers environment (utp_env/verifiers_env.py): verifiers' own evaluation command on utp-env, against a
scripted OpenAI-wire model server on 127.0.0.1 (tests/support/fault_server.py), gives the rewards `utp-env run
--agent tool_calling` gives with the same calls (with the llm extra, which that agent needs), and transcripts
identical to the env in-process.

Each stack of the installed verifiers is run: its `verifiers.v1` stack (`vf-eval` of verifiers 0.4, `eval` of
0.3.1: the `UTPTaskset` and `UTPHarness` plugins) and, where there is one, its classic stack (`vf-eval` of
0.3: `load_environment`'s `MultiTurnEnv`)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verifiers")

from fault_server import FaultServer, Reply, check_request

from utp_env.cli import main
from utp_env.env.config import open_database, split_pool
from utp_env.env.core import UTPEnv, split_answers

KEY_ENV = "UTP_VF_SERVER_KEY"
N = 3
STACKS = {"v1": "verifiers.v1.cli.eval.main:main", "classic": "verifiers.legacy.scripts.eval:main"}
"""Each verifiers stack and the entry point of its evaluation command."""


def eval_command(stack: str) -> Path | None:
    """The console script of `stack`'s evaluation command in this environment, or None when not installed."""
    names = [ep.name for ep in entry_points(group="console_scripts") if ep.value == STACKS[stack]]
    scripts = [Path(sysconfig.get_path("scripts")) / name for name in names]
    return next((script for script in scripts if script.is_file()), None)


@dataclass
class Rollout:
    """One rollout as verifiers saved it: its query and seed, its task text, each reply's tool calls
    (id, name, arguments) with the tool messages that answered them, its reward and final pass."""

    query_id: str
    seed: int
    task: str
    replies: list[tuple[list[tuple[str, str, str]], list[str]]]
    reward: float
    final_pass: float


def replies_of(messages: list[dict[str, Any]]) -> list[tuple[list[tuple[str, str, str]], list[str]]]:
    out = []
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        calls = [json.loads(c) if isinstance(c, str) else c for c in message.get("tool_calls") or []]
        calls = [(c["id"], c.get("name") or c["function"]["name"],
                  c.get("arguments") or c.get("function", {}).get("arguments", "{}")) for c in calls]
        answers = [m["content"] for m in messages[i + 1: i + 1 + len(calls)] if m["role"] == "tool"]
        out.append((calls, answers))
    return out


def run_eval(stack: str, llm: FaultServer, mini_db_path: Path, out: Path) -> list[Rollout]:
    """verifiers' own evaluation command of `stack` on utp-env (3 mini queries, 10 turns); its rollouts."""
    script = eval_command(stack)
    if script is None:
        pytest.skip(f"the installed verifiers has no {stack} stack")
    if stack == "v1":
        args = ["--env.taskset.db-path", str(mini_db_path), "--env.taskset.limit", str(N), "--env.taskset.max-turns",
                "10", "-m", "scripted-model", "--client.base-url", llm.base_url, "--client.api-key-var", KEY_ENV,
                "-n", str(N), "-r", "1", "-c", "1", "--no-push", "--no-rich", "-o", str(out)]
    else:
        env_args = {"db_path": str(mini_db_path), "limit": N, "max_turns": 10}
        args = ["-a", json.dumps(env_args), "-m", "scripted-model", "-b", llm.base_url, "-k", KEY_ENV, "-n", str(N),
                "-r", "1", "-c", "1", "-s", "-o", str(out), "-d", "--disable-env-server"]
    out.mkdir()
    # HOME: verifiers keeps its run folders and settings under the home directory
    done = subprocess.run([str(script), "utp-env", *args], cwd=out, capture_output=True, text=True, timeout=600,
                          env={**os.environ, KEY_ENV: "sk-test-not-a-real-key", "HOME": str(out)})
    assert done.returncode == 0, done.stderr[-3000:]
    if stack == "v1":
        [saved] = list(out.rglob("traces.jsonl"))
        rollouts = []
        for line in saved.read_text().splitlines():
            episode = json.loads(line)
            [trace] = episode["traces"]
            assert trace["ok"] and not trace["errors"], trace["errors"]
            data = episode["task"]["data"]
            messages = [node["message"] for node in trace["nodes"]]
            [task] = [m["content"] for m in messages if m["role"] == "user"][:1]
            rollouts.append(Rollout(data["query_id"], data["seed"], task, replies_of(messages),
                                    trace["rewards"]["utp_reward"]["score"], trace["metrics"]["final_pass"]))
        return rollouts
    [saved] = list(out.rglob("results.jsonl"))
    rows = [json.loads(line) for line in saved.read_text().splitlines() if line.strip()]
    return [Rollout(row["info"]["query_id"], row["info"]["seed"], row["prompt"][-1]["content"],
                    replies_of(row["completion"]), row["reward"], row["metrics"]["final_pass"]) for row in rows]


@pytest.fixture(scope="module")
def llm(server: FaultServer) -> Iterator[FaultServer]:
    """The scripted server, its first reply to each episode calling its tool twice: a reply of two calls must
    be one `env.step` (whose answer `split_answers` cuts in two), not two."""
    brain = server.brain

    def doubled(body: dict[str, Any], fault: str | None) -> Reply:
        reply = brain(body, fault)
        if len(reply.tool_calls) == 1 and not any(m.get("role") == "tool" for m in body["messages"]):
            reply.tool_calls = reply.tool_calls * 2
        return reply

    server.brain = doubled
    yield server
    server.brain = brain


@pytest.fixture(scope="module")
def tool_calling_run(llm: FaultServer, mini_db_path: Path,
                     tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any] | None:
    """`utp-env run` with the tool-calling agent against the same scripted model: its records by query (None
    without the llm extra, which that agent needs)."""
    if importlib.util.find_spec("langchain_openai") is None:
        return None
    out = tmp_path_factory.mktemp("run")
    os.environ[KEY_ENV] = "sk-test-not-a-real-key"
    assert main(["run", "--agent", "tool_calling", "--db", str(mini_db_path), "--limit", str(N), "--rollouts", "0",
                 "--out", str(out), "--quiet", "--set", f"base_url={llm.base_url}", "--set",
                 "model=scripted-model", "--set", f"api_key_env={KEY_ENV}", "--set", "max_steps=10"]) == 0
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {r["query_id"]: r for r in records}


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_vf_eval_gives_the_rewards_of_utp_env_run_and_the_in_process_transcripts(
        stack: str, llm: FaultServer, mini_db_path: Path, tool_calling_run: dict[str, Any] | None,
        tmp_path: Path) -> None:
    llm.requests.clear()
    rollouts = run_eval(stack, llm, mini_db_path, tmp_path / "vf")
    assert llm.refused == [] and llm.requests and all(check_request(body) is None for body in llm.requests)
    # the first N queries of the validation split, as `utp-env run` takes them
    first = [q.query_id for q in split_pool(open_database(mini_db_path), "validation", N)]
    assert sorted(r.query_id for r in rollouts) == first
    assert all(r.final_pass == 1.0 for r in rollouts)  # the scripted model submits the reference planner's plans
    # the same calls as `utp-env run --agent tool_calling`, the same rewards
    for rollout in rollouts if tool_calling_run is not None else []:
        record = tool_calling_run[rollout.query_id]
        assert record["termination_reason"] == "submitted"
        assert rollout.reward == pytest.approx(record["reward"], abs=1e-12)
        assert rollout.final_pass == float(record["final_pass"])
    # the transcript: each reply's calls played as one step of UTPEnv in-process give the same tool messages
    # (those verifiers kept: the answers to the last reply are sent to no model) and the same reward
    for rollout in rollouts:
        env = UTPEnv(db_path=mini_db_path, config={"step_limit": 10})
        task, _ = env.reset(seed=rollout.seed, options={"query_id": rollout.query_id})
        assert rollout.task == task
        reward = None
        assert len(rollout.replies[0][0]) == 2, "the first reply calls two tools"
        for calls, answers in rollout.replies:
            assert calls, "every reply of the scripted model calls a tool"
            entries = [{"id": i, "type": "function", "function": {"name": name, "arguments": arguments}}
                       for i, name, arguments in calls]
            observation, reward, *_ = env.step(entries)
            assert answers in ([], split_answers(observation, len(calls)))
        assert all(answers for _, answers in rollout.replies[:-1])
        assert reward == pytest.approx(rollout.reward, abs=1e-12)


def test_arguments_are_checked_in_one_line(mini_db_path: Path) -> None:
    from utp_env import load_environment
    from utp_env.verifiers_env import has_classic_api

    if not has_classic_api():  # verifiers 0.4: load_environment says how its loader finds utp-env
        with pytest.raises(RuntimeError) as refused:
            load_environment(db_path=str(mini_db_path))
        assert "vf-eval utp-env --env.taskset." in str(refused.value) and "\n" not in str(refused.value)
        return
    for bad, message in (({"limit": 1.5}, "load_environment: limit must be an integer >= 1, not 1.5"),
                         ({"seed": -1}, "load_environment: seed must be an integer >= 0, not -1"),
                         ({"env": "UTP-v9"}, "--env: unknown env 'UTP-v9'")):
        with pytest.raises(ValueError) as error:
            load_environment(db_path=str(mini_db_path), **bad)
        assert str(error.value).startswith(message) and "\n" not in str(error.value)
    env = load_environment(db_path=str(mini_db_path), eval_split="nope", limit=1)
    with pytest.raises(ValueError, match="load_environment: split: "):
        env.get_eval_dataset()


def test_the_taskset_refuses_bad_settings_in_one_line(mini_db_path: Path) -> None:
    """The 0.4 plugins: a bad value of `--env.taskset.*` is refused by the config (verifiers' command prints
    the field and the reason), a bad split by the taskset's load, each in one line."""
    pytest.importorskip("verifiers.v1")
    from pydantic import ValidationError

    import utp_env
    from utp_env.verifiers_env import PLUGINS, UTPTasksetConfig

    assert set(PLUGINS) <= set(utp_env.__all__)
    for field, value, reason in (("limit", 1.5, "valid integer"), ("seed", -1, "greater than or equal to 0"),
                                 ("max_turns", 0, "greater than or equal to 1"),
                                 ("env", "UTP-v9", "--env: unknown env 'UTP-v9'; choose UTP-v0 or UTP-Replan-v0")):
        with pytest.raises(ValidationError) as error:
            UTPTasksetConfig(id="utp-env", db_path=str(mini_db_path), **{field: value})
        [problem] = error.value.errors()
        assert problem["loc"] == (field,) and reason in problem["msg"] and "\n" not in problem["msg"]
    taskset = utp_env.UTPTaskset(UTPTasksetConfig(id="utp-env", db_path=str(mini_db_path), split="nope"))
    with pytest.raises(ValueError) as error:
        list(taskset)
    assert str(error.value).startswith("utp-env taskset: split: split 'nope' has no queries") and \
        "\n" not in str(error.value)
    tasks = list(utp_env.UTPTaskset(UTPTasksetConfig(id="utp-env", db_path=str(mini_db_path), limit=2)))
    assert [t.data.query_id for t in tasks] == sorted(t.data.query_id for t in tasks) and len(tasks) == 2
