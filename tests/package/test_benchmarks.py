"""Each script in benchmarks/ runs to the end on the mini sandbox with a small workload and prints
its target line. How fast is never checked here: speed targets live in the scripts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def small_runs(db: Path) -> dict[str, list[str]]:
    return {
        "env_steps.py": ["--db", str(db), "--n", "300"],
        "evaluate.py": ["--db", str(db), "--plans", "5", "--seconds", "0.2"],
        "evaluate_memory.py": ["--db", str(db), "--mb", "0.3"],
        "import_time.py": ["--rounds", "2"],
        "lookup.py": ["--db", str(db), "--n", "12", "--repeat", "1"],
        "simulate.py": ["--db", str(db), "--rollouts", "200", "--loop-rollouts", "50", "--repeat", "1"],
        "plan_format.py": ["--k", "500", "--repeat", "1"],
        "replan.py": ["--db", str(db), "--split", "all", "--limit", "3", "--seeds", "2"],
        "replan_scale.py": ["--db", str(db), "--items", "100", "--repeat", "1"],
        "report.py": ["--db", str(db), "--small", "--markdown"],
        "runs.py": ["--db", str(db), "--episodes", "6", "--rounds", "1", "--fresh", "1"],
        "sandbox.py": ["--profile", "mini", "--repeat", "1"],
        "serve.py": ["--db", str(db), "--episodes", "6", "--sessions", "3", "--hold", "4", "--workers", "2",
                     "--rounds", "1", "--think-ms", "1"],
    }


def test_every_benchmark_script_has_a_small_run() -> None:
    assert {p.name for p in BENCHMARKS.glob("*.py")} == set(small_runs(Path("x")))


@pytest.mark.parametrize("script", sorted(small_runs(Path("x"))))
def test_benchmark_runs(script: str, mini_db_path: Path, tmp_path: Path) -> None:
    env = {**os.environ, "UTP_ENV_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *small_runs(mini_db_path)[script]],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output[-3000:]
    # exit 1 means a target was missed (env_steps) on this small, loaded run; results must still agree
    assert done.returncode in (0, 1) and "MISMATCH" not in output and "NO, " not in output, output[-3000:]
    assert "target" in output, output[-3000:]


def test_serve_benchmark_refuses_no_timed_round() -> None:
    """`--rounds 0` would leave the scaling without a measurement: refused in one line before any server starts."""
    done = subprocess.run([sys.executable, str(BENCHMARKS / "serve.py"), "--rounds", "0"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "--rounds must be at least 1, not 0" in done.stderr
