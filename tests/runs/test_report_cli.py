"""What the CLI prints for a researcher: `utp-env data build` prints
the database's content hash once, the same that `data validate` prints and run records carry
(`Database.content_hash`, utp_env/cli/data.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from utp_env.cli import main
from utp_env.tools.database import Database


def test_data_build_prints_the_one_content_hash_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "built"
    assert main(["data", "build", "--profile", "mini", "--seed", "5", "--out", str(out), "--queries", "2"]) == 0
    printed = capsys.readouterr().out
    hashes = [line.split(": ", 1)[1] for line in printed.splitlines() if line.startswith("content hash: ")]
    assert hashes == [Database.open(out).content_hash]
    assert "already built" not in printed and printed.count("built mini sandbox") == 1
    assert main(["data", "validate", str(out)]) == 0
    assert f"content hash: {hashes[0]}" in capsys.readouterr().out
