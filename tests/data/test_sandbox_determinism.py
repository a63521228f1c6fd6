"""The same seed builds the same bytes on any CPU.

numpy computes sin, cos, arcsin, exp and log with code it picks by the CPU (AVX-512 machines take
other SIMD code than AVX2 ones), and the answers differ in the last bit: the full sandbox built on an
AVX-512 machine used to differ from the one built elsewhere (another content hash, so every recorded
hash of tests/support/data/plan_outputs/full.json failed there). The build computes these functions with
Python's `math` instead (`tools/sandbox/common.py`); the slow test of tests/evaluation/test_plan_outputs.py
compares the full sandbox's content hash with the recorded one on whatever machine runs it.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from utp_env.tools.sandbox import common

ROOT = Path(__file__).resolve().parents[2]
# numpy functions whose float64 answers depend on the CPU's SIMD (the exact ones, sqrt, radians,
# degrees, arithmetic, are not here)
CPU_DEPENDENT = re.compile(r"\bnp\.(sin|cos|tan|arcsin|arccos|arctan2?|sinh|cosh|tanh|exp|exp2|expm1|log|log2|log10|"
                           r"log1p|power|hypot|cbrt)\(")
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
                       "log (Python's math) instead:\n" + "\n".join(found))


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
