"""The shipped configuration files, installed as the resource package `utp_env.configs`.

`CONFIG_DIR` is the one definition of where they live, for every layer: `env.yaml`,
`uncertainty.yaml`, `queries.yaml`, `agents/*.yaml` and `sandbox/*.yaml`. Each file equals the
code defaults of its pydantic model (tests/package/test_config.py, tests/data/test_sandbox.py check this).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

CONFIG_DIR: Path = Path(str(files(__name__)))

__all__ = ["CONFIG_DIR"]
