"""The core install (`pip install -e .`, the README's first command) works without any extra: the
command line builds every subcommand's flags and `utp-env run` parses its arguments with none of the
optional packages importable. A subprocess hides them with a meta-path finder that refuses them, the
way a fresh venv without the extras would."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

OPTIONAL_PACKAGES = (
    # serve
    "openenv", "mcp", "uvicorn", "starlette", "fastapi", "agents", "inspect_ai", "langchain_mcp_adapters",
    # rl, persona
    "torch", "trl", "datasets", "accelerate", "transformers", "tokenizers",
    # llm, ray, verifiers, dev
    "langchain", "langchain_openai", "ray", "verifiers", "pandas", "hypothesis", "jsonschema",
)
"""Top-level modules of the optional extras (pyproject.toml); none may be needed by the core CLI."""

HIDE = textwrap.dedent(f"""
    import importlib.abc, sys
    HIDDEN = {OPTIONAL_PACKAGES!r}
    class Hide(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in HIDDEN:
                raise ModuleNotFoundError(f"No module named {{name!r}} (hidden: not in the core install)")
            return None
    sys.meta_path.insert(0, Hide())
    for name in list(sys.modules):
        if name.split(".")[0] in HIDDEN:
            del sys.modules[name]
""")


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", HIDE + textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("command", ["--help", "run --help", "serve --help", "data --help", "show --help",
                                     "evaluate --help", "simulate --help", "submit --help", "compare --help",
                                     "report --help"])
def test_every_subcommand_builds_its_flags_without_the_extras(command: str) -> None:
    done = _run(f"""
        from utp_env.cli import main
        try:
            main({command.split()!r})
        except SystemExit as stop:
            assert stop.code in (0, None), stop.code
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage: utp-env" in done.stdout


def test_the_hiding_is_real() -> None:
    """The finder does refuse an extra's module (else the test above could not fail)."""
    done = _run("import starlette")
    assert done.returncode != 0 and "hidden: not in the core install" in done.stderr


def test_import_utp_env_and_make_the_env_class_without_the_extras() -> None:
    done = _run("""
        import gymnasium as gym
        import utp_env
        from utp_env.env.core import UTPEnv
        assert "utp_env/UTP-v0" in gym.registry
        print(UTPEnv.__name__)
    """)
    assert done.returncode == 0, done.stderr[-2000:]
