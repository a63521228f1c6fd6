"""Runs never discard a valid record and have one writer per folder: bad lines
anywhere in results.jsonl are moved aside with their numbers, a second run on a folder is refused,
results without their config.json are not adopted silently, unwritable or unrelated folders and
a full disk are one-line errors that lose nothing, default folder names tell runs apart, `--set`
values are type-checked, and a run in which every episode failed exits non-zero."""

from __future__ import annotations

import errno
import json
import os
import types
from pathlib import Path
from typing import Any

import pytest
from run_records import minimal_record

from utp_env.agents.base import AgentResult, Toolkit
from utp_env.agents.reference import ReferencePlanner
from utp_env.cli import main
from utp_env.query import Query
from utp_env.runs import run_lock as run_lock_module
from utp_env.runs import store as store_module
from utp_env.runs.config import RunConfig
from utp_env.runs.records import RESULTS
from utp_env.runs.run_lock import run_lock
from utp_env.runs.runner import RunFolderError, run
from utp_env.runs.store import REJECTED, ResultsStore
from utp_env.tools.atomic import FileWriteError


class TypedAgent(ReferencePlanner):
    """The reference planner with an integer setting (imported by the tests as a module:Class path)."""

    def __init__(self, max_days: int = 7, buffers: bool = True) -> None:
        super().__init__(buffers=buffers)
        self.max_days = max_days


class CrashingAgent(ReferencePlanner):
    """Fails every episode."""

    def run(self, query: Query, toolkit: Toolkit) -> AgentResult:
        raise RuntimeError(f"no model configured for {query.query_id}")


def _config(db: Path, out: Path, **kw: Any) -> RunConfig:
    base = {"db": str(db), "split": "all", "limit": 3, "rollouts": 0, "out": str(out)}
    return RunConfig(**(base | kw))


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


# ---------------------------------------------------------------- the store


def _record(qid: str, trial: int = 0) -> dict[str, Any]:
    return minimal_record(qid, trial, x=1)


def test_bad_lines_anywhere_are_moved_aside_and_every_valid_record_is_kept(tmp_path: Path) -> None:
    good = [json.dumps(_record(f"q{i}")).encode() + b"\n" for i in range(6)]
    bad = {
        2: b'{"query_id": "q9", "tri\n',                 # garbage / torn in the middle
        4: b"{}\n",                                       # wrong shape
        5: b"[1, 2]\n",
        7: b"[" * 5000 + b"]" * 5000 + b"\n",             # nesting too deep to parse
        8: b'{"query_id": "q\xff\xfe", "trial": 0}\n',    # not UTF-8
        10: b'{"query_id": "q7", "trial": ' + b"9" * 5000 + b"}\n",  # 5,000-digit integer
        11: json.dumps(_record("q0")).encode() + b"\n",  # a duplicate of line 1
    }
    lines: list[bytes] = []
    it = iter(good)
    for number in range(1, 14):
        lines.append(bad[number] if number in bad else next(it, b""))
    (tmp_path / RESULTS).write_bytes(b"".join(lines) + b'{"query_id": "q8", "trial": 0, "x"')  # torn tail
    store = ResultsStore(tmp_path)
    assert sorted(store.records) == [f"q{i}#0" for i in range(6)]
    assert [r.line for r in store.rejected] == [2, 4, 5, 7, 8, 10, 11, 14]
    assert store.torn_lines == 1
    rejected = [json.loads(line) for line in _lines(tmp_path / REJECTED)]
    assert [r["line"] for r in rejected] == [2, 4, 5, 7, 8, 10, 11, 14]
    assert "not UTF-8" in rejected[4]["reason"] and "second record" in rejected[6]["reason"]
    # results.jsonl now holds exactly the valid lines, in their order, and reloads cleanly
    assert [json.loads(line)["query_id"] for line in _lines(tmp_path / RESULTS)] == [f"q{i}" for i in range(6)]
    again = ResultsStore(tmp_path)
    assert not again.rejected and len(again.records) == 6


def test_a_full_disk_leaves_no_partial_line_and_names_the_file(tmp_path: Path, monkeypatch) -> None:
    store = ResultsStore(tmp_path)
    store.append(_record("q1"))

    real_write = os.write

    def full(fd: int, data: Any) -> int:
        real_write(fd, bytes(data)[:7])  # part of the line reaches the disk, then it is full
        raise OSError(errno.ENOSPC, "No space left on device")

    fake = types.SimpleNamespace(**{k: getattr(os, k) for k in dir(os) if not k.startswith("__")})
    fake.write = full
    monkeypatch.setattr(store_module, "os", fake)
    with pytest.raises(FileWriteError) as caught:
        store.append(_record("q2"))
    message = str(caught.value)
    assert str(tmp_path / RESULTS) in message and "No space left" in message and "\n" not in message
    monkeypatch.undo()
    assert [json.loads(line)["query_id"] for line in _lines(tmp_path / RESULTS)] == ["q1"]
    ResultsStore(tmp_path).append(_record("q2"))  # after freeing space the run goes on
    assert len(ResultsStore(tmp_path).records) == 2


# ---------------------------------------------------------------- whole runs


def test_resume_keeps_valid_records_after_a_garbage_middle_line(mini_db_path: Path, tmp_path: Path,
                                                                 capsys) -> None:
    out = tmp_path / "run"
    run(_config(mini_db_path, out), progress=False)
    lines = _lines(out / RESULTS)
    assert len(lines) == 3 and all(json.loads(line)["db_hash"] for line in lines)
    lines[1] = "garbage from a bad disk"
    (out / RESULTS).write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    run(_config(mini_db_path, out), progress=False)
    err = capsys.readouterr().err
    assert "2 valid record(s) kept" in err and "1 bad line(s) moved to results.rejected.jsonl" in err
    assert "line 2: invalid JSON" in err
    after = _lines(out / RESULTS)
    assert after[:2] == [lines[0], lines[2]] and len(after) == 3  # the two kept lines are untouched
    assert json.loads(_lines(out / REJECTED)[0])["text"] == "garbage from a bad disk"


def test_a_second_writer_on_the_same_folder_is_refused(mini_db_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "busy"
    with run_lock(out), pytest.raises(RunFolderError) as caught:
        run(_config(mini_db_path, out), progress=False)
    assert str(out) in str(caught.value) and "in use by another" in str(caught.value)
    assert not (out / RESULTS).exists()
    run(_config(mini_db_path, out), progress=False)  # the lock is released with the first writer


def test_results_without_config_are_not_adopted_silently(mini_db_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "orphan"
    run(_config(mini_db_path, out, seed=0), progress=False)
    before = (out / RESULTS).read_bytes()
    (out / "config.json").unlink()
    with pytest.raises(RunFolderError, match="--adopt-results"):
        run(_config(mini_db_path, out, seed=7), progress=False)
    assert (out / RESULTS).read_bytes() == before
    assert main(["run", "--db", str(mini_db_path), "--split", "all", "--limit", "3", "--rollouts", "0",
                 "--out", str(out), "--quiet", "--adopt-results"]) == 0
    assert (out / RESULTS).read_bytes() == before  # adopted: nothing redone


def test_unrelated_or_unwritable_folders_are_one_line_errors(mini_db_path: Path, tmp_path: Path,
                                                             monkeypatch) -> None:
    unrelated = tmp_path / "photos"
    unrelated.mkdir()
    (unrelated / "holiday.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(RunFolderError, match="not a run folder") as caught:
        run(_config(mini_db_path, unrelated), progress=False)
    assert str(unrelated) in str(caught.value) and sorted(p.name for p in unrelated.iterdir()) == ["holiday.jpg"]
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(RunFolderError, match="is a file"):
        run(_config(mini_db_path, a_file), progress=False)

    done = tmp_path / "done"
    run(_config(mini_db_path, done), progress=False)
    before = (done / RESULTS).read_bytes()

    def refuse(path: Any, *args: Any, **kwargs: Any) -> int:
        raise PermissionError(errno.EROFS, "Read-only file system")

    fake = types.SimpleNamespace(**{k: getattr(os, k) for k in dir(os) if not k.startswith("__")})
    fake.open = refuse
    monkeypatch.setattr(run_lock_module, "os", fake)
    with pytest.raises(FileWriteError) as caught_os:
        run(_config(mini_db_path, done), progress=False)
    assert str(done) in str(caught_os.value) and "read-only" in str(caught_os.value)
    assert "\n" not in str(caught_os.value)
    assert (done / RESULTS).read_bytes() == before


def test_default_run_folder_names_tell_runs_apart() -> None:
    names = {RunConfig().run_dir(), RunConfig(profile="mini").run_dir(), RunConfig(limit=5).run_dir(),
             RunConfig(agent_settings={"buffers": False}).run_dir(), RunConfig(split="test").run_dir(),
             RunConfig(trials=3).run_dir()}
    assert len(names) == 6
    assert RunConfig().run_dir() == RunConfig(workers=4).run_dir()  # workers do not change results
    assert RunConfig(limit=5).run_dir() == RunConfig(limit=5).run_dir()  # stable


@pytest.mark.parametrize("setting", ["buffers=flase", "max_days=abc"])
def test_set_values_of_the_wrong_type_are_refused(mini_db_path: Path, tmp_path: Path, capsys,
                                                  setting: str) -> None:
    out = tmp_path / "typed"
    code = main(["run", "--db", str(mini_db_path), "--split", "all", "--limit", "2", "--rollouts", "0",
                 "--agent", "test_runs_integrity:TypedAgent", "--set", setting, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    key, value = setting.split("=")
    assert f"{key}={value!r}" in err[0] and "refused" in err[0]
    assert not out.exists()


def test_a_run_where_every_episode_failed_exits_non_zero(mini_db_path: Path, tmp_path: Path, capsys) -> None:
    code = main(["run", "--db", str(mini_db_path), "--split", "all", "--limit", "2", "--rollouts", "0",
                 "--agent", "test_runs_integrity:CrashingAgent", "--out", str(tmp_path / "crash"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1
    assert "every one of the 2 episodes failed" in err and "RuntimeError: no model configured for" in err


def test_the_cli_reports_an_unwritable_folder_in_one_line(mini_db_path: Path, tmp_path: Path, monkeypatch,
                                                          capsys) -> None:
    def refuse(path: Any, *args: Any, **kwargs: Any) -> int:
        raise PermissionError(errno.EACCES, "Permission denied")

    fake = types.SimpleNamespace(**{k: getattr(os, k) for k in dir(os) if not k.startswith("__")})
    fake.open = refuse
    monkeypatch.setattr(run_lock_module, "os", fake)
    out = tmp_path / "locked"
    code = main(["run", "--db", str(mini_db_path), "--split", "all", "--limit", "2", "--rollouts", "0",
                 "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0].startswith("utp-env run: error: cannot write ") and str(out) in err[0] and "permissions" in err[0]


def test_a_second_process_on_a_busy_folder_is_refused(mini_db_path: Path, tmp_path: Path, capsys) -> None:
    import subprocess
    import sys

    out = tmp_path / "shared"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
                               "from utp_env.runs.run_lock import run_lock\n"
                               "with run_lock(Path(sys.argv[1])):\n    print('locked', flush=True)\n"
                               "    time.sleep(60)\n", str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        code = main(["run", "--db", str(mini_db_path), "--split", "all", "--limit", "2", "--rollouts", "0",
                     "--out", str(out), "--quiet"])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1
        assert f"{out} is in use by another `utp-env run` (process {holder.pid})" in err[0]
        assert not (out / RESULTS).exists()
    finally:
        holder.kill()
        holder.wait(timeout=30)
