"""Every ```bash and ```python snippet of README.md and docs/*.md runs as written, on the mini sandbox.

Each document's snippets run in order in a folder of their own (so a file or run folder an earlier
snippet makes is there for a later one), with a cache in which the embedded `full` and `mini`
sandboxes are both the tests' mini sandbox: `utp-env run` with its defaults runs as a user would
type it, on small data. Two kinds of line are not run, by rule: `pip install ...` (the test runs in
the installed package; a `pip install X && rest` line runs `rest`) and `python -m pytest ...` (the
suite itself). A snippet that cannot run here is marked in the document, on the line before its
fence, with `<!-- snippet: not run (REASON) -->` (a key, a model server, a GPU, minutes of training,
or a fragment that is not a program); `<!-- snippet: file PATH -->` saves the snippet as PATH instead
of running it (a module a later snippet imports). A marker without a reason fails the test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(bash|python)\n(.*?)^```", re.S | re.M)
MARKER = re.compile(r"<!-- snippet: (not run|file) ?(.*?) -->\s*$")
TIMEOUT = 900


@dataclass
class Snippet:
    doc: Path
    line: int
    lang: str
    code: str
    skip: str | None = None  # why it is not run
    save_as: str | None = None

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def snippets(doc: Path) -> list[Snippet]:
    text = doc.read_text(encoding="utf-8")
    out = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        snippet = Snippet(doc, line, match.group(1), match.group(2))
        marker = MARKER.search(before)
        if marker is not None:
            reason = marker.group(2).strip().strip("()").strip()
            if marker.group(1) == "file":
                snippet.save_as = reason
            else:
                snippet.skip = reason
        out.append(snippet)
    return out


def test_every_marker_says_why() -> None:
    for doc in DOCS:
        for snippet in snippets(doc):
            if snippet.skip is not None:
                assert len(snippet.skip) >= 10, f"{snippet.where}: a not-run snippet must say why"
            if snippet.save_as is not None:
                assert snippet.save_as and not snippet.save_as.startswith("/"), snippet.where
    assert sum(1 for doc in DOCS for s in snippets(doc) if s.skip is None) >= 15  # most snippets run


def runnable_bash(code: str) -> str:
    """The snippet without the lines the rules of the module docstring leave out."""
    lines = []
    for raw in code.splitlines():
        line = raw.strip()
        if line.startswith("pip install "):
            rest = line.split("&&", 1)[1].strip() if "&&" in line else ""
            if not rest or rest.startswith("python -m pytest"):
                continue
            raw = rest
        elif line.startswith("python -m pytest"):
            continue
        lines.append(raw)
    return "\n".join(lines)


@pytest.fixture(scope="module")
def cache(mini_db_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache whose embedded full and mini sandboxes are a copy of the tests' mini sandbox."""
    from utp_env.tools.sandbox.location import sandbox_path

    root = tmp_path_factory.mktemp("snippet-cache")
    old = os.environ.get("UTP_ENV_CACHE")
    os.environ["UTP_ENV_CACHE"] = str(root)
    try:
        mini, full = sandbox_path("mini"), sandbox_path("full")
    finally:
        if old is None:
            del os.environ["UTP_ENV_CACHE"]
        else:
            os.environ["UTP_ENV_CACHE"] = old
    shutil.copytree(mini_db_path, mini)
    full.symlink_to(mini, target_is_directory=True)
    return root


@pytest.mark.slow
@pytest.mark.parametrize("doc", DOCS, ids=lambda d: d.name)
def test_the_snippets_of_a_document_run(doc: Path, cache: Path, tmp_path: Path) -> None:
    env = {**os.environ, "UTP_ENV_CACHE": str(cache), "MPLBACKEND": "Agg", "PYTHONPATH": str(tmp_path)}
    bin_dir = str(Path(sys.executable).parent)  # utp-env, inspect, vf-eval of this environment first
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    ran = 0
    for snippet in snippets(doc):
        if snippet.skip is not None:
            continue
        if snippet.save_as is not None:
            target = tmp_path / snippet.save_as
            target.parent.mkdir(parents=True, exist_ok=True)
            (target.parent / "__init__.py").touch()
            target.write_text(snippet.code)
            continue
        if snippet.lang == "bash":
            code = runnable_bash(snippet.code)
            if not code.strip():
                continue
            argv = ["bash", "-euo", "pipefail", "-c", code]
        else:
            script = tmp_path / f"snippet_{snippet.line}.py"
            script.write_text(snippet.code)
            argv = [sys.executable, str(script)]
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        assert done.returncode == 0, (f"{snippet.where} failed (exit {done.returncode}):\n{snippet.code}\n--- stdout\n"
                                      f"{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}")
        ran += 1
    if doc.name in ("README.md", "RUNS.md", "SERVE.md", "AGENTS.md"):
        assert ran >= 1, f"{doc.name}: no snippet ran"
