"""utp-env as a `verifiers` environment (docs/RL.md "verifiers"): `load_environment(...)`.

`vf-eval utp-env -a '{"profile": "mini"}' -m MODEL -b BASE_URL` finds it (verifiers imports the
module named after the environment id, `utp_env`, and calls its `load_environment`), as do
`prime-rl` and the environment hub's install of the `utp-env` package. Needs `pip install
'utp-env[verifiers]'`.

The environment is a `verifiers.MultiTurnEnv` over the same episodes as `utp-env run`:

- **datasets**: the queries of a split (`eval_split`, default validation; `split`, default train,
  built when a trainer first asks for it) of the embedded sandbox `profile` and `world` (or a
  database folder `db_path`), in query-id order; each row's prompt is the env's task text for the
  query and `seed`, its `info` the query id and the seed;
- **tools**: the env's own tools (`UTPEnv.openai_tools()`: the lookup tools and the itinerary
  tools), as the model sees them in-process;
- **turns**: each model reply's tool calls are ONE `env.step` (as the tool-calling agent sends them,
  agents/llm/tool_calling.py), each call answered with its part of the observation
  (`utp_env.env.core.split_answers`); a reply without a tool call is answered with `NUDGE` and
  counts as a turn; the rollout ends when the episode ends (submit, submit_plan, the env's step
  limit) or at `max_turns`;
- **rubric**: the env's reward. An episode the model left open is ended as the Inspect task and the
  openai-agents adapter end it: a last reply holding a plan is submitted with `submit_plan`,
  otherwise the plan built so far is scored as at the step limit. Metrics: final pass and delivery.

Same seed and same calls, same answers and rewards as `UTPEnv` in-process and as `utp-env run
--agent tool_calling` (tests/serve/test_verifiers_env.py runs verifiers' own evaluation against a scripted
OpenAI-wire server on 127.0.0.1 and compares).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

SYSTEM_PROMPT = ("You plan trips within India with the tools of a travel-planning environment: look things up, "
                 "build the itinerary with the itinerary tools, then call submit (or send a whole plan with "
                 "submit_plan). Every reply should call at least one tool.")
NUDGE = ("Reply with a tool call: continue planning with the tools, or call submit when the plan is complete. "
         "Turns left: {left}.")
STOPPED = "the model stopped without submit; the plan built so far is scored as at the step limit"
UTP_KEY = "utp"
"""The key of a rollout's `state` under which the episode's ending is kept (JSON: reward, reason, report)."""


def _verifiers() -> Any:
    try:
        import verifiers as vf
    except ImportError as exc:
        raise ImportError("the verifiers environment needs the verifiers package: pip install "
                          "'utp-env[verifiers]'") from exc
    return vf


def task_rows(split: str, profile: str = "full", db_path: str | None = None, world: int = 0, limit: int | None = None,
              seed: int = 0, env: str = "UTP-v0", max_turns: int = 60) -> list[dict[str, Any]]:
    """The dataset rows of a split: prompt (the env's task text for the query and `seed`, with the step limit
    `max_turns` it states), info (query id, seed) and example_id, in query-id order."""
    from utp_env.env.config import open_database, split_pool
    from utp_env.serve.session import env_class

    db = open_database(db_path, profile, world)
    try:
        queries = sorted(split_pool(db, split), key=lambda q: q.query_id)
    except ValueError as exc:
        raise ValueError(f"load_environment: split: {exc}") from None
    if limit is not None:
        queries = queries[:limit]
    base = env_class(env)(db_path=db_path, profile=profile, world=world, config={"step_limit": max_turns})
    rows = []
    for i, query in enumerate(queries):
        text, _ = base.reset(seed=seed, options={"query_id": query.query_id})
        rows.append({"prompt": [{"role": "user", "content": text}], "example_id": i,
                     "info": {"query_id": query.query_id, "seed": seed}})
    base.close()
    return rows


def check_arguments(split: str, eval_split: str, limit: Any, seed: Any, max_turns: Any, world: Any) -> None:
    """One-line ValueErrors for arguments of the wrong type or range (`vf-eval -a` passes JSON)."""
    for name, value, low in (("limit", limit, 1), ("seed", seed, 0), ("max_turns", max_turns, 1), ("world", world, 0)):
        if value is None and name == "limit":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValueError(f"load_environment: {name} must be an integer >= {low}, not {value!r}")
    for name, value in (("split", split), ("eval_split", eval_split)):
        if not isinstance(value, str):
            raise ValueError(f"load_environment: {name} must be a split name (train, validation, test, all), "
                             f"not {value!r}")


def load_environment(split: str = "train", eval_split: str = "validation", profile: str = "full",
                     db_path: str | None = None, world: int = 0, limit: int | None = None, seed: int = 0,
                     env: str = "UTP-v0", max_turns: int = 60, system_prompt: str = SYSTEM_PROMPT,
                     **kwargs: Any) -> Any:
    """The utp-env verifiers environment (module docstring). `limit`: at most this many queries per
    dataset; `seed`: the episodes' seed; `env`: `UTP-v0` or `UTP-Replan-v0`; `max_turns`: model turns (also
    the env's step limit); other keyword arguments go to `verifiers.MultiTurnEnv`."""
    vf = _verifiers()
    check_arguments(split, eval_split, limit, seed, max_turns, world)
    from utp_env.env.config import open_database
    from utp_env.serve.session import env_class

    env_class(env)  # a bad env name: one line before anything is built
    open_database(db_path, profile, world)

    def rows_of(name: str) -> Callable[[], Any]:
        def build() -> Any:
            from datasets import Dataset

            return Dataset.from_list(task_rows(name, profile, db_path, world, limit, seed, env, max_turns))
        return build

    return UTPVerifiersEnv.create(vf, env=env, profile=profile, db_path=db_path, world=world, max_turns=max_turns,
                                  dataset=rows_of(split), eval_dataset=rows_of(eval_split),
                                  system_prompt=system_prompt, **kwargs)


class UTPVerifiersEnv:
    """Builds the `verifiers.MultiTurnEnv` subclass on first use (verifiers is an optional package)."""

    _cls: Any = None

    @classmethod
    def create(cls, vf: Any, **kwargs: Any) -> Any:
        if cls._cls is None:
            cls._cls = _make_class(vf)
        return cls._cls(**kwargs)


def _make_class(vf: Any) -> Any:
    from utp_env.env.core import UTPEnv, split_answers
    from utp_env.serve.session import env_class, holds_plan, json_safe

    class UTPMultiTurnEnv(vf.MultiTurnEnv):
        """utp-env episodes as a verifiers multi-turn environment (module docstring)."""

        def __init__(self, env: str, profile: str, db_path: str | None, world: int, max_turns: int,
                     **kwargs: Any) -> None:
            self.utp_env_cls = env_class(env)
            self.utp_kwargs: dict[str, Any] = {"db_path": db_path, "profile": profile, "world": world,
                                               "config": {"step_limit": max_turns}}
            probe: UTPEnv = self.utp_env_cls(**self.utp_kwargs)
            tools = [{"name": t["function"]["name"], "description": t["function"]["description"],
                      "parameters": json.loads(json.dumps(t["function"]["parameters"]))}
                     for t in probe.openai_tools()]
            probe.close()
            self.episodes: dict[str, UTPEnv] = {}
            rubric = vf.Rubric()
            rubric.add_reward_func(self.utp_reward)
            rubric.add_metric(self.final_pass)
            rubric.add_metric(self.delivered)
            super().__init__(max_turns=max_turns, tool_defs=tools, rubric=rubric, **kwargs)

        async def setup_state(self, state: Any, **kwargs: Any) -> Any:
            info = state["info"]
            env: UTPEnv = self.utp_env_cls(**self.utp_kwargs)
            env.reset(seed=int(info["seed"]), options={"query_id": str(info["query_id"])})
            self.episodes[state["trajectory_id"]] = env
            return state

        @vf.stop  # type: ignore[untyped-decorator]
        async def episode_ended(self, state: Any, **kwargs: Any) -> bool:
            env = self.episodes.get(state["trajectory_id"])
            return env is None or env.episode is None or env.episode.done

        async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
            env = self.episodes[state["trajectory_id"]]
            last = messages[-1]
            calls = list(getattr(last, "tool_calls", None) or [])
            if not calls:
                left = self.max_turns - len(state["trajectory"])
                return [vf.UserMessage(content=NUDGE.format(left=left))]
            entries = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                       for c in calls]
            observation, reward, terminated, truncated, info = env.step(entries)
            answers = [vf.ToolMessage(content=text, tool_call_id=c.id)
                       for c, text in zip(calls, split_answers(observation, len(calls)), strict=True)]
            if terminated or truncated:
                state[UTP_KEY] = _ending(reward, info)
                state["final_env_response"] = answers
            return answers

        @vf.cleanup  # type: ignore[untyped-decorator]
        async def end_episode(self, state: Any, **kwargs: Any) -> None:
            """End an episode the model left open (module docstring), keep its ending, close the env."""
            env = self.episodes.pop(state.get("trajectory_id"), None)
            if env is None:
                return
            try:
                ep = env.episode
                if UTP_KEY not in state and ep is not None:
                    text = _last_text(state)
                    if not ep.done and text and holds_plan(env, text):
                        _, reward, terminated, truncated, info = env.step(
                            {"tool": "submit_plan", "args": {"plan": text}})
                        if terminated or truncated:
                            state[UTP_KEY] = _ending(reward, info)
                    if UTP_KEY not in state:
                        reward, info = env.end_episode("step_limit", STOPPED)
                        state[UTP_KEY] = _ending(reward, info)
            finally:
                env.episode = None
                env.close()

        async def utp_reward(self, state: Any, **kwargs: Any) -> float:
            """The env's reward of the episode (0 when it never started)."""
            return float((state.get(UTP_KEY) or {}).get("reward", 0.0))

        async def final_pass(self, state: Any, **kwargs: Any) -> float:
            return float(bool((state.get(UTP_KEY) or {}).get("final_pass")))

        async def delivered(self, state: Any, **kwargs: Any) -> float:
            from utp_env.evaluation.aggregate import counted_report

            ending = state.get(UTP_KEY) or {}
            return float(counted_report(ending.get("plan"), ending.get("report")) is not None)

    def _ending(reward: float, info: dict[str, Any]) -> dict[str, Any]:
        keep = ("termination_reason", "final_pass", "metrics", "report", "plan", "error", "message")
        return {"reward": float(reward), **json_safe({k: info.get(k) for k in keep})}

    def _last_text(state: Any) -> str:
        trajectory = state.get("trajectory") or []
        if not trajectory:
            return ""
        for message in reversed(trajectory[-1]["completion"]):
            if getattr(message, "role", None) == "assistant":
                content = message.content
                return content if isinstance(content, str) else ""
        return ""

    return UTPMultiTurnEnv

