"""Supervised fine-tuning on the demonstrations (TRL's `SFTTrainer`), then GRPO from the checkpoint.

    python -m utp_env.rl.sft --tiny --summary sft.json            # CPU: SFT, then 2 GRPO steps
    utp-env data demos --split train --out demos.jsonl             # a real run: the demonstrations ...
    python -m utp_env.rl.sft --model Qwen/Qwen2.5-0.5B-Instruct --demos demos.jsonl --output-dir ckpt/sft
    python -m utp_env.rl.grpo_multi_turn --model ckpt/sft --split train ...   # ... then GRPO from it

The transcripts (`utp_env.rl.demos`) are tokenized with the model's chat template, tools included,
and the loss is on the assistant turns only (`assistant_masks`). The model is scored on held-out
queries (`--eval-split`, validation by default, and `--eval-world` for another world) before and
after SFT, and after GRPO when `--grpo-steps` > 0: greedy multi-turn rollouts in the env, each
`<tool_call>` of the model sent as an env step, the episode ended as at the step limit when the
model stops (`evaluate_policy`). `--summary` writes these numbers as JSON.

`--tiny` builds the two-layer tiny model of `utp_env.rl.tiny` (random weights; a tokenizer trained
on the demonstrations that keeps cities, dates and service numbers as single tokens) and short
demonstrations it can learn on a CPU, on the first `--limit` train queries (`lookup_leg_calls`):
look the trip's first leg up (buses, then trains, then flights), `add_leg` with the number the
env's answer lists, `submit`. On held-out queries it can only earn a reward by copying the task's
cities and the answer's number into its calls (docs/RL.md "SFT, then GRPO" has the numbers).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from utp_env.rl.data import MULTI_TURN_REQUEST, MULTI_TURN_SYSTEM
from utp_env.rl.recipe import DEMO_LENGTHS_FILE, load_pretrained, require_rl_extra
from utp_env.rl.tiny import TinySpec
from utp_env.rl.tiny_pretrain import Pretraining, copy_bar_refusal
from utp_env.rl.tiny_words import (
    NOT_VALUES,
    TOOL_CALL,
    tiny_sft_tools,
    tiny_word_kinds,
)
from utp_env.tools.atomic import write_text_atomic

TINY_ENV: dict[str, Any] = {"max_observation_chars": 1000, "step_limit": 16, "compact": True}
# The tiny model of the SFT run: two layers (copying a word from the context needs an attention layer
# that finds it after one that marks what precedes each word).
TINY_SFT_SPEC = TinySpec(layers=2, hidden_size=128, intermediate_size=256)
TINY_MAX_LENGTH = 4096
"""The tiny model's tokens per SFT transcript: its level-2 demonstrations run to about 1,400 (1,024, the old
value, cut every one of them before its last calls)."""
# The tiny run's demonstrations and epochs: copying the task's words into the calls (rather than the
# marginal city or date) sets in after about 6 epochs of 256 demonstrations (docs/RL.md).
TINY_DEMOS, TINY_EPOCHS = 256, 10.0


@dataclass
class SFTSummary:
    """What one SFT (and GRPO) run did and how the model scored on held-out queries."""

    model: str
    demos: int
    train_queries: list[str] = field(default_factory=list)
    sft_losses: list[float] = field(default_factory=list)
    pretrain_losses: list[float] = field(default_factory=list)
    pretrain_checks: list[tuple[int, float]] = field(default_factory=list)
    seconds_pretrain: float = 0.0
    seconds_sft: float = 0.0
    seconds_grpo: float = 0.0
    evaluations: dict[str, dict[str, Any]] = field(default_factory=dict)
    output_dir: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="SFT on the reference planner's demonstrations, then GRPO (docs/RL.md)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", help="a tool-calling chat model: a hub name or a local directory")
    which.add_argument("--tiny", action="store_true", help="the tiny local model (CPU, nothing downloaded)")
    p.add_argument("--demos", help="a demos JSONL (utp-env data demos); default: built here from --split")
    p.add_argument("--profile", choices=("full", "mini"), help="embedded sandbox (default: mini with --tiny)")
    p.add_argument("--db-path", help="a database directory instead of the embedded sandbox")
    p.add_argument("--world", type=int, default=0, help="the embedded sandbox's seed (default 0)")
    p.add_argument("--level", type=int, default=4, choices=(1, 2, 3, 4),
                   help="the level of the task trained and scored (utp_env/env/levels.py; default 4)")
    p.add_argument("--split", default="train", help="the split the demonstrations come from (default train)")
    p.add_argument("--limit", type=int, default=None, help="first N queries of --split (tiny default 256)")
    p.add_argument("--epochs", type=float, default=None, help="SFT epochs (tiny default 10, else 2; 0: the model "
                   "as it is, saved as the checkpoint)")
    p.add_argument("--learning-rate", type=float, default=None, help="SFT learning rate (tiny 5e-3, else 1e-5)")
    p.add_argument("--pretrain-steps", type=int, default=0, help="--tiny: steps of the tiny model's pretraining "
                   "before SFT (utp_env/rl/tiny_pretrain.py: copying from a JSON and from a table, on synthetic chats; "
                   "default 0)")
    p.add_argument("--pretrain-copy-bar", type=float, default=None, help="--tiny: stop pretraining once this share "
                   "of new synthetic chats is copied exactly, checked every 100 steps (--pretrain-steps is then the "
                   "most it takes; default: all of --pretrain-steps)")
    p.add_argument("--swapped-copies", type=int, default=0, help="--tiny: per demonstration, this many copies with "
                   "its cities, dates, numbers and venues renamed, trained on beside it (utp_env/rl/augment.py; "
                   "default 0)")
    p.add_argument("--frozen-values", action="store_true", help="--tiny: keep the embeddings of the world's values "
                   "(cities, dates, numbers, venues) as pretraining left them (utp_env/rl/value_embeddings.py)")
    p.add_argument("--save-start", metavar="DIR", help="also save the model as SFT receives it (built and pretrained, "
                   "or loaded) to DIR: the learning curve scores it as the point before SFT")
    p.add_argument("--max-length", type=int, default=None, help="tokens per transcript; a longer demonstration "
                   f"is refused, never cut (tiny {TINY_MAX_LENGTH}, else 16384)")
    p.add_argument("--eval-split", default="validation", help="held-out split scored before and after")
    p.add_argument("--eval-limit", type=int, default=8, help="held-out queries scored (default 8)")
    p.add_argument("--eval-world", type=int, default=None, help="also score in this world (another sandbox seed)")
    p.add_argument("--eval-db-path", help="also score on this database (another world's directory)")
    p.add_argument("--grpo-steps", type=int, default=None, help="GRPO steps from the SFT checkpoint (tiny 2, "
                   "else 0: run utp_env.rl.grpo_multi_turn --model OUTPUT_DIR yourself)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output-dir", help="the SFT checkpoint (default: a temporary directory)")
    p.add_argument("--summary", help="write the run's summary as JSON to this path")
    return p


def build_demos(args: argparse.Namespace, env_kwargs: dict[str, Any]) -> list[dict[str, Any]]:
    """The demonstrations of the run: a file, or the transcripts of the first `--limit` queries of `--split`
    at the run's level (`utp_env.rl.level_demos`: the tiny kind with `--tiny`, else the reference planner's)."""
    from utp_env.rl import demos

    if args.demos:
        return demos.read_demos(args.demos)
    from utp_env.dataset import dataset_of
    from utp_env.env.config import level_pool
    from utp_env.env.core import UTPEnv
    from utp_env.env.levels import level_task
    from utp_env.rl.level_demos import model_calls, tiny_calls

    env = UTPEnv(**env_kwargs, split=args.split, config=dict(TINY_ENV) if args.tiny else None)
    dataset = dataset_of(env.db)
    out = []
    for query in level_pool(env.db, args.split, env.level, args.limit):
        reference = dataset.reference(query.query_id)
        if reference is None:
            continue
        task = level_task(env.level, query, reference)
        if args.tiny:
            record = demos.transcript(env, query, [], reference, calls=tiny_calls(task, env.db, reference),
                                      system=MULTI_TURN_SYSTEM, request=MULTI_TURN_REQUEST,
                                      tools=tiny_sft_tools(env.level.number))
        elif env.level.whole_task:
            record = demos.transcript(env, query, demos.planner_lookups(query, env), reference)
        else:
            record = demos.transcript(env, query, [], reference, calls=model_calls(task, env, reference))
        out.append(record)
    return out


def trl_tool_schemas(names: Sequence[str] | None, env_kwargs: dict[str, Any],
                     config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The tools' schemas as TRL's GRPO trainer renders them into the prompt: from the methods of the
    TRL environment class (`transformers.utils.get_json_schema` of each), so that SFT, evaluation
    and GRPO show the model the same prompt."""
    from transformers.utils.chat_template_utils import get_json_schema

    from utp_env.env.adapters import tool_method_names
    from utp_env.rl.env import rl_env_class

    cls = rl_env_class(tools=names, config=config, **env_kwargs)
    env = cls()
    return [get_json_schema(getattr(env, name)) for name in tool_method_names(cls) if name != "get_reward"]


def prompt_head(names: Sequence[str], env_kwargs: dict[str, Any], config: dict[str, Any] | None) -> str:
    """The text every tiny prompt starts with: the system prompt and the tools' schemas as the chat
    template renders them. The tiny tokenizer's corpus repeats it, so that BPE merges it into few
    long tokens and a transcript is a few hundred tokens shorter (faster to train on a CPU)."""
    from utp_env.rl import tiny as tiny_model

    scratch = tiny_model.train_tokenizer([MULTI_TURN_SYSTEM], vocab_size=512)  # only its chat template is used
    text = str(scratch.apply_chat_template([{"role": "system", "content": MULTI_TURN_SYSTEM},
                                            {"role": "user", "content": ""}],
                                           tools=trl_tool_schemas(names, env_kwargs, config), tokenize=False))
    return text.split("<|im_start|>user", 1)[0]


class TranscriptTooLongError(ValueError):
    """A demonstration is longer than the tokens SFT trains per transcript: cut, its end (the calls that finish
    the episode, `submit` among them) would never be trained on, and the policy would learn to stop short."""


def tokenize(records: Sequence[dict[str, Any]], tokenizer: Any, max_length: int,
             tools: list[dict[str, Any]] | None = None) -> Any:
    """`input_ids` and `assistant_masks` of each transcript (the chat template with `tools`, else
    the record's own schemas); `TranscriptTooLongError` naming the longest when any is longer than
    `max_length` (nothing is cut silently)."""
    from datasets import Dataset

    from utp_env.rl.demos import chat_messages
    from utp_env.rl.tiny import training_chat_template

    template = training_chat_template(tokenizer)
    rows: dict[str, list[Any]] = {"input_ids": [], "assistant_masks": []}
    too_long: list[tuple[int, str]] = []
    for index, record in enumerate(records):
        schemas = tools or record.get("tools") or None
        out = tokenizer.apply_chat_template(chat_messages(record["messages"]), tools=schemas, chat_template=template,
                                            tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
        if len(out["input_ids"]) > max_length:
            too_long.append((len(out["input_ids"]), str(record.get("query_id") or f"transcript {index + 1}")))
        rows["input_ids"].append(list(out["input_ids"]))
        rows["assistant_masks"].append(list(out["assistant_masks"]))
    if too_long:
        longest, name = max(too_long)
        raise TranscriptTooLongError(
            f"{len(too_long)} of {len(records)} demonstrations are longer than --max-length {max_length} tokens (the "
            f"longest, {name}, is {longest}); cut, their ends would not be trained on: give --max-length {longest} "
            "or more (an option of utp_env.rl.sft)")
    return Dataset.from_dict(rows)


def demo_lengths(records: Sequence[dict[str, Any]], dataset: Any, level: int,
                 env_config: dict[str, Any] | None) -> dict[str, Any]:
    """The longest completion (tokens from the first assistant token to the end) of the tokenized demonstrations
    with its query id, the longest transcript, and what they demonstrated (the level, compact mode and observation
    cap: a rollout of another kind is not held to their length)."""
    totals = [len(ids) for ids in dataset["input_ids"]]
    completions = [len(mask) - (list(mask).index(1) if 1 in mask else len(mask)) for mask in dataset["assistant_masks"]]
    longest = max(range(len(totals)), key=lambda i: completions[i])
    config = env_config or {}
    return {"longest_completion": completions[longest], "query_id": records[longest].get("query_id"),
            "longest_transcript": max(totals),
            "demonstrated": {"level": level, "compact": bool(config.get("compact")),
                             "max_observation_chars": config.get("max_observation_chars")}}


def checked_dataset(records: Sequence[dict[str, Any]], tokenizer: Any, max_length: int,
                    tools: list[dict[str, Any]] | None) -> Any:
    """`tokenize`, with a too-long demonstration refused as a one-line SystemExit (before any training)."""
    try:
        return tokenize(records, tokenizer, max_length, tools)
    except TranscriptTooLongError as e:
        raise SystemExit(f"utp_env.rl.sft: {e}") from None


def held_out_of_demos(demonstrated: Sequence[str], env_kwargs: dict[str, Any],
                      targets: dict[str, tuple[dict[str, Any], str]]) -> None:
    """Exit with one line when a query scored as held out (a target other than `seen` in the
    training world) is one of the demonstrated queries: the held-out numbers would be contaminated."""
    from utp_env.env.config import split_pool
    from utp_env.env.core import UTPEnv

    for name, (kwargs, split) in targets.items():
        if name == "seen" or kwargs != env_kwargs:
            continue
        leaked = set(demonstrated) & {q.query_id for q in split_pool(UTPEnv(**kwargs, split=split).db, split)}
        if leaked:
            raise SystemExit(f"--eval-split {split}: {len(leaked)} of its queries are demonstrations (e.g. "
                             f"{min(leaked)}); score on a split the demonstrations do not come from")


def evaluate_policy(model: Any, tokenizer: Any, env_kwargs: dict[str, Any], split: str, limit: int,
                    schemas: list[dict[str, Any]], config: dict[str, Any] | None, *, system: str, request: str,
                    max_new_tokens: int = 256, rounds: int = 12, batch_size: int = 16, samples: int = 1,
                    temperature: float | None = None, seed: int = 0) -> dict[str, Any]:
    """Multi-turn rollouts of `model` (greedy unless a `temperature` is given) on the first `limit`
    queries of `split`: each `<tool_call>{...}</tool_call>` it writes is one env step; the episode ends
    at `submit`, the env's step limit, `rounds` turns, or a turn without a tool call (then scored as at
    the step limit).
    Returns the mean reward, the rewards, the calls the env accepted, and `from_origin`: the episodes
    with an accepted `add_leg` that leaves the query's origin (a leg the task asked for, not one
    that is merely valid).

    The episodes of up to `batch_size` queries advance together: each round, one batched
    `generate` (left padding) writes the next turn of every episode still running, so that scoring
    32 queries costs a few batched calls instead of a hundred single ones.

    With a `temperature`, the turns are sampled instead, `samples` episodes per query (the rewards and
    query ids are then per episode, `samples` in a row per query): the expected reward of the policy
    GRPO trains, which samples at a temperature. The sampling is seeded by `seed` on a forked torch
    random state, so scoring twice gives the same episodes and the caller's random state (a trainer's)
    is left as it was."""
    import torch

    from utp_env.env.config import level_pool

    if samples < 1 or (samples > 1 and temperature is None):
        raise ValueError(f"samples must be 1 for greedy rollouts and at least 1 with a temperature, not {samples}")
    if temperature is not None and not temperature > 0:
        raise ValueError(f"temperature must be above 0 for sampled rollouts (None: greedy), not {temperature}")
    env = open_env(env_kwargs, split, config)
    queries = [q for q in level_pool(env.db, split, env.level, limit) for _ in range(samples)]
    device = getattr(model, "device", None)
    cuda = [device.index or 0] if device is not None and device.type == "cuda" else []
    with torch.random.fork_rng(devices=cuda):
        torch.manual_seed(seed)
        return _roll_out(model, tokenizer, env_kwargs, split, queries, schemas, config, system=system, request=request,
                         max_new_tokens=max_new_tokens, rounds=rounds, batch_size=batch_size, temperature=temperature)


def _roll_out(model: Any, tokenizer: Any, env_kwargs: dict[str, Any], split: str, queries: list[Any],
              schemas: list[dict[str, Any]], config: dict[str, Any] | None, *, system: str, request: str,
              max_new_tokens: int, rounds: int, batch_size: int, temperature: float | None) -> dict[str, Any]:
    """`evaluate_policy`'s episodes, one per entry of `queries`."""
    from utp_env.env.core import UTPEnv

    rewards: list[float] = []
    successes: list[bool] = []
    plans: list[dict[str, Any] | None] = []
    calls = accepted = from_origin = 0
    model.eval()
    for first in range(0, len(queries), batch_size):
        envs = [UTPEnv(**env_kwargs, split=split, config=config) for _ in queries[first:first + batch_size]]
        episodes = [_Rollout(env, query, system, request) for env, query in zip(envs, queries[first:first + batch_size],
                                                                                strict=True)]
        for _ in range(rounds):
            running = [e for e in episodes if not e.done]
            if not running:
                break
            texts = _generate(model, tokenizer, [e.messages for e in running], schemas, max_new_tokens, temperature)
            for episode, text in zip(running, texts, strict=True):
                episode.act(text)
        for episode in episodes:
            episode.close()
            rewards.append(episode.reward)
            successes.append(episode.success)
            plans.append(episode.plan)
            calls += episode.calls
            accepted += episode.accepted
            from_origin += int(episode.grounded)
    mean = sum(rewards) / len(rewards) if rewards else 0.0
    return {"mean_reward": mean, "rewards": rewards, "success": sum(successes) / len(successes) if successes else 0.0,
            "successes": successes, "tool_calls": calls, "accepted_calls": accepted,
            "from_origin": from_origin, "queries": len(rewards), "query_ids": [q.query_id for q in queries],
            "plans": plans}


def open_env(env_kwargs: dict[str, Any], split: str, config: dict[str, Any] | None) -> Any:
    """An env of `env_kwargs` on `split` (its database is the process's shared one)."""
    from utp_env.env.core import UTPEnv

    return UTPEnv(**env_kwargs, split=split, config=config)


class _Rollout:
    """One evaluation episode (greedy or sampled): its messages, and what its tool calls did in the env."""

    def __init__(self, env: Any, query: Any, system: str, request: str) -> None:
        self.env, self.query = env, query
        task, _ = env.reset(seed=0, options={"query_id": query.query_id})
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                                               {"role": "user", "content": request + task}]
        self.reward, self.done, self.grounded, self.success = 0.0, False, False, False
        self.plan: dict[str, Any] | None = None  # the final plan (the `Plan` model's JSON, `info["plan"]`)
        self.calls = self.accepted = 0
        self.ended = False

    def act(self, text: str) -> None:
        """Send the turn's first tool call to the env; a turn without one (or unreadable) ends the episode."""
        found = TOOL_CALL.findall(text)
        try:
            call = json.loads(found[0]) if found else None
            name, arguments = (str(call["name"]), call.get("arguments") or {}) if isinstance(call, dict) else ("", {})
        except (json.JSONDecodeError, KeyError, TypeError):
            name, arguments = "", {}
        if not name:
            self.done = True
            return
        self.calls += 1
        observation, reward, terminated, truncated, info = self.env.step({"tool": name, "args": arguments})
        ok = all(c.get("ok") for c in info.get("calls") or [{}])
        self.accepted += int(ok)
        self.grounded = self.grounded or (ok and name == "add_leg" and isinstance(arguments, dict)
                                          and arguments.get("origin") == self.query.org)
        self.messages += [{"role": "assistant", "content": "",
                           "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}]},
                          {"role": "tool", "content": observation}]
        if terminated or truncated:
            self.reward, self.done, self.ended, self.plan = float(reward), True, True, info.get("plan")
            self.success = bool(info.get("success"))

    def close(self) -> None:
        """End an episode the model left unfinished as at the step limit (its plan so far scored)."""
        from utp_env.env.episode import TerminationReason

        if not self.ended:
            reward, info = self.env.end_episode(TerminationReason.STEP_LIMIT, message="evaluation: the model stopped")
            self.reward, self.ended, self.plan = float(reward), True, info.get("plan")
            self.success = bool(info.get("success"))


def _generate(model: Any, tokenizer: Any, conversations: list[list[dict[str, Any]]], schemas: list[dict[str, Any]],
              max_new_tokens: int, temperature: float | None = None) -> list[str]:
    """The next turn of each conversation (greedy, or sampled at `temperature`), in one left-padded batch."""
    import torch

    prompts = [tokenizer.apply_chat_template(m, tools=schemas, add_generation_prompt=True, tokenize=False)
               for m in conversations]
    side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    try:
        batch = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)
    finally:
        tokenizer.padding_side = side
    with torch.no_grad():
        sampling = {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0} if temperature else {
            "do_sample": False}
        out = model.generate(**batch, max_new_tokens=max_new_tokens, **sampling)
    width = batch["input_ids"].shape[1]
    return [tokenizer.decode(row[width:], skip_special_tokens=False) for row in out]


def main(argv: Sequence[str] | None = None) -> SFTSummary:
    """Parse the command line, fine-tune, score, optionally run GRPO from the checkpoint."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    args = parser().parse_args(argv)
    require_rl_extra()
    import torch
    from trl import SFTConfig, SFTTrainer

    tiny = bool(args.tiny)
    args.limit = args.limit if args.limit is not None else (TINY_DEMOS if tiny else None)
    epochs = args.epochs if args.epochs is not None else (TINY_EPOCHS if tiny else 2.0)
    if epochs < 0:
        raise SystemExit(f"--epochs must be 0 or more, not {epochs}")
    if args.pretrain_steps < 0 or (args.pretrain_steps and not tiny):
        raise SystemExit(f"--pretrain-steps is the tiny model's (0 or more with --tiny), not {args.pretrain_steps}"
                         + ("" if tiny else " with --model: a real model comes pretrained"))
    refusal = copy_bar_refusal(args.pretrain_copy_bar, args.pretrain_steps)
    if refusal is not None:
        raise SystemExit(refusal)
    if args.frozen_values and not tiny:
        raise SystemExit("--frozen-values is the tiny model's (with --tiny); a real model's embeddings are its own")
    if args.swapped_copies < 0 or (args.swapped_copies and not tiny):
        raise SystemExit(f"--swapped-copies is the tiny model's (0 or more with --tiny), not {args.swapped_copies}"
                         + ("" if tiny else " with --model"))
    learning_rate = args.learning_rate if args.learning_rate is not None else (5e-3 if tiny else 1e-5)
    max_length = args.max_length if args.max_length is not None else (TINY_MAX_LENGTH if tiny else 16384)
    grpo_steps = args.grpo_steps if args.grpo_steps is not None else (2 if tiny else 0)
    profile = args.profile or ("mini" if tiny else "full")
    env_kwargs: dict[str, Any] = {"db_path": args.db_path, "profile": profile, "world": args.world, "level": args.level}
    if tiny:
        torch.set_num_threads(1)
    records = build_demos(args, env_kwargs)
    if not records:
        raise SystemExit("no demonstrations: the split is empty or has no reference plans")
    # seen: the first demonstrated queries (did SFT fit them?); held_out: the eval split; other world(s).
    targets: dict[str, tuple[dict[str, Any], str]] = {"seen": (env_kwargs, args.split),
                                                      "held_out": (env_kwargs, args.eval_split)}
    if args.eval_world is not None:
        targets["other_world"] = ({**env_kwargs, "db_path": None, "world": args.eval_world}, args.eval_split)
    if args.eval_db_path:
        targets["other_db"] = ({**env_kwargs, "db_path": args.eval_db_path, "world": 0}, args.eval_split)
    held_out_of_demos([r["query_id"] for r in records], env_kwargs, targets)
    system, request = (MULTI_TURN_SYSTEM, MULTI_TURN_REQUEST) if tiny else (records[0]["messages"][0]["content"], "")
    eval_config = dict(TINY_ENV) if tiny else dict(records[0].get("env_config") or {}) or None
    tool_names = tiny_sft_tools(args.level) if tiny else tuple(t["function"]["name"] for t in records[0]["tools"])
    schemas = trl_tool_schemas(tool_names, env_kwargs, eval_config)
    pretraining: Pretraining | None = None
    seconds_pretrain = 0.0
    trained_on = records
    if tiny:
        from utp_env.env.core import UTPEnv
        from utp_env.rl import tiny as tiny_model
        from utp_env.rl.augment import with_swapped_copies
        from utp_env.rl.recipe import WRITTEN_WEIGHT, _corpus
        from utp_env.rl.tiny_pretrain import pretrain, synthetic_chats

        kinds = tiny_word_kinds(UTPEnv(**env_kwargs, split=args.split).db, args.level)
        trained_on = with_swapped_copies(records, kinds, args.swapped_copies, args.seed)
        values = [w for kind, words in kinds.items() if kind not in NOT_VALUES for w in words]
        tools = tiny_sft_tools(args.level)
        sample = synthetic_chats(tools, values, random.Random(args.seed), 200) if args.pretrain_steps else []
        tokenizer = tiny_model.train_tokenizer(
            _corpus([(r["messages"], None) for r in records] + [(chat, None) for chat in sample])
            + [prompt_head(tools, env_kwargs, dict(TINY_ENV))] * WRITTEN_WEIGHT,
            words=[w for words in kinds.values() for w in words])
        train_dataset = checked_dataset(trained_on, tokenizer, max_length, schemas)  # refused before pretraining
        model = tiny_model.build_model(tokenizer, TINY_SFT_SPEC, seed=args.seed, kinds=list(kinds.values()))
        if args.pretrain_steps:
            started = time.perf_counter()
            pretraining = pretrain(model, tokenizer, tools, values, args.pretrain_steps, seed=args.seed,
                                   copy_bar=args.pretrain_copy_bar)
            seconds_pretrain = time.perf_counter() - started
        if args.frozen_values:
            from utp_env.rl.value_embeddings import freeze_value_rows, value_token_ids

            freeze_value_rows(model, value_token_ids(tokenizer, kinds))
    else:
        tokenizer, model = load_pretrained(args.model)
        train_dataset = checked_dataset(trained_on, tokenizer, max_length, schemas)
    summary = SFTSummary(model="tiny" if tiny else str(args.model), demos=len(records),
                         train_queries=[r["query_id"] for r in records])
    if pretraining is not None:
        summary.pretrain_losses, summary.pretrain_checks = pretraining.losses, pretraining.checks
        summary.seconds_pretrain = seconds_pretrain

    def score(stage: str, policy: Any) -> None:
        if args.eval_limit < 1:  # --eval-limit 0: nothing scored (the learning curve scores the checkpoint)
            return
        for name, (kwargs, split) in targets.items():
            limit = min(args.eval_limit, len(records)) if name == "seen" else args.eval_limit
            summary.evaluations[f"{stage}/{name}"] = evaluate_policy(
                policy, tokenizer, kwargs, split, limit, schemas, eval_config, system=system, request=request,
                **({"max_new_tokens": 96} if tiny else {}))

    score("before_sft", model)
    if args.save_start:
        model.save_pretrained(args.save_start)
        tokenizer.save_pretrained(args.save_start)
    output_dir = args.output_dir or tempfile.mkdtemp(prefix="utp-sft-")
    config = SFTConfig(output_dir=output_dir, num_train_epochs=epochs, learning_rate=learning_rate,
                       per_device_train_batch_size=4 if tiny else 1, gradient_accumulation_steps=1 if tiny else 8,
                       max_length=max_length, logging_steps=5, save_strategy="no", report_to="none", seed=args.seed,
                       use_cpu=not torch.cuda.is_available(), disable_tqdm=True, lr_scheduler_type="cosine",
                       bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    trainer = SFTTrainer(model=model, args=config, train_dataset=train_dataset, processing_class=tokenizer)
    started = time.perf_counter()
    if epochs > 0:  # 0 epochs: the model as built (or loaded), saved as the checkpoint
        trainer.train()
    summary.seconds_sft = time.perf_counter() - started
    summary.sft_losses = [float(e["loss"]) for e in trainer.state.log_history if "loss" in e]
    trainer.save_model(output_dir)
    tokenizer.save_pretrained(output_dir)
    lengths = demo_lengths(trained_on, train_dataset, args.level, eval_config)
    write_text_atomic(Path(output_dir) / DEMO_LENGTHS_FILE, json.dumps(lengths) + "\n")
    summary.output_dir = output_dir
    score("after_sft", trainer.model)
    if grpo_steps > 0:
        from utp_env.rl import grpo_multi_turn

        grpo_dir = str(Path(output_dir) / "grpo")
        grpo_args = ["--model", output_dir, "--max-steps", str(grpo_steps), "--split", args.split,
                     "--output-dir", grpo_dir, "--save", "--seed", str(args.seed), "--world", str(args.world),
                     "--level", str(args.level)]
        if args.db_path:
            grpo_args += ["--db-path", args.db_path]
        else:
            grpo_args += ["--profile", profile]
        if tiny:  # the completion budget holds the longest demonstrated episode (`completion_budget_refusal`)
            budget = max(512, lengths["longest_completion"])
            grpo_args += ["--limit", str(min(args.limit or 4, 4)), "--num-generations", "4",
                          "--max-completion-length", str(budget),
                          "--learning-rate", "3e-4", "--temperature", "0.7",
                          "--step-limit", str(TINY_ENV["step_limit"]), "--max-tool-calling-iterations", "8",
                          "--max-observation-chars", str(TINY_ENV["max_observation_chars"]),
                          "--tools", ",".join(tool_names), "--compact"]
        started = time.perf_counter()
        grpo_multi_turn.main(grpo_args)
        summary.seconds_grpo = time.perf_counter() - started
        from transformers import AutoModelForCausalLM

        score("after_grpo", AutoModelForCausalLM.from_pretrained(grpo_dir))
    if args.summary:
        Path(args.summary).write_text(json.dumps(summary.to_json(), indent=2), encoding="utf-8")
    for stage, result in summary.evaluations.items():
        print(f"{stage}: mean reward {result['mean_reward']:.4f} over {result['queries']} queries, "
              f"{result['accepted_calls']}/{result['tool_calls']} tool calls accepted, "
              f"{result['from_origin']} with a leg from the origin")
    print(f"SFT: {len(records)} demonstrations, {summary.seconds_sft:.1f} s; GRPO {grpo_steps} steps "
          f"{summary.seconds_grpo:.1f} s; checkpoint {output_dir}")
    return summary


if __name__ == "__main__":
    main()
