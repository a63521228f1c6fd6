"""Benchmark runs: resume after a real kill, the same results on any worker count or backend,
bad episodes recorded without stopping the run, and the summary commands."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from utp_env.cli import main
from utp_env.env.config import load_env_config
from utp_env.env.episode import TerminationReason, finish
from utp_env.evaluation.report import METRICS
from utp_env.itinerary import Plan
from utp_env.runs.config import RunConfig
from utp_env.runs.episode import context_for, run_episode
from utp_env.runs.runner import run

SUPPORT = Path(__file__).resolve().parents[1] / "support"  # the helpers a subprocess imports
VOLATILE = {"duration_s"}


def _records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def _stable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records in canonical order without timings."""
    out = [{k: v for k, v in r.items() if k not in VOLATILE} for r in records]
    return sorted(out, key=lambda r: (r["query_id"], r["trial"]))


def _summary(run_dir: Path) -> dict[str, Any]:
    summary = json.loads((run_dir / "summary.json").read_text())
    summary.pop("mean_duration_s")
    return summary


def _config(db: Path, out: Path, **kw: Any) -> RunConfig:
    base = {"db": str(db), "split": "all", "limit": 6, "rollouts": 50, "out": str(out)}
    return RunConfig(**(base | kw))


def test_killed_run_resumes_without_redoing_or_duplicating(mini_db_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "utp_env", "run", "--db", str(mini_db_path), "--split", "all", "--limit", "6",
           "--rollouts", "50", "--agent", "run_agents:SlowReference", "--out", str(out), "--quiet"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SUPPORT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_text().splitlines()) >= 2:
            break
        if proc.poll() is not None:
            pytest.fail(f"run ended before it could be killed: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    done_before = len(results.read_text().splitlines())
    assert 2 <= done_before < 6, "the kill should land mid-run"
    with results.open("a") as fh:  # and a line torn by the kill
        fh.write('{"query_id": "utp-q-9999", "trial": 0, "pl')
    finished = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert "1 bad line(s) moved to results.rejected.jsonl" in finished.stderr and "torn" in finished.stderr
    records = _records(out)
    keys = [(r["query_id"], r["trial"]) for r in records]
    assert len(keys) == len(set(keys)) == 6
    uninterrupted = tmp_path / "uninterrupted"
    full = subprocess.run([*cmd[:-2], str(uninterrupted), "--quiet"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert full.returncode == 0, full.stderr[-2000:]
    assert _stable(records) == _stable(_records(uninterrupted))
    assert _summary(out) == _summary(uninterrupted)


def test_one_and_two_workers_give_the_same_results(mini_db_path: Path, tmp_path: Path) -> None:
    one = run(_config(mini_db_path, tmp_path / "one"), progress=False)
    two = run(_config(mini_db_path, tmp_path / "two", workers=2), progress=False)
    assert _stable(_records(one)) == _stable(_records(two))
    assert _summary(one) == _summary(two)
    assert {p.name for p in one.glob("*.png")} == {"metrics_by_horizon_risk.png", "pass_rates_by_level.png",
                                                   "timeline.png"}


@pytest.mark.slow
def test_ray_backend_gives_the_same_results(mini_db_path: Path, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    local = run(_config(mini_db_path, tmp_path / "local"), progress=False)
    try:
        on_ray = run(_config(mini_db_path, tmp_path / "ray", backend="ray", workers=2), progress=False)
    finally:
        ray.shutdown()
    assert _stable(_records(local)) == _stable(_records(on_ray))
    assert _summary(local) == _summary(on_ray)


def test_bad_episodes_are_recorded_and_the_run_goes_on(mini_db_path: Path, tmp_path: Path) -> None:
    run_dir = run(_config(mini_db_path, tmp_path / "troubled", agent="run_agents:TroubledAgent", limit=9),
                  progress=False)
    records = _records(run_dir)
    assert len(records) == 9
    reasons = {r["termination_reason"] for r in records}
    assert reasons == {"agent_error", "not_delivered", "submitted"}
    crashed = [r for r in records if r["termination_reason"] == "agent_error"]
    assert all("RuntimeError: model exploded" in r["error"] for r in crashed)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["evaluation"]["groups"]["all"]["delivery_rate"] == pytest.approx(
        sum(r["report"] is not None for r in records) / 9)
    assert len(summary["errors"]) == sum(r["termination_reason"] != "submitted" for r in records)
    assert summary["termination"] == {reason: sum(r["termination_reason"] == reason for r in records)
                                      for reason in ("agent_error", "not_delivered", "submitted")}


@pytest.mark.parametrize("env", ["plan", "replan"])
def test_an_agent_calling_sys_exit_is_an_agent_error_and_the_run_goes_on(mini_db_path: Path, tmp_path: Path,
                                                                         env: str) -> None:
    run_dir = run(_config(mini_db_path, tmp_path / env, agent="run_agents:ExitingAgent", limit=None, rollouts=0,
                          env=env), progress=False)
    records = _records(run_dir)
    assert len(records) == 60
    if env == "replan":  # an exit while repairing ends the repairs; the trip is lived on and scored
        assert any(r["error"].startswith("repair failed: SystemExit: 3") and r["reward"] > 0
                   for r in records if r.get("error"))
    exited = [r for r in records if r["termination_reason"] == "agent_error"]
    planned = [r for r in exited if "SystemExit: exit while planning" in r["error"]]
    assert planned and all(r["query_id"].endswith(("0", "2", "4", "6", "8")) for r in planned)
    assert all("SystemExit" in r["error"] for r in exited)
    assert any(r["termination_reason"] == "submitted" for r in records)


def test_a_run_record_is_the_outcome_of_the_envs_finish_step(mini_db_path: Path, tmp_path: Path) -> None:
    """The run worker ends an episode through the env's `finish`: the line holds its outcome's JSON
    (the same keys as the env's final info), `metrics` is the report's eight metrics."""
    config = _config(mini_db_path, tmp_path / "one-episode", limit=1)
    ctx = context_for(config)
    query_id = sorted(ctx.queries)[0]
    record = run_episode(config, query_id, 0)
    plan = Plan.model_validate(record["plan"])
    expected = finish(TerminationReason.SUBMITTED, plan, ctx.queries[query_id], ctx.dataset.db,
                      weights=load_env_config().reward_weights, reference=ctx.dataset.references.get(query_id),
                      rollouts=config.rollouts, rollout_seed=record["seed"]).to_json()
    assert {k: record[k] for k in expected} == expected
    assert list(record["metrics"]) == list(METRICS) and 0.0 < record["reward"] <= 1.0


def test_an_evaluator_failure_is_recorded_not_raised(mini_db_path: Path, tmp_path: Path, monkeypatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("evaluator bug")

    config = _config(mini_db_path, tmp_path / "broken-evaluator", limit=1)
    query_id = sorted(context_for(config).queries)[0]
    monkeypatch.setattr("utp_env.env.reward.evaluate_context", broken)  # what `finish` scores a plan with
    record = run_episode(config, query_id, 0)
    assert record["termination_reason"] == TerminationReason.INFRASTRUCTURE_ERROR
    assert record["report"] is None and record["plan"] is not None and "evaluator bug" in record["error"]


def test_trials_give_pass_hat_k_and_the_cli_shows_and_compares(mini_db_path: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    a = run(_config(mini_db_path, tmp_path / "a", limit=3, trials=2), progress=False)
    summary = json.loads((a / "summary.json").read_text())
    assert set(summary["pass_hat_k"]) == {"1", "2"}
    assert summary["episodes"] == 6 and all(q["trials"] == 2 for q in summary["per_query"])
    b = run(_config(mini_db_path, tmp_path / "b", limit=3, agent="deterministic"), progress=False)
    assert main(["show", str(a)]) == 0
    assert "Final pass rate" in capsys.readouterr().out
    assert main(["show", str(a), str(b)]) == 0
    compared = capsys.readouterr().out
    assert "deterministic" in compared and "diff" in compared and "MC hold rate" in compared
    # b ran one trial, a two: `compare` would refuse them, so show says why instead of suggesting it
    assert "`utp-env compare` cannot test these two runs row by row: the runs have different query sets: " \
           "trials is 2 in" in compared and "Is a difference real?" not in compared
    c = run(_config(mini_db_path, tmp_path / "c", limit=3, trials=2, agent="deterministic"), progress=False)
    assert main(["show", str(a), str(c)]) == 0
    assert f"Is a difference real? `utp-env compare {a} {c}`" in capsys.readouterr().out


def test_a_different_run_in_the_same_folder_is_refused(mini_db_path: Path, tmp_path: Path) -> None:
    run(_config(mini_db_path, tmp_path / "same", limit=2), progress=False)
    with pytest.raises(ValueError, match="another configuration"):
        run(_config(mini_db_path, tmp_path / "same", limit=3), progress=False)


def test_a_run_record_keeps_the_reason_the_agents_env_episode_ended(mini_db_path: Path, tmp_path: Path) -> None:
    """An agent that drove the env to its step limit is recorded as step_limit (its partial plan
    scored), not as submitted; an unknown reason is the agent's error, named."""
    run_dir = run(_config(mini_db_path, tmp_path / "cut", agent="run_agents:CutShortAgent", limit=6, rollouts=0),
                  progress=False)
    records = _records(run_dir)
    bogus = [r for r in records if int(r["query_id"].rsplit("-", 1)[-1]) % 3 == 0]
    cut = [r for r in records if r not in bogus]
    assert cut and all(r["termination_reason"] == "step_limit" and r["report"] is not None for r in cut)
    assert all(r["termination_reason"] == "agent_error" and "'exploded'" in r["error"] for r in bogus)


def test_the_summary_says_the_cost_of_model_calls_or_that_it_is_unknown(mini_db_path: Path, tmp_path: Path) -> None:
    """An LLM run names its model usage; a run whose price is for another model says its cost is unknown."""
    from utp_env.runs.summary import load_summary, summary_notes

    summary = load_summary(run(_config(mini_db_path, tmp_path / "r", limit=1), progress=False))
    assert not any(n.startswith("model usage") for n in summary_notes(summary))  # no model, no line
    priced = summary.model_copy(update={"usage": {"model_calls": 3.0, "input_tokens": 1200.0,
                                                  "output_tokens": 80.0, "cost_usd": 0.0021}})
    assert "model usage: 3 calls, tokens in 1,200 / out 80, cost $0.0021" in summary_notes(priced)
    unpriced = priced.model_copy(update={"usage": {**priced.usage, "cost_usd": None}})
    assert any("cost unknown" in n for n in summary_notes(unpriced))
