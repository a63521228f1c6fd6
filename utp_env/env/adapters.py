"""The env's tools for other frameworks: LangChain, OpenAI, TRL (GRPO) — all from the same specs.

- `langchain_tools(env)`: `StructuredTool`s whose calls are env steps on the live episode (the
  database and episode are bound, never exposed as arguments); defined in `lc_tools.py`, which the
  env core can use without importing this module.
- `openai_tools(env)`: the OpenAI function schemas (the same ones `reset` puts in `info`).
- `UTPToolEnv`: a class for TRL's `GRPOTrainer(environment_factory=UTPToolEnv)`: `reset(**row)`
  returns the task text; its public methods are exactly the tools, each with type hints and a
  Google-style docstring (TRL builds the schemas from them); `reward` holds the episode's reward.
- `plan_reward(completions, **columns)`: a single-turn reward scoring a plan written in one
  completion (unparseable => 0).

Nothing here imports TRL or torch.
"""

from __future__ import annotations

import functools
import inspect
import json
import warnings
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym

from utp_env.env.config import EnvConfig, load_env_config, with_level
from utp_env.env.core import UTPEnv, episode_tools
from utp_env.env.engine import EpisodeEngine
from utp_env.env.episode import plan_mismatch
from utp_env.env.lc_tools import jsonable
from utp_env.env.lc_tools import langchain_tools as langchain_tools  # re-exported: adapters' public API
from utp_env.env.levels import LEVELS
from utp_env.tools.tool_schemas import google_docstring
from utp_env.tools.toolkit import ToolSpec


def unwrap(env: gym.Env[Any, Any]) -> UTPEnv:
    """The `UTPEnv` inside `env` (itself, or under gymnasium wrappers); TypeError for another env."""
    inner = env.unwrapped
    if not isinstance(inner, UTPEnv):
        raise TypeError(f"expected a UTPEnv (or a wrapper of one), got {type(inner).__name__}")
    return inner


def openai_tools(env: gym.Env[Any, Any]) -> list[dict[str, Any]]:
    """The env's tools as OpenAI function-calling schemas."""
    return unwrap(env).openai_tools()


_jsonable = jsonable  # the name the TRL classes (and utp_env.rl.remote) use


# ---------------------------------------------------------------- TRL environment class


def _tool_method(spec: ToolSpec[Any], compact: bool = False) -> Any:
    """A method `name(self, **args) -> str` with the tool's typed signature and Google docstring."""
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    fields = spec.args_model.model_fields
    ordered = sorted(fields.items(), key=lambda kv: not kv[1].is_required())  # required first
    for name, field in ordered:
        default = inspect.Parameter.empty if field.is_required() else field.get_default(call_default_factory=True)
        params.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=default, annotation=field.annotation))
        annotations[name] = field.annotation
    annotations["return"] = str
    signature = inspect.Signature(params, return_annotation=str)

    def method(self: UTPToolEnv, *args: Any, **kwargs: Any) -> str:
        bound = signature.bind(self, *args, **kwargs)
        call_args = {k: v for k, v in bound.arguments.items() if k != "self"}
        return self._call(spec.name, call_args)

    method.__name__ = method.__qualname__ = spec.name
    method.__doc__ = google_docstring(spec.description, spec.args_model, compact)
    method.__dict__["__signature__"] = signature  # what inspect.signature (and TRL) read
    method.__annotations__ = annotations
    return method


class UTPToolEnv:
    """A UTP episode for TRL's `GRPOTrainer(environment_factory=UTPToolEnv)`.

    `reset(**row)` starts an episode on the dataset row's `query_id` (or `split`/`seed`) and
    returns the task text; each public method is one tool (calling it is one env step); `reward`
    is 0 until the episode ends (submit or the step limit), then the env's reward. Bind another
    database or config with `tool_env_class(db_path=..., profile=..., config=...)`. The episode is
    played by the episode engine (utp_env/env/engine.py), as on every other front door.
    """

    env_kwargs: ClassVar[dict[str, Any]] = {}  # replaced (never mutated) by `tool_env_class`
    _env_class: ClassVar[type[UTPEnv]] = UTPEnv  # UTPReplanEnv with `tool_env_class(replan=True)`

    def __init__(self) -> None:
        self._engine: Any = EpisodeEngine(self._env_class(**self.env_kwargs))
        self._env = self._engine.env

    @property
    def reward(self) -> float:
        """The episode's reward once it has ended; 0 before."""
        return float(self._engine.reward)

    @property
    def done(self) -> bool:
        """Whether the episode has ended (submit, the step limit, or `get_reward` ended it)."""
        return bool(self._engine.done)

    @property
    def final_info(self) -> dict[str, Any]:
        """The end-of-episode info (`EpisodeOutcome.to_json()` keys) once the episode has ended; {} before."""
        final = self._engine.final
        return {} if final is None else dict(final.info)

    def reset(self, **kwargs: Any) -> str | None:
        """Start an episode for a dataset row (`query_id`, else `split`; optional `seed`, `stochastic`;
        `plan` in the closed-loop env, to start the trip from that plan: utp_env/env/replan.py). Other
        columns are ignored (TRL passes every column of the row); a `plan` is refused by UTP-v0, which
        has no trip to start."""
        options = {k: kwargs[k] for k in ("query_id", "split", "stochastic") if kwargs.get(k) is not None}
        if kwargs.get("plan") is not None:
            if not self._env_class.RESETS_FROM_PLAN:
                raise ValueError("reset: plan= starts a trip from a plan, which only the closed-loop env does; use "
                                 "tool_env_class(replan=True), or drop the plan column")
            options["plan"] = kwargs["plan"]
        seed = kwargs.get("seed")
        observation, _ = self._engine.start(seed=None if seed is None else int(seed), **options)
        text: str | None = observation
        return text

    def _call(self, name: str, args: dict[str, Any]) -> str:
        text: str = self._engine.call(name, _jsonable(args)).text
        return text


def _install_tool_methods(cls: type, config: EnvConfig) -> None:
    for name, spec in episode_tools(config).items():
        if hasattr(cls, name):
            raise TypeError(f"tool name {name!r} clashes with an attribute of {cls.__name__}")
        setattr(cls, name, _tool_method(spec))


_install_tool_methods(UTPToolEnv, load_env_config())


def tool_env_class(replan: bool = False, **env_kwargs: Any) -> type[UTPToolEnv]:
    """A `UTPToolEnv` subclass whose envs are built with `env_kwargs` (db_path, profile, split, config).

    `replan=True` builds the closed-loop env `utp_env/UTP-Replan-v0` (utp_env/env/replan.py; `env_kwargs`
    may then hold its `replan` config) and adds its `continue_trip` tool as a method (named so because
    `continue` is a Python keyword).
    """
    if not replan:
        return type("UTPToolEnv", (UTPToolEnv,), {"env_kwargs": dict(env_kwargs), **tool_attributes(env_kwargs)})
    from utp_env.env.replan import EXECUTION_TOOLS, UTPReplanEnv

    cls = type("UTPReplanToolEnv", (UTPToolEnv,), {"env_kwargs": dict(env_kwargs), "_env_class": UTPReplanEnv})
    for name, spec in UTPReplanEnv.EXTRA_TOOLS.items():
        if name in EXECUTION_TOOLS or hasattr(cls, name):  # submit/submit_plan as the closed loop describes them
            setattr(cls, name, _tool_method(spec))
    return cls


def tool_attributes(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """The tool methods of a class whose env config (`env_kwargs["config"]`) names `tools` or sets
    `compact`: the offered tools as methods (compact docstrings in the compact mode), the others
    shadowed by None, so TRL, which takes the public functions as tools, offers what the env does."""
    config = with_level(load_env_config(env_kwargs.get("config")), env_kwargs.get("level"))
    if not config.compact and config.tools is None and LEVELS[config.level].tools is None:
        return {}
    offered = episode_tools(config)
    return {name: _tool_method(offered[name], config.compact) if name in offered else None
            for name in tool_method_names(UTPToolEnv)}


def tool_method_names(cls: type = UTPToolEnv) -> list[str]:
    """Public methods other than `reset`: what TRL turns into tools."""
    return [n for n, _ in inspect.getmembers(cls, callable) if not n.startswith("_") and n != "reset"]


# ---------------------------------------------------------------- single-turn reward


class PlanReward:
    """`(completions, **columns) -> list[float]`: score plans written in one completion each.

    Each completion (a string, or a chat message list whose last message holds the plan) is
    parsed with `parse_plan` for the query of its row (`query_id` column) and rewarded like an
    env episode ending in `submit_plan`; at a `level` below the whole trip (utp_env/env/levels.py),
    the plan's part the level asks is scored (`LevelTask.view`), as that level's env scores it.
    Unparseable or missing plans score 0. A plan that looks
    made for another query (`utp_env.env.episode.plan_mismatch`: another origin, a destination
    never reached, other dates) is scored as it is, with a `UserWarning` saying what does not
    match; `mismatches` keeps the last message per query id.
    """

    __name__ = "plan_reward"

    def __init__(self, db_path: str | Path | None = None, profile: str = "full",
                 config: EnvConfig | dict[str, Any] | str | Path | None = None, level: int | None = None) -> None:
        self.db_path, self.profile = db_path, profile
        self.config = with_level(load_env_config(config), level)
        self.mismatches: dict[str, str] = {}

    @functools.cached_property
    def _env(self) -> UTPEnv:
        whole = LEVELS[self.config.level].whole_task  # a level's part is scored from the plan, not submitted
        config = self.config if whole else self.config.model_copy(update={"level": 4, "tools": None})
        return UTPEnv(db_path=self.db_path, profile=self.profile, config=config)

    def __call__(self, completions: list[Any], **columns: Any) -> list[float]:
        ids = columns.get("query_id")
        if ids is None:
            raise ValueError("plan_reward needs a 'query_id' column naming each completion's query")
        return [self.score(_completion_text(c), str(q)) for c, q in zip(completions, ids, strict=True)]

    def score(self, text: str, query_id: str) -> float:
        """The reward of one completion's plan for query `query_id` (0 when it cannot be read)."""
        env = self._env
        env.reset(seed=0, options={"query_id": query_id})
        episode = env.episode
        _, reward, terminated, *_ = env.step({"tool": "submit_plan", "args": {"plan": text}})
        if terminated and episode is not None and not LEVELS[self.config.level].whole_task:
            reward = self._level_reward(episode)
        if terminated and episode is not None:
            wrong = plan_mismatch(episode.plan, episode.query, env.db)
            if wrong:
                message = (f"plan_reward: the plan given for query {query_id} does not match it: "
                           f"{'; '.join(wrong)} (is the query_id column aligned with the completions, "
                           "and the database the one the plans were made for?)")
                self.mismatches[query_id] = message
                warnings.warn(message, UserWarning, stacklevel=2)
        return float(reward) if terminated else 0.0  # not terminated: the plan was unreadable

    def _level_reward(self, episode: Any) -> float:
        """The reward at the reward's level of the plan `episode` ended with (its part the level asks)."""
        from utp_env.env.levels import level_task
        from utp_env.env.reward import score_plan

        task = level_task(LEVELS[self.config.level], episode.query, episode.reference)
        return score_plan(task.view(episode.plan), episode.query, episode.db, weights=self.config.reward_weights,
                          reference=episode.reference, task=task).reward


def _completion_text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion:
        last = completion[-1]
        if isinstance(last, dict):
            return str(last.get("content") or "")
    if isinstance(completion, dict):
        return str(completion.get("content") or "")
    return json.dumps(completion, default=str)


plan_reward = PlanReward()
