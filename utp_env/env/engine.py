"""The episode engine: how every front door plays an episode of a UTP env (docs/SERVE.md "One engine").

A front door hands an env's episodes to an agent outside gymnasium's own loop: the OpenEnv and MCP
servers (`utp_env/serve/`), the openai-agents adapter (`openai_agents.py`), TRL's environment classes
(`adapters.py`, `utp_env/rl/env.py`) and, through a server, the remote one (`utp_env/rl/remote.py`).
They all delegate here, so there is one answer to each of these questions:

- **Starting.** `start` is the env's `reset`: unknown options are refused, the defaults (a server's
  `--seed`, `--query-id`) fill in what the caller left out, and the episode gets a `token`: unique in
  this process and across restarts (a random prefix per process and a counter), carried by every
  served answer so that a client can tell its episode from any other.
- **A call without an episode.** `call` (one tool call, one `env.step`) refuses it and changes
  nothing (`Refusal.NO_EPISODE`): no default episode is started behind the caller's back. A call
  naming another episode's token is refused the same way (`Refusal.WRONG_EPISODE`), and so is a
  call after the end (`Refusal.ENDED`, whose answer repeats the kept final reward).
- **Ending.** An episode ends by the env (submit, the step limit), or from outside with `end` (the
  plan so far scored, as at the step limit); `finish` first submits an agent's last reply that
  holds a plan (`holds_plan`).
- **The reward.** The ending answer (`final`: reward and end-of-episode info) is kept until the next
  `start`; asking again (a retried call, `end` on an ended episode) gives the same answer.

The reward itself is the env's (`env.step`, `env.end_episode`); nothing here computes one. A
front door that cannot build the train split on the spot (a server: minutes of planning would hold
every other session) passes `train_refusal`, the message a start that needs the split is refused with.
"""

from __future__ import annotations

import itertools
import json
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import gymnasium as gym

from utp_env.env.core import UTPEnv
from utp_env.env.episode import TerminationReason
from utp_env.env.itinerary_tools import ENDING
from utp_env.env.replan import EXECUTION_TOOLS
from utp_env.queries.generate import TRAIN_SPLIT
from utp_env.train_split import is_train_id

_PROCESS_PREFIX = secrets.token_hex(4)
"""Random per process: two processes (a server and its restart) never issue the same episode token."""
_STARTS = itertools.count(1)

EVALUATING_TOOLS = frozenset({*ENDING, "check_plan", *EXECUTION_TOOLS})
"""Tools whose call evaluates the plan (ending it, checking it, or living the trip through): the calls
a server runs off its event loop (`EpisodeEngine.evaluates`)."""


class Refusal(StrEnum):
    """Why a tool call was not applied (the plan and the step count are unchanged)."""

    NO_EPISODE = "NO_EPISODE"
    """No episode is running in this session (never started, a failed start, or dropped)."""
    WRONG_EPISODE = "WRONG_EPISODE"
    """The call names an episode other than the session's."""
    ENDED = "EPISODE_ENDED"
    """The session's episode has ended; its final answer is kept."""


@dataclass(frozen=True)
class EpisodeDefaults:
    """What an episode starts with when the caller does not say: a server's `--seed` and `--query-id`."""

    seed: int | None = None
    query_id: str | None = None


@dataclass
class ToolAnswer:
    """One tool call's answer: the env's observation text, whether every call of it succeeded, and,
    once the episode has ended, its reward and end-of-episode info (`EpisodeOutcome.to_json()` keys,
    as in-process). `episode` is the token of the episode it belongs to; `refused` says why a call was
    not applied (None: it was)."""

    text: str
    ok: bool
    done: bool = False
    reward: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    episode: str | None = None
    refused: Refusal | None = None

    def structured(self) -> dict[str, Any]:
        """The machine-readable part: done, reward, the episode token, steps, and at the end the
        outcome (JSON-safe; the bulky `tools` and `calls` left out)."""
        return json_safe(self._structured())

    def structured_json(self, leave_out: Iterable[str] = ()) -> str:
        """`structured()` as JSON text without the keys `leave_out`, encoded once: what a server sends
        (`json.loads` of it equals `structured()` without those keys; the end of an episode carries
        its plan and report, tens of KB, which a round trip through `json_safe` would encode twice)."""
        dropped = frozenset(leave_out)
        return json_text({k: v for k, v in self._structured().items() if k not in dropped})

    def _structured(self) -> dict[str, Any]:
        out: dict[str, Any] = {"done": self.done, "reward": self.reward, "episode": self.episode}
        if self.refused is not None:
            out["refused"] = str(self.refused)
        out.update((k, v) for k, v in self.info.items() if k not in ("tools", "calls"))
        return out


def json_text(value: Any) -> str:
    """`value` as JSON text, by `json_safe`'s rule (numpy numbers through `.item()`, other objects
    through `str`): `json.loads(json_text(v)) == json_safe(v)`."""
    return json.dumps(value, default=_json_default)


def json_safe(value: Any) -> Any:
    """`value` as plain JSON types (numpy numbers through `.item()`, other objects through `str`)."""
    return json.loads(json_text(value))


def _json_default(value: Any) -> Any:
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    return str(value)


class EpisodeEngine:
    """Episodes of one env, one at a time (module docstring).

    Args:
        env: The env (a `UTPEnv` or `UTPReplanEnv`, or a gymnasium wrapper of one: it is unwrapped).
        defaults: Seed and query id of a start that names neither.
        start_call: How the caller starts an episode, for the refusals' text (`reset`, `new_episode`).
        train_refusal: When set, a start that needs the train split while it is not loaded is
            refused with this message (a server); None builds or reads it on first use (in-process).
        train_loaded: Whether the train split is already loaded (then no start is refused for it).
        options: The options a start takes besides the seed (default: every option of the env's `reset`;
            a server offers its clients the JSON ones).
    """

    def __init__(self, env: gym.Env[Any, Any], defaults: EpisodeDefaults | None = None, start_call: str = "reset",
                 train_refusal: str | None = None, train_loaded: bool = False,
                 options: Iterable[str] | None = None) -> None:
        inner = env.unwrapped
        if not isinstance(inner, UTPEnv):
            raise TypeError(f"expected a UTPEnv (or a wrapper of one), got {type(inner).__name__}")
        self.env: UTPEnv = inner
        self.defaults = defaults or EpisodeDefaults()
        self.start_call = start_call
        self.train_refusal = None if train_loaded else train_refusal
        self.options = sorted(self.env.RESET_OPTIONS if options is None else options)
        self.token: str | None = None
        self.task: str | None = None
        self.reset_info: dict[str, Any] = {}
        self.final: ToolAnswer | None = None

    # ------------------------------------------------------------ starting

    @property
    def replan(self) -> bool:
        """Whether this is the closed-loop env (its start takes a `plan`, not `stochastic`)."""
        return self.env.RESETS_FROM_PLAN

    def start(self, seed: int | None = None, **options: Any) -> tuple[str, dict[str, Any]]:
        """Start an episode: `env.reset(seed=seed, options=options)` with None values left out and a
        missing seed and query id from the defaults; returns the task text and the env's reset info.
        A bad argument is a one-line `ValueError` ('reset: ...'); the previous episode is over either way."""
        given = {k: v for k, v in options.items() if v is not None}
        self.token, self.task, self.reset_info, self.final = None, None, {}, None
        unknown = sorted(set(given) - set(self.options))
        if unknown:
            self.env.episode = None
            raise ValueError(f"reset: unknown argument(s) {unknown}; valid: {['seed', *self.options]}")
        if seed is None:
            seed = self.defaults.seed
        if "query_id" not in given and self.defaults.query_id is not None:
            given["query_id"] = self.defaults.query_id
        if self.train_refusal is not None and (given.get("split") == TRAIN_SPLIT or (
                isinstance(given.get("query_id"), str) and is_train_id(given["query_id"]))):
            self.env.episode = None
            raise ValueError(f"reset: {self.train_refusal}")
        observation, info = self.env.reset(seed=seed, options=given or None)
        self.token = f"{_PROCESS_PREFIX}-{next(_STARTS)}"
        self.task, self.reset_info = observation, info
        return observation, info

    def started(self) -> dict[str, Any]:
        """What a served start answers besides the task text: query id, seed, the env's episode id,
        the engine's episode token, the step limit and the database hash (JSON-safe)."""
        info = self.reset_info
        return json_safe({"query_id": info["query"]["query_id"], "seed": info["seed"],
                          "episode_id": info["episode_id"], "episode": self.token,
                          "step_limit": info["step_limit"], "db_hash": info["db_hash"]})

    # ------------------------------------------------------------ playing

    @property
    def running(self) -> bool:
        """Whether an episode is running (started and not ended)."""
        ep = self.env.episode
        return self.token is not None and ep is not None and not ep.done

    @property
    def done(self) -> bool:
        """Whether the session's episode has ended (and `final` holds its answer)."""
        return self.final is not None

    @property
    def reward(self) -> float:
        """The ended episode's reward; 0 while it runs or when none was started."""
        return 0.0 if self.final is None else self.final.reward

    @property
    def query_id(self) -> str | None:
        """The query of the session's episode (running or ended), or None."""
        ep = self.env.episode
        return None if self.token is None or ep is None else ep.query.query_id

    def evaluates(self, name: str) -> bool:
        """Whether a call of `name` now may evaluate the plan: an evaluating tool, any call that reaches
        the step limit (which ends the episode and scores it), and any call of an env that shapes its
        reward (the shaping term's potential evaluates the plan after every step that changes it)."""
        ep = self.env.episode
        return (name in EVALUATING_TOOLS or self.env.shaper is not None
                or (ep is not None and ep.steps + 1 >= self.env.config.step_limit))

    def start_evaluates(self, options: dict[str, Any]) -> bool:
        """Whether a `start` with `options` may evaluate a plan: the closed loop's `plan` (submitted at
        once), or an env that shapes its reward (the start's potential). Any other start draws or looks
        up its query and reads its reference plan: a lookup's work."""
        return options.get("plan") is not None or self.env.shaper is not None

    @property
    def steps(self) -> tuple[str, ...]:
        """The tool of each step the env took in the session's episode, in order (its trace)."""
        ep = self.env.episode
        return () if self.token is None or ep is None else tuple(entry.tool for entry in ep.trace)

    def refusal(self, why: Refusal, named: str | None = None) -> ToolAnswer:
        """The answer to a call that is not applied, saying why and what to do."""
        restart = f"call {self.start_call} to start one"
        if why is Refusal.NO_EPISODE:
            text = f"Error: no episode is running in this session; {restart} (nothing was done)"
            return ToolAnswer(text, ok=False, refused=why)
        if why is Refusal.WRONG_EPISODE:
            text = (f"Error: this call is for episode {named!r}, which is not this session's (its episode is "
                    f"{self.token!r}): nothing was done; {restart}")
            return ToolAnswer(text, ok=False, episode=self.token, refused=why)
        ep = self.env.episode
        status = "" if ep is None or ep.status is None else f" ({ep.status})"
        text = f"Error: the episode has ended{status}; no further tool calls are executed; {restart} anew"
        final = self.final
        return ToolAnswer(text, ok=False, done=True, reward=0.0 if final is None else final.reward,
                          info={} if final is None else final.info, episode=self.token, refused=why)

    def call(self, name: str, args: Any = None, episode: str | None = None) -> ToolAnswer:
        """One tool call as one `env.step` (answers and errors are the env's), or a refusal that changes
        nothing (module docstring). `episode`: the token the caller believes it is playing, if it says."""
        if self.token is None or self.env.episode is None:
            return self.refusal(Refusal.NO_EPISODE)
        if episode is not None and episode != self.token:
            return self.refusal(Refusal.WRONG_EPISODE, episode)
        if self.env.episode.done:
            return self.refusal(Refusal.ENDED)
        try:
            observation, reward, terminated, truncated, info = self.env.step(
                {"tool": name, "args": {} if args is None else args})
        except gym.error.ResetNeeded:
            return self.refusal(Refusal.ENDED)
        ok = bool(info.get("calls")) and all(c.get("ok") for c in info["calls"])
        if terminated or truncated:
            self.final = ToolAnswer(observation, ok=ok, done=True, reward=float(reward), info=info, episode=self.token)
            return self.final
        return ToolAnswer(observation, ok=ok, episode=self.token,
                          info={"steps": info.get("steps"), **({"phase": info["phase"]} if "phase" in info else {})})

    # ------------------------------------------------------------ ending

    def end(self, reason: TerminationReason | str = TerminationReason.STEP_LIMIT,
            message: str | None = None) -> ToolAnswer:
        """End the running episode from outside (the agent or the trainer stopped): the plan so far is
        scored (`env.end_episode`). An ended episode answers its kept final answer; no episode at all is
        a `RuntimeError`."""
        if self.final is not None:
            return self.final
        if not self.running:
            raise RuntimeError(f"no episode is running in this session; call {self.start_call} first")
        reward, info = self.env.end_episode(reason, message)
        self.final = ToolAnswer(f"Episode ended ({info.get('termination_reason')}); reward {reward:.4f}.",
                                ok=True, done=True, reward=float(reward), info=info, episode=self.token)
        return self.final

    def finish(self, final_text: Any, message: str,
               reason: TerminationReason | str = TerminationReason.STEP_LIMIT) -> ToolAnswer:
        """The episode's ending answer, ending it first if the agent did not: a last reply that holds a
        plan (`holds_plan`) is submitted with `submit_plan`; otherwise the plan built so far is scored
        with `reason` (`message` says why). `RuntimeError` when no episode was started."""
        if self.final is None and not self.running:
            raise RuntimeError(f"finish: no episode was started; call {self.start_call} first")
        if self.running and isinstance(final_text, str) and final_text and holds_plan(self.env, final_text):
            self.call("submit_plan", {"plan": final_text})
        return self.end(reason, message)

    def state(self) -> dict[str, Any]:
        """The episode as JSON for a harness (not the model): query, seed, token, steps, done, reward,
        and at the end the evaluation (`termination_reason`, `final_pass`, `metrics`, `report`, ...)."""
        ep = self.env.episode
        if self.token is None or ep is None:
            return {"started": False, "done": False, "reward": 0.0}
        out: dict[str, Any] = {"started": True, "query_id": ep.query.query_id, "seed": self.env.seed_value,
                               "episode_id": ep.episode_id, "steps": ep.steps}
        if self.final is not None:
            out.update(self.final.structured())
        else:
            out.update({"done": ep.done, "reward": 0.0, "episode": self.token})
        return out

    def close(self) -> None:
        """Drop the episode (the database stays open for everyone else)."""
        self.token, self.final = None, None
        self.env.episode = None
        self.env.close()


def holds_plan(env: UTPEnv, text: str) -> bool:
    """Whether `text` (an agent's last reply) holds a plan `parse_plan` reads for the episode's query."""
    from utp_env.plan_format import parse_plan

    ep = env.episode
    if ep is None:
        return False
    try:
        parse_plan(text, query=ep.query, db=env.db)
    except (ValueError, RecursionError):
        return False
    return True
