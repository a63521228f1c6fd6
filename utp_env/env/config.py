"""What a `UTPEnv` is built from: its `EnvConfig` and its data sources.

- `EnvConfig`: every knob of the env, with defaults equal to `configs/env.yaml` (a test asserts
  the shipped YAML equals these defaults). Reward weights name terms of the reward's table
  (`PLAN_TERMS` of utp_env/env/reward/, where their defaults are); a partial `reward_weights`
  changes only the terms it names, and a weight of 0 drops a term from the reward.
- `ReplanConfig`: the knobs the closed loop (`UTPReplanEnv`, utp_env/env/replan.py) adds, with
  defaults equal to `configs/replan.yaml`.
- Data sources: the dataset (`utp_env.dataset`) of a database path or of the embedded sandbox
  profile, built on first use and opened once per process. Constructors receive only paths and
  profile names (picklable, so `AsyncVectorEnv` workers build their own env); each database
  keeps its dataset (`utp_env.dataset.dataset_of`): queries and reference plans.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from utp_env.config import CONFIG_DIR, load_model
from utp_env.dataset import dataset_of, open_dataset
from utp_env.env.levels import Level, level_of
from utp_env.env.reward import DEFAULT_REALISED_WEIGHTS, DEFAULT_REWARD_WEIGHTS, REALISED_TERM_NAMES
from utp_env.itinerary import Plan
from utp_env.queries.generate import TRAIN_SPLIT
from utp_env.query import Query, Split
from utp_env.tools.database import Database

ENV_CONFIG_PATH = CONFIG_DIR / "env.yaml"

def check_weight_values(weights: dict[str, float]) -> None:
    """A `reward_weights` value error unless every weight is a finite number >= 0."""
    bad = {k: w for k, w in weights.items() if not (math.isfinite(w) and w >= 0)}
    if bad:
        raise ValueError(f"reward_weights must be finite numbers >= 0; got {bad}")


def check_weight_terms(weights: dict[str, float], known: Collection[str]) -> None:
    """A `reward_weights` value error naming the terms of `weights` not in `known`."""
    unknown = set(weights) - set(known)
    if unknown:
        raise ValueError(f"reward_weights: unknown term(s) {sorted(unknown)}; known: {', '.join(known)}")


class EnvConfig(BaseModel):
    """Parameters of `UTPEnv`: limits, reward weights and which optional features run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    step_limit: int = Field(default=100, ge=1, description="Steps before the episode is truncated")
    max_action_bytes: int = Field(default=65_536, ge=256, description="Largest accepted action (UTF-8 bytes)")
    max_calls_per_action: int = Field(default=32, ge=1, description="Most tool calls in one action")
    max_observation_chars: int = Field(default=200_000, ge=1_000,
                                       description="Observations longer than this are cut (and say so)")
    reward_weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_REWARD_WEIGHTS),
                                             description="Reward term -> weight (>= 0); the terms not named "
                                                         "keep their default weight (utp_env/env/reward/)")
    check_plan: bool = Field(default=True, description="Expose the check_plan tool")
    stochastic: bool = Field(default=False, description="Draw one delay realisation at the end of each episode")
    robustness: bool = Field(default=False, description="Run Monte Carlo robustness on the final plan")
    robustness_rollouts: int = Field(default=1000, ge=1, description="Rollouts of the robustness report")
    split: Split = Field(default="validation", description="Query split sampled when reset names none")
    tools: list[str] | None = Field(default=None, description="Tools offered (None: all); others are unknown tools")
    compact: bool = Field(default=False, description="Short tool schemas and task text, for small models "
                          "(docs/RL.md \"Prompt length\")")
    level: int = Field(default=4, ge=1, le=4, description="Level of the task (utp_env/env/levels.py): 1 the first "
                       "leg, 2 one day's visits and meals, 3 a 3-day one-city trip, 4 the paper's task")
    shaping: bool = Field(default=False, description="Add potential-based shaping to every step's reward "
                          "(utp_env/env/potential.py): the episode's return stays the plan's reward")
    shaping_gamma: float = Field(default=1.0, ge=0.0, le=1.0, description="The learner's discount, gamma of "
                                 "the shaping term gamma*Phi(s') - Phi(s)")

    @field_validator("reward_weights", mode="before")
    @classmethod
    def _merge_weights(cls, given: Any) -> Any:
        """A partial `reward_weights` overrides only the terms it names (the others keep their default)."""
        return {**DEFAULT_REWARD_WEIGHTS, **given} if isinstance(given, dict) else given

    @model_validator(mode="after")
    def _weights(self) -> EnvConfig:
        check_weight_values(self.reward_weights)
        if self.tools is not None and not ({"submit", "submit_plan"} & set(self.tools)):
            raise ValueError(f"tools {self.tools} offer no way to end the episode: add submit or submit_plan")
        if self.level < 3 and self.tools is not None and "submit_plan" in self.tools:
            raise ValueError(f"tools: submit_plan replaces the whole plan, and level {self.level} asks a part of it "
                             "(what it gives is locked); offer submit instead")
        check_weight_terms(self.reward_weights, DEFAULT_REWARD_WEIGHTS)
        return self


def load_env_config(config: EnvConfig | dict[str, Any] | str | Path | None = None) -> EnvConfig:
    """An `EnvConfig` from an instance, a dict of overrides, a YAML path, or `configs/env.yaml`."""
    if isinstance(config, EnvConfig):
        return config
    if isinstance(config, dict):
        path = ENV_CONFIG_PATH if ENV_CONFIG_PATH.exists() else None
        return load_model(EnvConfig, path, overrides=config)
    if config is None:
        return load_model(EnvConfig, ENV_CONFIG_PATH if ENV_CONFIG_PATH.exists() else None)
    return load_model(EnvConfig, config)


# ---------------------------------------------------------------- the closed loop

REPLAN_CONFIG_PATH = CONFIG_DIR / "replan.yaml"
DisruptionKind = Literal["late_arrival", "missed_departure", "overrun", "cancellation"]

def _default_kinds() -> list[DisruptionKind]:
    """The kinds active by default: `realise.DEFAULT_KINDS` (no cancellation); imported here so that
    UTP-v0, which never reads it, does not load the realiser."""
    from utp_env.simulation.realise import DEFAULT_KINDS

    return list(DEFAULT_KINDS)  # type: ignore[arg-type]  # DisruptionKind spells DISRUPTION_KINDS (tested)


class ReplanConfig(BaseModel):
    """The knobs of the closed loop (configs/replan.yaml; a test checks the file equals these defaults)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    disruptions: list[DisruptionKind] = Field(
        default_factory=_default_kinds,
        description="Which departures from the plan pause the trip for a repair; 'cancellation' (a "
                    "flight in its delay model's disruption branch does not fly) is an assumption beyond "
                    "the paper's data, off by default")
    late_arrival_slack_min: float = Field(
        default=15.0, ge=0, description="A late leg pauses the trip when the next step would start more than "
                                        "this many minutes late (or is lost or missed)")
    overrun_slack_min: float = Field(
        default=15.0, ge=0, description="A visit that overruns pauses the trip when the next step would start "
                                        "more than this many minutes late (or is lost or missed)")
    max_disruptions: int = Field(default=3, ge=0, le=50, description="Most pauses per trip; then it plays out")
    punctuality_scale_min: float = Field(default=120.0, gt=0,
                                         description="Late minutes at commitments that make punctuality 0")
    reward_weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_REALISED_WEIGHTS),
                                             description="Realised term -> weight (>= 0); the terms not "
                                                         "named keep their default weight")

    @field_validator("reward_weights", mode="before")
    @classmethod
    def _merge_weights(cls, given: Any) -> Any:
        """A partial `reward_weights` overrides only the terms it names (the others keep their default)."""
        return {**DEFAULT_REALISED_WEIGHTS, **given} if isinstance(given, dict) else given

    @model_validator(mode="after")
    def _weights(self) -> ReplanConfig:
        check_weight_values(self.reward_weights)
        if not any(w > 0 for w in self.reward_weights.values()):
            raise ValueError(f"reward_weights: at least one of {', '.join(REALISED_TERM_NAMES)} needs a positive "
                             f"weight (else every trip scores 0); got {self.reward_weights}")
        check_weight_terms(self.reward_weights, REALISED_TERM_NAMES)
        if len(set(self.disruptions)) != len(self.disruptions):
            raise ValueError(f"disruptions: each kind once; got {self.disruptions}")
        return self

    @property
    def slack(self) -> dict[str, float]:
        return {"late_arrival": self.late_arrival_slack_min, "overrun": self.overrun_slack_min}


def load_replan_config(config: ReplanConfig | dict[str, Any] | str | Path | None = None,
                       source: str = "replan=") -> ReplanConfig:
    """A `ReplanConfig` from an instance, a dict of overrides, a YAML path, or configs/replan.yaml.

    An error in a dict of overrides names `source` (where the caller's dict came from: the `replan=`
    argument, a run config's `replan:`), not configs/replan.yaml, which holds only the defaults."""
    if isinstance(config, ReplanConfig):
        return config
    default = REPLAN_CONFIG_PATH if REPLAN_CONFIG_PATH.exists() else None
    if isinstance(config, dict):
        base = load_model(ReplanConfig, default)  # an error in the defaults names their file
        try:
            return ReplanConfig.model_validate({**base.model_dump(), **config})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            known = ", ".join(ReplanConfig.model_fields)
            raise ValueError(f"{source}: {where + ': ' if where else ''}{first['msg']} (keys of ReplanConfig: "
                             f"{known}; docs/REPLAN.md)") from None
    return load_model(ReplanConfig, default if config is None else config)


# ---------------------------------------------------------------- data sources


@functools.lru_cache(maxsize=8)
def _open(path: str | None, profile: str, world: int = 0) -> Database:
    # progress=True: only a first-use build says anything (one line each when stderr is not a terminal).
    return open_dataset(path, profile=profile, seed=world, progress=True).db


def open_database(db_path: str | Path | None = None, profile: str = "full", world: int = 0) -> Database:
    """The database at `db_path`, else the embedded sandbox of `profile` built from seed `world`
    (another world: same cities and statistics, other services, venues and names; cached per process)."""
    if isinstance(world, bool) or not isinstance(world, int) or world < 0:
        raise ValueError(f"world must be a non-negative int (the sandbox seed), not {world!r}")
    if db_path is None:
        return _open(None, profile, world)
    if world:
        raise ValueError(f"world={world} names an embedded sandbox, and db_path {str(db_path)!r} was given too; "
                         "pass one of them (a world's directory is `utp-env data build --profile P --seed WORLD`)")
    resolved = Path(db_path).expanduser().resolve()
    if not resolved.is_dir():
        raise FileNotFoundError(f"db_path {str(db_path)!r} is not a directory holding the database CSV files; "
                                "build one with `utp-env data build` or pass profile='mini'|'full'")
    return _open(str(resolved), profile)


def query_pool(db: Database) -> tuple[Query, ...]:
    """Every query of the database's query set."""
    return tuple(dataset_of(db).queries)


def split_pool(db: Database, split: str, limit: int | None = None) -> list[Query]:
    """The queries of one split, in query-id order (the first `limit` of them); ValueError naming the
    known splits otherwise. `train` is built next to the query set when first asked for, only as far
    as `limit` needs (`Dataset.train`: a seeded prefix of the whole split)."""
    dataset = dataset_of(db)
    if split == TRAIN_SPLIT:
        pool = dataset.split(TRAIN_SPLIT, limit)  # file order is query-id order
    else:
        pool = [q for q in dataset.queries if q.split == split]
    chosen = sorted(pool, key=lambda q: q.query_id)[:limit]
    if not chosen:
        known = sorted({str(q.split) for q in dataset.queries} | {TRAIN_SPLIT})
        raise ValueError(f"split {split!r} has no queries; known splits: {', '.join(known)}")
    return chosen


def level_pool(db: Database, split: str, level: Level, limit: int | None = None) -> list[Query]:
    """The queries of one split that `level` views (`Level.horizons`; every query at levels 1, 2 and 4), in
    query-id order, the first `limit` of them; a ValueError naming the split and level when there are none."""
    if level.horizons is None:
        pool = split_pool(db, split, limit)
    elif split == TRAIN_SPLIT and limit is not None:
        # the train split is built as far as it is read: read a longer prefix until `limit` of it is the level's
        read = limit
        while True:
            prefix = split_pool(db, split, read)
            pool = [q for q in prefix if q.days in level.horizons][:limit]
            if len(pool) >= limit or len(prefix) < read:
                break
            read *= 2
    else:
        pool = [q for q in split_pool(db, split) if q.days in level.horizons][:limit]
    if level.horizons is not None and not pool:
        raise ValueError(f"split {split!r} has no {' or '.join(map(str, sorted(level.horizons)))}-day queries "
                         f"for level {level.number} ({level.title})")
    return pool


def with_level(config: EnvConfig, level: int | None, stated: Any = None) -> EnvConfig:
    """`config` at `level` (the env's `level` argument; None: the config's own); a ValueError naming the
    levels for another value, a config that does not fit the level (e.g. submit_plan at level 1), or
    overrides (`stated`, the env's `config` argument when a dict) that name another level."""
    if level is None:
        return config
    level_of(level)
    named = stated.get("level") if isinstance(stated, dict) else None  # (a YAML or EnvConfig holds one always)
    if named is not None and named != level:
        raise ValueError(f"level={level} and config level {named} contradict each other: give one (the env ids "
                         f"utp_env/UTP-L1-v0 ... UTP-L4-v0 set the level themselves)")
    try:
        return EnvConfig.model_validate({**config.model_dump(), "level": level})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"level={level}: {first['msg']}") from None


def find_query(db: Database, query_id: str) -> Query | None:
    """The query of any split (the train split's is read, or built, when a train id is asked for)."""
    try:
        return dataset_of(db).query(query_id)
    except LookupError:
        return None


def reference_plan(db: Database, query_id: str) -> Plan | None:
    """The dataset's reference plan of a query of any split, or None."""
    return dataset_of(db).reference(query_id)
