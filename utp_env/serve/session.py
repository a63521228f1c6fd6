"""One served episode: the env behind an MCP session or an OpenEnv session (docs/SERVE.md).

A server holds one `SessionFactory` (the env id, the database and its query set opened once, the
config) and makes an `EpisodeSession` per client session. Every session has its own env instance
(its own generator, episode and plan) over the shared, read-only database (`open_database` caches it
per process), so sessions never see each other's state. A tool call is exactly one `env.step` of
that env, so observations, rewards and reports are those of the in-process env for the same seed and
the same calls (tests/test_serve_mcp.py, tests/test_serve_openenv.py compare them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from utp_env.env import ENV_ID, REPLAN_ENV_ID
from utp_env.env.config import EnvConfig, open_database, query_pool
from utp_env.env.core import UTPEnv

ENV_NAMES = {"UTP-v0": ENV_ID, "UTP-Replan-v0": REPLAN_ENV_ID, ENV_ID: ENV_ID, REPLAN_ENV_ID: REPLAN_ENV_ID}
"""The env names a server takes (`--env`): the short ids and the registered ids."""

NEW_EPISODE = "new_episode"
"""The MCP tool that starts an episode (OpenEnv's own `reset` does it on the OpenEnv server)."""


def env_class(env: str) -> type[UTPEnv]:
    """The env class of `env` (a name of `ENV_NAMES`); a one-line `ValueError` for another name."""
    env_id = ENV_NAMES.get(env)
    if env_id is None:
        raise ValueError(f"--env: unknown env {env!r}; choose UTP-v0 or UTP-Replan-v0")
    if env_id == REPLAN_ENV_ID:
        from utp_env.env.replan import UTPReplanEnv

        return UTPReplanEnv
    return UTPEnv


@dataclass(frozen=True)
class EpisodeDefaults:
    """What an episode starts with when the client does not say: the server's `--seed`/`--query-id`."""

    seed: int | None = None
    query_id: str | None = None


@dataclass
class ToolAnswer:
    """One tool call's answer: the env's observation text, whether every call of it succeeded,
    and, once the episode has ended, its reward and end-of-episode info (`EpisodeOutcome.to_json()`
    keys, as in-process)."""

    text: str
    ok: bool
    done: bool = False
    reward: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)

    def structured(self) -> dict[str, Any]:
        """The answer's machine-readable part: done, reward, steps, and at the end the outcome (JSON-safe)."""
        out: dict[str, Any] = {"done": self.done, "reward": self.reward}
        keep = {k: v for k, v in self.info.items() if k not in ("evaluation", "tools", "calls")}
        out.update(json_safe(keep))
        return out


def json_safe(value: Any) -> Any:
    """`value` as plain JSON types (numpy numbers and other objects through `str`)."""
    return json.loads(json.dumps(value, default=_json_default))


def _json_default(value: Any) -> Any:
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    return str(value)


class SessionFactory:
    """Makes the `EpisodeSession`s of one server: one env kind, one database, one config.

    Args:
        env: `UTP-v0` or `UTP-Replan-v0` (or the registered ids).
        db_path: A database directory; default the embedded sandbox of `profile`.
        profile: Sandbox profile when no `db_path` ('full' or 'mini').
        split: The split episodes draw their query from when none is named.
        config: An env config (an `EnvConfig`, dict of overrides or YAML path).
        defaults: Seed and query id of an episode started without them.
    """

    def __init__(self, env: str = "UTP-v0", db_path: str | Path | None = None, profile: str = "full",
                 split: str | None = None, config: EnvConfig | dict[str, Any] | str | Path | None = None,
                 defaults: EpisodeDefaults | None = None) -> None:
        self.env_id = ENV_NAMES.get(env, env)
        self.env_cls = env_class(env)
        self.env_kwargs: dict[str, Any] = {"db_path": db_path, "profile": profile, "split": split, "config": config}
        self.defaults = defaults or EpisodeDefaults()

    def preload(self) -> UTPEnv:
        """Open the database and its query set now (not on the first client's call), and check the
        config and the defaults: every mistake is a one-line `ValueError` before anything is served."""
        env = self.env_cls(**self.env_kwargs)
        query_pool(open_database(self.env_kwargs["db_path"], self.env_kwargs["profile"]))
        if self.defaults.query_id is not None:
            env.reset(seed=self.defaults.seed or 0, options={"query_id": self.defaults.query_id})
        return env

    def new(self) -> EpisodeSession:
        """A session with its own env over the shared database (no episode started yet)."""
        return EpisodeSession(self.env_cls(**self.env_kwargs), self.defaults)


class EpisodeSession:
    """One client's episode: `start` is the env's `reset`, `call` one `env.step` with one tool call.

    A tool called before any `start` starts an episode with the server's defaults first (its task
    text is then what `start` with the same seed returns).
    """

    def __init__(self, env: UTPEnv, defaults: EpisodeDefaults | None = None) -> None:
        self.env = env
        self.defaults = defaults or EpisodeDefaults()
        self.task: str | None = None
        self.reset_info: dict[str, Any] = {}
        self.last: ToolAnswer | None = None  # the answer that ended the episode

    @property
    def replan(self) -> bool:
        """Whether this is the closed-loop env (its reset takes a `plan`, not `stochastic`)."""
        return self.env.RESETS_FROM_PLAN

    def reset_options(self) -> list[str]:
        """The `start` arguments besides `seed`: what the env's `reset` takes from a client."""
        return ["query_id", "split", "plan"] if self.replan else ["query_id", "split", "stochastic"]

    def start(self, seed: int | None = None, **options: Any) -> tuple[str, dict[str, Any]]:
        """Start an episode (`env.reset(seed=seed, options=options)`, None values left out; a missing seed
        and query id come from the defaults); returns the task text and the reset info. A bad argument
        is the env's one-line `ValueError` ('reset: ...')."""
        given = {k: v for k, v in options.items() if v is not None}
        unknown = sorted(set(given) - set(self.reset_options()))
        if unknown:
            raise ValueError(f"reset: unknown argument(s) {unknown}; valid: {['seed', *self.reset_options()]}")
        if seed is None:
            seed = self.defaults.seed
        if "query_id" not in given and self.defaults.query_id is not None:
            given["query_id"] = self.defaults.query_id
        observation, info = self.env.reset(seed=seed, options=given or None)
        self.task, self.reset_info, self.last = observation, info, None
        return observation, info

    def call(self, name: str, args: Any = None) -> ToolAnswer:
        """Run one tool call as one env step and answer it as the env does (bad calls: the env's error text)."""
        if self.env.episode is None and self.task is None:
            self.start()
        try:
            observation, reward, terminated, truncated, info = self.env.step(
                {"tool": name, "args": {} if args is None else args})
        except gym.error.ResetNeeded as exc:
            return ToolAnswer(f"Error: {exc} (call {NEW_EPISODE})", ok=False, done=True)
        ok = all(c.get("ok") for c in info.get("calls", [])) and bool(info.get("calls"))
        if terminated or truncated:
            self.last = ToolAnswer(observation, ok=ok, done=True, reward=float(reward), info=info)
            return self.last
        return ToolAnswer(observation, ok=ok, info={"steps": info.get("steps"), **(
            {"phase": info["phase"]} if "phase" in info else {})})

    def state(self) -> dict[str, Any]:
        """The episode as JSON for a harness (not the model): query, seed, steps, done, reward, and at
        the end the evaluation (`termination_reason`, `final_pass`, `metrics`, `report`, ...)."""
        ep = self.env.episode
        if ep is None:
            return {"started": False, "done": False, "reward": 0.0}
        out: dict[str, Any] = {"started": True, "query_id": ep.query.query_id, "seed": self.env.seed_value,
                               "episode_id": ep.episode_id, "steps": ep.steps}
        if self.last is not None and ep.done:
            out.update(self.last.structured())
        else:
            out.update({"done": ep.done, "reward": 0.0})
        return out

    def end(self, reason: str = "step_limit", message: str | None = None) -> ToolAnswer:
        """End the running episode from outside (the client stopped): the plan so far is scored."""
        reward, info = self.env.end_episode(reason, message)
        self.last = ToolAnswer(f"Episode ended ({reason}); reward {reward:.4f}.", ok=True, done=True,
                               reward=float(reward), info=info)
        return self.last

    def finish(self, final_text: str | None, message: str) -> ToolAnswer:
        """The episode's ending answer, ending it first if the agent did not: a final reply that holds a
        plan (`holds_plan`) is submitted with `submit_plan`, otherwise the plan built so far is scored as at
        the step limit (`message` says why). `RuntimeError` when no episode was started."""
        ep = self.env.episode
        if ep is None:
            raise RuntimeError("finish: no episode was started")
        if not ep.done and final_text and holds_plan(self.env, final_text):
            self.call("submit_plan", {"plan": final_text})
        ep = self.env.episode
        if ep is not None and not ep.done:
            return self.end("step_limit", message)
        assert self.last is not None
        return self.last

    def close(self) -> None:
        """Drop the episode (the database stays open for the other sessions)."""
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
