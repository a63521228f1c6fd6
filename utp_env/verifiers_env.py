"""utp-env as a `verifiers` environment (docs/RL.md "verifiers"): verifiers 0.4, and 0.3.

**verifiers 0.4** (its `verifiers.v1` stack, which 0.3.1 ships too under the command `eval`):
`vf-eval utp-env --env.taskset.profile mini -m MODEL --client.base-url URL` imports the package named after
the id (`utp_env`) and takes from its `__all__` the three plugin classes built here on first use (module
`__getattr__`: verifiers is an optional package):

- `UTPTaskset`, the **dataset**: the queries of `split` (default validation) of the embedded sandbox
  `profile` and `world` (or a database folder `db_path`), in query-id order; each task's prompt is the
  env's task text for the query and `seed`, its data the query id, the seed and the env settings;
- `UTPHarness`, the **turns**, utp-env's own harness run in-process (verifiers' interception endpoint is
  its only contract: no program, no container, no MCP server): the model is offered the env's own
  **tools** (`UTPEnv.openai_tools()`: the lookup and the itinerary tools), and each reply's tool calls
  are ONE `env.step` (as the tool-calling agent sends them, agents/llm/tool_calling.py), each call
  answered with its part of the observation (`utp_env.env.core.split_answers`); a reply without a tool
  call is answered with `NUDGE` and counts as a turn; the episode ends when the env ends it (submit,
  submit_plan, the step limit) or after `max_turns` replies, and its ending is kept in `trace.info["utp"]`;
- `UTPVerifiersEnv`, the single-agent env with the local subprocess runtime as its default (the harness
  runs nothing in it; verifiers' own default is a remote sandbox);
- the **rubric** (`UTPTask`): the env's reward (`utp_reward`), metrics `final_pass` and `delivered`.

**verifiers 0.3** (where `vf-eval` is the classic stack): `load_environment(...)` returns a
`verifiers.MultiTurnEnv` over the same episodes with the same tools, turns and rubric, its datasets the
queries of `split` (default train, built when a trainer first asks for it) and `eval_split` (default
validation).

Either way an episode the model left open is ended as the Inspect task and the openai-agents adapter end
it (`EpisodeEngine.finish`): a last reply holding a plan is submitted with `submit_plan`, otherwise the
plan built so far is scored as at the step limit. Same seed and same calls, same answers and rewards as
`UTPEnv` in-process and as `utp-env run --agent tool_calling` (tests/serve/test_verifiers_env.py runs
verifiers' own evaluations against a scripted OpenAI-wire server on 127.0.0.1 and compares).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from functools import cache
from typing import Any

SYSTEM_PROMPT = ("You plan trips within India with the tools of a travel-planning environment: look things up, "
                 "build the itinerary with the itinerary tools, then call submit (or send a whole plan with "
                 "submit_plan). Every reply should call at least one tool.")
NUDGE = ("Reply with a tool call: continue planning with the tools, or call submit when the plan is complete. "
         "Turns left: {left}.")
STOPPED = "the model stopped without submit; the plan built so far is scored as at the step limit"
UTP_KEY = "utp"
"""Where a rollout keeps its episode's ending (JSON: reward, termination_reason, final_pass, delivered,
metrics, error, message): the key of the 0.3 rollout `state` and of the 0.4 `trace.info`."""
INSTALL = "pip install 'utp-env[verifiers]'"


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"the verifiers environment needs the verifiers package ({module}): {INSTALL}") from exc


def has_classic_api() -> bool:
    """Whether the installed verifiers has its classic stack (`verifiers.MultiTurnEnv`: 0.3; 0.4 dropped it)."""
    try:
        return importlib.util.find_spec("verifiers.legacy") is not None
    except ImportError:
        return False


# ---------------------------------------------------------------- one episode (both versions)

class RolloutEpisode:
    """One rollout's episode: started at its query and seed, one `env.step` per model reply, and its ending
    (`UTP_KEY`'s JSON) once the env ended it or `finish` did."""

    def __init__(self, env: str, profile: str, db_path: str | None, world: int, max_turns: int,
                 query_id: str, seed: int) -> None:
        from utp_env.env.engine import EpisodeEngine
        from utp_env.serve.session import env_class

        self.engine = EpisodeEngine(env_class(env)(db_path=db_path, profile=profile, world=world,
                                                   config={"step_limit": max_turns}))
        self.engine.start(seed=seed, query_id=query_id)
        self.ending: dict[str, Any] | None = None

    def tools(self) -> list[dict[str, Any]]:
        """The env's tools as OpenAI function schemas in plain JSON."""
        return _plain(self.engine.env.openai_tools())

    def reply(self, calls: list[tuple[str, str, str]]) -> list[str]:
        """The answers to one reply's tool calls, (id, name, arguments JSON text) each, played as ONE step."""
        from utp_env.env.core import split_answers

        entries = [{"id": i, "type": "function", "function": {"name": name, "arguments": arguments}}
                   for i, name, arguments in calls]
        observation, reward, terminated, truncated, info = self.engine.env.step(entries)
        if terminated or truncated:
            self.ending = _ending(reward, info)
        return split_answers(observation, len(calls))

    def finish(self, last_text: str) -> dict[str, Any]:
        """The episode's ending, ending it first if the model left it open (module docstring); closes the env."""
        try:
            if self.ending is None:
                answer = self.engine.finish(last_text, STOPPED)
                self.ending = _ending(answer.reward, answer.info)
            return self.ending
        finally:
            self.engine.close()


def env_tools(env: str, profile: str, db_path: str | None, world: int, max_turns: int) -> list[dict[str, Any]]:
    """The env's tools as OpenAI function schemas in plain JSON (the same for every episode)."""
    from utp_env.serve.session import env_class

    probe = env_class(env)(db_path=db_path, profile=profile, world=world, config={"step_limit": max_turns})
    try:
        return _plain(probe.openai_tools())
    finally:
        probe.close()


def _plain(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from utp_env.env.engine import json_safe

    return [json_safe(tool) for tool in tools]


def _ending(reward: float, info: dict[str, Any]) -> dict[str, Any]:
    from utp_env.env.engine import json_safe
    from utp_env.evaluation.aggregate import counted_report

    keep = ("termination_reason", "final_pass", "metrics", "error", "message")
    delivered = counted_report(info.get("plan"), info.get("report")) is not None
    return {"reward": float(reward), "delivered": delivered, **json_safe({k: info.get(k) for k in keep})}


def _reward(ending: dict[str, Any] | None) -> float:
    return float((ending or {}).get("reward", 0.0))


def _final_pass(ending: dict[str, Any] | None) -> float:
    return float(bool((ending or {}).get("final_pass")))


def _delivered(ending: dict[str, Any] | None) -> float:
    return float(bool((ending or {}).get("delivered")))


# ---------------------------------------------------------------- the arguments and the dataset

def check_arguments(split: Any, eval_split: Any, limit: Any, seed: Any, max_turns: Any, world: Any) -> None:
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


def task_rows(split: str, profile: str = "full", db_path: str | None = None, world: int = 0, limit: int | None = None,
              seed: int = 0, env: str = "UTP-v0", max_turns: int = 60,
              where: str = "load_environment") -> list[dict[str, Any]]:
    """The tasks of a split: prompt (the env's task text for the query and `seed`, with the step limit
    `max_turns` it states), info (query id, seed) and example_id, in query-id order."""
    from utp_env.env.config import open_database, split_pool
    from utp_env.serve.session import env_class

    db = open_database(db_path, profile, world)
    try:
        queries = split_pool(db, split, limit)
    except ValueError as exc:
        raise ValueError(f"{where}: split: {exc}") from None
    base = env_class(env)(db_path=db_path, profile=profile, world=world, config={"step_limit": max_turns})
    rows = []
    for i, query in enumerate(queries):
        text, _ = base.reset(seed=seed, options={"query_id": query.query_id})
        rows.append({"prompt": [{"role": "user", "content": text}], "example_id": i,
                     "info": {"query_id": query.query_id, "seed": seed}})
    base.close()
    return rows


def load_environment(split: str = "train", eval_split: str = "validation", profile: str = "full",
                     db_path: str | None = None, world: int = 0, limit: int | None = None, seed: int = 0,
                     env: str = "UTP-v0", max_turns: int = 60, system_prompt: str = SYSTEM_PROMPT,
                     **kwargs: Any) -> Any:
    """The utp-env verifiers 0.3 environment (module docstring). `limit`: at most this many queries per
    dataset; `seed`: the episodes' seed; `env`: `UTP-v0` or `UTP-Replan-v0`; `max_turns`: model turns (also
    the env's step limit); other keyword arguments go to `verifiers.MultiTurnEnv`. With verifiers 0.4, whose
    loader takes the `UTPTaskset` itself, a one-line error saying how to use it."""
    if not has_classic_api():
        vf = _import("verifiers")
        raise RuntimeError(f"load_environment is the verifiers 0.3 entry point; verifiers "
                           f"{getattr(vf, '__version__', '?')} loads utp-env's taskset by its id: vf-eval utp-env "
                           "--env.taskset.split validation (docs/RL.md \"verifiers\")")
    vf = _import("verifiers")
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

    settings = {"env": env, "profile": profile, "db_path": db_path, "world": world, "max_turns": max_turns}
    return _classic_class(vf)(settings, dataset=rows_of(split), eval_dataset=rows_of(eval_split),
                              system_prompt=system_prompt, **kwargs)


# ---------------------------------------------------------------- verifiers 0.3: the classic MultiTurnEnv

@cache
def _classic_class(vf: Any) -> Any:
    class UTPMultiTurnEnv(vf.MultiTurnEnv):
        """utp-env episodes as a verifiers 0.3 multi-turn environment (module docstring)."""

        def __init__(self, settings: dict[str, Any], **kwargs: Any) -> None:
            self.settings = settings
            tools = [{"name": t["function"]["name"], "description": t["function"]["description"],
                      "parameters": t["function"]["parameters"]} for t in env_tools(**settings)]
            self.episodes: dict[str, RolloutEpisode] = {}
            rubric = vf.Rubric()
            rubric.add_reward_func(self.utp_reward)
            rubric.add_metric(self.final_pass)
            rubric.add_metric(self.delivered)
            super().__init__(max_turns=settings["max_turns"], tool_defs=tools, rubric=rubric, **kwargs)

        async def setup_state(self, state: Any, **kwargs: Any) -> Any:
            info = state["info"]
            self.episodes[state["trajectory_id"]] = RolloutEpisode(
                query_id=str(info["query_id"]), seed=int(info["seed"]), **self.settings)
            return state

        @vf.stop  # type: ignore[untyped-decorator]
        async def episode_ended(self, state: Any, **kwargs: Any) -> bool:
            episode = self.episodes.get(state["trajectory_id"])
            return episode is None or episode.ending is not None

        async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
            episode = self.episodes[state["trajectory_id"]]
            calls = list(getattr(messages[-1], "tool_calls", None) or [])
            if not calls:
                left = self.max_turns - len(state["trajectory"])
                return [vf.UserMessage(content=NUDGE.format(left=left))]
            texts = episode.reply([(c.id, c.name, c.arguments) for c in calls])
            answers = [vf.ToolMessage(content=text, tool_call_id=c.id) for c, text in zip(calls, texts, strict=True)]
            if episode.ending is not None:
                state["final_env_response"] = answers
            return answers

        @vf.cleanup  # type: ignore[untyped-decorator]
        async def end_episode(self, state: Any, **kwargs: Any) -> None:
            """Keep the episode's ending, ending it first if the model left it open (module docstring)."""
            episode = self.episodes.pop(state.get("trajectory_id"), None)
            if episode is not None:
                state[UTP_KEY] = episode.finish(_last_text(state))

        async def utp_reward(self, state: Any, **kwargs: Any) -> float:
            """The env's reward of the episode (0 when it never started)."""
            return _reward(state.get(UTP_KEY))

        async def final_pass(self, state: Any, **kwargs: Any) -> float:
            return _final_pass(state.get(UTP_KEY))

        async def delivered(self, state: Any, **kwargs: Any) -> float:
            return _delivered(state.get(UTP_KEY))

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


# ---------------------------------------------------------------- verifiers 0.4: taskset, harness, env

PLUGINS = ("UTPTaskset", "UTPHarness", "UTPVerifiersEnv")
"""The verifiers 0.4 plugin classes, which `utp_env.__all__` exports when verifiers is installed (its loader
takes each kind of plugin from there)."""
V1_CLASSES = (*PLUGINS, "UTPTask", "UTPTaskData", "UTPTasksetConfig", "UTPEnvConfig")
"""The classes this module builds from verifiers' own on first use (module `__getattr__`)."""
HARNESS_ID = "utp-env"


def __getattr__(name: str) -> Any:
    if name not in V1_CLASSES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = _v1_classes()[name]
    globals()[name] = value  # later reads skip this function
    return value


@cache
def _v1_classes() -> dict[str, Any]:
    vf: Any = _import("verifiers.v1")
    from pydantic import Field, field_validator

    from utp_env.serve.session import env_class

    class UTPTaskData(vf.TaskData):
        """One task: its episode's query and seed, and the env settings the harness opens it with."""

        query_id: str
        seed: int
        env: str = "UTP-v0"
        profile: str = "full"
        db_path: str | None = None
        world: int = 0
        max_turns: int = 60

    class UTPTask(vf.Task[UTPTaskData, vf.State, vf.TaskConfig]):
        """A query's episode, scored by the env's reward (module docstring)."""

        @property
        def key(self) -> str:
            return f"{self.data.query_id}@{self.data.seed}"

        async def setup(self, trace: Any, runtime: Any) -> None:
            harness = trace.agent.config.harness
            if harness is not None and harness.id != HARNESS_ID:
                raise ValueError(f"utp-env's tasks are played by the {HARNESS_ID!r} harness (the env's tools, one "
                                 f"env.step per reply), not {harness.id!r}: drop --env.agent.harness.id")

        @vf.reward  # type: ignore[untyped-decorator]
        async def utp_reward(self, trace: Any) -> float:
            """The env's reward of the episode (0 when it never started)."""
            return _reward(trace.info.get(UTP_KEY))

        @vf.metric  # type: ignore[untyped-decorator]
        async def final_pass(self, trace: Any) -> float:
            return _final_pass(trace.info.get(UTP_KEY))

        @vf.metric  # type: ignore[untyped-decorator]
        async def delivered(self, trace: Any) -> float:
            return _delivered(trace.info.get(UTP_KEY))

    class UTPTasksetConfig(vf.TasksetConfig):
        """`--env.taskset.*`: the split, the sandbox (profile and world, or db_path), at most `limit` queries,
        the episodes' seed, the env (UTP-v0 or UTP-Replan-v0) and the model turns (also the env's step limit)."""

        split: str = "validation"
        profile: str = "full"
        db_path: str | None = None
        world: int = Field(0, ge=0)
        limit: int | None = Field(None, ge=1)
        seed: int = Field(0, ge=0)
        env: str = "UTP-v0"
        max_turns: int = Field(60, ge=1)

        @field_validator("env")
        @classmethod
        def _known_env(cls, value: str) -> str:
            env_class(value)  # a one-line ValueError for an unknown name
            return value

    class UTPTaskset(vf.Taskset[UTPTask, UTPTasksetConfig]):
        """The queries of a split as tasks (module docstring)."""

        def load(self) -> list[Any]:
            c = self.config
            rows = task_rows(c.split, c.profile, c.db_path, c.world, c.limit, c.seed, c.env, c.max_turns,
                             where="utp-env taskset")
            settings = {"env": c.env, "profile": c.profile, "db_path": c.db_path, "world": c.world,
                        "max_turns": c.max_turns}
            return [UTPTask(UTPTaskData(name=row["info"]["query_id"], prompt=row["prompt"][0]["content"],
                                        system_prompt=SYSTEM_PROMPT, **row["info"], **settings), c.task)
                    for row in rows]

    class UTPHarness(vf.Harness):
        """The model plays the episode at verifiers' interception endpoint, in-process (module docstring)."""

        APPENDS_SYSTEM_PROMPT = True
        EXECUTES_CODE = False
        NEEDS_CONTAINER = False

        async def launch(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str,
                         mcp_urls: dict[str, str], data: Any, **kwargs: Any) -> Any:
            from openai import APIStatusError, AsyncOpenAI
            from openai.types.chat import ChatCompletionMessageFunctionToolCall as FunctionCall

            if not isinstance(getattr(data, "query_id", None), str):
                raise ValueError(f"the {HARNESS_ID!r} harness plays utp-env's tasks only (vf-eval utp-env)")
            episode = RolloutEpisode(data.env, data.profile, data.db_path, data.world, data.max_turns,
                                     data.query_id, data.seed)
            tools: list[Any] = episode.tools()
            system, prompt = self.resolve_prompt(data)
            messages: list[Any] = [{"role": "system", "content": system}] if system else []
            messages.append({"role": "user", "content": prompt})
            client = AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0)
            last_text = ""
            try:
                for turn in range(data.max_turns):
                    try:
                        completion = await client.chat.completions.create(model=ctx.model, messages=messages,
                                                                          tools=tools)
                    except APIStatusError:
                        if trace.stop_condition is not None:
                            break  # verifiers refused the turn (its turn or token limit): the episode ends below
                        raise
                    message = completion.choices[0].message
                    last_text = message.content or ""
                    calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []
                             if isinstance(c, FunctionCall)]  # the only kind of tool offered
                    messages.append({"role": "assistant", "content": message.content, **(
                        {"tool_calls": [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                        for i, n, a in calls]} if calls else {})})
                    if not calls:
                        messages.append({"role": "user", "content": NUDGE.format(left=data.max_turns - turn - 1)})
                        continue
                    answers = episode.reply(calls)
                    messages += [{"role": "tool", "tool_call_id": i, "content": text}
                                 for (i, _, _), text in zip(calls, answers, strict=True)]
                    if episode.ending is not None:
                        break
            except BaseException:
                episode.engine.close()
                raise
            finally:
                await client.close()
            trace.info[UTP_KEY] = episode.finish(last_text)
            return vf.ProgramResult(exit_code=0, stdout="", stderr="")

    class UTPEnvConfig(vf.EnvConfig):
        """The single agent seat (`--env.agent.*`), on the local subprocess runtime unless told otherwise."""

        agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())

    class UTPVerifiersEnv(vf.Env[UTPEnvConfig]):
        """One agent plays each task: verifiers' single-agent env with utp-env's default runtime."""

        async def run(self, task: Any, agents: Any) -> None:
            await agents.agent.run(task)

    return {cls.__name__: cls for cls in (UTPTaskData, UTPTask, UTPTasksetConfig, UTPTaskset, UTPHarness,
                                          UTPEnvConfig, UTPVerifiersEnv)}
