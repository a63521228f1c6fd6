"""Shared fixtures: the mini sandbox, built once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from utp_env.tools.database import Database
from utp_env.tools.sandbox import build_sandbox

# fixtures shared across test folders, defined in tests/support/ (on the path: pyproject.toml's pythonpath)
pytest_plugins = ["scripted_llm", "wire_fixtures"]

MINI_QUERIES = 60

# No test asserts a duration: Hypothesis's per-example deadline (200 ms by default) and its too-slow
# health check are off for every test, so a loaded machine cannot fail one. Speed targets live in
# benchmarks/. (A test's own @settings(suppress_health_check=...) replaces the list below.)
settings.register_profile("utp-env", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("utp-env")


@pytest.fixture(scope="session")
def mini_db_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory of the mini sandbox (seed 0) with a small query set and its reference plans,
    built once per session. Do not modify it (copy it first)."""
    from utp_env.dataset import build_query_set

    path = tmp_path_factory.mktemp("mini_sandbox")
    build_sandbox("mini", 0, path)
    build_query_set(path, n=MINI_QUERIES, seed=0, progress=False)
    return path


@pytest.fixture(scope="session")
def mini_db(mini_db_path: Path) -> Database:
    """The mini sandbox (seed 0) opened as a Database."""
    return Database.open(mini_db_path)


@pytest.fixture(scope="session")
def mini_full_set_path(mini_db_path: Path, tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """A copy of the mini sandbox with the real query set (1,000 queries, as the embedded mini
    sandbox has it); for slow tests only (building it takes a few minutes). Under xdist the workers
    share one build (in their session's common temporary folder, under a lock); do not modify it."""
    import shutil

    from utp_env.dataset import QUERIES_FILE, build_query_set
    from utp_env.tools.sandbox.cache import directory_lock

    root = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    path = root / "mini_full_set"
    with directory_lock(root):
        if not (path / QUERIES_FILE).exists():
            shutil.rmtree(path, ignore_errors=True)
            building = Path(shutil.copytree(mini_db_path, root / f"mini_full_set.{worker_id}"))
            build_query_set(building, n=1000, seed=0, progress=False)
            building.rename(path)
    return path


@pytest.hookimpl(trylast=True)  # after `-m` has deselected: the positions below are of the tests that run
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `long` each at the head of one pytest-xdist worker's first batch: `--dist load`
    hands every worker a run of consecutive tests (a quarter of its share) before it balances the
    rest, so a test of minutes collected late, or two at the head of one batch, keep one worker busy
    while the other has finished. Without xdist, or with more long tests than workers, they simply
    come first. Only the order changes, never which tests run."""
    import os

    long = [item for item in items if item.get_closest_marker("long") is not None]
    if not long:
        return
    rest = [item for item in items if item.get_closest_marker("long") is None]
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    batch = max(1, len(items) // workers // 4)  # pytest-xdist's first batch per worker
    for k, item in enumerate(long):
        rest.insert(min(k * batch if k < workers else k, len(rest)), item)
    items[:] = rest


RL_EXTRA_REASON = "the rl extra is not installed (pip install 'utp-env[rl]'); .ci/run installs it"


@pytest.fixture(scope="session")
def rl_extra() -> None:
    """Skip, naming the fix, when a package of the `rl` extra is missing (the GRPO and SFT tests use it
    through `pytest.mark.usefixtures("rl_extra")`)."""
    for module in ("torch", "trl", "datasets", "tokenizers", "accelerate"):
        pytest.importorskip(module, reason=RL_EXTRA_REASON)
