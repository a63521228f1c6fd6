"""The closed-loop env is UTP-v0 with its hooks filled in, not a second copy of its code paths.

`UTPReplanEnv` (utp_env/env/replan.py) may override only `UTPEnv`'s hooks (utp_env/env/core.py):
its constructor, what a submission does (`on_submit`), what a step's info says of the episode
(`episode_info`) and how the episode ends and is rewarded (`_finish`); the rest it sets as class
attributes (`EXTRA_TOOLS`, `RESET_OPTIONS`, `RESETS_FROM_PLAN`, `NO_STOCHASTIC`). A new override
is a sign that a hook is missing in `UTPEnv`.
"""

from __future__ import annotations

import inspect

from utp_env.env.core import UTPEnv
from utp_env.env.replan import UTPReplanEnv

HOOKS = {"__init__", "on_submit", "episode_info", "_finish"}


def overridden_methods(cls: type, base: type) -> set[str]:
    """The methods (functions, properties, static and class methods) `cls` defines that `base` has too."""
    return {name for name, value in vars(cls).items()
            if hasattr(base, name) and (inspect.isfunction(value) or isinstance(value, property | staticmethod
                                                                                 | classmethod))}


def test_the_replan_env_overrides_only_the_hooks() -> None:
    overrides = overridden_methods(UTPReplanEnv, UTPEnv)
    assert overrides <= HOOKS, f"UTPReplanEnv overrides {sorted(overrides - HOOKS)} beyond UTPEnv's hooks"
    assert len(overrides) <= 4


def test_the_count_sees_an_override() -> None:
    class Extra(UTPReplanEnv):
        def step(self, action: object) -> tuple:  # type: ignore[override]
            return super().step(action)

        @property
        def phase(self) -> str:  # type: ignore[override]
            return "planning"

    assert overridden_methods(Extra, UTPReplanEnv) == {"step", "phase"}
