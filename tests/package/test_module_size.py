"""House rule: no module of the package is above 500 non-blank lines.

A module that grows past it holds more than one concept; split it into modules by concept (shared
helpers in one of them), update every importer and leave no re-export shim. The count is
`grep -cv '^\\s*$' FILE`'s: lines with anything but whitespace, comments and docstrings included. The
modules are every `.py` file under the folders pyproject.toml installs as the package (package-dir:
`utp_env/`, `tools/`, `agents/`, `configs/`).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_NON_BLANK = 500
BLANK = re.compile(r"[ \t\n\r\f\v]*")  # grep's ^\s*$


def non_blank_lines(path: Path) -> int:
    """The lines of `path` holding anything but whitespace (`grep -cv '^\\s*$'`)."""
    return sum(1 for line in path.read_text(encoding="utf-8").split("\n") if not BLANK.fullmatch(line))


def package_roots() -> list[Path]:
    """The repository folders installed as the package, from [tool.setuptools] package-dir."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    return sorted({ROOT / folder for folder in setuptools["package-dir"].values()})


def oversize(roots: list[Path], limit: int = MAX_NON_BLANK) -> list[str]:
    """One line per module under `roots` above `limit` non-blank lines: its path, its count and the fix."""
    out = []
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            count = non_blank_lines(path)
            if count > limit:
                out.append(f"{path.relative_to(root.parent).as_posix()}: {count} non-blank lines, above {limit}: "
                           "split it into modules by concept (shared helpers in one of them), update every "
                           "importer, no re-export shim")
    return out


def test_no_module_is_above_500_non_blank_lines() -> None:
    roots = package_roots()
    assert {r.name for r in roots} >= {"utp_env", "tools", "agents"}
    assert all(r.is_dir() for r in roots)
    too_long = oversize(roots)
    assert not too_long, "modules above the house limit:\n" + "\n".join(too_long)


def test_the_check_names_an_oversize_module(tmp_path: Path) -> None:
    """The check counts as grep does (blank and whitespace-only lines do not count) and names each
    module above the limit with its count; one at the limit passes."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "at_limit.py").write_text("x = 1\n\n   \t\n" * MAX_NON_BLANK, encoding="utf-8")
    (package / "sub" / "big.py").write_text("# a\n\n" * (MAX_NON_BLANK + 1), encoding="utf-8")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "cached.py").write_text("x = 1\n" * 1000, encoding="utf-8")
    assert non_blank_lines(package / "at_limit.py") == MAX_NON_BLANK
    found = oversize([package])
    assert len(found) == 1 and found[0].startswith(f"pkg/sub/big.py: {MAX_NON_BLANK + 1} non-blank lines")
    assert "split it into modules by concept" in found[0]
