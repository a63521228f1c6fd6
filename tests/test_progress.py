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
