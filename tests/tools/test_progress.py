"""Long waits report progress without `\\r` spam when stderr is a file (tools/progress.py)."""

from __future__ import annotations

import pytest

from utp_env.tools.progress import progress_bar


def test_a_bar_on_a_file_prints_one_line_and_no_carriage_returns(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bar(500, "reference plans", "query") as bar:
        for _ in range(500):
            bar.update(1)
    err = capsys.readouterr().err
    assert "\r" not in err
    assert err.splitlines() == ["utp-env: reference plans (500 × query)…"]


def test_a_disabled_bar_is_silent(capsys: pytest.CaptureFixture[str]) -> None:
    for _ in progress_bar(3, "sandbox", "stage", enabled=False, iterable=range(3)):
        pass
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_gym_make_on_an_empty_cache_says_what_it_builds(tmp_path) -> None:
    """The first gym.make builds the sandbox and its query set: it must say so, not sit silent."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "UTP_ENV_CACHE": str(tmp_path / "cache")}
    # A 60-query set instead of 1,000 (the messages are under test, not the size; the 1,000-query
    # build is the mini_full_set_path fixture's and the docs snippets').
    code = ("import gymnasium as gym, utp_env, utp_env.dataset as d; d.build_query_set.__defaults__ = (60, 0, True); "
            "gym.make('utp_env/UTP-v0', profile='mini').reset(seed=0)")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "utp-env: building the mini sandbox" in done.stderr
    assert "utp-env: building the query set and reference plans" in done.stderr
    assert "\r" not in done.stderr
