"""Imports point one way: utp_env.tools <- core utp_env <- utp_env.agents.

Only the composition points (the CLI, the run worker, the demonstration builder) reach
`utp_env.agents`; the dataset build finds its gold planner through an entry point. Checked on
import statements *and* on any string that names a module (import_module paths, `module:Class`
specs), and at run time.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Modules that compose the layers and so may import utp_env.agents.
COMPOSITION_POINTS = ("utp_env/cli/", "utp_env/runs/episode.py", "utp_env/rl/demos.py")
# The openai-agents SDK installs its package as top-level `agents`: its adapter names it, and checks at run
# time that it got the SDK and not this repository's agents/ folder (utp_env/env/openai_agents.py, `sdk()`).
SDK_ADAPTER = "utp_env/env/openai_agents.py"
# A string that is a whole module path or `module:attr` spec, as import_module and loaders take.
MODULE_PATH = re.compile(r"^(utp_env|tools|agents|configs)(\.[A-Za-z_]\w*)+(:\w+)?$")


def _imports(path: Path) -> list[str]:
    """Every module a file names: import statements and string constants that look like module paths."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            out.append("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE_PATH.match(node.value):
            out.append(node.value.split(":")[0])
    return out


def _files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("path", _files("tools"), ids=_rel)
def test_tools_imports_nothing_above_it(path: Path) -> None:
    allowed = ("utp_env.tools", "utp_env.configs")
    bad = [m for m in _imports(path)
           if (m.startswith("utp_env") and not m.startswith(allowed)) or m.split(".")[0] in ("tools", "agents")
           or m.startswith(".")]
    assert not bad, f"{_rel(path)} names {bad}: the tools layer may use only utp_env.tools and utp_env.configs"


@pytest.mark.parametrize("path", [p for p in _files("utp_env") if not _rel(p).startswith(COMPOSITION_POINTS)],
                         ids=_rel)
def test_core_never_reaches_agents(path: Path) -> None:
    sdk = _rel(path) == SDK_ADAPTER
    top = ("tools", "agents")
    bad = [m for m in _imports(path)
           if m.startswith("utp_env.agents") or (m.split(".")[0] in top and not (sdk and m == "agents"))]
    assert not bad, f"{_rel(path)} names {bad}: only {COMPOSITION_POINTS} may reach utp_env.agents"


@pytest.mark.parametrize("path", _files("agents") + _files("utp_env") + _files("tools"), ids=_rel)
def test_no_top_level_tools_or_agents_package_is_named(path: Path) -> None:
    bad = [m for m in _imports(path) if m.split(".")[0] in ("tools", "agents", "configs")
           and not (_rel(path) == SDK_ADAPTER and m == "agents")]
    assert not bad, f"{_rel(path)} names {bad}: write utp_env.tools / utp_env.agents / utp_env.configs"


def test_an_env_episode_loads_no_agent(mini_db_path: Path) -> None:
    """At run time too: making the env, stepping and submitting never imports utp_env.agents."""
    code = (
        "import sys, gymnasium as gym, utp_env\n"
        f"env = gym.make('utp_env/UTP-v0', db_path={str(mini_db_path)!r})\n"
        "env.reset(seed=0)\n"
        "env.step({'tool': 'submit', 'args': {}})\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('utp_env.agents'))\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=300)


def test_the_env_core_imports_no_adapter() -> None:
    """No adapters <-> core <-> replan circle; the core reaches LangChain tools through lc_tools.py,
    which imports nothing of core, adapters or replan at run time."""
    for rel, banned in (("utp_env/env/core.py", ("utp_env.env.adapters", "utp_env.env.replan")),
                        ("utp_env/env/lc_tools.py", ("utp_env.env.adapters", "utp_env.env.replan")),
                        ("utp_env/env/replan.py", ("utp_env.env.adapters",))):
        named = [m for m in _runtime_imports(ROOT / rel) if m.startswith(banned)]
        assert not named, f"{rel} imports {named}"


def _runtime_imports(path: Path) -> list[str]:
    """The modules a file imports outside `if TYPE_CHECKING:` blocks (function-level imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
               and getattr(node.test, "id", None) == "TYPE_CHECKING" for n in ast.walk(node)}
    return [node.module for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and id(node) not in skipped] + \
           [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) and id(node) not in skipped
            for alias in node.names]


def test_the_episode_workers_form_no_import_circle() -> None:
    """utp_env/runs/episode.py dispatches to replan_episode.py; the closed loop's worker takes
    the helpers both need from utp_env/runs/outcome.py, never from episode.py."""
    for rel, banned in (("utp_env/runs/replan_episode.py", ("utp_env.runs.episode",)),
                        ("utp_env/runs/outcome.py", ("utp_env.runs.episode", "utp_env.runs.replan_episode"))):
        named = [m for m in _runtime_imports(ROOT / rel) if m.startswith(banned)]
        assert not named, f"{rel} imports {named}"
