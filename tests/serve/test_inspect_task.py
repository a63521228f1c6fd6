"""The Inspect AI task (utp_env/inspect_task.py@utp_bench), run with Inspect's mock model (no network).

The mock model's replies are scripted per sample (samples run one at a time, in query-id order) and
carry their token usage, so Inspect never needs a tokenizer download. Each sample's reward is compared
with the same calls played in-process, and the task's Table 3 metrics with `summarize_group` over the
in-process reports.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate

from utp_env.env.config import open_database, reference_plan, split_pool
from utp_env.env.core import UTPEnv
from utp_env.evaluation.aggregate import counted_report, summarize_group
from utp_env.evaluation.report import EvaluationReport
from utp_env.inspect_task import table3_keys, utp_bench
from utp_env.plan_format.write import format_plan
from utp_env.query import Query

TASK_FILE = Path(__file__).resolve().parents[2] / "utp_env" / "inspect_task.py"


def _out(output: ModelOutput) -> ModelOutput:
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def _call(name: str, args: dict[str, Any]) -> ModelOutput:
    return _out(ModelOutput.for_tool_call("mockllm/model", name, args))


def _say(text: str) -> ModelOutput:
    return _out(ModelOutput.from_content("mockllm/model", text))


@pytest.fixture(scope="module")
def queries(mini_db_path: Path) -> list[Query]:
    return sorted(split_pool(open_database(mini_db_path), "validation"), key=lambda q: q.query_id)[:3]


def _plan(mini_db_path: Path, query: Query) -> str:
    plan = reference_plan(open_database(mini_db_path), query.query_id)
    assert plan is not None
    return json.dumps(format_plan(plan))


def _in_process(mini_db_path: Path, query: Query, calls: list[dict[str, Any]]) -> tuple[float, dict[str, Any]]:
    env = UTPEnv(db_path=mini_db_path)
    env.reset(seed=0, options={"query_id": query.query_id})
    for call in calls:
        _, reward, terminated, truncated, info = env.step(call)
        if terminated or truncated:
            return reward, info
    return env.end_episode("step_limit")


def test_inspect_eval_of_the_task_file_scores_like_the_env(mini_db_path: Path, queries: list[Query],
                                                           tmp_path: Path) -> None:
    """Three samples: a plan submitted with the tool (the agent stops once the episode has ended), a plan
    written as the last reply, no plan at all."""
    plans = [_plan(mini_db_path, q) for q in queries]
    outputs = [_call("view_plan", {}), _call("submit_plan", {"plan": plans[0]}),  # the agent stops at the end
               _call("view_plan", {"format": "json"}), _say(f"The plan:\n```json\n{plans[1]}\n```"),
               _call("no_such_tool", {}), _say("I cannot plan this trip.")]
    model = get_model("mockllm/model", custom_outputs=outputs)
    logs = inspect_eval(f"{TASK_FILE}@utp_bench", model=model, log_dir=str(tmp_path), max_samples=1,
                        display="none", task_args={"db_path": str(mini_db_path), "limit": 3})
    assert logs[0].status == "success", logs[0].error
    log = read_eval_log(logs[0].location)  # the log on disk, as `inspect view` opens it
    assert log.samples is not None and [s.id for s in log.samples] == [q.query_id for q in queries]
    expected = [
        _in_process(mini_db_path, queries[0], [{"tool": "view_plan"}, {"tool": "submit_plan",
                                                                        "args": {"plan": plans[0]}}]),
        _in_process(mini_db_path, queries[1], [{"tool": "view_plan", "args": {"format": "json"}},
                                               {"tool": "submit_plan", "args": {"plan": outputs[3].completion}}]),
        _in_process(mini_db_path, queries[2], [{"tool": "no_such_tool"}]),
    ]
    scores = [s.scores["utp_scorer"] for s in log.samples]  # type: ignore[index]
    assert [s.answer for s in scores] == ["submitted", "submitted", "step_limit"]
    for score, (reward, info) in zip(scores, expected, strict=True):
        assert score.value == {"reward": reward}
        assert score.metadata is not None and score.metadata["metrics"] == json.loads(json.dumps(info["metrics"]))
    assert expected[0][0] > 0 and expected[1][0] > 0
    # Table 3 over the samples = the project's own aggregation of the same reports (the third sample's plan has no
    # day: not delivered, as `utp-env run` counts it)
    group = summarize_group([(q, counted_report(info["plan"], None if info["report"] is None else
                                                EvaluationReport.model_validate(info["report"])))
                             for q, (_, info) in zip(queries, expected, strict=True)])
    assert group.delivery_rate == pytest.approx(2 / 3)
    assert log.results is not None
    metrics = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert set(table3_keys()) <= set(metrics)
    assert metrics["delivery_rate"] == group.delivery_rate and metrics["final_pass_rate"] == group.final_pass_rate
    assert metrics["commonsense_micro"] == pytest.approx(group.commonsense_micro)
    assert metrics["S_spatial"] == pytest.approx(group.qualitative["spatial"].mean)
    assert metrics["mean"] == pytest.approx(sum(r for r, _ in expected) / 3)
    assert all(isinstance(v, float) and (math.isnan(v) or 0 <= v <= 1) for k, v in metrics.items()
               if v is not None and not k.endswith("_n"))
    # each row with its 95% interval and n (utp_env/evaluation/intervals.py), as `utp-env show` prints it
    assert metrics["delivery_rate_n"] == 3 and metrics["delivery_rate_ci_low"] <= metrics["delivery_rate"]
    assert metrics["delivery_rate_ci_high"] >= metrics["delivery_rate"]


def test_the_users_solver_finds_the_tools(mini_db_path: Path, queries: list[Query], tmp_path: Path) -> None:
    plan = _plan(mini_db_path, queries[0])
    model = get_model("mockllm/model", custom_outputs=[_call("submit_plan", {"plan": plan}), _say("Done.")])
    task = utp_bench(db_path=str(mini_db_path), limit=1, solver=generate(tool_calls="loop"))
    log = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none")[0]
    assert log.status == "success", log.error
    reward, _ = _in_process(mini_db_path, queries[0], [{"tool": "submit_plan", "args": {"plan": plan}}])
    assert log.samples is not None and log.samples[0].scores["utp_scorer"].value == {"reward": reward}  # type: ignore[index]


@pytest.mark.parametrize(("args", "message"), [
    ({"split": "nope"}, "utp_bench: split: "),
    ({"limit": 0}, "utp_bench: limit must be at least 1, not 0"),
    ({"limit": 1.9}, "utp_bench: limit=1.9 (float): limit must be a whole number >= 1, e.g. -T limit=1"),
    ({"limit": "x"}, "utp_bench: limit='x' (str): limit must be a whole number >= 1"),
    ({"seed": -1}, "utp_bench: seed must be at least 0, not -1"),
    ({"zzz": 1}, "utp_bench: unknown argument(s) zzz=1; the task takes split, limit, profile, db_path, env, seed, "
                 "solver"),
    ({"profile": "huge"}, "utp_bench: profile='huge': profile must be full or mini"),
    ({"env": "UTP-v9"}, "--env: unknown env 'UTP-v9'"),
])
def test_bad_task_arguments_are_one_line(mini_db_path: Path, args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as error:
        utp_bench(db_path=str(mini_db_path), **args)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_an_empty_plan_is_not_delivered(mini_db_path: Path, tmp_path: Path) -> None:
    """A model that never calls a tool leaves a plan with no day: undelivered, as `utp-env run` counts it."""
    model = get_model("mockllm/model", custom_outputs=[_say("I cannot plan this trip.")])
    log = inspect_eval(utp_bench(db_path=str(mini_db_path), limit=1), model=model, log_dir=str(tmp_path),
                       display="none")[0]
    assert log.status == "success" and log.results is not None
    metrics = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert metrics["delivery_rate"] == 0 and metrics["commonsense_micro"] == 0


def test_the_scripted_model_runs_the_task_offline(mini_db_path: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """`--model utp-scripted/reference`: the reference plans through the env's tools, tokens counted without a
    tokenizer download."""
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "no-tiktoken"))  # a download would fail the test
    log = inspect_eval(f"{TASK_FILE}@utp_bench", model="utp-scripted/reference", log_dir=str(tmp_path),
                       display="none", task_args={"db_path": str(mini_db_path), "limit": 2})[0]
    assert log.status == "success", log.error
    assert log.results is not None and log.results.completed_samples == 2
    metrics = {k: m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert metrics["final_pass_rate"] == 1 and metrics["mean"] > 0.5


def test_inspect_eval_exits_non_zero_when_no_sample_completed(mini_db_path: Path, tmp_path: Path) -> None:
    solver = tmp_path / "failing.py"
    solver.write_text("from inspect_ai.solver import solver\n\n\n@solver\ndef down():\n"
                      "    async def solve(state, generate):\n"
                      "        raise RuntimeError('the model server is down')\n\n    return solve\n")
    import shutil
    import subprocess

    inspect = shutil.which("inspect")
    assert inspect is not None
    done = subprocess.run([inspect, "eval", "utp_env/utp_bench", "--model", "utp-scripted/reference", "--solver",
                           f"{solver}@down", "-T", f"db_path={mini_db_path}", "-T", "limit=1", "--log-dir",
                           str(tmp_path / "logs"), "--display", "plain"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "utp_bench: no sample completed (RuntimeError" in done.stderr + done.stdout
