"""Shared fixtures: the mini sandbox, built once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from utp_env.tools.database import Database
from utp_env.tools.sandbox import build_sandbox

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
def mini_full_set_path(mini_db_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the mini sandbox with the real query set (1,000 queries, as the embedded mini
    sandbox has it); for slow tests only (building it takes about a minute)."""
    import shutil

    from utp_env.dataset import build_query_set

    path = Path(shutil.copytree(mini_db_path, tmp_path_factory.mktemp("mini_full_set") / "db"))
    build_query_set(path, n=1000, seed=0, progress=False)
    return path


RL_EXTRA_REASON = "the rl extra is not installed (pip install 'utp-env[rl]'); .ci/run installs it"


@pytest.fixture(scope="session")
def rl_extra() -> None:
    """Skip, naming the fix, when a package of the `rl` extra is missing (the GRPO and SFT tests use it
    through `pytest.mark.usefixtures("rl_extra")`)."""
    for module in ("torch", "trl", "datasets", "tokenizers", "accelerate"):
        pytest.importorskip(module, reason=RL_EXTRA_REASON)
