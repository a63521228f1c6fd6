"""utp-env: a gymnasium environment and benchmark for uncertainty-aware travel planning in India.

`import utp_env` registers the gymnasium envs `utp_env/UTP-v0` (plan a trip) and
`utp_env/UTP-Replan-v0` (plan it, then live through it), without loading any data. The names a
user starts with are attributes of this package, each imported on first use so that the import
(done by every gym worker) costs little more than gymnasium's:

    import utp_env
    env = utp_env.UTPEnv(profile="mini")          # or gym.make(utp_env.ENV_ID, profile="mini")
    data = utp_env.open_dataset(profile="mini")   # the database, the queries, the reference plans
    plan = utp_env.parse_plan(text)               # the paper's JSON day format -> a Plan
    report = utp_env.evaluate(plan, query, data.db)

`load_environment` (verifiers 0.3) and `UTPTaskset`, `UTPHarness`, `UTPVerifiersEnv` (verifiers 0.4, in
`__all__` when verifiers is installed) are the `verifiers` environment (`vf-eval utp-env`,
utp_env/verifiers_env.py).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import TYPE_CHECKING, Any

from utp_env.env import ENV_ID, REPLAN_ENV_ID
from utp_env.env import register_envs as _register_envs

if TYPE_CHECKING:
    from utp_env.dataset import Dataset, open_dataset
    from utp_env.env.config import EnvConfig
    from utp_env.env.core import UTPEnv
    from utp_env.env.replan import ReplanConfig, UTPReplanEnv
    from utp_env.evaluation import EvaluationReport, evaluate
    from utp_env.itinerary import Plan
    from utp_env.plan_format import format_plan, parse_plan
    from utp_env.query import Query
    from utp_env.simulation import RobustnessReport, simulate
    from utp_env.tools.database import Database
    from utp_env.verifiers_env import load_environment

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "UTPEnv": "utp_env.env.core",
    "UTPReplanEnv": "utp_env.env.replan",
    "EnvConfig": "utp_env.env.config",
    "ReplanConfig": "utp_env.env.replan",
    "Plan": "utp_env.itinerary",
    "Query": "utp_env.query",
    "parse_plan": "utp_env.plan_format",
    "format_plan": "utp_env.plan_format",
    "Dataset": "utp_env.dataset",
    "open_dataset": "utp_env.dataset",
    "Database": "utp_env.tools.database",
    "evaluate": "utp_env.evaluation",
    "EvaluationReport": "utp_env.evaluation",
    "simulate": "utp_env.simulation",
    "RobustnessReport": "utp_env.simulation",
    "load_environment": "utp_env.verifiers_env",  # verifiers 0.3 finds an environment by its `load_environment`
    # verifiers 0.4 finds a taskset, its harness and its env among the classes of the package's `__all__`
    "UTPTaskset": "utp_env.verifiers_env",
    "UTPHarness": "utp_env.verifiers_env",
    "UTPVerifiersEnv": "utp_env.verifiers_env",
}
"""Each public name and the module that defines it, imported when the name is first read."""

__all__ = ["ENV_ID", "REPLAN_ENV_ID", "Database", "Dataset", "EnvConfig", "EvaluationReport", "Plan", "Query",
           "ReplanConfig", "RobustnessReport", "UTPEnv", "UTPReplanEnv", "evaluate", "format_plan",
           "load_environment", "open_dataset", "parse_plan", "simulate"]


def _has_verifiers_v1() -> bool:
    """Whether verifiers with its `verifiers.v1` stack is installed, found without importing it."""
    try:
        spec = importlib.util.find_spec("verifiers")
    except ImportError:  # an import hook that refuses the name
        return False
    return spec is not None and any(os.path.isfile(os.path.join(folder, "v1", "__init__.py"))
                                    for folder in spec.submodule_search_locations or ())


if _has_verifiers_v1():  # the verifiers plugin classes, built from verifiers' own (utp_env/verifiers_env.py)
    __all__ += ["UTPHarness", "UTPTaskset", "UTPVerifiersEnv"]

_register_envs()


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'utp_env' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
