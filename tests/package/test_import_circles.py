"""No import circle between the modules of utp_env, tools/ and agents/.

Read statically from every file: import statements (relative ones resolved, function-level and
`if TYPE_CHECKING:` ones included, since a circle through either still ties two modules together)
and strings that name a module (`import_module` paths, `module:attr` specs), as
tests/package/test_layering.py reads them. `from package import name` counts as an import of the submodule
`package.name` when there is one, else of the package. A circle is a strongly connected group of
two or more modules; the test names each group and one import line per edge inside it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
from test_layering import MODULE_PATH

ROOT = Path(__file__).resolve().parents[2]
# The repository's folders and the import names they install as (pyproject.toml's package-dir).
FOLDERS = {"utp_env": "utp_env", "tools": "utp_env.tools", "agents": "utp_env.agents"}


def module_name(path: Path, root: Path) -> str:
    """The import name of a source file of one of FOLDERS."""
    rel = path.relative_to(root).with_suffix("")
    parts = [FOLDERS[rel.parts[0]], *rel.parts[1:]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path) -> dict[str, Path]:
    return {module_name(path, root): path for folder in FOLDERS for path in sorted((root / folder).rglob("*.py"))}


def imported(name: str, path: Path, known: dict[str, Path]) -> dict[str, int]:
    """{module of `known` that `path` (module `name`) imports: the line of its first import}."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source
                       for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and MODULE_PATH.match(node.value):
            targets = [node.value.split(":")[0]]
        for target in targets:
            if target in known and target != name:
                found.setdefault(target, node.lineno)
    return found


def import_graph(root: Path = ROOT) -> nx.DiGraph:
    known = modules(root)
    graph = nx.DiGraph()
    for name, path in known.items():
        graph.add_node(name)
        for target, line in imported(name, path, known).items():
            graph.add_edge(name, target, where=f"{path.relative_to(root)}:{line}")
    return graph


def test_the_graph_sees_the_imports_it_must() -> None:
    """The reader is not blind: known imports of each kind are edges (plain, relative-free `from`,
    function-level, a submodule named in `from package import submodule`)."""
    graph = import_graph()
    assert graph.has_edge("utp_env.runs.store", "utp_env.runs.records")
    assert graph.has_edge("utp_env.env.core", "utp_env.env.lc_tools")  # a function-level import
    assert graph.has_edge("utp_env.evaluation.evaluate", "utp_env.evaluation.tripcraft")  # from pkg import mod
    assert graph.has_edge("utp_env.agents.reference.planner", "utp_env.itinerary")


def circles_of(graph: nx.DiGraph) -> list[str]:
    """One line per import circle of `graph`: its modules and the import lines that tie them."""
    circles = [sorted(group) for group in nx.strongly_connected_components(graph) if len(group) > 1]
    lines = []
    for group in sorted(circles):
        edges = [graph.edges[a, b]["where"] + f" ({a} -> {b})" for a in group for b in group if graph.has_edge(a, b)]
        lines.append(" <-> ".join(group) + ": " + "; ".join(edges))
    return lines


def test_a_circle_is_found(tmp_path: Path) -> None:
    """Each way of importing closes a circle the test sees: a TYPE_CHECKING import, a relative one,
    a function-level one, a `from package import submodule` and a module-path string."""
    (tmp_path / "utp_env" / "env").mkdir(parents=True)
    (tmp_path / "utp_env" / "env" / "__init__.py").write_text("")
    (tmp_path / "utp_env" / "env" / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from utp_env.env.b import B\n")
    (tmp_path / "utp_env" / "env" / "b.py").write_text("def f():\n    from .a import A\n")
    (tmp_path / "utp_env" / "env" / "c.py").write_text("from utp_env.env import d\n")
    (tmp_path / "utp_env" / "env" / "d.py").write_text("SPEC = 'utp_env.env.c:Thing'\n")
    (tmp_path / "utp_env" / "env" / "e.py").write_text("import utp_env.env.a\n")
    found = circles_of(import_graph(tmp_path))
    assert [line.split(":")[0] for line in found] == ["utp_env.env.a <-> utp_env.env.b",
                                                      "utp_env.env.c <-> utp_env.env.d"], found


def test_no_import_circle() -> None:
    lines = circles_of(import_graph())
    assert not lines, "import circles:\n" + "\n".join(lines)
