"""Runs trust nothing they read: a record that is forged, wrong-typed or foreign is
quarantined to results.rejected.jsonl with one line and its episode redone; `show` and `report`
skip it with a warning; a summary never shows a value outside its range; a changed agent is
refused unless --accept-agent-change; damaged files and wrong paths are one line naming them."""

from __future__ import annotations

import copy
import json
import math
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from run_records import minimal_record

from utp_env.agents.reference import ReferencePlanner
from utp_env.cli import main
from utp_env.runs.agent_identity import agent_identity, identity_changes
from utp_env.runs.config import RunConfig
from utp_env.runs.records import LEGACY_AGENT, RESULTS, RecordContext, check_record
from utp_env.runs.runner import RunFolderError, run
from utp_env.runs.store import REJECTED, ResultsStore
from utp_env.runs.summary import SUMMARY_JSON, load_summary

EPISODES = 6  # 3 queries x 2 trials


def _records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / RESULTS).read_text(encoding="utf-8").splitlines()]


def _write(run_dir: Path, records: list[dict[str, Any]]) -> None:
    (run_dir / RESULTS).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _config(db: Path, out: Path, **kw: Any) -> RunConfig:
    base = {"db": str(db), "split": "all", "limit": 3, "trials": 2, "rollouts": 5, "env": "replan", "out": str(out)}
    return RunConfig(**(base | kw))


@pytest.fixture(scope="module")
def replan_run(mini_db_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished closed-loop run of 6 episodes on the mini sandbox (copy it before changing it)."""
    out = tmp_path_factory.mktemp("trust") / "replan"
    run(_config(mini_db_path, out), progress=False)
    return out


def _copy(replan_run: Path, tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(replan_run, target)
    return target


def _forge(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The attack: forged values, another database, an unknown query, wrong types."""
    forged = copy.deepcopy(records)
    forged[0]["replan"]["realised_score"] = 42
    forged[0]["reward"] = 42
    forged[1]["replan"]["items_kept"] = 7
    forged[2]["metrics"]["bas"] = 5
    forged[3]["metrics"]["cats"] = -3
    forged[4]["db_hash"] = "f" * 64
    foreign = copy.deepcopy(records[5])
    foreign["query_id"] = "utp-q-9999"
    wrong = [copy.deepcopy(records[5]) for _ in range(3)]
    wrong[0]["metrics"]["tdas"] = "abc"
    wrong[1]["metrics"] = [1]
    wrong[2]["replan"] = "zzz"
    return [*forged, foreign, *wrong]


EXPECTED = [  # (line, what the one-line reason says)
    (1, "reward: must lie in [0, 1], got 42"),
    (2, "replan.items_kept: must lie in [0, 1], got 7"),
    (3, "metrics.bas: must lie in [0, 1], got 5"),
    (4, "metrics.cats: must lie in [0, 1], got -3"),
    (5, "made on database ffffffffffff"),
    (7, "unknown query 'utp-q-9999'"),
    (8, "metrics.tdas: Input should be a valid number (got 'abc')"),
    (9, "metrics: Input should be a valid dictionary (got [1])"),
    (10, "replan: Input should be a valid dictionary"),
]


def test_forged_foreign_and_wrong_typed_records_are_quarantined_and_redone(
        replan_run: Path, mini_db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _copy(replan_run, tmp_path)
    good = _records(folder)
    _write(folder, _forge(good))
    run(_config(mini_db_path, folder), progress=False)
    err = capsys.readouterr().err
    # line 6 (the untouched record of the sixth episode) is the one valid record kept
    assert f"1 of {EPISODES} episodes done, 1 valid record(s) kept, 9 bad line(s) moved to {REJECTED}" in err, err
    assert "Traceback" not in err
    rejected = [json.loads(line) for line in (folder / REJECTED).read_text().splitlines()]
    assert [r["line"] for r in rejected] == [line for line, _ in EXPECTED]
    for entry, (_, reason) in zip(rejected, EXPECTED, strict=True):
        assert reason in entry["reason"] and "\n" not in entry["reason"], entry["reason"]
    records = _records(folder)
    assert len(records) == EPISODES  # the rejected episodes were run again
    assert {r["query_id"] for r in records} == {r["query_id"] for r in good}
    summary = load_summary(folder)
    assert summary.episodes == EPISODES
    cell = summary.replan.cells["all"]["all"] if summary.replan else None
    assert cell is not None and 0 <= cell.realised_score <= 1 and 0 <= cell.items_kept <= 1


def test_wrong_typed_records_never_crash_show_or_report(replan_run: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    folder = _copy(replan_run, tmp_path)
    _write(folder, _forge(_records(folder)))
    assert main(["report", str(folder)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for line, reason in EXPECTED:
        assert f"results.jsonl line {line}: {reason}" in err, err
    page = (folder / "report.html").read_text(encoding="utf-8")
    data = json.loads(page.split('<script type="application/json" id=data>', 1)[1].split("</script>", 1)[0])
    episodes = data["runs"][0]["episodes"]
    assert len(episodes) == 1  # only the valid record is shown
    for episode in episodes:
        assert all(v is None or 0 <= v <= 1 for v in episode["m"].values())
        assert episode["rl"] is None or 0 <= episode["rl"]["score"] <= 1
    assert "9 bad line(s)" in page  # the page says so too
    # show compares two runs episode by episode: the bad records are skipped with a warning
    other = tmp_path / "other"
    shutil.copytree(replan_run, other)
    assert main(["show", str(folder), str(other)]) == 0
    captured = capsys.readouterr()
    assert "utp-env show: warning:" in captured.err and "Traceback" not in captured.err
    assert "no paired differences: the runs hold different episodes" in captured.out


def test_a_summary_out_of_range_or_damaged_is_refused_in_one_line(replan_run: Path, tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    folder = _copy(replan_run, tmp_path)
    summary = json.loads((folder / SUMMARY_JSON).read_text())
    summary["replan"]["cells"]["all"]["all"]["realised_score"] = 42.0
    (folder / SUMMARY_JSON).write_text(json.dumps(summary))
    assert main(["show", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "summary.json holds a value outside its range (replan.cells.all.all.realised_score is 42.0" in err
    assert err.count("\n") == 1
    summary["replan"]["cells"]["all"]["all"]["realised_score"] = 0.5
    summary["evaluation"]["groups"]["all"]["final_pass_rate"] = 9.0
    (folder / SUMMARY_JSON).write_text(json.dumps(summary))
    assert main(["show", str(folder)]) == 2
    assert "evaluation.groups.all.final_pass_rate is 9.0, outside [0, 1]" in capsys.readouterr().err
    (folder / SUMMARY_JSON).write_text('{"agent": ')
    assert main(["show", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"{folder / SUMMARY_JSON} cannot be read" in err and err.count("\n") == 1
    (folder / SUMMARY_JSON).write_text('{"agent": "x"}')
    assert main(["report", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"{folder / SUMMARY_JSON} is not a run summary" in err and "Traceback" not in err


def test_a_corrupt_config_json_is_named(replan_run: Path, mini_db_path: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    folder = _copy(replan_run, tmp_path)
    (folder / "config.json").write_text("{not json")
    assert main(["report", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"{folder / 'config.json'} cannot be read" in err and "Traceback" not in err
    with pytest.raises(RunFolderError, match=r"config\.json cannot be read .*choose another --out folder"):
        run(_config(mini_db_path, folder), progress=False)
    (folder / "config.json").write_text("[1, 2]")  # JSON, but not a run's config
    assert main(["report", str(folder)]) == 2
    assert "config.json is not a run's config (a JSON list); restore it, or rerun" in capsys.readouterr().err
    with pytest.raises(RunFolderError, match=r"not a run's config \(a JSON list\); restore it, or choose another"):
        run(_config(mini_db_path, folder), progress=False)


@pytest.mark.parametrize("command", ["show", "report"])
def test_show_and_report_on_a_missing_folder_or_a_file_say_so(command: str, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'nope'} does not exist" in err and "rerun" not in err and err.count("error:") == 1
    a_file = tmp_path / "results.jsonl"
    a_file.write_text("{}\n")
    assert main([command, str(a_file)]) == 2
    err = capsys.readouterr().err
    assert "is a file, not a run folder" in err and "rerun" not in err


def test_show_names_long_runs_in_full(replan_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The paired table and the side-by-side table do not cut names ('deterministi')."""
    a, b = tmp_path / "deterministic-replan-mini-a", tmp_path / "deterministic-replan-mini-b"
    shutil.copytree(replan_run, a)
    shutil.copytree(replan_run, b)
    assert main(["show", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert out.count("deterministic-replan-mini-a") >= 2 and out.count("deterministic-replan-mini-b") >= 2


# ---------------------------------------------------------------- the record schema alone


def test_a_fresh_record_that_fails_its_checks_is_not_recorded(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path, RecordContext(db_hash="test-db"))
    assert store.append(minimal_record("q1")) is None
    reason = store.append(minimal_record("q2", reward=math.nan))
    assert reason is not None and "reward" in reason and "finite" in reason
    assert list(store.records) == ["q1#0"]
    entry = json.loads((tmp_path / REJECTED).read_text())
    assert entry["reason"].startswith("refused when recorded: reward")
    assert [json.loads(line)["query_id"] for line in (tmp_path / RESULTS).read_text().splitlines()] == ["q1"]


def test_records_are_checked_against_the_run() -> None:
    context = RecordContext(queries=frozenset({"q1"}), trials=2, db_hash="test-db",
                            agent_hashes=frozenset({"abc"}), env="plan")
    assert check_record(minimal_record("q1", agent_hash="abc"), context) is None
    late = check_record(minimal_record("q1", 2, agent_hash="abc"), context)
    assert "trial 2, but the run has 2 trial(s)" in str(late)
    assert "made by agent zzz" in str(check_record(minimal_record("q1", agent_hash="zzz"), context))
    assert "no agent_hash" in str(check_record(minimal_record("q1"), context))
    legacy = RecordContext(agent_hashes=frozenset({"abc", LEGACY_AGENT}))
    assert check_record(minimal_record("q1"), legacy) is None
    replan = RecordContext(env="replan")
    assert "no 'replan' block" in str(check_record(minimal_record("q1"), replan))
    assert check_record(minimal_record("q1", replan=None), replan) is None
    for bad, reason in (({"trial": True}, "trial"), ({"final_pass": "yes"}, "final_pass"),
                        ({"termination_reason": "won"}, "termination_reason: must be one of"),
                        ({"usage": {"tool_calls": -1}}, "usage.tool_calls: must not be negative"),
                        ({"duration_s": math.inf}, "duration_s: must be a finite number"),
                        ({"final_pass": True}, "final_pass is true but the record has no report"),
                        ({"trace": {"steps": "many"}}, "trace.steps")):
        got = check_record(minimal_record("q1") | bad)
        assert got is not None and reason in got and "\n" not in got, (bad, got)


def test_a_record_disagreeing_with_its_report_is_refused(replan_run: Path) -> None:
    record = _records(replan_run)[0]
    assert check_record(record) is None
    for change, reason in ((lambda r: r["metrics"].update(bas=r["metrics"]["bas"] / 2 + 0.01), "its report says"),
                           (lambda r: r.update(final_pass=not r["final_pass"]), "final_pass is"),
                           (lambda r: r["replan"].update(realised_score=0.0 if r["reward"] else 1.0),
                            "a closed-loop record's reward is its realised score"),
                           (lambda r: r["replan"].update(items_done=99, items_planned=3), "exceeds"),
                           (lambda r: r["report"].update(bas=5.0), "report.bas: must lie in [0, 1]"),
                           (lambda r: r["robustness"].update(hold_rate=1.5), "robustness.hold_rate")):
        forged = copy.deepcopy(record)
        change(forged)
        got = check_record(forged)
        assert got is not None and reason in got, (reason, got)


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                       max_size=3), max_leaves=8)


@given(st.sampled_from(["metrics", "replan", "report", "robustness", "trace", "usage", "reward", "plan",
                        "seed", "db_hash", "error", "plan_reward", "duration_s"]), JSON_VALUES)
@example("metrics", {"\n": False})  # a forged key with a newline: the reason stays one line
def test_any_value_in_any_field_is_a_reason_or_valid_never_a_crash(field: str, value: Any) -> None:
    got = check_record(minimal_record("q1") | {field: value},
                       RecordContext(queries=frozenset({"q1"}), trials=1, db_hash="test-db", env="plan"))
    assert got is None or ("\n" not in got and got)


# ---------------------------------------------------------------- the agent's identity


AGENT_SOURCE = '''
from utp_env.agents.reference import ReferencePlanner


class MyAgent(ReferencePlanner):
    """A user's agent ({version})."""
'''


def test_a_changed_agent_is_refused_unless_accepted(mini_db_path: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    pkg = tmp_path / "src" / "trust_agent_pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(textwrap.dedent(AGENT_SOURCE.format(version="v1")))
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    out = tmp_path / "run"
    config = _config(mini_db_path, out, agent="trust_agent_pkg.mod:MyAgent", env="plan", limit=2, trials=1)
    run(config, progress=False)
    saved = json.loads((out / "config.json").read_text())
    first = saved["agent"]
    assert first["class"] == "trust_agent_pkg.mod:MyAgent" and "trust_agent_pkg" in first["code"]
    assert {r["agent_hash"] for r in _records(out)} == {first["hash"]}
    # unchanged: resumes
    run(config, progress=False)
    assert "2 of 2 episodes done" in capsys.readouterr().err
    # a helper beside the agent's module changes: its code changed
    (pkg / "helper.py").write_text("X = 1\n")
    with pytest.raises(RunFolderError) as caught:
        run(config, progress=False)
    message = str(caught.value)
    assert "another version of agent trust_agent_pkg.mod:MyAgent" in message
    assert "the code of trust_agent_pkg" in message and "--accept-agent-change" in message and "\n" not in message
    # on the command line: one line, exit 2; with the flag it resumes and keeps the old episodes
    argv = ["run", "--agent", "trust_agent_pkg.mod:MyAgent", "--db", str(mini_db_path), "--split", "all",
            "--limit", "2", "--rollouts", "5", "--out", str(out), "--quiet"]
    assert main(argv) == 2
    assert "--accept-agent-change" in capsys.readouterr().err
    assert main([*argv, "--accept-agent-change"]) == 0
    assert "2 of 2 episodes done, 2 valid record(s) kept" in capsys.readouterr().err
    saved = json.loads((out / "config.json").read_text())
    assert first["hash"] in saved["agent_hashes"] and saved["agent"]["hash"] in saved["agent_hashes"]
    assert saved["agent"]["hash"] != first["hash"]
    # a setting is part of the identity too (an agent config file changed under the same name)
    other = agent_identity(ReferencePlanner, {"buffers": False})
    assert any(c.startswith("setting buffers") for c in identity_changes(agent_identity(ReferencePlanner,
                                                                                        {"buffers": True}), other))
    # a record made by an agent the folder never accepted is quarantined on resume
    records = _records(out)
    records[0]["agent_hash"] = "0" * 16
    _write(out, records)
    run(config, progress=False)
    err = capsys.readouterr().err
    assert "made by agent 000000000000, not this run's agent" in err


def test_an_installed_distribution_is_named_by_its_version() -> None:
    from utp_env.runs.agent_identity import code_identity

    yaml_loader = sys.modules["yaml"].SafeLoader
    identity = code_identity(yaml_loader)
    assert identity == {"yaml": f"PyYAML=={__import__('importlib').metadata.version('PyYAML')}"}


def test_an_old_runs_day_list_plan_passes_but_not_a_list_of_anything() -> None:
    assert check_record(minimal_record("q1", plan=[{"days": 1, "current_city": "A"}])) is None
    assert "plan" in str(check_record(minimal_record("q1", plan=[1])))


def test_a_plot_that_fails_costs_the_plot_not_the_summary(replan_run: Path, mini_db_path: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from utp_env.runs import plots

    def broken(*args: Any, **kwargs: Any) -> None:
        raise ValueError("a plan the timeline cannot replay")

    monkeypatch.setattr(plots, "plot_example_timeline", broken)
    folder = _copy(replan_run, tmp_path)
    (folder / SUMMARY_JSON).unlink()
    run(_config(mini_db_path, folder), progress=False)
    err = capsys.readouterr().err
    assert "warning: the plots of" in err and "a plan the timeline cannot replay" in err
    assert load_summary(folder).episodes == EPISODES
