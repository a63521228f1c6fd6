"""`utp-env levels`: each level of the task with its ceiling (the reference planner) and its baseline (the
deterministic planner), read as the level's plans and scored by the level's reward."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from utp_env.cli import main


def test_the_levels_table_has_every_level_with_the_reference_at_its_ceiling(
        mini_db_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["levels", "--db", str(mini_db_path), "--limit", "4", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["level"] for r in rows] == [1, 2, 3, 4]
    for row in rows:
        assert row["env_id"] == f"utp_env/UTP-L{row['level']}-v0" and 1 <= row["queries"] <= 4
        assert row["reference_success"] == 1.0 and row["reference_reward"] >= row["deterministic_reward"] > 0
    assert rows[0]["reference_reward"] == 1.0  # a first leg with its buffer is the whole of level 1
    assert main(["levels", "--db", str(mini_db_path), "--limit", "2"]) == 0
    assert "| 2 | `utp_env/UTP-L2-v0` | plan one day" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["--limit", "0"], "must be a positive integer"),
    (["--split", "nope"], "argument --split: invalid choice: 'nope'"),
    (["--split", "all"], "argument --split: invalid choice: 'all'"),
])
def test_bad_levels_arguments_are_refused_in_one_line(mini_db_path: Path, argv: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "utp_env", "levels", "--db", str(mini_db_path), *argv],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and message in done.stderr
    assert "Traceback" not in done.stderr
