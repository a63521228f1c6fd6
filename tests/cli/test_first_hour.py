"""What a new user meets on the way to a first number: example plans to try evaluate and simulate with,
and one clear line for each early mistake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from utp_env.cli import main
from utp_env.dataset import dataset_of
from utp_env.tools.database import Database


def test_example_plans_feed_evaluate_and_simulate(mini_db_path: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    dataset = dataset_of(Database.open(mini_db_path))
    qid = sorted(dataset.references)[0]
    assert main(["data", "example-plan", qid, "--db", str(mini_db_path)]) == 0
    plan = tmp_path / "plan.json"
    plan.write_text(capsys.readouterr().out)
    assert json.loads(plan.read_text())[0]["days"] == 1  # the paper's day format
    assert main(["simulate", "--plan", str(plan), "--query-id", qid, "--db", str(mini_db_path),
                 "--rollouts", "100"]) == 0
    assert "untimed" not in capsys.readouterr().out
    # the same plan without its times: it cannot be late, so its hold rate is 100 %, and the headline says why
    days = json.loads(plan.read_text())
    for day in days:
        day["point_of_interest_list"] = "; ".join(
            entry.split(" from ")[0] for entry in str(day["point_of_interest_list"]).rstrip(".").split("; "))
    untimed = tmp_path / "untimed.json"
    untimed.write_text(json.dumps(days))
    assert main(["simulate", "--plan", str(untimed), "--query-id", qid, "--db", str(mini_db_path),
                 "--rollouts", "100"]) == 0
    head = capsys.readouterr().out.splitlines()[:3]
    assert head[1].startswith("hold rate 100.0%")
    assert head[2].startswith("warning: ") and "untimed items not simulated (listed below): the hold rate covers " \
        "only the " in head[2], head
    # a plan in the paper's day format names no query: simulated without one, and said so
    assert main(["simulate", "--plan", str(plan), "--db", str(mini_db_path), "--rollouts", "100"]) == 0
    assert "names no query and --query-id is not given" in capsys.readouterr().err
    assert main(["data", "example-plan", "--jsonl", "--limit", "3", "--db", str(mini_db_path)]) == 0
    plans = tmp_path / "my_plans.jsonl"
    plans.write_text(capsys.readouterr().out)
    lines = [json.loads(line) for line in plans.read_text().splitlines()]
    assert len(lines) == 3 and all(set(line) == {"query_id", "plan"} for line in lines)
    assert main(["evaluate", "--plans", str(plans), "--db", str(mini_db_path)]) == 0
    assert "Final pass rate" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["data", "example-plan", "utp-q-99999"], "query 'utp-q-99999' is not in the query set"),
    (["data", "example-plan"], "give a QUERY_ID (e.g. the first one: "),
    (["data", "example-plan", "--jsonl", "utp-q-0001", "utp-q-0001"], "query 'utp-q-0001' is named 2 times; name "
                                                                      "each query once"),
])
def test_example_plan_mistakes_are_one_line(argv: list[str], message: str, mini_db_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, "--db", str(mini_db_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_a_database_path_that_does_not_exist_is_said_before_anything_is_built(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--db", str(tmp_path / "nope"), "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert "building" not in err and f"database directory '{tmp_path / 'nope'}' does not exist" in err


def test_a_mistyped_setting_is_blamed_on_the_flag_with_the_closest_name(mini_db_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--db", str(mini_db_path), "--set", "buffer=false", "--limit", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("utp-env run: error: --set buffer: unknown setting(s) buffer for ReferencePlanner")
    assert "did you mean buffers?" in err


def test_a_mistyped_agent_gets_the_closest_name(mini_db_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--db", str(mini_db_path), "--agent", "refernce", "--limit", "1"]) == 2
    assert "unknown agent 'refernce': did you mean reference?" in capsys.readouterr().err


def test_plans_of_another_split_are_one_line(mini_db_path: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "example-plan", "--jsonl", "--split", "validation", "--db", str(mini_db_path)]) == 0
    plans = tmp_path / "val.jsonl"
    plans.write_text(capsys.readouterr().out)
    count = len(plans.read_text().splitlines())
    assert main(["evaluate", "--plans", str(plans), "--db", str(mini_db_path), "--split", "test"]) == 2
    err = capsys.readouterr().err
    assert f"skipped: {count} line(s) of val.jsonl hold plans for queries of split validation" in err
    assert "unknown query_id" not in err


AGENT = '''
from utp_env.agents.reference import ReferencePlanner


class MyAgent(ReferencePlanner):
    VERSION = {version}
'''


def test_editing_ones_own_agent_starts_a_folder_of_its_own(mini_db_path: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Without --out, each version of a user's agent gets its own default folder (no --accept-agent-change)."""
    package = tmp_path / "my_pkg_first_hour"
    package.mkdir()
    (package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    import importlib
    import sys

    folders = []
    for version in (1, 2):
        (package / "agent.py").write_text(AGENT.format(version=version))
        sys.modules.pop("my_pkg_first_hour.agent", None)
        importlib.invalidate_caches()
        assert main(["run", "--agent", "my_pkg_first_hour.agent:MyAgent", "--db", str(mini_db_path), "--limit", "1",
                     "--rollouts", "0", "--quiet"]) == 0
        folders.append(capsys.readouterr().err.split("results in ")[1].split("/ (")[0])
    assert folders[0] != folders[1] and all("-agent" in f for f in folders)
    assert all((tmp_path / f / "results.jsonl").exists() for f in folders)


@pytest.mark.parametrize("command", ["evaluate", "simulate"])
def test_evaluate_and_simulate_build_the_embedded_query_set_on_first_use(
        command: str, mini_db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """As `run`, `levels` and `data example-plan` do: on a cache holding the sandbox's tables but no
    query set, `evaluate` and `simulate` build it rather than stop with a hint (whose command, followed
    without `--profile`, once wrote the full sandbox into mini's folder)."""
    import shutil

    import utp_env.dataset as dataset_module
    from utp_env.dataset import QUERIES_FILE, REFERENCES_FILE
    from utp_env.tools.sandbox.location import sandbox_path

    monkeypatch.setenv("UTP_ENV_CACHE", str(tmp_path / "cache"))
    target = sandbox_path("mini", 0)
    shutil.copytree(mini_db_path, target)
    plan = tmp_path / "plan.json"
    qid = sorted(dataset_of(Database.open(mini_db_path)).references)[0]
    assert main(["data", "example-plan", qid, "--db", str(mini_db_path), *(["--jsonl"] if command == "evaluate"
                                                                           else [])]) == 0
    plan.write_text(capsys.readouterr().out)
    for name in (QUERIES_FILE, REFERENCES_FILE):
        (target / name).unlink()
    manifest = json.loads((target / "manifest.json").read_text())  # as a fresh build leaves it: tables only
    manifest.pop("query_set")
    manifest["content_hash"] = Database.open(target, check_manifest=False).content_hash
    (target / "manifest.json").write_text(json.dumps(manifest))
    built = dataset_module.build_query_set
    monkeypatch.setattr(dataset_module, "build_query_set",  # the set's size is not under test
                        lambda path, n=1000, seed=0, progress=True: built(path, n=20, seed=seed, progress=False))
    argv = (["evaluate", "--plans", str(plan)] if command == "evaluate"
            else ["simulate", "--plan", str(plan), "--rollouts", "10", "--query-id", qid])  # a query is looked up
    code = main([*argv, "--profile", "mini"])
    err = capsys.readouterr().err
    # scored (4: the example plan's query is another trip in the 20-query set; 2: simulate's query is not in it)
    assert code in ((0, 4) if command == "evaluate" else (0, 2)), err
    assert (target / QUERIES_FILE).is_file() and "building the query set" in err, err
    assert f"no {QUERIES_FILE}" not in err


@pytest.mark.parametrize("moved, status", [(0, 0), (1, 0), (2, 4), (3, 4)])
def test_evaluate_exits_4_when_most_plans_are_another_trip_s(
        moved: int, status: int, mini_db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Plans made on another database (mini's, scored on full) are each warned about; when most of them
    do not match their queries, the table is printed and the exit status says so, not 0."""
    from utp_env.queries.io import dumps_queries

    assert main(["data", "example-plan", "--jsonl", "--limit", "3", "--db", str(mini_db_path)]) == 0
    plans = tmp_path / "plans.jsonl"
    plans.write_text(capsys.readouterr().out)
    queries = dataset_of(Database.open(mini_db_path)).queries
    ids = [json.loads(line)["query_id"] for line in plans.read_text().splitlines()]
    by_id = {q.query_id: q for q in queries}
    chosen = [by_id[qid] for qid in ids]
    other = sorted({q.org for q in queries})
    shifted = [q.model_copy(update={"org": next(c for c in other if c != q.org and c != q.dest)}) if i < moved else q
               for i, q in enumerate(chosen)]
    qfile = tmp_path / "queries.jsonl"
    qfile.write_text(dumps_queries(shifted))
    code = main(["evaluate", "--plans", str(plans), "--db", str(mini_db_path), "--queries", str(qfile)])
    captured = capsys.readouterr()
    assert code == status, captured.err
    assert "Final pass rate" in captured.out
    assert captured.err.count("the plan does not match query") == moved
    assert ("3 plans do not match their queries" in captured.err) == (status == 4), captured.err
