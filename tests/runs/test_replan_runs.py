"""Closed-loop runs (`utp-env run --env replan`, utp_env/runs/replan_episode.py) and the paired
comparison of two runs (`utp-env show A B`, utp_env/runs/paired.py): the config field and its
rejections, the paired differences and their refusals, common random numbers across agents, the
replan summary, the planned-vs-realised plot and the run CLI on the mini sandbox."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest

from utp_env.cli import main
from utp_env.runs.config import RunConfig
from utp_env.runs.paired import (
    PairingError,
    pair_records,
    paired_difference,
    paired_table,
    records_by_episode,
    t_quantile_975,
)
from utp_env.runs.runner import run


def _config(db: Path, out: Path, **kw: Any) -> RunConfig:
    base = {"db": str(db), "split": "all", "limit": 3, "rollouts": 0, "out": str(out)}
    return RunConfig(**(base | kw))


def _records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


# ---------------------------------------------------------------- the config field


def test_env_defaults_to_plan_and_keeps_old_run_identities() -> None:
    config = RunConfig()
    assert config.env == "plan" and "env" not in config.identity()
    assert config.default_run_name() == "reference-full-validation-seed0"
    replan = RunConfig(env="replan", agent="no_repair")
    assert replan.identity()["env"] == "replan"
    assert replan.default_run_name() == "no_repair-replan-full-validation-seed0"


def test_a_bad_env_value_is_refused_in_the_config_and_on_the_command_line(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="env"):
        RunConfig(env="closed")  # type: ignore[arg-type]
    yaml_file = tmp_path / "run.yaml"
    yaml_file.write_text("env: closed_loop\n")
    assert main(["run", "--config", str(yaml_file), "--out", str(tmp_path / "x"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "env" in err and "'plan' or 'replan'" in err
    with pytest.raises(SystemExit) as exc:
        main(["run", "--env", "replna", "--out", str(tmp_path / "y")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--env" in err and "did you mean 'replan'?" in err


# ---------------------------------------------------------------- paired statistics


@pytest.mark.parametrize(("df", "expected"), [(1, 12.706), (5, 2.571), (30, 2.042), (40, 2.021), (60, 2.000),
                                              (120, 1.980), (10_000, 1.960)])
def test_t_quantile_matches_the_table(df: int, expected: float) -> None:
    assert t_quantile_975(df) == pytest.approx(expected, abs=1.5e-3)


def test_t_quantile_refuses_no_degrees_of_freedom() -> None:
    with pytest.raises(ValueError, match="degrees of freedom"):
        t_quantile_975(0)


def test_paired_difference_is_the_t_interval_of_the_differences() -> None:
    a = [0.50, 0.61, 0.42, 0.70, 0.55]
    b = [0.58, 0.60, 0.51, 0.79, 0.57]
    stat = paired_difference("x", a, b)
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    half = 2.776 * statistics.stdev(diffs) / math.sqrt(5)
    assert stat.diff == pytest.approx(statistics.mean(diffs))
    assert stat.ci_low == pytest.approx(stat.diff - half, abs=1e-4) and stat.ci_high == pytest.approx(stat.diff + half,
                                                                                                       abs=1e-4)
    assert stat.mean_a == pytest.approx(statistics.mean(a)) and stat.mean_b == pytest.approx(statistics.mean(b))
    single = paired_difference("x", [1.0], [2.0])
    assert single.diff == 1.0 and single.ci_low is None
    with pytest.raises(ValueError, match="same number"):
        paired_difference("x", [1.0], [])


def test_a_difference_of_values_in_0_1_keeps_its_interval_within_minus_1_and_1() -> None:
    """Three pairs of scores in [0, 1]: Student's t with 2 degrees of freedom reaches below -1, which no
    difference of such scores can be; the interval stops at -1 (and is the plain t interval otherwise)."""
    a, b = [1.0, 0.9, 1.0], [0.0, 0.3, 0.1]
    plain, unit = paired_difference("x", a, b), paired_difference("x", a, b, unit=True)
    assert plain.ci_low is not None and plain.ci_low < -1.0
    assert unit.ci_low == -1.0 and unit.ci_high == plain.ci_high and unit.diff == plain.diff


def _record(qid: str, trial: int = 0, seed: int = 7, db: str = "h", **kw: Any) -> dict[str, Any]:
    return {"query_id": qid, "trial": trial, "seed": seed, "db_hash": db, **kw}


def test_pairing_refuses_other_episodes_other_seeds_and_other_databases() -> None:
    left = {"q1#0": _record("q1"), "q2#0": _record("q2")}
    with pytest.raises(PairingError, match=r"different episodes .*q2#0 only in A"):
        pair_records(left, {"q1#0": _record("q1")})
    with pytest.raises(PairingError, match="different --seed"):
        pair_records(left, {"q1#0": _record("q1"), "q2#0": _record("q2", seed=8)})
    with pytest.raises(PairingError, match="another database"):
        pair_records(left, {"q1#0": _record("q1"), "q2#0": _record("q2", db="other")})
    with pytest.raises(PairingError, match="no episodes"):
        pair_records({}, {})
    pairs = pair_records(left, {"q2#0": _record("q2"), "q1#0": _record("q1")})
    assert [a["query_id"] for a, _ in pairs] == ["q1", "q2"]


def test_paired_table_puts_the_realised_rows_first_for_closed_loop_runs() -> None:
    def rec(qid: str, realised: float, reward: float) -> dict[str, Any]:
        return _record(qid, reward=reward, plan_reward=reward, report={}, final_pass=True,
                       metrics={"bas": 0.5, "cats": 0.5, "tdas": 0.5},
                       replan={"realised_score": realised, "items_kept": 1.0, "rebookings": 0, "late_minutes": 3.0,
                               "extra_cost": 0.0, "disruptions": 1})

    pairs = [(rec("q1", 0.5, 0.7), rec("q1", 0.6, 0.7)), (rec("q2", 0.4, 0.6), rec("q2", 0.6, 0.6))]
    stats = paired_table(pairs, replan=True)
    assert stats[0].label == "realised score" and stats[0].diff == pytest.approx(0.15)
    labels = [s.label for s in stats]
    assert labels.index("extra cost (INR)") < labels.index("reward (of the plan, UTP-v0)")
    assert paired_table(pairs, replan=False)[0].label == "reward (of the plan, UTP-v0)"


# ---------------------------------------------------------------- show A B


def test_show_pairs_two_runs_of_the_same_seed_and_refuses_other_seeds_when_asked(
        mini_db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = run(_config(mini_db_path, tmp_path / "a"), progress=False)
    b = run(_config(mini_db_path, tmp_path / "b", agent="deterministic"), progress=False)
    c = run(_config(mini_db_path, tmp_path / "c", agent="deterministic", seed=1), progress=False)
    d = run(_config(mini_db_path, tmp_path / "d", agent="deterministic", limit=2), progress=False)
    assert main(["show", "--paired", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "Paired over 3 episodes" in out and "95%" in out and "reward (of the plan, UTP-v0) (3)" in out
    assert main(["show", "--paired", "--markdown", str(a), str(b)]) == 0
    assert "| paired (n) | A: reference | B: deterministic | B - A | 95% CI |" in capsys.readouterr().out
    assert main(["show", str(a), str(c)]) == 0  # without --paired a mismatch is a note
    assert "no paired differences" in capsys.readouterr().out
    assert main(["show", "--paired", str(a), str(c)]) == 2
    assert "different --seed" in capsys.readouterr().err
    assert main(["show", "--paired", str(a), str(d)]) == 2
    assert "different episodes" in capsys.readouterr().err
    assert main(["show", "--paired", str(a)]) == 2
    assert "--paired compares two run folders" in capsys.readouterr().err
    assert set(records_by_episode(a)) == {f"{r['query_id']}#{r['trial']}" for r in _records(a)}


# ---------------------------------------------------------------- closed-loop runs


class BrokenRepairAgent:
    """Plans like the reference planner; its repair raises (the run records the agent's error)."""

    name = "broken_repair"

    def __init__(self) -> None:
        from utp_env.agents.reference import ReferencePlanner

        self.planner = ReferencePlanner()

    def run(self, query: Any, toolkit: Any) -> Any:
        return self.planner.run(query, toolkit)

    def repair(self, env: Any, observation: str, info: dict[str, Any]) -> None:
        raise RuntimeError("repair exploded")


def _leg_delays(record: dict[str, Any]) -> dict[tuple[int, str], float]:
    return {(s["day_index"], s["name"]): s["delay"] for s in record["replan"]["realised"]["steps"]
            if s["element"] == "leg"}


@pytest.fixture(scope="module")
def replan_runs(mini_db_path: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A reference and a no_repair closed-loop run on the same 8 mini queries and seeds."""
    out = tmp_path_factory.mktemp("replan_runs")
    ref = run(_config(mini_db_path, out / "ref", env="replan", limit=8, trials=2), progress=False)
    bare = run(_config(mini_db_path, out / "bare", env="replan", agent="no_repair", limit=8, trials=2),
               progress=False)
    return ref, bare


def test_both_agents_meet_the_same_reality_on_the_same_seeds(replan_runs: tuple[Path, Path]) -> None:
    """Common random numbers: every service both runs took on the same day has the same delay, and
    every visit both kept at the same planned time the same overrun."""
    ref, bare = (records_by_episode(r) for r in replan_runs)
    assert set(ref) == set(bare) and len(ref) == 16
    shared = 0
    for key, a in ref.items():
        b = bare[key]
        assert a["seed"] == b["seed"] and a["plan"] == b["plan"]  # the same plan, lived on the same day
        legs_a, legs_b = _leg_delays(a), _leg_delays(b)
        for leg in set(legs_a) & set(legs_b):
            assert legs_a[leg] == legs_b[leg], (key, leg)
            shared += 1
        visits_b = {(s["day_index"], s["name"], s["planned_start"]): s["delay"]
                    for s in b["replan"]["realised"]["steps"] if s["element"] == "item"}
        for s in a["replan"]["realised"]["steps"]:
            if s["element"] == "item" and (s["day_index"], s["name"], s["planned_start"]) in visits_b:
                assert s["delay"] == visits_b[(s["day_index"], s["name"], s["planned_start"])]
    assert shared >= 16
    # ... and another seed is another reality
    trial0 = {k: _leg_delays(r) for k, r in ref.items() if k.endswith("#0")}
    trial1 = {k[:-2] + "#0": _leg_delays(r) for k, r in ref.items() if k.endswith("#1")}
    assert any(trial0[k] != trial1[k] for k in trial0)


def test_a_replan_run_records_the_realised_outcome_and_summarises_it(replan_runs: tuple[Path, Path],
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    ref, bare = replan_runs
    for record in _records(ref):
        block = record["replan"]
        assert record["termination_reason"] == "submitted" and record["reward"] == block["realised_score"]
        assert 0.0 <= block["realised_score"] <= 1.0 and 0.0 <= block["items_kept"] <= 1.0
        assert record["plan_reward"] is not None and record["report"] is not None
        assert block["disruptions"] == len(block["reports"]) <= 3
    for record in _records(bare):
        assert record["replan"]["repair_steps"] == 0
    summary = json.loads((ref / "summary.json").read_text())
    assert summary["env"] == "replan"
    cell = summary["replan"]["cells"]["all"]["all"]
    assert cell["episodes"] == 16
    assert cell["realised_score"] == pytest.approx(sum(r["reward"] for r in _records(ref)) / 16)
    assert (ref / "realised_timeline.png").stat().st_size > 10_000
    assert "Closed loop (UTP-Replan-v0)" in (ref / "summary.md").read_text()
    assert main(["show", "--paired", str(bare), str(ref)]) == 0
    out = capsys.readouterr().out
    assert "realised score (16)" in out and "rebookings (16)" in out and "Closed loop" not in out.split("Paired")[1]
    assert main(["show", str(ref)]) == 0
    assert "realised" in capsys.readouterr().out


def test_a_replan_run_and_a_plan_run_compare_on_the_plan_only(replan_runs: tuple[Path, Path], mini_db_path: Path,
                                                              tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    plan_run = run(_config(mini_db_path, tmp_path / "plan", limit=8, trials=2), progress=False)
    assert main(["show", "--paired", str(plan_run), str(replan_runs[0])]) == 0
    whole = capsys.readouterr().out
    out = whole.split("Paired")[1]
    assert "realised score" not in out and "reward (of the plan, UTP-v0) (16)" in out
    assert "+0.0000  [+0.0000, +0.0000]" in out  # the same plans: no difference as plans
    out = whole
    assert "A is a plan run and B a replan run: they are compared as plans only" in out
    assert "plan (plan)" in out and "ref (replan)" in out  # the same agent: named by folder, with the env


def test_show_refuses_a_run_compared_with_itself_and_names_same_agent_runs_by_folder(
        replan_runs: tuple[Path, Path], mini_db_path: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    ref = replan_runs[0]
    assert main(["show", "--paired", str(ref), str(ref) + "/"]) == 2
    assert "given twice" in capsys.readouterr().err
    fewer = run(_config(mini_db_path, tmp_path / "fewer", env="replan", limit=2), progress=False)
    assert main(["show", "--paired", str(ref), str(fewer)]) == 2
    err = capsys.readouterr().err
    assert "14 only in ref, 0 only in fewer" in err and "--env, --seed" in err


def test_a_repair_that_raises_is_the_agents_error_and_the_trip_still_ends(mini_db_path: Path,
                                                                          tmp_path: Path) -> None:
    run_dir = run(_config(mini_db_path, tmp_path / "broken", env="replan",
                          agent="test_replan_runs:BrokenRepairAgent", limit=2), progress=False)
    for record in _records(run_dir):
        assert record["termination_reason"] == "agent_error" and "repair exploded" in record["error"]
        assert record["replan"]["repair_error"] is not None and record["replan"]["realised"]["finished"]


def test_an_env_failure_during_the_trip_is_an_infrastructure_error(mini_db_path: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    class Exploding:
        def reset(self, **kwargs: Any) -> Any:
            raise RuntimeError("realiser bug")

    monkeypatch.setattr("utp_env.runs.replan_episode.replan_env", lambda ctx: Exploding())
    run_dir = run(_config(mini_db_path, tmp_path / "infra", env="replan", limit=1), progress=False)
    (record,) = _records(run_dir)
    assert record["termination_reason"] == "infrastructure_error" and "realiser bug" in record["error"]
    assert record["replan"] is None and record["report"] is not None and record["reward"] == 0.0


def test_the_tool_calling_agent_drives_the_replan_env_unchanged(mini_db_path: Path, tmp_path: Path) -> None:
    """A scripted model submits a plan, then continues at every pause: the worker hands the
    tool-calling agent the replan env and records the trip it lived."""
    from langchain_core.messages import AIMessage
    from scripted_llm import MODEL, call, scripted

    from utp_env.agents.base import Toolkit
    from utp_env.agents.llm.tool_calling import ToolCallingAgent
    from utp_env.agents.reference import ReferencePlanner
    from utp_env.plan_format import format_plan
    from utp_env.runs.episode import context_for, run_episode

    config = _config(mini_db_path, tmp_path / "tc", env="replan", limit=1)
    ctx = context_for(config)
    query = ctx.queries[sorted(ctx.queries)[0]]
    plan = ReferencePlanner().run(query, Toolkit(ctx.dataset.db)).plan
    assert plan is not None
    go_on = AIMessage(content="", tool_calls=[call("continue_trip", {}, 1)])
    fake = scripted(AIMessage(content="", tool_calls=[call("submit_plan", {"plan": format_plan(plan)})]), go_on)
    saved = ctx.agent
    ctx.agent = ToolCallingAgent(chat_model=fake, **MODEL, max_steps=10)
    try:
        record = run_episode(config, query.query_id, 0)
    finally:
        ctx.agent = saved
    assert record["termination_reason"] == "submitted", record["error"]
    assert record["replan"]["realised"]["finished"] and record["reward"] == record["replan"]["realised_score"]
    assert record["trace"]["by_name"]["tool_call:submit_plan"] == 1


def test_a_replan_run_gives_the_same_records_on_two_workers(replan_runs: tuple[Path, Path], mini_db_path: Path,
                                                            tmp_path: Path) -> None:
    """The realities depend on the episode seeds only, not on which process lives them."""
    two = run(_config(mini_db_path, tmp_path / "two", env="replan", limit=8, trials=2, workers=2), progress=False)

    def stable(run_dir: Path) -> dict[str, dict[str, Any]]:
        return {k: {f: v for f, v in r.items() if f != "duration_s"} for k, r in records_by_episode(run_dir).items()}

    assert stable(two) == stable(replan_runs[0])


def test_the_realised_timeline_shows_the_plan_what_happened_and_the_pauses(replan_runs: tuple[Path, Path],
                                                                           mini_db_path: Path) -> None:
    """The figure has a planned and a realised lane per day: the plan's items by name, a lost item
    marked at its planned slot, a late leg in the late colour, and each disruption numbered."""
    import matplotlib.pyplot as plt

    from utp_env.itinerary import Plan
    from utp_env.runs.episode import context_for
    from utp_env.simulation import compile_for
    from utp_env.simulation.plot import REALISED_COLOURS, realised_timeline_figure

    ctx = context_for(_config(mini_db_path, replan_runs[0], env="replan", limit=8, trials=2))
    record = next(iter(records_by_episode(replan_runs[0]).values()))
    compiled, _ = compile_for(Plan.model_validate(record["plan"]), ctx.queries[record["query_id"]], ctx.dataset.db)
    steps = [dict(s) for s in record["replan"]["realised"]["steps"]]
    visit = next(s for s in steps if s["element"] == "item" and s["kind"] == "visit")
    visit["status"] = "lost"
    leg = next(s for s in steps if s["element"] == "leg")
    leg["actual_end"] = leg["planned_end"] + 60
    reports = [{"index": 1, "kind": "late_arrival", "day": leg["day"], "minute": 600}]
    fig = realised_timeline_figure(compiled, steps, reports, title="t")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "#1 late arrival" in texts
    assert any(t.startswith("lost: ") and visit["name"].split(",")[0].startswith(t[6:].rstrip("…")) for t in texts)
    colours = {tuple(round(c, 3) for c in bar.get_facecolor()[:3]) for bar in fig.axes[0].patches}
    from matplotlib.colors import to_rgb

    assert tuple(round(c, 3) for c in to_rgb(REALISED_COLOURS["late"])) in colours
    assert fig.axes[0].get_yticklabels()[0].get_text().startswith("day 1")
    # realised legs are hatched and items are not, so a late item right after a late leg (same colour,
    # no gap) shows as two bars
    realised = fig.axes[0].patches[compiled.n_steps:]
    assert len(realised) == len(steps)
    for step, patch in zip(steps, realised, strict=True):
        if step.get("status") != "lost":
            assert bool(patch.get_hatch()) == (step["element"] == "leg"), step["name"]
    plt.close(fig)


def test_the_worker_evaluates_the_submitted_plan_once_and_keeps_its_records(
        mini_db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's `finish` outcome is handed to the env (reset option plan_outcome): per episode the
    evaluator runs twice (the submitted plan, the realised trip), not three times, and the records
    are those of a run in which the env evaluates the plan itself."""
    import utp_env.env.reward
    import utp_env.evaluation
    import utp_env.runs.replan_episode as replan_episode

    calls = []
    evaluate, evaluate_context = utp_env.evaluation.evaluate, utp_env.env.reward.evaluate_context

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return evaluate(*args, **kwargs)

    def counting_context(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return evaluate_context(*args, **kwargs)

    monkeypatch.setattr(utp_env.evaluation, "evaluate", counting)  # the realised trip's
    monkeypatch.setattr(utp_env.env.reward, "evaluate_context", counting_context)  # a plan's, in `finish`'s reward
    once = run(_config(mini_db_path, tmp_path / "once", env="replan", limit=2, workers=1), progress=False)
    assert len(calls) == 2 * 2
    live_trip = replan_episode.live_trip
    monkeypatch.setattr(replan_episode, "live_trip",
                        lambda *args, plan_outcome=None, **kwargs: live_trip(*args, **kwargs))
    twice = run(_config(mini_db_path, tmp_path / "twice", env="replan", limit=2, workers=1), progress=False)
    assert len(calls) == 2 * 2 + 3 * 2

    def stable(record: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in record.items() if k != "duration_s"}

    assert [stable(r) for r in _records(once)] == [stable(r) for r in _records(twice)]


# ---------------------------------------------------------------- closed-loop settings of a run


def test_a_run_config_carries_replan_settings_into_its_identity_and_name() -> None:
    plain = RunConfig(env="replan")
    tuned = RunConfig(env="replan", replan={"max_disruptions": 5})
    assert "replan" not in plain.identity() and tuned.identity()["replan"] == {"max_disruptions": 5}
    assert tuned.default_run_name() != plain.default_run_name()
    assert tuned.default_run_name().startswith("reference-replan-full-validation-seed0-")
    with pytest.raises(ValueError, match=r"replan: max_disruption: Extra inputs.*max_disruptions"):
        RunConfig(env="replan", replan={"max_disruption": 5})
    with pytest.raises(ValueError, match=r"apply only to env replan"):
        RunConfig(replan={"max_disruptions": 5})


def test_replan_settings_from_the_command_line_and_the_run_yaml_name_their_source(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from utp_env.cli import build_parser
    from utp_env.cli.run import resolve_config

    yaml_file = tmp_path / "run.yaml"
    yaml_file.write_text("env: replan\nreplan:\n  disruptions: [late_arrival, cancellation]\n  max_disruptions: 4\n")
    args = build_parser().parse_args(["run", "--config", str(yaml_file), "--replan-set", "max_disruptions=5"])
    config = resolve_config(args)
    assert config.replan == {"disruptions": ["late_arrival", "cancellation"], "max_disruptions": 5}
    out = tmp_path / "x"
    assert main(["run", "--env", "replan", "--replan-set", "max_disruption=5", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--replan-set: max_disruption" in err and "reference.yaml" not in err and "replan.yaml" not in err
    assert main(["run", "--env", "replan", "--set", "max_disruptions=5", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--replan-set max_disruptions=" in err and "reference.yaml" not in err


def test_replan_settings_reach_the_worker(mini_db_path: Path, tmp_path: Path) -> None:
    run_dir = run(_config(mini_db_path, tmp_path / "none", env="replan", agent="no_repair", limit=3,
                          replan={"max_disruptions": 0}), progress=False)
    assert all(r["replan"]["disruptions"] == 0 for r in _records(run_dir))
    saved = json.loads((run_dir / "config.json").read_text())
    assert saved["config_identity"]["replan"] == {"max_disruptions": 0}


def test_resuming_into_a_folder_of_another_env_names_the_field(mini_db_path: Path, tmp_path: Path) -> None:
    run(_config(mini_db_path, tmp_path / "r", limit=1), progress=False)
    with pytest.raises(ValueError, match=r"another configuration or database \(env: replan here, plan in the "
                                         r"folder\)"):
        run(_config(mini_db_path, tmp_path / "r", limit=1, env="replan"), progress=False)
    with pytest.raises(ValueError, match=r"\(agent: deterministic here, reference in the folder; limit: 2 here, "
                                         r"1 in the folder\)"):
        run(_config(mini_db_path, tmp_path / "r", limit=2, agent="deterministic"), progress=False)


class PlanOnlyAgent:
    """Plans like the reference planner and has no `repair`."""

    name = "plan_only"

    def __init__(self) -> None:
        from utp_env.agents.reference import ReferencePlanner

        self.planner = ReferencePlanner()

    def run(self, query: Any, toolkit: Any) -> Any:
        return self.planner.run(query, toolkit)


def test_a_replan_run_of_an_agent_without_repair_says_it_never_repairs(
        mini_db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(_config(mini_db_path, tmp_path / "p", env="replan", agent="test_replan_runs:PlanOnlyAgent", limit=1),
        progress=False)
    notices = [line for line in capsys.readouterr().err.splitlines() if line.startswith("notice:")]
    assert notices == ["notice: agent plan_only has no repair method, so it never repairs: each trip is lived as "
                       "planned, as with no_repair (docs/REPLAN.md, 'Agents and runs')"]
    for agent in ("no_repair", "reference"):
        run(_config(mini_db_path, tmp_path / agent, env="replan", agent=agent, limit=1), progress=False)
        assert "notice:" not in capsys.readouterr().err


def test_table_3_counts_plans_and_the_out_help_names_the_replan_part(
        replan_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """8 queries x 2 trials are 16 plans scored: the row says so (it said 'Queries' with 16)."""
    assert main(["show", str(replan_runs[0])]) == 0
    rows = {line.split("  ")[0].strip(): line.split()[-1] for line in capsys.readouterr().out.splitlines() if line}
    assert rows["Plans scored"] == "16" and "Queries" not in rows
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "runs/<agent>[-replan]-<profile>" in " ".join(capsys.readouterr().out.split())
