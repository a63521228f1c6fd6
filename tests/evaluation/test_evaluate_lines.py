"""`utp-env evaluate`: one bad line costs one line. Lines nested 5,000 deep,
with a non-UTF-8 byte, a 5,000-digit integer or a lone surrogate are skipped or scored on their
own with their numbers; the report is always written (atomically); exit 3 when lines were skipped;
a run's results.jsonl (Plan JSON records) is scored as it is; plans made on another database are
refused; plans for another query are named; `simulate --plan` names them too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from utp_env.cli import main
from utp_env.runs.config import RunConfig
from utp_env.runs.runner import run


def _reference_lines(db: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (db / "reference_plans.jsonl").read_text().splitlines()]


def _evaluate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["evaluate", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_bad_line_costs_only_itself_and_the_report_is_written(mini_db_path: Path, tmp_path: Path,
                                                                   capsys) -> None:
    refs = _reference_lines(mini_db_path)
    good = [json.dumps({"query_id": r["query_id"], "plan": r["plan"]}).encode() for r in refs[:2]]
    lines = [
        good[0],
        b"[" * 5000 + b"]" * 5000,                                               # 2: nested 5,000 deep
        b'{"query_id": "' + refs[0]["query_id"].encode() + b'", "plan": "caf\xe9"}',  # 3: not UTF-8
        b'{"query_id": "x", "plan": ' + b"7" * 5000 + b"}",                     # 4: 5,000-digit integer
        json.dumps({"query_id": refs[2]["query_id"], "plan": "\ud800 no plan"}).encode(),  # 5: lone surrogate
        b"",
        good[1],                                                                 # 7
        b"{}",                                                                   # 8: wrong shape
    ]
    plans = tmp_path / "plans.jsonl"
    plans.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "reports" / "report.json"
    code, stdout, err = _evaluate(capsys, "--plans", str(plans), "--db", str(mini_db_path), "--out", str(out))
    assert code == 3
    assert "Delivery rate %" in stdout
    for number, reason in ((2, "invalid JSON (nested too deeply"), (3, "not UTF-8"), (4, "invalid JSON (an integer"),
                           (8, "expected an object")):
        assert f"skipped: plans.jsonl line {number}: {reason}" in err, err
    assert f"not delivered: {refs[2]['query_id']} (line 5)" in err
    report = json.loads(out.read_text(encoding="utf-8"))  # written, whole, despite the surrogate
    assert [s["line"] for s in report["skipped"]] == [2, 3, 4, 8]
    assert [(r["line"], r["delivered"]) for r in report["results"]] == [(1, True), (5, False), (7, True)]
    assert "\\ud800" in out.read_text(encoding="utf-8")
    assert not list(out.parent.glob(".*.tmp"))  # the atomic write left no temporary file


def test_all_lines_scored_exits_0_and_a_runs_results_file_is_scored_as_it_is(mini_db_path: Path, tmp_path: Path,
                                                                              capsys) -> None:
    run_dir = run(RunConfig(db=str(mini_db_path), split="all", limit=2, rollouts=0, out=str(tmp_path / "run")),
                  progress=False)
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert all(isinstance(r["plan"], dict) for r in records)  # canonical Plan JSON, not the paper's days
    code, _, err = _evaluate(capsys, "--plans", str(run_dir / "results.jsonl"), "--db", str(mini_db_path),
                                  "--out", str(tmp_path / "r.json"))
    assert code == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    assert [r["delivered"] for r in report["results"]] == [True, True] and not report["skipped"]
    mine = {r["query_id"]: r["report"]["commonsense"] for r in records}
    assert {r["query_id"]: r["report"]["commonsense"] for r in report["results"]} == mine


def test_plans_made_on_another_database_are_refused(mini_db_path: Path, tmp_path: Path, capsys) -> None:
    ref = _reference_lines(mini_db_path)[0]
    plans = tmp_path / "plans.jsonl"
    plans.write_text(json.dumps({"query_id": ref["query_id"], "plan": ref["plan"], "db_hash": "f" * 64}) + "\n")
    code, _, err = _evaluate(capsys, "--plans", str(plans), "--db", str(mini_db_path))
    assert code == 2 and "made on database ffffffffffff" in err and "--profile" in err
    # a run folder's config.json names the database for every line
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"db_hash": "e" * 64}))
    (folder / "results.jsonl").write_text(json.dumps({"query_id": ref["query_id"], "plan": ref["plan"]}) + "\n")
    code, _, err = _evaluate(capsys, "--plans", str(folder / "results.jsonl"), "--db", str(mini_db_path))
    assert code == 2 and "eeeeeeeeeeee" in err
    # one line of another database among good ones: that line is skipped
    good = json.dumps({"query_id": ref["query_id"], "plan": ref["plan"]})
    plans.write_text(good + "\n" + json.dumps({"query_id": ref["query_id"], "plan": ref["plan"],
                                               "db_hash": "f" * 64}) + "\n")
    code, _, err = _evaluate(capsys, "--plans", str(plans), "--db", str(mini_db_path))
    assert code == 3 and "skipped: plans.jsonl line 2: made on database ffffffffffff" in err


def test_a_plan_for_another_query_is_named(mini_db_path: Path, tmp_path: Path, capsys) -> None:
    from utp_env.tools.database import Database

    refs = _reference_lines(mini_db_path)
    queries = {q["query_id"]: q for q in map(json.loads, (mini_db_path / "queries.jsonl").read_text().splitlines())}
    first = refs[0]
    other = next(r for r in refs if queries[r["query_id"]]["org"] != queries[first["query_id"]]["org"])
    plans = tmp_path / "plans.jsonl"
    plans.write_text(json.dumps({"query_id": other["query_id"], "plan": first["plan"]}) + "\n")
    code, _, err = _evaluate(capsys, "--plans", str(plans), "--db", str(mini_db_path))
    assert code == 4  # most (all) plans are another trip's: scored, printed, and said by the exit status
    assert f"warning: plans.jsonl line 1: the plan does not match query {other['query_id']}" in err
    assert f"starts in {queries[first['query_id']]['org']}" in err

    # utp-env simulate --plan: the same check, the same words
    from utp_env.dataset import dataset_of

    dataset = dataset_of(Database.open(mini_db_path))
    from utp_env.plan_format import plan_to_json

    plan_file = tmp_path / "plan.json"
    plan_file.write_text(plan_to_json(dataset.references[first["query_id"]]))  # the day format: names no query
    code = main(["simulate", "--plan", str(plan_file), "--db", str(mini_db_path), "--query-id", other["query_id"],
                 "--rollouts", "20"])
    err = capsys.readouterr().err
    assert code == 0 and f"the plan does not match query {other['query_id']}" in err
    # a plan that names its query, simulated against another: refused, not simulated against a trip it is not for
    plan_file.write_text(dataset.references[first["query_id"]].model_dump_json())
    code = main(["simulate", "--plan", str(plan_file), "--db", str(mini_db_path), "--query-id", other["query_id"],
                 "--rollouts", "20"])
    err = capsys.readouterr().err
    assert code == 2 and f"--query-id {other['query_id']}: {plan_file} names query {first['query_id']}; drop " \
        f"--query-id, or give --query-id {first['query_id']}" in err


def test_evaluate_and_simulate_refuse_a_plan_that_names_another_query(mini_db_path: Path) -> None:
    """In Python as on the command line: a plan whose query_id is another query's is refused in one line,
    not scored against a trip it was not made for; with query_id None it is scored as asked."""
    from utp_env.dataset import dataset_of
    from utp_env.evaluation import evaluate
    from utp_env.simulation import simulate
    from utp_env.tools.database import Database

    db = Database.open(mini_db_path)
    dataset = dataset_of(db)
    first, other = sorted(dataset.references)[:2]
    plan, query = dataset.references[first], dataset.query(other)
    for call in (lambda: evaluate(plan, query, db), lambda: simulate(plan, query, db, n=10)):
        with pytest.raises(ValueError, match=rf"^the plan is for query '{first}', not '{other}': pass its own query"):
            call()
    anonymous = plan.model_copy(update={"query_id": None})
    assert evaluate(anonymous, query, db).query_id == other
    assert simulate(anonymous, query, db, n=10).n == 10


def test_an_agent_s_plan_for_another_query_is_the_agent_s_error(mini_db_path: Path) -> None:
    """`finish` (every front door's end of an episode, and `utp-env run`'s) records such a plan as the
    agent's error with nothing delivered, not as the benchmark's infrastructure error after scoring it."""
    from utp_env.dataset import dataset_of
    from utp_env.env.episode import TerminationReason, finish
    from utp_env.env.reward import score_plan
    from utp_env.tools.database import Database

    db = Database.open(mini_db_path)
    dataset = dataset_of(db)
    first, other = sorted(dataset.references)[:2]
    plan, query = dataset.references[first], dataset.query(other)
    outcome = finish(TerminationReason.SUBMITTED, plan, query, db, weights={}, rollouts=20)
    assert outcome.termination_reason == TerminationReason.AGENT_ERROR and outcome.plan is None
    assert outcome.error is not None and f"the plan is for query '{first}', not '{other}'" in outcome.error
    with pytest.raises(ValueError, match="the plan is for query"):
        score_plan(plan, query, db, weights={})
