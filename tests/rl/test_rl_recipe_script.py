"""benchmarks/rl_recipe.sh, the RL recipe end to end per level: what it refuses before it starts (its CPU twin
runs in tests/rl/test_rl_curve.py, with the arguments the script gives `python -m utp_env.rl.curve --tiny`)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "rl_recipe.sh"


@pytest.mark.parametrize(("args", "message"), [
    ([], "usage: bash benchmarks/rl_recipe.sh MODEL_DIR|--tiny"),
    (["--tiny", "5"], "level 5 is not one of 1 2 3 4"),
    (["/nowhere"], "/nowhere is not a model directory (no config.json)"),
])
def test_the_recipe_refuses_what_it_cannot_run(args: list[str], message: str) -> None:
    done = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr


def test_the_cpu_twin_is_the_curve_smoke_run_of_the_tests() -> None:
    """The script's --tiny arguments are those tests/rl/test_rl_curve.py gives each level (2 steps)."""
    text = SCRIPT.read_text()
    for flag in ("--steps 2", "--every 1", "--demos 4", "--sft-epochs 1", "--eval-limit 2", "--eval-samples 2",
                 "--queries-per-step 2", "--num-generations 2", "--pretrain-steps 20"):
        assert flag in text
