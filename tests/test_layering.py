"""Imports point one way: tools <- utp_env <- agents; utp_env loads agents only lazily."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module level?) for every import statement of a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, id(node) in top))
    return out


def _files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("path", _files("tools"), ids=lambda p: str(p.relative_to(ROOT)))
def test_tools_imports_nothing_above_it(path: Path) -> None:
    bad = [m for m, _ in _imports(path) if m.split(".")[0] in ("utp_env", "agents")]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


@pytest.mark.parametrize("path", _files("utp_env"), ids=lambda p: str(p.relative_to(ROOT)))
def test_utp_env_never_imports_agents_at_module_level(path: Path) -> None:
    bad = [m for m, top in _imports(path) if top and m.split(".")[0] == "agents"]
    assert not bad, f"{path.relative_to(ROOT)} imports {bad} at module level"
