"""`UTPEnv`: the travel-planning task as a gymnasium environment (docs/ENV.md).

One episode = one query. Actions are tool calls (lookup tools over the database and itinerary
tools over the episode's plan); observations are the tools' text answers. The reward is 0 until
the episode ends by `submit`/`submit_plan` (terminated) or at the step limit (truncated); the
final plan then goes through `finish` (`utp_env/env/episode.py`, shared with the run worker):
evaluated, rewarded with the weights of `configs/env.yaml`, optionally simulated.
A bad action never raises: it is answered with an error observation and counts as a step.

Following `step`: `actions.parse_action` reads the action, each call runs a lookup tool
(`utp_env/tools/lookup/`) or an itinerary tool (`itinerary_tools.py`) on the `Episode`
(`episode.py`), and an ended episode goes through `episode.finish`.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import EnvSpec
from pydantic import ValidationError

import utp_env.env.vector_spaces  # noqa: F401  (registers the spaces with gymnasium's vector utilities)
from utp_env.env.actions import ACTION_FORMAT, ActionError, ToolCall, parse_action
from utp_env.env.config import (
    EnvConfig,
    find_query,
    level_pool,
    load_env_config,
    open_database,
    reference_plan,
    split_pool,
    with_level,
)
from utp_env.env.episode import (
    Episode,
    EpisodeOutcome,
    TerminationReason,
    TraceEntry,
    finish,
    realisation_text,
)
from utp_env.env.given_plan import decoded_plan_json, plan_query_id, read_given_plan
from utp_env.env.ids import LEVEL_ENV_IDS
from utp_env.env.inputs import checked_options, checked_seed, checked_split, preview, reset_message
from utp_env.env.itinerary_tools import ENDING, ITINERARY_TOOLS
from utp_env.env.levels import FULL_LEVEL, LEVELS, LevelTask, LevelUnavailable, level_task
from utp_env.env.potential import Shaper
from utp_env.env.prompt import task_text
from utp_env.env.spaces import TextObservation, ToolCallSpace
from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.tools.database import Database
from utp_env.tools.errors import first_validation_error
from utp_env.tools.lookup import LOOKUP_TOOLS
from utp_env.tools.seeding import stable_int
from utp_env.tools.tool_schemas import compact_schema
from utp_env.tools.toolkit import ToolResult, ToolSpec

RESET_OPTIONS = frozenset({"query_id", "query", "split", "stochastic"})
"""The options `UTPEnv.reset` takes (`UTPEnv.RESET_OPTIONS`; the closed-loop env adds its own)."""
METADATA: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # `UTPEnv.metadata`


def episode_tools(config: EnvConfig) -> dict[str, ToolSpec[Any]]:
    """The tools an episode exposes: every lookup tool, then the itinerary tools (check_plan if
    enabled); only those of `config.tools` when it names some (ValueError naming an unknown one), else
    those the config's level offers (utp_env/env/levels.py; every tool at levels 3-4)."""
    tools: dict[str, ToolSpec[Any]] = dict(LOOKUP_TOOLS)
    for name, spec in ITINERARY_TOOLS.items():
        if name == "check_plan" and not config.check_plan:
            continue
        tools[name] = spec
    if config.tools is not None:
        unknown = [t for t in config.tools if t not in tools]
        if unknown:
            raise ValueError(f"config tools: unknown tool(s) {unknown}; known: {', '.join(tools)}")
        tools = {name: spec for name, spec in tools.items() if name in config.tools}
    elif LEVELS[config.level].tools is not None:
        offered = LEVELS[config.level].tools or ()
        tools = {name: spec for name, spec in tools.items() if name in offered}
    return tools


class UTPEnv(gym.Env[str, Any]):
    """Uncertainty-aware travel planning: plan a trip with tools, submit it, get it scored (`utp_env/UTP-v0`).

    One episode is one travel query; docs/ENV.md has the long form of each section.

    ## Action Space

    `ToolCallSpace`: one tool call or a list of at most `max_calls_per_action` of them, as a dict,
    a JSON string or OpenAI `tool_calls` entries, e.g. `{"tool": "search_flights", "args": {...}}`.
    The tools are the lookup tools over the database (`utp_env/tools/lookup/`) and the itinerary
    tools that build, check and submit the plan (`itinerary_tools.py`); `openai_tools()` gives
    their schemas. A bad action is answered with an error observation and counts as a step; it
    never raises.

    ## Observation

    Text (`TextObservation`, at most `max_observation_chars`). After `reset`: the task (request,
    trip facts, persona, risk profile, constraints, how to act, the rules every plan is checked on,
    the tools). After `step`: each call's answer in order, headed `[i/n] tool:` when there are several.

    ## Rewards

    0 on every step until the episode ends, then the plan's reward in [0, 1]
    (`utp_env/env/reward/`): the weighted mean of the terms of its table (the commonsense and
    hard pass rates, BAS, CATS, TDAS, TripCraft's temporal, spatial, ordering and persona scores),
    each scaled by how much of what the query calls for it covers; `EnvConfig.reward_weights`.

    ## Episode End

    Terminated by `submit` or `submit_plan`. Truncated at `EnvConfig.step_limit` steps, or by
    `end_episode(reason)` from outside; the plan built so far is then scored. The final `info` holds
    the `EpisodeOutcome` (`termination_reason`, `plan`, `report`, `reward`, ...; utp_env/env/episode.py).

    ## Arguments

    db_path: A database directory; default: the embedded sandbox of `profile`.
    profile: Sandbox profile when no `db_path` is given ('full' or 'mini').
    split: Query split sampled by `reset` ('validation' or 'test'); default from the config.
    config: An `EnvConfig`, a dict of overrides, or a YAML path; default `configs/env.yaml`.
    render_mode: None or 'ansi' (`render()` returns the plan as text).
    world: The seed of the embedded sandbox when no `db_path` is given: another seed is another
        world (same cities and statistics, other services, venues and names) with its own
        query set (docs/RL.md "Worlds"); default 0.
    level: The level of the task (utp_env/env/levels.py; docs/ENV.md "Levels"): 1 book the first
        leg, 2 plan one day's visits and meals, 3 a 3-day one-city trip, 4 the paper's task; default
        the config's (4). `utp_env/UTP-L<n>-v0` sets it.

    `reset` takes the options `query_id` (or a `query`), `split` and `stochastic`.
    """

    metadata: dict[str, Any] = METADATA

    # ------------------------------------------------------------ hooks a variant of the env fills in
    # A variant (the closed loop, utp_env/env/replan.py) sets these class attributes and overrides the
    # hook methods `on_submit` (what a submission does), `episode_info` (what every step says of the
    # episode's state) and `_finish` (what ends the episode and how its reward is computed).

    RESETS_FROM_PLAN: ClassVar[bool] = False
    """Whether `reset(options={"plan": ...})` starts from a given plan (the closed-loop env does)."""
    RESET_OPTIONS: ClassVar[frozenset[str]] = RESET_OPTIONS
    EXTRA_TOOLS: ClassVar[Mapping[str, ToolSpec[Any]]] = {}
    """Which extra tools the env offers beyond `episode_tools`: a new name is added; the name of an
    itinerary tool replaces that tool where the config offers it (the closed loop's `submit`)."""
    NO_STOCHASTIC: ClassVar[str | None] = None
    """Why the env takes no `stochastic` reset option (None: it takes it), named in the error."""
    task_note: str | None = None
    """A paragraph the variant adds at the end of the task text (set by its constructor)."""

    def __init__(self, db_path: str | Path | None = None, profile: str = "full", split: str | None = None,
                 config: EnvConfig | dict[str, Any] | str | Path | None = None,
                 render_mode: str | None = None, world: int = 0, level: int | None = None) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r} is not supported; use None or 'ansi'")
        self._init_args = {"db_path": None if db_path is None else str(db_path), "profile": profile,
                           "split": split, "config": config if not isinstance(config, Path) else str(config),
                           "render_mode": render_mode, "world": world, "level": level}
        self.config = with_level(load_env_config(config), level, stated=config)
        self.level = LEVELS[self.config.level]
        self.split = checked_split(split, "split") or self.config.split
        self._split_given = split is not None  # a split the caller named: a query_id of another is refused
        self.render_mode = render_mode
        self.db: Database = open_database(db_path, profile, world)
        tools = episode_tools(self.config)
        extra = {name: spec for name, spec in self.EXTRA_TOOLS.items()
                 if name in tools or (name not in ITINERARY_TOOLS and name not in LOOKUP_TOOLS)}
        self.tools: dict[str, ToolSpec[Any]] = {**tools, **extra}
        self.observation_space = TextObservation(self.config.max_observation_chars)
        self.action_space = ToolCallSpace(self.tools, self.db.cities, self.config.max_action_bytes,
                                          self.config.max_calls_per_action)
        self.episode: Episode | None = None
        self._schemas: list[dict[str, Any]] | None = None
        self.stochastic = self.config.stochastic
        self.seed_value: int | None = None
        self._reset_error: str | None = None
        self.shaper: Shaper | None = Shaper(self.config.shaping_gamma) if self.config.shaping else None

    @property
    def spec(self) -> EnvSpec | None:
        """The spec `gym.make` made the env from (gymnasium sets it after construction)."""
        return self._spec

    @spec.setter
    def spec(self, spec: EnvSpec | None) -> None:
        """Refuse a spec whose id is one level's (`utp_env/UTP-L1-v0` ...) for an env of another level:
        `gym.make("utp_env/UTP-L1-v0", level=2)` would otherwise run level 2 under level 1's id, and
        results logged by the id would be mislabelled."""
        named = next((n for n, env_id in LEVEL_ENV_IDS.items() if spec is not None and spec.id == env_id), None)
        if named is not None and named != self.level.number:
            given = spec.kwargs.get("level", self.level.number)  # type: ignore[union-attr]
            raise ValueError(f"{spec.id} is level {named}, and level={given!r} was given too: make "  # type: ignore[union-attr]
                             f"{LEVEL_ENV_IDS[self.level.number]} or drop the level argument")
        self._spec = spec

    _spec: EnvSpec | None = None

    # ------------------------------------------------------------ gymnasium API

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode on a query: `options` may name `query_id` (or give a `query`), the `split`
        to draw from, and `stochastic`. Without a query the env's generator picks one of the split.

        Every bad input (an unknown option, a wrong type, an unknown query id or split, an option
        nested deeper than `MAX_JSON_DEPTH`, ...) is a one-line `ValueError` naming the option or
        argument. A reset that fails ends the previous episode and starts none: `step` then raises
        `ResetNeeded` saying why; the generator, seed and `stochastic` are as before the call."""
        saved = self._reset_state()
        self.episode = None  # whatever follows, the previous episode is over
        self._reset_error = None
        try:
            return self._reset(checked_seed(seed), self._reset_options(options))
        except (ValueError, TypeError, RecursionError, gym.error.Error) as exc:
            message = reset_message(exc)
            self._restore_reset_state(saved, message)
            raise ValueError(message) from None
        except BaseException:
            self._restore_reset_state(saved, "reset() raised")
            raise

    def _reset(self, seed: int | None, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The work of `reset` on checked options (`_reset_options`). A plan given in `options["plan"]`
        (only where `RESETS_FROM_PLAN`) is submitted at once (`on_submit`), with its `EpisodeOutcome`
        when `options["plan_outcome"]` gives it."""
        if self.NO_STOCHASTIC is not None and "stochastic" in options:
            raise ValueError(f"reset: options['stochastic'] does not apply to {self.NO_STOCHASTIC}; drop the option")
        given = options.pop("plan", None)
        evaluated = options.pop("plan_outcome", None)
        if evaluated is not None and not (isinstance(evaluated, EpisodeOutcome) and isinstance(given, Plan)
                                          and evaluated.plan == given and evaluated.report is not None):
            raise ValueError("reset: options['plan_outcome'] must be the EpisodeOutcome (with its report) of "
                             "options['plan'], a Plan; drop it to let the env evaluate the plan")
        decoded = decoded_plan_json(given)
        named = plan_query_id(decoded) if given is not None else None
        if named and options.get("query_id") is None and options.get("query") is None:
            options["query_id"] = named  # the query the plan names, rather than a random one
        query = self._choose_query(options)  # before seeding: an unknown query id leaves the generator as it was
        task = self._level_task(query) if query is not None else None
        super().reset(seed=seed)
        if query is None:
            query = self._draw_query(options)
            task = self._level_task(query)
        self.stochastic = bool(options.get("stochastic", self.config.stochastic))
        self.seed_value = int(seed) if seed is not None else int(self.np_random.integers(0, 2**63 - 1))
        episode_id = f"{stable_int(self.seed_value, query.query_id):016x}"
        reference = reference_plan(self.db, query.query_id)
        start = Plan() if task is None else task.given.model_copy(deep=True, update={"source": "env"})
        self.episode = Episode(db=self.db, query=query, episode_id=episode_id,
                               check_plan_enabled=self.config.check_plan, reference=reference, task=task, plan=start)
        info = {"query": query.model_dump(mode="json"), "tools": self.openai_tools(),
                "db_hash": self.db.content_hash, "seed": self.seed_value, "episode_id": episode_id,
                "stochastic": self.stochastic, "step_limit": self.config.step_limit, "level": self.level.number}
        observation = self._clip(self.task_text(query))
        if self.shaper is not None:
            info.update(self.shaper.start(self))
        if given is not None:
            ep = self._require_episode()
            ep.plan = read_given_plan(decoded, query, self.db)
            if ep.plan.query_id and ep.plan.query_id != query.query_id:
                raise ValueError(f"reset: options['plan'] is a plan for {ep.plan.query_id}, not for the episode's "
                                 f"query {query.query_id}; give that query's plan, or drop options['query_id']")
            text = self.on_submit(ep, evaluated, at_reset=True)
            if text is not None:
                observation = self._clip(observation + "\n\n" + text)
        info.update(self.episode_info(self._require_episode(), at_reset=True))
        return observation, info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Execute every tool call of `action` in order and answer each; end on submit or the step limit."""
        ep = self._require_episode()
        ep.steps += 1
        calls_info: list[dict[str, Any]] = []
        try:
            calls = parse_action(action, self.config.max_action_bytes, self.config.max_calls_per_action)
        except ActionError as exc:
            text = f"Error: invalid action: {str(exc).rstrip('.')}. The plan is unchanged."
            ep.record("<invalid action>", preview(action), False, text)
            calls, answers = [], [text]
            calls_info.append({"tool": None, "ok": False, "error": str(exc), "id": None})  # the keys of every entry
        else:
            answers = [self._answer(ep, call, i, len(calls), calls_info) for i, call in enumerate(calls)]
        observation = answers[0] if len(answers) == 1 else "\n\n".join(answers)
        info: dict[str, Any] = {"steps": ep.steps, "calls": calls_info}
        if not ep.done and ep.steps >= self.config.step_limit:
            ep.status = TerminationReason.STEP_LIMIT
            observation += (f"\n\nStep limit ({self.config.step_limit}) reached: the episode ends and the plan "
                            "built so far is scored.")
        if ep.status is None:
            reward = 0.0
            if self.shaper is not None:
                reward, terms = self.shaper.step(self, reward, ended=False)
                info.update(terms)
            return self._clip(observation), reward, False, False, {**info, **self.episode_info(ep)}
        terminated = ep.status == TerminationReason.SUBMITTED
        reward, final = self._finish(ep, TerminationReason(ep.status))
        info.update(final)
        info.update(self.episode_info(ep))
        if self.shaper is not None:
            reward, terms = self.shaper.step(self, reward, ended=True)
            info.update(terms)
        return self._clip(observation), reward, terminated, not terminated, info

    def render(self) -> str | None:
        """The plan built so far as text (render_mode 'ansi')."""
        if self.render_mode != "ansi" or self.episode is None:
            return None
        from utp_env.env.plan_view import plan_text

        return plan_text(self.episode)

    # ------------------------------------------------------------ beyond gymnasium

    def end_episode(self, reason: TerminationReason | str = TerminationReason.AGENT_ERROR,
                    message: str | None = None) -> tuple[float, dict[str, Any]]:
        """End the running episode from outside (e.g. the agent crashed): score the plan so far.

        `reason` is a `TerminationReason` or its value. Returns (reward, info) with the same
        end-of-episode keys as `step`.
        """
        try:
            why = TerminationReason(reason)
        except ValueError:
            raise ValueError(f"reason must be one of {[r.value for r in TerminationReason]}, not {reason!r}") from None
        ep = self._require_episode()
        reward, info = self._finish(ep, why)
        if message:
            info["message"] = message
        return reward, info

    def openai_tools(self) -> list[dict[str, Any]]:
        """The episode's tools as OpenAI function schemas (lookup and itinerary): a new list of the shared,
        immutable per-tool schemas (tools/toolkit.py `FrozenDict`; `copy.deepcopy` thaws one)."""
        if self._schemas is None:
            self._schemas = [compact_schema(spec.openai_schema()) if self.config.compact else spec.openai_schema()
                             for spec in self.tools.values()]
        return list(self._schemas)

    def langchain_tools(self) -> list[Any]:
        """The tools as LangChain StructuredTools bound to this env's live episode (`lc_tools.py`)."""
        from utp_env.env.lc_tools import langchain_tools

        return langchain_tools(self)

    def call_tool(self, name: str, args: dict[str, Any] | str | None = None) -> ToolResult:
        """Run one tool on the current episode without counting a step (adapters count it themselves)."""
        ep = self._require_episode()
        spec = self.tools.get(name) if isinstance(name, str) else None
        if spec is None:
            from utp_env.tools.database import suggest

            close = suggest(str(name), self.tools) or list(self.tools)
            return ToolResult.failure(f"unknown tool {name!r}; did you mean: {', '.join(close)}? "
                                      f"Actions look like {ACTION_FORMAT}")
        if name in LOOKUP_TOOLS:
            return spec.invoke(self.db, args)
        if name in ENDING and ep.execution is not None:
            return ToolResult.failure(f"{name}: the plan was already submitted and the trip is under way; repair "
                                      "what is still ahead with the itinerary tools, then call continue_trip")
        result = spec.invoke(ep, args)
        if name in ENDING and result.ok and ep.status == TerminationReason.SUBMITTED:
            goes_on = self.on_submit(ep)
            if goes_on is not None:
                return ToolResult(ok=True, text=goes_on)
        return result

    def on_submit(self, ep: Episode, outcome: EpisodeOutcome | None = None, at_reset: bool = False) -> str | None:
        """Hook: what a submission does. Called when `ep`'s plan was submitted (by submit or submit_plan,
        or given to `reset`, `at_reset`, with its `outcome` when the caller has it). Here: nothing, and
        the episode ends and is scored (None). A variant that goes on (the closed loop starts the trip)
        sets `ep.status` back to None and returns the text the agent reads next."""
        return None

    def episode_info(self, ep: Episode, at_reset: bool = False) -> dict[str, Any]:
        """Hook: what the info of every `step` (and of `reset`, `at_reset`) says of the episode's state
        beyond the call results; nothing here (the closed loop says its phase and any disruption)."""
        return {}

    def task_text(self, query: Query) -> str:
        """The first observation: the request, persona, risk profile, constraints and how to act
        (`prompt.task_text`; at levels 1-2 the level's own, `prompt.level_text`), then the variant's
        `task_note`."""
        ep = self.episode
        task = ep.task if ep is not None and ep.query.query_id == query.query_id else None
        return task_text(query, self.tools, self.config, self.task_note, task)

    # ------------------------------------------------------------ internals

    def _reset_options(self, options: Any) -> dict[str, Any]:
        """`reset`'s options as a new dict, each checked for its type and depth (`inputs.py`)."""
        return checked_options(options, self.RESET_OPTIONS)

    def _reset_state(self) -> tuple[Any, ...]:
        """What a failed `reset` puts back: the generator (and its state), its seed, the seed value
        and `stochastic`."""
        rng = self._np_random
        return (rng, None if rng is None else rng.bit_generator.state, getattr(self, "_np_random_seed", None),
                self.seed_value, self.stochastic)

    def _restore_reset_state(self, saved: tuple[Any, ...], why: str) -> None:
        rng, state, rng_seed, self.seed_value, self.stochastic = saved
        self._np_random = rng
        if rng is not None:
            rng.bit_generator.state = state
        if hasattr(self, "_np_random_seed"):
            self._np_random_seed = rng_seed
        self.episode = None
        self._reset_error = why

    def _choose_query(self, options: dict[str, Any]) -> Query | None:
        """The query `options` name or give; None when the split's pool is to be drawn from."""
        if options.get("query") is not None:
            q = options["query"]
            if isinstance(q, Query):
                return q
            try:
                return Query.model_validate(q)
            except ValidationError as exc:
                why = first_validation_error(exc)
                raise ValueError(f"reset: options['query'] is not a valid query: {why}") from None
        if options.get("query_id") is not None:
            wanted = options["query_id"]
            found = find_query(self.db, wanted) if isinstance(wanted, str) else None
            named_split, where = options.get("split"), "options['split']"
            if named_split is None and self._split_given:
                named_split, where = self.split, "the env's split"
            if found is not None and named_split is not None and found.split != named_split:
                raise ValueError(f"reset: options['query_id'] {wanted!r} is a query of split {found.split!r}, not of "
                                 f"{where} {named_split!r}: give one of the two")
            if found is not None:
                return found
            raise ValueError(f"reset: options['query_id']: no query with query_id {wanted!r} in this database's "
                             "query set")
        split = options.get("split") or self.split
        try:
            split_pool(self.db, split)
        except ValueError as exc:
            raise ValueError(f"reset: options['split']: {exc}") from None
        return None

    def _draw_query(self, options: dict[str, Any]) -> Query:
        """A query drawn with the env's generator from the split of `options` (or the env's), among those
        the env's level views (`level_pool`)."""
        pool = level_pool(self.db, options.get("split") or self.split, self.level)
        return pool[int(self.np_random.integers(0, len(pool)))]

    def _level_task(self, query: Query) -> LevelTask | None:
        """The episode's view of `query` at the env's level (None at level 4: the paper's task as it is);
        a ValueError naming the query when the level has no view of it."""
        if self.level.number == FULL_LEVEL:
            return None
        try:
            return level_task(self.level, query, reference_plan(self.db, query.query_id))
        except LevelUnavailable as exc:
            raise ValueError(f"reset: {exc}; choose a query the level views, or another level") from None

    def _require_episode(self) -> Episode:
        if self.episode is None:
            if self._reset_error is not None:
                raise gym.error.ResetNeeded(f"the last reset() failed and started no episode ({self._reset_error}); "
                                            "call reset() again with valid arguments")
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.episode.done:
            raise gym.error.ResetNeeded(f"the episode has ended ({self.episode.status}); call reset()")
        return self.episode

    def _answer(self, ep: Episode, call: ToolCall, i: int, n: int, calls_info: list[dict[str, Any]]) -> str:
        head = f"[{i + 1}/{n}] {call.tool}: " if n > 1 else ""
        if ep.done:
            result = ToolResult.failure(f"not executed: the episode already ended ({ep.status}) by an earlier "
                                        "call of this action.")
        else:
            try:
                result = self.call_tool(call.tool, call.args)
            except Exception as exc:  # a bug in a tool must not kill a run; it ends the episode instead
                ep.status = TerminationReason.INFRASTRUCTURE_ERROR
                result = ToolResult.failure(f"internal error in tool {call.tool!r}: {type(exc).__name__}: {exc}")
                calls_info.append({"tool": call.tool, "ok": False, "error": result.error, "id": call.call_id,
                                   "traceback": traceback.format_exc(limit=8)})
                ep.record(call.tool, call.args, False, result.text, call.call_id)
                return head + result.text
        calls_info.append({"tool": call.tool, "ok": result.ok, "error": result.error, "id": call.call_id})
        ep.record(call.tool, call.args, result.ok, result.text, call.call_id)
        if not result.ok and call.tool in ITINERARY_TOOLS:
            text = result.text.rstrip()
            return head + text + ("" if text.endswith((".", "!", "?")) else ".") + " The plan is unchanged."
        return head + result.text

    def _finish(self, ep: Episode, reason: TerminationReason) -> tuple[float, dict[str, Any]]:
        """Hook: end `ep` for `reason` and compute its reward; (reward, end-of-episode info). Here through
        the shared `finish` step (utp_env/env/episode.py): the plan's evaluation and reward."""
        outcome = finish(reason, ep.plan, ep.query, ep.db, weights=self.config.reward_weights,
                         reference=ep.reference, task=ep.task,
                         rollouts=self.config.robustness_rollouts if self.config.robustness else 0,
                         rollout_seed=stable_int(ep.episode_id, "robustness") if self.config.robustness else 0,
                         rng=self.np_random if self.stochastic else None)
        ep.status = outcome.termination_reason
        info: dict[str, Any] = {"episode_id": ep.episode_id, "steps": ep.steps, "level": self.level.number,
                                **outcome.to_json()}
        if outcome.realisation is not None:
            info["realisation_text"] = realisation_text(outcome.realisation)
        return outcome.reward, info

    def _clip(self, text: str) -> str:
        limit = self.config.max_observation_chars
        if len(text) <= limit:
            return text
        note = f"\n… [cut: {len(text) - limit + 200} more characters; ask for fewer rows]"
        return text[: limit - len(note) - 200] + note

    # ------------------------------------------------------------ pickling: rebuild from constructor args

    def __getstate__(self) -> dict[str, Any]:
        ep = self.episode
        saved = None if ep is None else {
            "query": ep.query.model_dump(mode="json"), "episode_id": ep.episode_id,
            "plan": ep.plan.model_dump(mode="json"), "steps": ep.steps, "status": ep.status,
            "trace": [t.to_dict() for t in ep.trace], "execution": ep.execution}
        rng = None if self._np_random is None else self._np_random.bit_generator.state
        return {"init": self._init_args, "rng": rng, "stochastic": self.stochastic,
                "seed_value": self.seed_value, "episode": saved}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, **state["init"])
        if state["rng"] is not None:
            self._np_random = np.random.Generator(getattr(np.random, state["rng"]["bit_generator"])())
            self._np_random.bit_generator.state = state["rng"]
        self.stochastic, self.seed_value = state["stochastic"], state["seed_value"]
        saved = state["episode"]
        if saved is not None:
            query = Query.model_validate(saved["query"])
            status = saved["status"]
            self.episode = Episode(db=self.db, query=query, episode_id=saved["episode_id"],
                                   plan=Plan.model_validate(saved["plan"]), steps=saved["steps"],
                                   status=None if status in (None, "running") else TerminationReason(status),
                                   trace=[TraceEntry(**t) for t in saved["trace"]],
                                   check_plan_enabled=self.config.check_plan,
                                   reference=reference_plan(self.db, query.query_id), task=self._level_task(query))
            if saved["execution"] is not None:  # the phase after submission pickles itself, without the episode
                saved["execution"].attach(self.episode)


def split_answers(observation: str, n: int) -> list[str]:
    """The env's combined observation of an n-call step, one answer per call (for a chat history that
    answers each tool call with its own message: the tool-calling agent, the verifiers environment).

    `UTPEnv.step` prefixes answers with `[i/n] tool: ` and joins them with blank lines; if the split
    does not find exactly n parts, the whole text answers the first call and the others point to it.
    """
    if n == 1:
        return [observation]
    parts = re.split(rf"\n\n(?=\[\d+/{n}\] )", observation)
    if len(parts) == n:
        return parts
    return [observation] + [f"(answered together with the first call of this step: {observation[:80]}...)"] * (n - 1)
