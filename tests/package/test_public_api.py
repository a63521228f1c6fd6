"""The public API: `import utp_env` gives the names a user starts with, each resolved on first use.

Every name of `utp_env.__all__` resolves to the object its defining module holds (so the package
hands out the one definition, never a copy), `dir(utp_env)` lists them, an unknown name is a clear
AttributeError, and the import itself loads none of the modules the names live in (how long it takes
is measured by benchmarks/import_time.py, never asserted here).
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import gymnasium as gym
import pytest

import utp_env

STARTING_NAMES = {"UTPEnv", "UTPReplanEnv", "EnvConfig", "ReplanConfig", "Plan", "Query", "parse_plan",
                  "open_dataset", "evaluate", "simulate", "ENV_ID", "REPLAN_ENV_ID"}


def test_all_holds_the_names_a_user_starts_with() -> None:
    assert set(utp_env.__all__) >= STARTING_NAMES
    assert len(set(utp_env.__all__)) == len(utp_env.__all__)
    assert set(utp_env.__all__) <= set(dir(utp_env))


@pytest.mark.parametrize("name", sorted(utp_env.__all__))
def test_every_public_name_resolves_to_its_definition(name: str) -> None:
    value = getattr(utp_env, name)
    home = getattr(value, "__module__", None)
    if home is None:  # a constant: the env ids
        assert value in gym.registry
        return
    assert getattr(importlib.import_module(home), name) is value, f"utp_env.{name} is not {home}.{name}"
    assert not name.startswith("_") and value.__name__ == name


def test_the_env_classes_are_the_registered_entry_points() -> None:
    assert gym.spec(utp_env.ENV_ID).entry_point == f"{utp_env.UTPEnv.__module__}:UTPEnv"
    assert gym.spec(utp_env.REPLAN_ENV_ID).entry_point == f"{utp_env.UTPReplanEnv.__module__}:UTPReplanEnv"
    assert issubclass(utp_env.UTPReplanEnv, utp_env.UTPEnv)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'UTPEnvv'"):
        _ = utp_env.UTPEnvv  # type: ignore[attr-defined]
    from_import = "from utp_env import NotAName"
    done = subprocess.run([sys.executable, "-c", from_import], capture_output=True, text=True)
    assert done.returncode == 1 and "cannot import name 'NotAName'" in done.stderr


def test_the_import_loads_none_of_the_public_names_modules() -> None:
    """`import utp_env` stays light: the env core, the evaluator, the simulator and the database are
    imported only when their name is read, and then `from utp_env import X` works."""
    heavy = sorted({m for m in utp_env._LAZY.values()} | {"utp_env.env.core", "utp_env.tools.database"})
    code = ("import sys, utp_env\n"
            f"loaded = [m for m in {heavy!r} if m in sys.modules]\n"
            "assert not loaded, loaded\n"
            "from utp_env import UTPEnv, Plan, evaluate\n"
            "assert 'utp_env.env.core' in sys.modules and UTPEnv.__name__ == 'UTPEnv'\n")
    subprocess.run([sys.executable, "-c", code], check=True)
