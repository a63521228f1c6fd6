"""The resolved configuration of a benchmark run (`utp-env run`), saved in the run folder.

`env` says what an episode is: `plan` (UTP-v0: the agent plans, the plan is scored) or `replan`
(UTP-Replan-v0: the plan is then lived through one sampled reality and the agent may repair it;
`utp_env/runs/replan_episode.py`, docs/REPLAN.md)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from utp_env.query import HORIZONS, Horizon

MAX_TRIALS = 1000
"""Upper bound on `trials` (episodes per query, for pass^k): pass^k is read for small k, and the run
holds every record in memory for its summary."""
MAX_WORKERS = 1024
"""Upper bound on `workers` (local processes are further capped per machine: runner.worker_count)."""
MAX_ROLLOUTS = 100_000_000
"""Upper bound on `rollouts` per plan: `utp_env.simulation.MAX_ROLLOUTS` (a test keeps them equal;
not imported, so that reading a run config does not import numpy)."""
BOUNDS: dict[str, tuple[int, int]] = {"trials": (1, MAX_TRIALS), "workers": (1, MAX_WORKERS),
                                      "rollouts": (0, MAX_ROLLOUTS)}
"""(lowest, highest) of each run option that sizes work or memory; `check_bounds` and the fields use them."""

EnvKind = Literal["plan", "replan"]
ENV_KINDS: tuple[EnvKind, ...] = ("plan", "replan")


class RunConfig(BaseModel):
    """Everything that determines a run's results (timings aside)."""

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(default="reference", description="Agent name, config file, or module:Class path")
    env: EnvKind = Field(default="plan", description="plan: UTP-v0 (score the plan); replan: UTP-Replan-v0 "
                                                     "(live the trip through one sampled reality, with repairs)")
    agent_settings: dict[str, Any] = Field(default_factory=dict, description="Overrides of the agent's settings")
    replan: dict[str, Any] = Field(default_factory=dict,
                                   description="With env replan: overrides of the closed loop's ReplanConfig "
                                               "(configs/replan.yaml: disruptions, slacks, max_disruptions, "
                                               "reward weights; `--replan-set key=value`)")
    profile: Literal["full", "mini"] = Field(default="full", description="Embedded sandbox profile")
    db: str | None = Field(default=None, description="Database directory (overrides profile)")
    world: int = Field(default=0, ge=0, description="Seed of the embedded sandbox: another seed is another world "
                                                    "(docs/RL.md 'Worlds'); not with db")
    split: Literal["validation", "test", "all"] = "validation"
    horizons: list[Horizon] = Field(default_factory=lambda: list(HORIZONS), description="Trip lengths (days) to run")
    limit: int | None = Field(default=None, ge=1, description="At most this many queries")
    trials: int = Field(default=1, ge=1, le=MAX_TRIALS, description="Trials per query (pass^k), at most 1,000")
    seed: int = 0
    workers: int = Field(default=1, ge=1, le=MAX_WORKERS,
                         description="Worker processes (local) or Ray CPUs, at most 1,024; local processes are "
                                     "also at most the episodes and max(8, 4 x CPUs)")
    backend: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    rollouts: int = Field(default=1000, ge=0, le=MAX_ROLLOUTS,
                          description="Monte Carlo rollouts per plan (at most 100,000,000); 0 disables")
    out: str | None = Field(default=None, description="Run folder; default runs/<agent>[-replan]-<profile>-<split>"
                                                      "-seed<seed>[-limit<N>][-<hash>] (`default_run_name`)")

    @field_validator("replan")
    @classmethod
    def _valid_replan(cls, given: dict[str, Any]) -> dict[str, Any]:
        """The overrides must make a valid `ReplanConfig` (errors name `replan`, not configs/replan.yaml)."""
        if given:
            from utp_env.env.config import load_replan_config

            load_replan_config(given, source="replan")
        return given

    @model_validator(mode="after")
    def _world_or_db(self) -> RunConfig:
        if self.world and self.db is not None:
            raise ValueError(f"world {self.world} names an embedded sandbox, and db {self.db!r} was given too; pass "
                             "one of them (a world's directory is `utp-env data build --profile P --seed WORLD`)")
        return self

    @model_validator(mode="after")
    def _replan_needs_replan_env(self) -> RunConfig:
        if self.replan and self.env != "replan":
            raise ValueError(f"replan settings ({', '.join(sorted(self.replan))}) apply only to env replan; "
                             "add --env replan (or env: replan), or drop them")
        return self

    def run_dir(self) -> Path:
        """`out`, else `runs/` + `default_run_name()`."""
        if self.out:
            return Path(self.out)
        return Path("runs") / self.default_run_name()

    def default_run_name(self) -> str:
        """A folder name that tells runs apart: agent, database (profile or `--db` folder name),
        split, seed and limit, then a short stable hash of the rest of the identity (settings,
        horizons, trials, rollouts, the `--db` path) when any of it differs from the defaults."""
        agent = Path(self.agent).stem if self.agent.endswith((".yaml", ".yml")) else self.agent.split(":")[-1]
        where = (self.profile + (f"-world{self.world}" if self.world else "") if self.db is None
                 else f"db-{Path(self.db).name or 'root'}")
        name = f"{agent}{'-replan' if self.env == 'replan' else ''}-{where}-{self.split}-seed{self.seed}"
        if self.limit is not None:
            name += f"-limit{self.limit}"
        rest = {k: v for k, v in self.identity().items()
                if k not in ("agent", "env", "profile", "world", "split", "seed", "limit")}
        defaults = {k: v for k, v in RunConfig().identity().items() if k in rest}
        if rest != defaults:
            digest = hashlib.sha256(json.dumps(rest, sort_keys=True, default=str).encode()).hexdigest()
            name += f"-{digest[:8]}"
        return name

    def identity(self) -> dict[str, Any]:
        """The fields a resumed run must share with the original (not workers/backend/out). `env` is
        left out when it is `plan`, `replan` when empty and `world` when 0, so run folders made before
        they existed resume as before."""
        exclude = ({"workers", "backend", "ray_address", "out"} | ({"env"} if self.env == "plan" else set())
                   | (set() if self.replan else {"replan"}) | (set() if self.world else {"world"}))
        return self.model_dump(exclude=exclude)


def check_bounds(values: dict[str, Any], flags: bool = True) -> None:
    """A ValueError in one line naming the option and its bound when a value of `BOUNDS` is outside
    it (`--trials 1,000,000,000: must be between 1 and 1,000 ...`); `flags` names them as command-line
    flags. A `--config` file's values are checked by the fields, whose errors name the file."""
    for key, (low, high) in BOUNDS.items():
        value = values.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and not low <= value <= high:
            name = f"--{key}" if flags else key
            raise ValueError(f"{name} {value:,}: must be between {low:,} and {high:,} (RunConfig.{key}, "
                             "docs/RUNS.md); choose a value in that range")


def identity_differences(here: dict[str, Any], there: dict[str, Any]) -> list[str]:
    """The fields where two `identity()` dicts differ, as 'field: <here> here, <there> in the folder'
    (a field missing from one side has its default: `identity` leaves out default `env`/`replan`)."""
    defaults = RunConfig().model_dump()
    out = []
    for key in sorted(set(here) | set(there)):
        a, b = here.get(key, defaults.get(key)), there.get(key, defaults.get(key))
        if a != b:
            out.append(f"{key}: {_short(a)} here, {_short(b)} in the folder")
    return out


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_overrides(pairs: list[str], flag: str = "--set") -> dict[str, Any]:
    """`key=value` strings (of the option `flag`) into a dict; values parsed as YAML scalars
    (numbers, booleans, lists)."""
    from utp_env.tools.yamlfile import load_yaml_text

    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag} expects key=value, got {pair!r}")
        out[key.strip()] = load_yaml_text(value, f"{flag} {key.strip()}", lines=False)
    return out


def env_identity(config: RunConfig) -> dict[str, str]:
    """What scores a run's episodes besides its own options, as short SHA-256 hashes of the parameters
    in force: the env's (`configs/env.yaml`: reward weights, limits), the evaluation's
    (`configs/uncertainty.yaml`) and, for a closed-loop run, the closed loop's (`configs/replan.yaml`
    with the run's overrides). `utp-env run` records it in config.json as `env_config`; `utp-env
    compare` refuses two runs whose hashes differ, naming which."""
    from utp_env.config import load_uncertainty
    from utp_env.env.config import load_env_config

    def digest(model: Any) -> str:
        text = json.dumps(model.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    out = {"env": digest(load_env_config()), "uncertainty": digest(load_uncertainty())}
    if config.env == "replan":
        from utp_env.env.config import load_replan_config

        out["replan"] = digest(load_replan_config(config.replan or None))
    return out
