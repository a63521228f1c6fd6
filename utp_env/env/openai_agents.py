"""The env for the openai-agents SDK: strict tools and an end that scores the episode (docs/SERVE.md).

Wiring the env into an openai-agents `Agent` by hand has two traps:

- the SDK's tools default to strict JSON schemas (`FunctionTool(strict_json_schema=True)`), whose
  rules the env's schemas do not all meet: `submit_plan`'s `plan` may be an object of any keys, an
  array or a string, and strict mode wants every object closed and every property required;
- `Runner.run` stops at the model's first plain-text reply, which leaves the episode open: no
  submission, no reward.

`AgentsEpisode(env)` answers both. Its `tools` are `FunctionTool`s with `strict_schema(...)` of each
tool's schema (optional arguments become required-but-nullable, and a null is dropped before the env
sees it, so the env's default applies; unconstrained alternatives such as the plan as an object are
dropped where a string alternative remains: the plan is sent as JSON text, which the env reads the
same); each call is one `env.step`, so answers and errors are the env's. `run(agent)` runs the agent
on the episode's task and then ends the episode if the agent did not: a final reply that holds a plan
is submitted with `submit_plan`, anything else is scored as the plan built so far
(`end_episode("step_limit")`, as `get_reward` does for RL, docs/RL.md); `MaxTurnsExceeded` is the
step limit too; any other error ends it as `agent_error` and is raised again.

The SDK's import name is `agents` (the distribution `openai-agents`), which in a source checkout of
this repository is also the name of the repository's `agents/` folder: from the repository root,
`import agents` finds the folder. `sdk()` says so in one line instead of failing later; run from
another directory (or install the wheel). tests/package/test_layering.py allows this one module to name it.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import gymnasium as gym

from utp_env.env.engine import EpisodeEngine
from utp_env.env.episode import TerminationReason
from utp_env.tools.tool_schemas import strict_schema

STOPPED_MESSAGE = "the agent stopped without submit; the plan built so far is scored as at the step limit"


def sdk() -> ModuleType:
    """The openai-agents SDK module (`agents`); one-line `ImportError` when it is missing or shadowed."""
    try:
        import agents
    except ImportError:
        raise ImportError("the openai-agents SDK is not installed: pip install 'openai-agents'") from None
    if not hasattr(agents, "FunctionTool"):
        raise ImportError(f"`import agents` found {getattr(agents, '__file__', agents)!r}, not the openai-agents "
                          "SDK: this repository's agents/ folder shadows it; run from another directory")
    return agents


def strict_arguments(raw: str, parameters: dict[str, Any]) -> dict[str, Any] | str:
    """The arguments of a strict-mode call for the env: nulls of optional arguments dropped (the env's
    default applies). Text that is not a JSON object is passed on as it is: the env answers it."""
    try:
        args = json.loads(raw) if raw else {}
    except (json.JSONDecodeError, RecursionError):
        return raw
    if not isinstance(args, dict):
        return raw
    required = set(parameters.get("required", []))
    return {k: v for k, v in args.items() if not (v is None and k not in required)}


@dataclass
class EpisodeResult:
    """How an agent's episode ended: its reward, the env's end-of-episode info, the agent's last reply."""

    reward: float
    termination_reason: str
    info: dict[str, Any] = field(default_factory=dict)
    final_output: Any = None


class AgentsEpisode:
    """Episodes of a UTP env played by an openai-agents `Agent` (module docstring), through the episode
    engine (utp_env/env/engine.py): starting, refusing a call without an episode, ending and keeping the
    reward are the engine's, as on every other front door.

    ```python
    from agents import Agent
    episode = AgentsEpisode(gym.make("utp_env/UTP-v0", profile="mini"))
    task = episode.reset(seed=0)
    agent = Agent(name="planner", instructions="Plan the trip with the tools.", tools=episode.tools, model=...)
    result = await episode.run(agent)          # result.reward, result.info["report"]
    ```
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        self.engine = EpisodeEngine(env)
        self.env = self.engine.env
        self.task: str | None = None
        self.result: EpisodeResult | None = None
        self._tools: list[Any] | None = None

    def reset(self, seed: int | None = None, **options: Any) -> str:
        """Start an episode (`env.reset(seed=seed, options=options)`); returns the task text for the agent."""
        self.task, _ = self.engine.start(seed=seed, **options)
        self.result = None
        return self.task

    @property
    def tools(self) -> list[Any]:
        """The env's tools as strict `FunctionTool`s of the SDK; each call is one step of the live episode."""
        if self._tools is None:
            function_tool = sdk().FunctionTool
            self._tools = [function_tool(name=fn["name"], description=fn["description"],
                                         params_json_schema=strict_schema(fn["parameters"], fn["name"]),
                                         on_invoke_tool=self._invoker(fn["name"], fn["parameters"]),
                                         strict_json_schema=True)
                           for fn in (copy.deepcopy(s["function"]) for s in self.env.openai_tools())]
        return self._tools

    def _invoker(self, name: str, parameters: dict[str, Any]) -> Any:
        async def invoke(_context: Any, raw: str) -> str:
            return self.call(name, strict_arguments(raw, parameters))

        return invoke

    def call(self, name: str, args: dict[str, Any] | str) -> str:
        """One tool call as one env step: the env's answer (without an episode, or after its end: an error
        saying so, and nothing done)."""
        return self.engine.call(name, args).text

    @property
    def done(self) -> bool:
        """Whether the episode has ended (submitted, step limit, or ended by `finish`), or none runs."""
        return not self.engine.running

    def finish(self, final_output: Any = None, reason: TerminationReason | str = TerminationReason.STEP_LIMIT,
               message: str = STOPPED_MESSAGE) -> EpisodeResult:
        """End the episode if the agent did not: a final reply holding a plan is submitted with
        `submit_plan`; otherwise the plan built so far is scored (`end_episode(reason)`).
        `RuntimeError` when no episode was started."""
        answer = self.engine.finish(final_output, message, reason)
        self.result = EpisodeResult(answer.reward, str(answer.info.get("termination_reason")), answer.info,
                                    final_output)
        return self.result

    async def run(self, agent: Any, max_turns: int = 50, **runner_kwargs: Any) -> EpisodeResult:
        """`Runner.run(agent, task, max_turns=...)` on the episode's task (call `reset` first), then `finish`."""
        if self.task is None:
            raise RuntimeError("run: no episode was started; call reset first")
        agents = sdk()
        try:
            result = await agents.Runner.run(agent, self.task, max_turns=max_turns, **runner_kwargs)
        except agents.MaxTurnsExceeded as exc:
            return self.finish(None, TerminationReason.STEP_LIMIT, f"MaxTurnsExceeded: {exc}")
        except Exception as exc:
            self.finish(None, TerminationReason.AGENT_ERROR, f"{type(exc).__name__}: {exc}")
            raise
        return self.finish(result.final_output)

