"""Packaging: pyproject's explicit package list matches the folders, the configs are package data,
and the installed distribution provides one top-level import name, `utp_env`.

The wheel itself (built, installed beside openai-agents, run from another directory) is checked by
.ci/wheel-check.
"""

from __future__ import annotations

import fnmatch
import importlib.metadata
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def package_folders() -> dict[str, Path]:
    """Every folder with an __init__.py under each package-dir root, by its installed dotted name."""
    found: dict[str, Path] = {}
    for name, folder in SETUPTOOLS["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            rel = init.parent.relative_to(base)
            found[".".join([name, *rel.parts])] = init.parent
    return found


def test_package_dir_maps_the_repository_folders_under_one_namespace() -> None:
    assert SETUPTOOLS["package-dir"] == {"utp_env": "utp_env", "utp_env.tools": "tools", "utp_env.agents": "agents",
                                         "utp_env.configs": "configs"}
    assert all(name == "utp_env" or name.startswith("utp_env.") for name in SETUPTOOLS["packages"])


def test_explicit_package_list_names_every_package_folder() -> None:
    listed, found = set(SETUPTOOLS["packages"]), package_folders()
    missing = sorted(set(found) - listed)
    assert not missing, f"folders with an __init__.py not in [tool.setuptools] packages: {missing}"
    extra = sorted(listed - set(found))
    assert not extra, f"[tool.setuptools] packages lists names without a folder: {extra}"
    assert len(SETUPTOOLS["packages"]) == len(listed), "a package is listed twice"


def test_every_config_yaml_is_package_data() -> None:
    patterns = SETUPTOOLS["package-data"]["utp_env.configs"]
    yamls = [p.relative_to(ROOT / "configs").as_posix() for p in (ROOT / "configs").rglob("*.yaml")]
    assert yamls
    uncovered = [y for y in yamls if not any(fnmatch.fnmatch(y, pattern) for pattern in patterns)]
    assert not uncovered, f"configs not matched by package-data {patterns}: {uncovered}"
    for folder in {Path(y).parent for y in yamls if Path(y).parent != Path(".")}:
        assert not (ROOT / "configs" / folder / "__init__.py").exists() or f"utp_env.configs.{folder}" in \
            SETUPTOOLS["packages"]


def installed() -> importlib.metadata.Distribution:
    """The installed utp-env (with a RECORD), not the egg-info an editable install leaves in the
    repository, which `python -m pytest` would find first on sys.path."""
    found = [d for d in importlib.metadata.distributions(name="utp-env") if d.read_text("RECORD") is not None]
    assert found, "utp-env is not installed: pip install -e '.[dev]'"
    return found[0]


def test_the_installed_distribution_has_one_top_level_name() -> None:
    dist = installed()
    top_level = dist.read_text("top_level.txt")
    if top_level is not None:
        assert top_level.split() == ["utp_env"]
    owners = importlib.metadata.packages_distributions()
    for name in ("tools", "agents", "configs"):
        assert "utp-env" not in owners.get(name, []), f"utp-env provides a top-level {name!r}"
    recorded = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
    assert not recorded & {"tools", "agents", "configs"}, sorted(recorded)
    assert owners.get("utp_env") and set(owners["utp_env"]) == {"utp-env"}
    planners = [ep for ep in importlib.metadata.entry_points(group="utp_env.gold_planners") if ep.name == "reference"]
    assert planners and planners[0].value.startswith("utp_env.agents.")


def test_an_editable_install_maps_only_names_under_utp_env() -> None:
    dist = installed()
    finders = [f for f in dist.files or [] if f.name.startswith("__editable__") and f.name.endswith("_finder.py")]
    if not finders:
        pytest.skip("not an editable install (the wheel is checked by .ci/wheel-check)")
    namespace: dict[str, object] = {}
    source = Path(str(finders[0].locate())).read_text(encoding="utf-8")
    mapping_line = next(line for line in source.splitlines() if line.startswith("MAPPING"))
    exec(mapping_line.replace("MAPPING: dict[str, str]", "MAPPING"), namespace)  # a dict literal of paths
    mapping = namespace["MAPPING"]
    assert isinstance(mapping, dict)
    assert all(name == "utp_env" or name.startswith("utp_env.") for name in mapping), sorted(mapping)


def test_no_top_level_tools_or_agents_from_this_project(tmp_path: Path) -> None:
    """From a directory outside the repository, `tools` and `agents` are not importable from
    this project (another distribution, e.g. the OpenAI Agents SDK, may provide `agents`)."""
    code = ("import importlib.util, json\n"
            "specs = {n: importlib.util.find_spec(n) for n in ('tools', 'agents', 'configs')}\n"
            "print(json.dumps({n: s.origin if s else None for n, s in specs.items()}))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=True, timeout=120)
    for name, origin in json.loads(done.stdout).items():
        # (another distribution's package, e.g. in a venv that lives inside the checkout, is fine)
        assert origin is None or not Path(origin).resolve().is_relative_to(ROOT / name), (name, origin)
