"""A run's lock and its workers' lifetime: pool workers die with the driver and never hold the run lock,
a killed run's folder is taken over with a one-line notice, a dead worker ends the run in one line,
Ctrl-C stops a pool at once, and worker counts are bounded."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest

from utp_env.cli import main
from utp_env.runs import local_pool, ray_backend
from utp_env.runs.config import RunConfig
from utp_env.runs.run_lock import process_start, run_lock
from utp_env.runs.runner import RunFolderError, run, worker_count

SUPPORT = Path(__file__).resolve().parents[1] / "support"  # the helpers a subprocess imports
linux_fork = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux (/proc, fork)")


def _cmd(db: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "utp_env", "run", "--db", str(db), "--split", "all", "--limit", "4", "--trials",
            "5", "--rollouts", "20", "--agent", "run_agents:SlowReference", "--workers", "2", "--out", str(out),
            "--quiet", *extra]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(SUPPORT), os.environ.get("PYTHONPATH", "")])}


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _children(pid: int) -> list[int]:
    """The live processes whose parent is `pid` (from /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if fields and fields[0] != "Z" and int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _gone(pid: int) -> bool:
    """Whether `pid` has ended (a zombie waiting for a reaper counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def _wait_for(check: Any, what: str, proc: subprocess.Popen[bytes] | None = None, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the run ended before {what}: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def _start_and_wait(db: Path, out: Path, *extra: str, env: dict[str, str] | None = None,
                    **popen: Any) -> tuple[subprocess.Popen[bytes], list[int]]:
    """A 2-worker run of 20 slow episodes, once it has recorded two and both workers exist."""
    proc = subprocess.Popen(_cmd(db, out, *extra), env=env or _env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, **popen)
    _wait_for(lambda: len(_lines(out / "results.jsonl")) >= 2 and len(_children(proc.pid)) == 2,
              "two recorded episodes", proc)
    return proc, _children(proc.pid)


@linux_fork
def test_kill_9_of_a_two_worker_run_ends_its_workers_and_the_same_command_resumes(mini_db_path: Path,
                                                                                  tmp_path: Path) -> None:
    out = tmp_path / "killed"
    proc, workers = _start_and_wait(mini_db_path, out)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    _wait_for(lambda: all(_gone(pid) for pid in workers), "the orphaned workers to end", timeout=60)
    done_before = len(_lines(out / "results.jsonl"))
    assert done_before < 20, "the kill should land mid-run"
    assert (out / ".run.lock").read_text().split()[0] == str(proc.pid)  # left behind by the killed run
    again = subprocess.run(_cmd(mini_db_path, out), env=_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert (f"names process {proc.pid}, which ended without releasing it (killed?); taking the folder over"
            in again.stderr)
    assert f"resuming {out}: {done_before} of 20 episodes done" in again.stderr
    keys = {(r["query_id"], r["trial"]) for r in map(json.loads, _lines(out / "results.jsonl"))}
    assert len(keys) == len(_lines(out / "results.jsonl")) == 20
    assert (out / ".run.lock").read_text() == ""  # a run that ended released the folder


@linux_fork
def test_a_killed_worker_ends_the_run_in_one_line_and_the_same_command_resumes(mini_db_path: Path,
                                                                               tmp_path: Path) -> None:
    out = tmp_path / "worker"
    proc, workers = _start_and_wait(mini_db_path, out)
    os.kill(workers[0], signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, err.decode()[-3000:]
    assert "Traceback" not in err.decode() and "BrokenProcessPool" not in err.decode()
    saved = len(_lines(out / "results.jsonl"))
    assert lines[0] == (f"utp-env run: error: worker process {workers[0]} was killed by SIGKILL (kill -9 or the "
                        f"out-of-memory killer) during the run; {saved} of 20 episodes are saved in "
                        f"{out / 'results.jsonl'}; rerun the same command to resume")
    _wait_for(lambda: all(_gone(pid) for pid in workers), "the other worker to end", timeout=60)
    again = subprocess.run(_cmd(mini_db_path, out), env=_env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "taking the folder over" not in again.stderr  # the driver released the folder as it stopped
    assert len(_lines(out / "results.jsonl")) == 20


@linux_fork
def test_ctrl_c_stops_a_pool_at_once_without_recording_the_interrupt(mini_db_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "interrupted"
    started = tmp_path / "started.txt"
    proc, workers = _start_and_wait(mini_db_path, out, "--agent", "run_agents:CountingReference", "--trials", "10",
                                    env={**_env(), "UTP_TEST_STARTED": str(started)}, start_new_session=True,
                                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the driver and its workers
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and err.decode().strip() == "interrupted", err.decode()[-2000:]
    _wait_for(lambda: all(_gone(pid) for pid in workers), "the workers to end", timeout=60)
    records = [json.loads(line) for line in _lines(out / "results.jsonl")]
    assert all(r["termination_reason"] == "submitted" for r in records)
    assert len(_lines(started)) < 40  # before: the driver waited while the pool ran all 40 queued episodes


def _lock_holder_script(out: Path) -> list[str]:
    """A process that takes the run lock, forks a child that keeps the lock file open (as a pool
    worker does), prints both pids and waits."""
    return [sys.executable, "-c", "import os, sys, time\nfrom pathlib import Path\n"
            "from utp_env.runs.run_lock import run_lock\n"
            "with run_lock(Path(sys.argv[1])):\n"
            "    child = os.fork()\n"
            "    if child == 0:\n        time.sleep(120)\n        os._exit(0)\n"
            "    print(os.getpid(), child, flush=True)\n    time.sleep(120)\n", str(out)]


@linux_fork
def test_a_forked_child_of_a_killed_holder_does_not_keep_the_folder_locked(tmp_path: Path, capsys) -> None:
    out = tmp_path / "held"
    holder = subprocess.Popen(_lock_holder_script(out), stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    parent, child = map(int, holder.stdout.readline().split())
    try:
        busy = f"in use by another `utp-env run` \\(process {parent}\\)"
        with pytest.raises(RunFolderError, match=busy), run_lock(out):
            pass
        holder.kill()
        holder.wait(timeout=30)
        assert not _gone(child)  # the child lives on, the lock file open, as orphaned workers did
        with run_lock(out):
            assert (out / ".run.lock").read_text().split()[0] == str(os.getpid())
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"utp-env run: notice: {out / '.run.lock'} names process {parent}, which ended without "
                       "releasing it (killed?); taking the folder over"]
    finally:
        holder.kill()
        os.kill(child, signal.SIGKILL)


def test_a_second_run_in_the_same_process_is_refused_and_the_first_keeps_its_lock(tmp_path: Path) -> None:
    out = tmp_path / "twice"
    with run_lock(out):
        with pytest.raises(RunFolderError, match=f"process {os.getpid()}"), run_lock(out):
            pass
        other = subprocess.run([sys.executable, "-c", "import sys\nfrom pathlib import Path\n"
                                "from utp_env.runs.run_lock import run_lock\n"
                                "with run_lock(Path(sys.argv[1])):\n    pass\n", str(out)],
                               capture_output=True, text=True, timeout=120)
        assert other.returncode != 0 and "in use by another" in other.stderr  # the refusal did not drop it
    with run_lock(out):  # released at the end, without a notice
        pass


def test_a_folder_left_by_an_older_version_is_taken_over_without_a_notice(tmp_path: Path, capsys) -> None:
    out = tmp_path / "old"
    out.mkdir()
    (out / ".run.lock").write_text("4242\n")  # older versions wrote the pid and never cleared it
    with run_lock(out):
        pass
    assert capsys.readouterr().err == ""


@linux_fork
@pytest.mark.parametrize("errno_", [errno.ENOLCK, errno.EOPNOTSUPP])
def test_without_posix_locks_the_recorded_holder_is_checked(tmp_path: Path, monkeypatch, capsys, errno_: int) -> None:
    def unsupported(fd: int, op: int) -> None:
        raise OSError(errno_, os.strerror(errno_))

    monkeypatch.setattr("fcntl.lockf", unsupported)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        _wait_for(lambda: process_start(sleeper.pid) != "", "the sleeper's /proc entry", timeout=30)
        out = tmp_path / "nolocks"
        out.mkdir()
        lock = out / ".run.lock"
        lock.write_text(f"{sleeper.pid} {process_start(sleeper.pid)}\n")  # a live holder
        with pytest.raises(RunFolderError, match=f"process {sleeper.pid}"), run_lock(out):
            pass
        lock.write_text(f"{sleeper.pid} 1\n")  # its pid, reused by another process: that holder is dead
        with run_lock(out):
            assert lock.read_text().split()[0] == str(os.getpid())
        assert f"names process {sleeper.pid}, which ended without releasing it" in capsys.readouterr().err
    finally:
        sleeper.kill()
        sleeper.wait(timeout=30)
    lock.write_text(f"{sleeper.pid} {process_start(os.getpid())}\n")  # dead
    with run_lock(out):
        pass
    assert "taking the folder over" in capsys.readouterr().err


def test_a_lock_error_other_than_busy_names_the_file(tmp_path: Path, monkeypatch) -> None:
    def broken(fd: int, op: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr("fcntl.lockf", broken)
    with pytest.raises(OSError, match=r"\.run\.lock"), run_lock(tmp_path / "io"):
        pass


# ---------------------------------------------------------------- worker counts and bounds

def _config(db: Path, out: Path, **kw: Any) -> RunConfig:
    return RunConfig(**({"db": str(db), "split": "all", "limit": 2, "rollouts": 0, "out": str(out)} | kw))


def test_workers_are_at_most_the_episodes_and_a_per_machine_cap(monkeypatch) -> None:
    assert worker_count(RunConfig(workers=300), episodes=2, todo=2) == (
        2, "--workers 300: this run has 2 episode(s), so at most 2 worker process(es)")
    assert worker_count(RunConfig(workers=4), episodes=10, todo=1) == (1, None)  # a resume: no notice
    assert worker_count(RunConfig(workers=1), episodes=0, todo=0) == (1, None)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    processes, notice = worker_count(RunConfig(workers=50), episodes=1000, todo=1000)
    assert processes == 8 and notice == ("--workers 50: at most 8 local worker processes on this machine "
                                         "(max(8, 4 x 2 CPUs)); using 8")
    assert worker_count(RunConfig(workers=50, backend="ray", ray_address="auto"), 1000, 1000) == (50, None)


def test_workers_300_for_a_two_episode_run_start_two_processes(mini_db_path: Path, tmp_path: Path, monkeypatch,
                                                               capsys) -> None:
    import concurrent.futures

    sizes: list[int] = []
    real = concurrent.futures.ProcessPoolExecutor

    class Spy(real):  # type: ignore[misc, valid-type]
        def __init__(self, max_workers: int, **kw: Any) -> None:
            sizes.append(max_workers)
            super().__init__(max_workers, **kw)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Spy)
    code = main(["run", "--db", str(mini_db_path), "--split", "all", "--limit", "2", "--rollouts", "0",
                 "--workers", "300", "--out", str(tmp_path / "many"), "--quiet"])
    assert code == 0 and sizes == [2]
    assert ("utp-env run: notice: --workers 300: this run has 2 episode(s), so at most 2 worker process(es)"
            in capsys.readouterr().err)


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--trials", "1000000000", "--trials 1,000,000,000: must be between 1 and 1,000"),
    ("--trials", "0", "--trials 0: must be between 1 and 1,000"),
    ("--workers", "300000", "--workers 300,000: must be between 1 and 1,024"),
    ("--workers", "-2", "--workers -2: must be between 1 and 1,024"),
    ("--rollouts", "1000000000", "--rollouts 1,000,000,000: must be between 0 and 100,000,000"),
    ("--rollouts", "-1", "--rollouts -1: must be between 0 and 100,000,000"),
])
def test_run_bounds_are_one_line_naming_the_flag(tmp_path: Path, capsys, flag: str, value: str,
                                                 message: str) -> None:
    out = tmp_path / "bounded"
    code = main(["run", "--profile", "mini", flag, value, "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith(f"utp-env run: error: {message} ")
    assert not out.exists()


@pytest.mark.parametrize("value", ["0", "-1", "x"])
def test_run_limit_below_one_is_refused_by_the_flag(tmp_path: Path, capsys, value: str) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["run", "--profile", "mini", "--limit", value, "--out", str(tmp_path / "limited"), "--quiet"])
    assert caught.value.code == 2
    assert f"argument --limit: must be a positive integer, got '{value}'" in capsys.readouterr().err
    assert not (tmp_path / "limited").exists()


@pytest.mark.parametrize(("key", "value", "message"), [
    ("trials", 1_000_000_000, "trials: Input should be less than or equal to 1000"),
    ("workers", 5000, "workers: Input should be less than or equal to 1024"),
    ("rollouts", 10**9, "rollouts: Input should be less than or equal to 100000000"),
])
def test_run_config_bounds_name_the_file_and_key(tmp_path: Path, capsys, key: str, value: int, message: str) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(f"profile: mini\n{key}: {value}\n")
    code = main(["run", "--config", str(config), "--out", str(tmp_path / "r"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [f"utp-env run: error: {config}: {message}"]


def test_the_run_configs_rollout_bound_is_the_simulations() -> None:
    from utp_env.runs.config import MAX_ROLLOUTS
    from utp_env.simulation import MAX_ROLLOUTS as SIMULATION_MAX

    assert MAX_ROLLOUTS == SIMULATION_MAX


# ---------------------------------------------------------------- Ray

class _FakeRay(types.SimpleNamespace):
    """Enough of Ray's API to run `_ray` in this process."""

    def __init__(self) -> None:
        super().__init__(started=None)

    def is_initialized(self) -> bool:
        return self.started is not None

    def init(self, **kw: Any) -> None:
        self.started = kw

    def remote(self, fn: Any) -> Any:
        return types.SimpleNamespace(remote=lambda *args: fn(*args))

    def wait(self, pending: list[Any], num_returns: int) -> tuple[list[Any], list[Any]]:
        return pending[:num_returns], pending[num_returns:]

    def get(self, ref: Any) -> Any:
        return ref

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 2.0}


def test_a_local_ray_says_where_it_writes(mini_db_path: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path / "raytmp"))
    run(_config(mini_db_path, tmp_path / "ray", backend="ray", workers=2), progress=False)
    err = capsys.readouterr().err
    assert (f"utp-env run: notice: Ray keeps its session files and logs under {tmp_path / 'raytmp' / 'ray'} "
            "(set RAY_TMPDIR to choose another folder" in err)
    assert fake.started["num_cpus"] == 2
    assert len(_lines(tmp_path / "ray" / "results.jsonl")) == 2


def test_worker_exit_descriptions() -> None:
    assert local_pool._describe_exit(-9).startswith("was killed by SIGKILL")
    assert local_pool._describe_exit(-15) == "was killed by SIGTERM"
    assert local_pool._describe_exit(3) == "exited with status 3"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Ray's Linux rules")
def test_the_ray_folder_named_is_rays_default(monkeypatch) -> None:
    monkeypatch.delenv("RAY_TMPDIR", raising=False)
    monkeypatch.delenv("TMPDIR", raising=False)
    assert "under /tmp/ray (set RAY_TMPDIR" in ray_backend.ray_temp_notice()
    monkeypatch.setenv("TMPDIR", "/scratch/me")
    assert "under /scratch/me/ray (set RAY_TMPDIR" in ray_backend.ray_temp_notice()
    ray = pytest.importorskip("ray._common.utils")  # the rule it mirrors, when this Ray has it
    assert f"under {ray.get_default_ray_temp_dir()} (" in ray_backend.ray_temp_notice()


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--queries", "1000000000", "--queries must be at most 100,000, got 1,000,000,000"),
    ("--queries", "-3", "--queries must be a non-negative integer, got '-3'"),
    ("--train", "1000000000", "--train must be at most 100,000, got 1,000,000,000"),
    ("--train", "many", "--train must be a non-negative integer, got 'many'"),
])
def test_data_build_queries_are_bounded(tmp_path: Path, capsys, flag: str, value: str, message: str) -> None:
    out = tmp_path / "db"
    with pytest.raises(SystemExit) as caught:
        main(["data", "build", "--profile", "mini", "--out", str(out), flag, value])
    err = capsys.readouterr().err.strip().splitlines()
    assert caught.value.code == 2 and err[-1] == f"utp-env data build: error: argument {flag}: {message}"
    assert not out.exists()


@linux_fork
def test_a_failed_write_stops_the_pool_before_the_error_propagates(mini_db_path: Path, tmp_path: Path,
                                                                   monkeypatch) -> None:
    import multiprocessing

    from utp_env.runs.store import ResultsStore
    from utp_env.tools.atomic import FileWriteError

    def full(self: ResultsStore, record: dict[str, Any]) -> None:
        raise FileWriteError.of(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)), self.path)

    monkeypatch.setattr(ResultsStore, "append", full)
    monkeypatch.syspath_prepend(str(SUPPORT))
    started = tmp_path / "started.txt"
    monkeypatch.setenv("UTP_TEST_STARTED", str(started))
    with pytest.raises(FileWriteError, match="No space left"):
        run(_config(mini_db_path, tmp_path / "full", limit=6, trials=3, workers=2,
                    agent="run_agents:CountingReference"), progress=False)
    assert multiprocessing.active_children() == []
    assert len(_lines(started)) <= 6  # the 18 queued episodes were not all run first (before: all 18)


def test_two_threads_of_one_process_do_not_both_take_a_folder(tmp_path: Path) -> None:
    import threading

    out = tmp_path / "threads"
    barrier, inside = threading.Barrier(8), threading.Event()
    outcomes: list[str] = []

    def attempt() -> None:
        barrier.wait()
        try:
            with run_lock(out):
                outcomes.append("locked")
                inside.wait(timeout=30)  # hold it until every other thread has tried
        except RunFolderError:
            outcomes.append("refused")
            if outcomes.count("refused") == 7:
                inside.set()

    threads = [threading.Thread(target=attempt) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == ["locked"] + ["refused"] * 7
