"""The TRL environment class of the multi-turn recipe: `UTPToolEnv` plus `get_reward` and an episode log.

TRL's `GRPOTrainer(environment_factory=cls)` builds instances, calls `reset(**row)` before each
rollout, exposes every public method as a tool and, when the class defines `get_reward`, calls it
once per finished rollout as a reward source of its own (trl/trainer/grpo_trainer.py).

A rollout can end without the episode ending: the model stops calling tools, or TRL's
`max_tool_calling_iterations` / `max_completion_length` cuts it. `UTPToolEnv.reward` is then 0
whatever the plan holds, so a policy that never submits earns 0 on every rollout and GRPO, which
learns from reward differences within a group, sees none. `get_reward` instead ends such an
episode the way the env's own step limit does (`UTPEnv.end_episode("step_limit")`): the plan built
so far is evaluated and rewarded with the env's reward (docs/ENV.md "Reward"). The reward
definition is unchanged; only an episode the trainer abandoned is closed instead of dropped.

Every finished rollout is appended to the class's `episodes` list (`EpisodeRecord`): what the smoke
test and the scripts' summaries read to show that tool calls reached the env.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from utp_env.env.adapters import UTPToolEnv, tool_attributes, tool_method_names
from utp_env.env.episode import TerminationReason

UNFINISHED_MESSAGE = "the rollout ended without submit; the plan built so far is scored as at the step limit"


@dataclass(frozen=True, slots=True)
class EpisodeRecord:
    """One rollout as the env saw it: the query, env steps (tool-call actions), how it ended, its reward."""

    query_id: str
    steps: int
    tools: tuple[str, ...]
    termination_reason: str
    reward: float

    def to_json(self) -> dict[str, Any]:
        """The record as JSON-ready values."""
        return asdict(self)


class RLToolEnv(UTPToolEnv):
    """`UTPToolEnv` whose `get_reward` scores an unfinished rollout as a step-limit cut (module docstring)."""

    episodes: ClassVar[list[EpisodeRecord]] = []  # replaced per class by `rl_env_class`

    def get_reward(self) -> float:
        """The rollout's reward: the env's reward once the episode has ended, ending it (as at the step
        limit, plan so far scored) when the model stopped before `submit`. Called by TRL once per rollout."""
        engine = self._engine
        query_id = engine.query_id
        if query_id is None:  # reset was never called (or failed): nothing was planned
            return 0.0
        answer = engine.end(TerminationReason.STEP_LIMIT, UNFINISHED_MESSAGE)
        steps = engine.steps
        self.episodes.append(EpisodeRecord(query_id, len(steps), steps,
                                           str(answer.info.get("termination_reason") or ""), answer.reward))
        return float(answer.reward)


def rl_env_class(tools: Sequence[str] | None = None, base: type[RLToolEnv] = RLToolEnv,
                 **env_kwargs: Any) -> type[RLToolEnv]:
    """An `RLToolEnv` subclass whose envs are built with `env_kwargs` (db_path, profile, split, config)
    and which logs its rollouts in its own `episodes` list.

    `tools` names the tools TRL offers the model (default: all of them). The others are shadowed by
    `None` on the subclass, so TRL, which takes the class's public functions as tools, does not list
    them: the prompt then carries only those schemas (the tiny smoke run keeps its prompt short so).
    `base` is the class to derive from (a subclass of `RLToolEnv` with another `get_reward`).
    """
    attributes: dict[str, Any] = {"env_kwargs": dict(env_kwargs), "episodes": [], **tool_attributes(env_kwargs)}
    return type(base.__name__, (base,), attributes | shadowed_tools(tools))


def shadowed_tools(tools: Sequence[str] | None) -> dict[str, None]:
    """Class attributes that hide every tool method not in `tools` (None: hide none), so that TRL,
    which offers the model a class's public functions, lists only `tools`; a ValueError naming
    unknown names (or an empty list) and the known ones."""
    if tools is None:
        return {}
    known = tool_method_names(UTPToolEnv)
    unknown = sorted(set(tools) - set(known))
    if unknown or not tools:
        raise ValueError(f"tools: unknown tool names {unknown} (or none given); choose from {known}")
    return {name: None for name in known if name not in tools}
