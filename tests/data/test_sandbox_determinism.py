"""The same seed builds the same bytes on any CPU.

numpy computes sin, cos, arcsin, exp and log with code it picks by the CPU (AVX-512 machines take
other SIMD code than AVX2 ones), and the answers differ in the last bit: the full sandbox built on an
AVX-512 machine used to differ from the one built elsewhere (another content hash, so every recorded
hash of tests/support/data/plan_outputs/full.json failed there). The build computes these functions with
Python's `math` instead (`tools/sandbox/common.py`); the slow test of tests/evaluation/test_plan_outputs.py
compares the full sandbox's content hash with the recorded one on whatever machine runs it.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from utp_env.tools.sandbox import common

ROOT = Path(__file__).resolve().parents[2]
# numpy functions whose float64 answers depend on the CPU's SIMD (the exact ones, sqrt, radians,
# degrees, arithmetic, are not here)
CPU_DEPENDENT = re.compile(r"\b(?:np|numpy)\.(?:sin|cos|tan|arcsin|arccos|arctan2?|arcsinh|arccosh|arctanh|sinh|cosh|"
                           r"tanh|exp|exp2|expm1|log|log2|log10|log1p|logaddexp2?|power|float_power|hypot|cbrt)\b"
                           r"|\bfrom numpy import\b")
# the code that builds a world: the sandbox generator, the India sources, the query generator and the
# reference planner (whose plans are part of the dataset's content hash)
BUILD_CODE = [ROOT / "tools" / "sandbox", ROOT / "tools" / "india", ROOT / "utp_env" / "queries",
              ROOT / "agents" / "reference", ROOT / "utp_env" / "dataset.py", ROOT / "utp_env" / "reference_plans.py"]


def test_no_cpu_dependent_numpy_function_builds_a_world() -> None:
    found = []
    for root in BUILD_CODE:
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if CPU_DEPENDENT.search(line.split("#", 1)[0]):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, ("numpy's answer depends on the CPU; use tools/sandbox/common.py's sin, cos, arcsin, exp, "
                       "log, power (Python's math) instead:\n" + "\n".join(found))


@pytest.mark.parametrize("name", ["sin", "cos", "arcsin", "exp", "log"])
def test_the_elementwise_functions_answer_what_math_does(name: str) -> None:
    function = getattr(common, name)
    reference = {"sin": math.sin, "cos": math.cos, "arcsin": math.asin, "exp": math.exp, "log": math.log}[name]
    rng = np.random.default_rng(0)
    values = rng.uniform(0.01, 0.99, 2_000) if name in ("arcsin", "log") else rng.uniform(-40.0, 40.0, 2_000)
    out = function(values)
    assert out.dtype == np.float64 and out.shape == values.shape
    assert out.tolist() == [reference(float(v)) for v in values]
    grid = function(values.reshape(40, 50))
    assert grid.shape == (40, 50) and grid.ravel().tolist() == out.tolist()
    assert float(function(0.5)) == reference(0.5)  # a number gives a 0-d array


def test_haversine_is_the_math_formula_to_the_bit() -> None:
    rng = np.random.default_rng(1)
    lat1, lon1, lat2, lon2 = (rng.uniform(6.0, 36.0, 500), rng.uniform(68.0, 98.0, 500),
                              rng.uniform(6.0, 36.0, 500), rng.uniform(68.0, 98.0, 500))
    got = common.haversine_km(lat1, lon1, lat2, lon2).tolist()
    want = []
    for a, b, c, d in zip(lat1.tolist(), lon1.tolist(), lat2.tolist(), lon2.tolist(), strict=True):
        p1, p2 = float(np.radians(a)), float(np.radians(c))
        dl = float(np.radians(d - b))
        h = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
        want.append(2 * common.EARTH_RADIUS_KM * math.asin(math.sqrt(min(max(h, 0.0), 1.0))))
    assert got == want


def _simd_dispatch() -> list[str]:
    """The SIMD targets numpy dispatches to on this CPU (what NPY_DISABLE_CPU_FEATURES can turn off)."""
    try:
        from numpy._core import _multiarray_umath as umath  # numpy 2
    except ImportError:  # pragma: no cover - numpy 1.26
        from numpy.core import _multiarray_umath as umath  # type: ignore[no-redef]
    return [name for name in umath.__cpu_dispatch__ if umath.__cpu_features__.get(name)]


@pytest.mark.slow
@pytest.mark.long
def test_the_full_sandbox_is_the_same_bytes_without_numpys_simd_code(tmp_path: Path) -> None:
    """Built with every SIMD target numpy would dispatch to on this CPU turned off, the full sandbox (its
    tables, queries and reference plans) has the content hash recorded in tests/support/data/plan_outputs/
    full.json, which the plan-output test checks with them on: the bytes do not depend on the CPU's SIMD."""
    recorded = json.loads((ROOT / "tests" / "support" / "data" / "plan_outputs" / "full.json").read_text())["db_hash"]
    env = {**os.environ, "UTP_ENV_CACHE": str(tmp_path), "NPY_DISABLE_CPU_FEATURES": " ".join(_simd_dispatch())}
    code = ("from utp_env.dataset import open_dataset; "
            "print(open_dataset(profile='full', progress=False).db.content_hash)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == recorded
