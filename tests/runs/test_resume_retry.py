"""A run whose model server was down for two episodes, resumed with the server up, runs them again
(utp_env/runs/runner.py); --no-retry-failed keeps them. The server is tests/support/fault_server.py on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("langchain_openai")

from fault_server import FaultServer
from wire_fixtures import run

from utp_env.cli import main


def test_episodes_that_met_a_down_server_run_again_on_resume(fresh: FaultServer, tmp_path: Path,
                                                             mini_db_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    settings = ["retries=0"]
    fresh.inject("500", "500")  # the server answers the first two model calls with HTTP 500: both episodes fail
    records = run(fresh, "direct", out, mini_db_path, limit=2, settings=settings)
    assert [r["termination_reason"] for r in records] == ["infrastructure_error"] * 2
    assert all("model call failed" in r["error"] for r in records)
    capsys.readouterr()
    records = run(fresh, "direct", out, mini_db_path, limit=2, settings=settings)  # the server is up again
    assert [r["termination_reason"] for r in records] == ["submitted"] * 2
    err = capsys.readouterr().err
    assert "2 episode(s) that ended in an infrastructure error" in err and "run again (--no-retry-failed" in err
    moved = [json.loads(line) for line in (out / "results.rejected.jsonl").read_text().splitlines()]
    assert len(moved) == 2 and all(m["reason"].startswith("run again: it ended in an infrastructure error")
                                   for m in moved)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["termination"] == {"submitted": 2}


def test_no_retry_failed_keeps_them(fresh: FaultServer, tmp_path: Path, mini_db_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    fresh.inject("500")
    records = run(fresh, "direct", out, mini_db_path, limit=1, settings=["retries=0"])
    assert records[0]["termination_reason"] == "infrastructure_error"
    capsys.readouterr()
    argv = ["run", "--agent", "direct", "--db", str(mini_db_path), "--limit", "1", "--rollouts", "0", "--out",
            str(out), "--quiet", "--set", f"base_url={fresh.base_url}", "--set", "model=fault-model",
            "--no-retry-failed"]
    from wire_fixtures import FAST

    for item in [*FAST, "retries=0"]:
        argv += ["--set", item]
    assert main(argv) == 1  # every episode failed: the exit status says so
    assert "kept (--no-retry-failed)" in capsys.readouterr().err
    lines = (out / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["termination_reason"] for line in lines] == ["infrastructure_error"]
