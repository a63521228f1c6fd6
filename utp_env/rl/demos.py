"""Demonstrations: the reference planner's episodes as tool-calling chat transcripts.

One transcript per query of a split, in the chat format TRL's `SFTTrainer` and OpenAI fine-tuning
read: a system message, the user message (the env's task text, what `reset` returns), then one
assistant message per tool call (`tool_calls` with one OpenAI function call, `arguments` a JSON
string) each followed by a `tool` message holding the env's real answer to that call. The calls
are the lookups the reference planner made for the query (its `Toolkit` trace, repeats dropped,
in order), then `submit_plan` with the query's reference plan in the paper's JSON day format; the
last tool message is the env's answer to the submission. Every call is sent to a live `UTPEnv`,
so the tool messages are the env's observations under the recorded env config, and the record
carries the env's final reward, termination reason and evaluation report.

`replay(record)` sends the assistant calls of a transcript to a fresh env and returns what it
answered, the plan and the reward; the tests check that every transcript replays to its own tool
messages, to the reference plan and to the reference plan's reward.

Token counts are approximate unless a tokenizer is given: `approx_tokens` counts one token per 4
characters (rounded up) of every message's content and tool-call arguments and of the JSON of the
tool schemas; the rule over-counts English prose slightly for BPE tokenizers of 100k+ vocabularies
and under-counts digits-heavy tables (dates, times, fares). With `max_tokens`, a transcript over
the cap loses its last lookups one by one (the plan submitted is unchanged); one that does not fit
without lookups is left out (counted in `DemoSummary.over_cap`).

`closed_loop=True` records the closed-loop env (`utp_env/UTP-Replan-v0`, docs/REPLAN.md) instead:
the same lookups and submission, then the trip lived through the reset seed's reality. At each
disruption report the reference planner's repair policy (agents/reference/repair.py) sends its
repairs as tool calls, recorded like the lookups, then `continue_trip`; the transcript ends with the
env's answer to the call that ended the trip, and its reward is the realised reward. A token cap
drops lookups only: a repair answers the report before it and cannot be dropped.

This module composes the layers (it runs the reference planner of `utp_env.agents`), like the CLI.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, SupportsFloat

import gymnasium as gym

from utp_env.env import ENV_ID, REPLAN_ENV_ID
from utp_env.env.core import UTPEnv
from utp_env.env.episode import TerminationReason, finish
from utp_env.env.replan import UTPReplanEnv
from utp_env.itinerary import Plan
from utp_env.plan_format import format_plan
from utp_env.query import Query
from utp_env.runs.replan_episode import StepRecorder
from utp_env.tools.atomic import remove_stale_temporaries, write_with_atomic

if TYPE_CHECKING:
    from datasets import Dataset

DEMO_SYSTEM = ("You plan trips within India by calling the tools. Look up the transport, stays and venues you "
               "need, then submit the whole plan with submit_plan in the JSON day format.")
CHARS_PER_TOKEN = 4  # approx_tokens: one token per 4 characters, rounded up (module docstring)
DEFAULT_OBSERVATION_CHARS = 8000  # the env's cap on each tool answer in demonstrations (REAL_DEFAULTS in recipe)
DemoFormat = Literal["trl", "openai"]
# The env config of demonstrations: long enough for every lookup, the submission and the repairs.
DEMO_STEP_LIMIT = 400
MAX_CONTINUES = 64  # continue_trip calls of one closed-loop transcript: far above the env's disruption bound
Repair = Callable[[Any, str, dict[str, Any]], None]
"""A closed-loop repair hook: `repair(env, observation, info)` at a disruption report, sending its
changes through `env.step` (the reference planner's `repair`, agents/reference/planner.py)."""


@dataclass
class DemoSummary:
    """What `write_demos` wrote."""

    split: str
    queries: int
    written: int = 0
    over_cap: int = 0
    lookups_dropped: int = 0
    tokens_mean: float | None = None  # None when none was written: a mean over nothing
    tokens_max: int = 0
    reward_mean: float | None = None
    seconds: float = 0.0
    skipped: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def approx_tokens(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> int:
    """Approximate tokens of a transcript: ceil(characters / 4) over every message's content and
    tool-call arguments and the JSON of the tool schemas (the module docstring says why)."""
    return math.ceil(_chars(messages, tools) / CHARS_PER_TOKEN)


def _chars(messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] = ()) -> int:
    chars = sum(len(json.dumps(t, ensure_ascii=False)) for t in tools)
    for message in messages:
        chars += len(message.get("content") or "")
        for call in message.get("tool_calls") or ():
            chars += len(call["function"]["name"]) + len(call["function"]["arguments"])
    return chars


def demo_env_config(max_observation_chars: int = DEFAULT_OBSERVATION_CHARS, compact: bool = False) -> dict[str, Any]:
    """The env config overrides demonstrations are recorded and replayed under (`compact`: the env's
    compact mode, short schemas and task text)."""
    return {"max_observation_chars": max_observation_chars, "step_limit": DEMO_STEP_LIMIT, "compact": compact}


def planner_lookups(query: Query, env: UTPEnv) -> list[tuple[str, dict[str, Any]]]:
    """The lookup calls the reference planner makes for `query` (name, args), in order, repeats dropped."""
    from utp_env.agents.base import Toolkit
    from utp_env.agents.reference import ReferencePlanner

    toolkit = Toolkit(env.db)
    ReferencePlanner().run(query, toolkit)
    seen: set[str] = set()
    out: list[tuple[str, dict[str, Any]]] = []
    for step in toolkit.trace.steps:
        if step.kind != "tool_call" or step.name not in env.tools:
            continue
        key = json.dumps([step.name, step.args], sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append((step.name, dict(step.args)))
    return out


def _call_message(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    arguments = json.dumps(args, ensure_ascii=False, sort_keys=True)
    return {"role": "assistant", "content": "",
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]}


class TranscriptRecorder(StepRecorder):
    """The run worker's `StepRecorder` (it remembers the last answer and whether it ended the
    episode) whose every `step` also becomes an assistant tool call and the tool message answering it.

    A step's action (`{"tool": ..., "args": ...}`, as the reference repair policy sends it, or a
    `(name, args)` pair) is turned into the OpenAI message first and that message is what the env
    receives, so a replay that sends the recorded messages sends exactly what was sent here."""

    def __init__(self, env: gym.Env[str, Any], messages: list[dict[str, Any]]) -> None:
        super().__init__(env)
        self.messages = messages

    def step(self, action: Any) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        name, args = (action["tool"], dict(action.get("args") or {})) if isinstance(action, dict) else action
        call_id = f"call_{self.steps + 1}"
        message = _call_message(call_id, name, args)
        answer = super().step(message)
        self.messages += [message, {"role": "tool", "tool_call_id": call_id, "content": answer[0]}]
        return answer


def transcript(env: UTPEnv, query: Query, lookups: Sequence[tuple[str, dict[str, Any]]], reference: Plan,
               seed: int = 0, *, calls: Sequence[tuple[str, dict[str, Any]]] | None = None,
               system: str = DEMO_SYSTEM, request: str = "", tools: Sequence[str] | None = None,
               repair: Repair | None = None) -> dict[str, Any]:
    """One demonstration: run `lookups` then `submit_plan` of `reference` in `env` on `query` and
    record the conversation with the env's answers, the reward and the report.

    `calls` replaces the lookups and the submission (the tiny recipe's `add_leg` ... `submit`);
    `system` and `request` (put before the task text) set the prompt; `tools` keeps only those
    schemas in the record (the tools the model is offered). In the closed-loop env (a
    `UTPReplanEnv`) the trip is then lived through: `repair` (required there) answers each
    disruption report, then `continue_trip`, until the trip ends."""
    closed_loop = isinstance(env, UTPReplanEnv)
    if closed_loop and repair is None:
        raise ValueError("transcript: the closed-loop env needs a repair hook (the reference planner's repair)")
    task, _ = env.reset(seed=seed, options={"query_id": query.query_id})
    messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                      {"role": "user", "content": request + task}]
    if calls is None:
        calls = [*lookups, ("submit_plan", {"plan": format_plan(reference)})]
    recorder = TranscriptRecorder(env, messages)
    for call in calls:
        recorder.step(call)
        if recorder.ended:
            break
    continues = 0
    while closed_loop and not recorder.ended and continues < MAX_CONTINUES:
        assert recorder.last is not None  # the calls end with a submission
        observation, _, _, _, info = recorder.last
        if info.get("disruption") and repair is not None:
            repair(recorder, observation, info)
            if recorder.ended:
                break
        recorder.step(("continue_trip", {}))
        continues += 1
    assert recorder.last is not None
    _, reward, _, _, info = recorder.last
    schemas = [t for t in env.openai_tools() if tools is None or t["function"]["name"] in tools]
    record = {"messages": messages, "tools": schemas, "query_id": query.query_id, "split": query.split,
              "seed": seed, "reward": float(reward), "termination_reason": info.get("termination_reason"),
              "report": info.get("report"), "lookups": len(lookups), "db_hash": env.db.content_hash,
              "env": REPLAN_ENV_ID if closed_loop else ENV_ID,
              "env_config": {k: getattr(env.config, k) for k in demo_env_config()}}
    if closed_loop:  # what the trip was: the plan's own reward, the realised terms, the disruptions met
        record["replan"] = {"plan_reward": info.get("plan_reward"), "realised_terms": info.get("realised_terms"),
                            "disruptions": len(info.get("disruptions") or ())}
    return record


def reference_reward(env: UTPEnv, query: Query, reference: Plan) -> float:
    """The reward of the reference plan, computed without the env's tools: `finish` on the plan."""
    return finish(TerminationReason.SUBMITTED, reference, query, env.db, weights=env.config.reward_weights,
                  reference=reference).reward


def demonstrations(split: str = "train", *, db_path: str | Path | None = None, profile: str = "full",
                   limit: int | None = None, max_tokens: int | None = None,
                   max_observation_chars: int = DEFAULT_OBSERVATION_CHARS, compact: bool = False,
                   closed_loop: bool = False, seed: int = 0,
                   summary: DemoSummary | None = None) -> Iterator[dict[str, Any]]:
    """Transcripts of the first `limit` queries of `split` (all by default), in query-id order, each
    episode reset with `seed`; `closed_loop`: in the closed-loop env, the reference planner's
    repairs included (module docstring), the reality lived drawn from `seed`."""
    from utp_env.dataset import dataset_of
    from utp_env.env.config import split_pool

    if max_tokens is not None and max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1 (or None for no cap), not {max_tokens}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1 (or None for the whole split), not {limit}")
    env_class = UTPReplanEnv if closed_loop else UTPEnv
    env = env_class(db_path=db_path, profile=profile, split=split,
                    config=demo_env_config(max_observation_chars, compact))
    repair = _reference_repair() if closed_loop else None
    queries = split_pool(env.db, split, limit)
    dataset = dataset_of(env.db)
    summary = summary if summary is not None else DemoSummary(split, len(queries))
    summary.queries = len(queries)
    for query in queries:
        reference = dataset.reference(query.query_id)
        if reference is None:
            summary.skipped.append(query.query_id)
            continue
        lookups = planner_lookups(query, env)
        record = transcript(env, query, lookups, reference, seed, repair=repair)
        if max_tokens is not None and approx_tokens(record["messages"], record["tools"]) > max_tokens:
            # A lookup's exchange is messages 2 + 2k, 3 + 2k; lookups change no state, so the
            # others' answers stay the same: drop from the end until it fits, then record again.
            total = _chars(record["messages"], record["tools"])
            keep = len(lookups)
            while keep and math.ceil(total / CHARS_PER_TOKEN) > max_tokens:
                keep -= 1
                total -= _chars(record["messages"][2 + 2 * keep:4 + 2 * keep])
            summary.lookups_dropped += len(lookups) - keep
            record = transcript(env, query, lookups[:keep], reference, seed, repair=repair)
            if approx_tokens(record["messages"], record["tools"]) > max_tokens:
                summary.over_cap += 1
                continue
        record["approx_tokens"] = approx_tokens(record["messages"], record["tools"])
        yield record


def _reference_repair() -> Repair:
    """The reference planner's repair hook (the planner that made the plans being demonstrated)."""
    from utp_env.agents.reference import ReferencePlanner

    return ReferencePlanner().repair


def openai_record(record: dict[str, Any]) -> dict[str, Any]:
    """The keys OpenAI's fine-tuning format takes: `messages` and `tools`."""
    return {"messages": record["messages"], "tools": record["tools"]}


def write_demos(out: str | Path, split: str = "train", *, fmt: DemoFormat = "trl", progress: bool = True,
                **kwargs: Any) -> DemoSummary:
    """Write the transcripts of `split` as JSONL to `out` (atomically); `fmt="openai"` keeps only
    `messages` and `tools`. Returns what was written."""
    import time

    from utp_env.tools.progress import progress_bar

    if fmt not in ("trl", "openai"):
        raise ValueError(f"format must be 'trl' or 'openai', not {fmt!r}")
    started = time.perf_counter()
    summary = DemoSummary(split, 0)
    tokens: list[int] = []
    rewards: list[float] = []
    records = demonstrations(split, summary=summary, **kwargs)

    def write(path: Path) -> None:  # streamed: 5,000 full-sandbox transcripts are 370 MB
        with path.open("w", encoding="utf-8", errors="backslashreplace") as fh, \
                progress_bar(None, f"demonstrations of {split}", "transcript", enabled=progress) as bar:
            for record in records:
                tokens.append(record["approx_tokens"])
                rewards.append(record["reward"])
                fh.write(json.dumps(record if fmt == "trl" else openai_record(record), ensure_ascii=False) + "\n")
                bar.update(1)

    remove_stale_temporaries(out)  # what a killed run left (the write below cleans up after itself)
    write_with_atomic(Path(out), write)
    summary.written = len(tokens)
    summary.tokens_mean = round(sum(tokens) / len(tokens), 1) if tokens else None
    summary.tokens_max = max(tokens, default=0)
    summary.reward_mean = round(sum(rewards) / len(rewards), 4) if rewards else None
    summary.seconds = round(time.perf_counter() - started, 1)
    return summary


def read_demos(path: str | Path) -> list[dict[str, Any]]:
    """The transcripts of a demos JSONL file; a bad line is a ValueError naming the file and line."""
    path = Path(path)
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or not isinstance(record.get("messages"), list):
                raise ValueError("a JSON object with a 'messages' list was expected")
        except (json.JSONDecodeError, ValueError) as exc:
            raise ValueError(f"{path} line {number}: {exc}") from None
        out.append(record)
    return out


def demo_dataset(path: str | Path) -> Dataset:
    """A demos file as a `datasets.Dataset`: `messages` (tool-call arguments stay JSON strings, as
    OpenAI's format has them, so every row has the same columns), `tools` (the schemas as one JSON
    string per row: their parameters differ per tool, which Arrow cannot hold in one column type),
    and `query_id`, `reward` when present. `chat_messages(row)` turns a row back into what a
    chat template takes."""
    from datasets import Dataset

    records = read_demos(path)
    rows: dict[str, list[Any]] = {"messages": [], "tools": [], "query_id": [], "reward": []}
    for record in records:
        rows["messages"].append([{"role": m["role"], "content": m.get("content") or "",
                                  "tool_calls": m.get("tool_calls"), "tool_call_id": m.get("tool_call_id")}
                                 for m in record["messages"]])
        rows["tools"].append(json.dumps(record.get("tools") or [], ensure_ascii=False))
        rows["query_id"].append(record.get("query_id"))
        rows["reward"].append(record.get("reward"))
    return Dataset.from_dict(rows)


def chat_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages for `tokenizer.apply_chat_template`: tool-call arguments as dicts (what the
    templates of Qwen, Llama, ... render), empty keys dropped."""
    out = []
    for m in messages:
        message: dict[str, Any] = {"role": m["role"], "content": m.get("content") or ""}
        if m.get("tool_calls"):
            message["tool_calls"] = [{"type": "function", "id": c.get("id"),
                                      "function": {"name": c["function"]["name"],
                                                   "arguments": json.loads(c["function"]["arguments"])}}
                                     for c in m["tool_calls"]]
        if m.get("tool_call_id"):
            message["tool_call_id"] = m["tool_call_id"]
        out.append(message)
    return out


@dataclass
class Replay:
    """What a fresh env answered to a transcript's calls."""

    observations_match: bool
    first_mismatch: int | None
    reward: float
    plan: Plan | None
    termination_reason: str | None


def replay(record: dict[str, Any], *, db_path: str | Path | None = None, profile: str = "full",
           env: UTPEnv | None = None) -> Replay:
    """Send the assistant calls of `record` to a fresh episode (its env, env config and seed) and
    compare each answer with the transcript's tool message."""
    env_id = record.get("env", ENV_ID)
    if env_id not in (ENV_ID, REPLAN_ENV_ID):
        raise ValueError(f"replay: the record's env {env_id!r} is neither {ENV_ID} nor {REPLAN_ENV_ID}")
    env_class = UTPReplanEnv if env_id == REPLAN_ENV_ID else UTPEnv
    if env is None:
        env = env_class(db_path=db_path, profile=profile, config=dict(record["env_config"]))
    elif type(env.unwrapped) is not env_class:
        raise ValueError(f"replay: the record was made in {env_id}; give an env of that id (or none)")
    messages = record["messages"]
    task, _ = env.reset(seed=int(record.get("seed", 0)), options={"query_id": record["query_id"]})
    mismatch = None if messages[1]["content"].endswith(task) else 1
    reward, info = 0.0, dict[str, Any]()
    for i, message in enumerate(messages):
        if message["role"] != "assistant" or not message.get("tool_calls"):
            continue
        observation, reward, terminated, truncated, info = env.step(message)
        answer = messages[i + 1]["content"] if i + 1 < len(messages) else None
        if mismatch is None and observation != answer:
            mismatch = i + 1
        if terminated or truncated:
            break
    plan = Plan.model_validate(info["plan"]) if info.get("plan") else None
    return Replay(mismatch is None, mismatch, float(reward), plan, info.get("termination_reason"))
