"""What the two GRPO scripts share: arguments, the tiny model, the trainer run and its summary.

`run_grpo(args, style)` builds the dataset (`utp_env.rl.data`), the model (a hub name, or with
`--tiny` the local tiny model of `utp_env.rl.tiny`, warmed up on `utp_env.rl.scripted`), a
`GRPOConfig`, and trains; it returns a `Summary`: env tool calls, rewards, losses, how far the
parameters moved, seconds per step. `--summary PATH` writes it as JSON (the CI smoke test reads it).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from utp_env.env.levels import LEVELS
from utp_env.rl.data import PromptStyle, query_dataset
from utp_env.rl.diagnostics import NoParameterChangeError, ParameterChange, ParameterSnapshot
from utp_env.rl.env import RLToolEnv, rl_env_class

# The tiny path's sizes: short completions and few rollouts, so that a step takes seconds on a CPU.
# The task text is cut to its first lines (the request, trip facts, persona, risk profile) and the model
# is offered the three tools the warm-up uses.
TINY_DEFAULTS: dict[str, Any] = {"profile": "mini", "limit": 1, "num_generations": 8, "max_completion_length": 384,
                 "learning_rate": 3e-4, "max_tool_calling_iterations": 3, "step_limit": 8,
                 "max_observation_chars": 1000, "temperature": 0.7}
LOSS_TYPES = ("grpo", "dapo", "dr_grpo", "bnpo")
"""TRL's GRPO loss normalisations the recipes offer (trl's `GRPOConfig.loss_type`)."""
TINY_TOOLS = ("add_leg", "view_plan", "submit")
TINY_LEVEL_TOOLS = {2: ("add_item", "view_plan", "submit")}
"""The tiny smoke run's tools at a level whose part is not a leg (level 2 adds items; the others add a leg)."""


def tiny_tools(level: int) -> tuple[str, ...]:
    """The tools the tiny smoke run offers at `level` (`TINY_TOOLS`, or the level's own)."""
    return TINY_LEVEL_TOOLS.get(level, TINY_TOOLS)
SMALL_MODEL = 50_000_000  # parameters: below, one CPU thread and no gradient checkpointing (both only slow it)
# A real run's defaults (a GPU, a hub model): docs/RL.md says what to change.
REAL_DEFAULTS: dict[str, Any] = {"profile": "full", "limit": None, "num_generations": 8, "max_completion_length": 8192,
                 "learning_rate": 1e-6, "max_tool_calling_iterations": 30, "step_limit": 40,
                 "max_observation_chars": 8000, "temperature": 1.0}


@dataclass
class Summary:
    """What one GRPO run did (JSON with `--summary`)."""

    style: str
    model: str
    steps: int
    queries: int
    rollouts: int = 0
    tool_calls: int = 0
    tools_called: dict[str, int] = field(default_factory=dict)
    terminations: dict[str, int] = field(default_factory=dict)
    rewards: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    logged: list[dict[str, float]] = field(default_factory=list)
    param_change_l2: float = 0.0
    param_change_max: float = 0.0
    tensors_changed: int = 0
    tensors: int = 0
    parameters: int = 0
    frac_reward_zero_std: list[float] = field(default_factory=list)
    """Per step, the share of the step's groups whose rollouts all earned the same reward (TRL's log):
    GRPO's advantage is 0 for every rollout of such a group, so it learns nothing from it."""
    warm_up_losses: list[float] = field(default_factory=list)
    seconds_setup: float = 0.0
    seconds_warm_up: float = 0.0
    seconds_per_step: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The summary as JSON-ready values."""
        return asdict(self)


def parser(description: str) -> argparse.ArgumentParser:
    """The command line both scripts take."""
    p = argparse.ArgumentParser(description=description)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", help="a causal LM with a tool-calling chat template: a hub name "
                       "(e.g. Qwen/Qwen3-0.6B) or a local directory; for a real run on a GPU")
    which.add_argument("--tiny", action="store_true", help="a tiny model built and warmed up locally (CPU, "
                       "nothing downloaded): the smoke run")
    p.add_argument("--max-steps", type=int, default=2, help="GRPO steps (default 2)")
    p.add_argument("--level", type=int, default=4, choices=sorted(LEVELS), help="the level of the task "
                   "(utp_env/env/levels.py): 1 the first leg, 2 one day's visits and meals, 3 a 3-day one-city "
                   "trip, 4 the paper's task (default)")
    p.add_argument("--profile", choices=("full", "mini"),
                   help="embedded sandbox (default: mini with --tiny, else full)")
    p.add_argument("--db-path", help="a database directory instead of the embedded sandbox")
    p.add_argument("--server", metavar="URL[,URL...]", help="multi-turn: play the episodes on `utp-env serve` "
                   "(OpenEnv) servers instead of in this process, the sessions given to the URLs in turn (their env "
                   "config must match: --config there; for the train split, start them with --split train)")
    p.add_argument("--server-token-file", dest="server_token_file", metavar="FILE",
                   help="the token the servers ask for (its first line), when they ask for one")
    p.add_argument("--split", default="train", help="query split to train on (default train: built on first use; "
                   "validation and test are held out, docs/RL.md)")
    p.add_argument("--world", type=int, default=0, help="the embedded sandbox's seed: another seed is another "
                   "world with its own queries (default 0; docs/RL.md \"Worlds\")")
    p.add_argument("--limit", type=int, help="first N queries of the split, after --skip (default: 1 with --tiny, "
                   "else all)")
    p.add_argument("--skip", type=int, default=0, help="leave out the split's first N queries (e.g. those the SFT "
                   "checkpoint's demonstrations came from); --limit counts after them")
    p.add_argument("--queries-per-step", type=int, help="queries per GRPO step, each with --num-generations "
                   "rollouts (default: all of --limit with --tiny, else 1)")
    p.add_argument("--num-generations", type=int, help="rollouts per query, G of GRPO (tiny 4, else 8)")
    p.add_argument("--max-completion-length", type=int, help="tokens per completion, tool answers included "
                   "(tiny 384, else 8192)")
    p.add_argument("--learning-rate", type=float, help="(tiny 3e-4, else 1e-6)")
    p.add_argument("--step-limit", type=int, help="env steps per episode (multi-turn; tiny 8, else 40)")
    p.add_argument("--max-tool-calling-iterations", type=int, help="TRL's cap on tool rounds per rollout")
    p.add_argument("--max-observation-chars", type=int, help="longest tool answer; longer answers are cut")
    p.add_argument("--temperature", type=float, help="sampling temperature (tiny 0.7, else 1.0)")
    p.add_argument("--beta", type=float, default=0.0, help="KL coefficient (0: no reference model)")
    p.add_argument("--loss-type", choices=LOSS_TYPES, help="TRL's GRPO loss normalisation (default TRL's, dapo: "
                   "summed over the tokens of the batch; grpo: each rollout's mean, then the mean over rollouts)")
    p.add_argument("--warm-up-steps", type=int, default=60, help="--tiny: supervised format steps")
    p.add_argument("--frozen-values", action="store_true", help="a tiny model or checkpoint: keep the embeddings of "
                   "the world's values as they are (utp_env/rl/value_embeddings.py)")
    p.add_argument("--vllm", action="store_true", help="--model on a CUDA GPU: generate the rollouts with vLLM "
                   "colocated with the trainer (TRL's vllm_mode colocate; pip install vllm), the GPU recipe's setting")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tools", help="comma-separated tools offered to the model (default: the tiny run's three with "
                   "--tiny, else all)")
    p.add_argument("--compact", action="store_true", help="the env's compact mode: short tool schemas and task "
                   "text, for small models (docs/RL.md \"Prompt length\")")
    p.add_argument("--save", action="store_true", help="save the trained model and tokenizer to --output-dir")
    p.add_argument("--allow-cut-episodes", action="store_true", help="run although --max-completion-length is "
                   "shorter than the SFT checkpoint's longest demonstrated episode (a smoke run; refused otherwise)")
    p.add_argument("--output-dir", help="checkpoints and logs (default: a temporary directory)")
    p.add_argument("--summary", help="write the run's summary as JSON to this path")
    return p


def settings(args: argparse.Namespace) -> dict[str, Any]:
    """The run's settings: the command line, else the tiny or real defaults."""
    defaults = TINY_DEFAULTS if args.tiny else REAL_DEFAULTS
    chosen = {key: getattr(args, key) if getattr(args, key, None) is not None else default
              for key, default in defaults.items()}
    if getattr(args, "skip", 0) < 0:
        raise SystemExit(f"--skip must be 0 or more, not {args.skip}")
    for key in ("max_steps", "queries_per_step", "num_generations", "max_completion_length", "step_limit",
                "max_tool_calling_iterations"):
        value = getattr(args, key, None) if key in ("max_steps", "queries_per_step") else chosen[key]
        if value is not None and value < 1:
            raise SystemExit(f"--{key.replace('_', '-')} must be at least 1, not {value}")
    if chosen["num_generations"] < 2:
        raise SystemExit("--num-generations must be at least 2: GRPO compares rollouts of the same query")
    if getattr(args, "vllm", False):
        require_vllm(tiny=args.tiny)
    return chosen


def require_vllm(tiny: bool) -> None:
    """Exit with one line when `--vllm` cannot be used: with the tiny model, without vLLM, without a CUDA GPU."""
    import importlib.util

    if tiny:
        raise SystemExit("--vllm generates a real model's rollouts on a GPU; the tiny model runs without it (drop "
                         "--vllm)")
    if importlib.util.find_spec("vllm") is None:
        raise SystemExit("--vllm needs vLLM: pip install vllm (on the GPU machine), or drop --vllm to generate with "
                         "transformers")
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("--vllm needs a CUDA GPU and none is visible; drop --vllm to generate with transformers")


RL_EXTRA = ("torch", "trl", "datasets", "accelerate", "tokenizers", "transformers")


def require_rl_extra() -> None:
    """Exit with one line naming what to install when a package of the `rl` extra is missing."""
    import importlib

    missing = []
    for name in RL_EXTRA:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise SystemExit(f"GRPO needs the rl extra, missing: {', '.join(missing)}; install it with "
                         "pip install 'utp-env[rl]' (or pip install -e \".[rl]\" in a checkout)")


def load_pretrained(name: str) -> tuple[Any, Any]:
    """The tokenizer and causal LM of `--model` (a hub name or a local directory); a model that
    cannot be loaded (offline and not cached, a misspelt name, a folder without the model's files)
    exits with one line naming it and what to do, instead of transformers' traceback."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(name, padding_side="left")
        model = AutoModelForCausalLM.from_pretrained(name, dtype="auto")
    except (OSError, ValueError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise SystemExit(f"--model {name!r}: cannot load it ({first}); give a local directory holding the "
                         "model's files, or a Hugging Face hub name on a machine that can download it "
                         "(offline, it must be in the hub cache)") from None
    return tokenizer, model


def env_config(chosen: dict[str, Any], compact: bool = False) -> dict[str, Any]:
    """The env config overrides of the run."""
    out = {"step_limit": chosen["step_limit"], "max_observation_chars": chosen["max_observation_chars"]}
    return {**out, "compact": True} if compact else out


DEMO_LENGTHS_FILE = "sft_demo_lengths.json"
"""Written into an SFT checkpoint by utp_env/rl/sft.py: the longest demonstration's tokens after its prompt (what a
rollout writes and reads, tool answers included) and what it demonstrated, so that GRPO from the checkpoint
refuses a completion budget that would cut every episode like it before its end (`completion_budget_refusal`)."""


def completion_budget_refusal(model_dir: str, max_completion_length: int, level: int,
                              env: dict[str, Any]) -> str | None:
    """The one-line refusal of a multi-turn completion budget shorter than the longest demonstration the SFT
    checkpoint at `model_dir` was trained on (its `sft_demo_lengths.json`, utp_env/rl/sft.py): every rollout that
    plays such an episode would be cut before its end and score as if it stopped. None when it fits, when the
    checkpoint has no record (a hub model, a checkpoint from elsewhere), or when its demonstrations were of another
    level or env config (compact mode, observation cap: their lengths say nothing about these rollouts)."""
    record = Path(model_dir) / DEMO_LENGTHS_FILE
    if not record.is_file():
        return None
    try:
        lengths = json.loads(record.read_text(encoding="utf-8"))
        need, demonstrated = int(lengths["longest_completion"]), lengths["demonstrated"]
    except (ValueError, KeyError, TypeError) as e:
        return f"{record}: not a record utp_env.rl.sft writes ({e}); remove it or make the checkpoint again"
    same = (demonstrated.get("level") == level and bool(demonstrated.get("compact")) == bool(env.get("compact"))
            and demonstrated.get("max_observation_chars") == env.get("max_observation_chars"))
    if not same or max_completion_length >= need:
        return None
    return (f"--max-completion-length {max_completion_length} cannot hold one demonstrated episode of {model_dir} "
            f"({need} tokens after the prompt, tool answers included: {lengths.get('query_id')}); every rollout "
            f"like it would be cut before its end: give --max-completion-length {need} or more "
            "(--allow-cut-episodes for a smoke run)")


def run_grpo(args: argparse.Namespace, style: PromptStyle, *, reward_funcs: list[Any] | None = None,
             reward_log: list[float] | None = None,
             warm_up_data: Callable[[list[dict[str, Any]], type[RLToolEnv]], Sequence[Any]] | None = None,
             use_environment: bool = True, callbacks: Sequence[Any] = (),
             env_base: type[RLToolEnv] | None = None, require_change: bool = True) -> Summary:
    """Train with GRPO for `args.max_steps` steps and summarise the run (module docstring).

    Multi-turn (`use_environment`): the env class is TRL's `environment_factory` and its `get_reward`
    the reward. Single-turn: `reward_funcs` score the completions and append each reward to
    `reward_log`. `warm_up_data(rows, env_class)` gives the tiny model's warm-up conversations.
    `callbacks` are the trainer's (`transformers.TrainerCallback`: the learning curve evaluates there);
    `env_base` a subclass of `RLToolEnv` to build the env class from (its `get_reward` is the reward).
    A run that moved no trainable tensor raises `NoParameterChangeError` (after writing `--summary`)
    unless `require_change` is False (the learning curve records such a run as it is)."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    started = time.perf_counter()
    require_rl_extra()
    import torch
    from trl import GRPOConfig, GRPOTrainer

    chosen = settings(args)
    tokenizer: Any = None
    model: Any = None
    if not args.tiny:  # before anything is built: a model that cannot be loaded fails at once
        refusal = None if not use_environment or args.allow_cut_episodes else completion_budget_refusal(
            args.model, chosen["max_completion_length"], args.level, env_config(chosen, args.compact))
        if refusal is not None:
            raise SystemExit(refusal)
        tokenizer, model = load_pretrained(args.model)
    small = args.tiny or model.num_parameters() < SMALL_MODEL
    if small:
        torch.set_num_threads(1)  # a model this small runs faster on one thread than on two contended ones
    world = {"world": args.world} if args.world else {}
    tools = tuple(t.strip() for t in args.tools.split(",") if t.strip()) if args.tools else (
        tiny_tools(args.level) if args.tiny else None)
    env_class = rl_env_class(tools=tools, base=env_base or RLToolEnv, db_path=args.db_path,
                             profile=chosen["profile"], config=env_config(chosen, args.compact), level=args.level,
                             **world)
    local_class = env_class  # the tiny model's scripted warm-up runs in this process either way
    if getattr(args, "server", None) and use_environment:
        from utp_env.rl.remote import remote_env_class
        from utp_env.serve.guard import read_token_file

        token = None if args.server_token_file is None else read_token_file(Path(args.server_token_file))
        env_class = remote_env_class([u.strip() for u in args.server.split(",") if u.strip()], tools=tools,
                                     token=token)
    dataset = query_dataset(style, split=args.split, limit=chosen["limit"], skip=getattr(args, "skip", 0),
                            db_path=args.db_path, profile=chosen["profile"], config=env_config(chosen, args.compact),
                            world=args.world, level=args.level)
    rows = [dict(r) for r in dataset]
    summary = Summary(style=style, model="tiny" if args.tiny else str(args.model), steps=args.max_steps,
                      queries=len(rows))
    if args.tiny:
        from utp_env.rl import tiny

        conversations = list(warm_up_data(rows, local_class)) if warm_up_data else []
        tokenizer = tiny.train_tokenizer(_corpus(conversations), words=tiny_tools(args.level))
        model = tiny.build_model(tokenizer, seed=args.seed)
        summary.seconds_setup = time.perf_counter() - started
        warm_started = time.perf_counter()
        if conversations:
            summary.warm_up_losses = tiny.warm_up(model, tokenizer, conversations, steps=args.warm_up_steps)
        summary.seconds_warm_up = time.perf_counter() - warm_started
    else:
        summary.seconds_setup = time.perf_counter() - started
    if getattr(args, "frozen_values", False):
        from utp_env.env.config import open_database
        from utp_env.rl.tiny_words import tiny_word_kinds
        from utp_env.rl.value_embeddings import freeze_value_rows, value_token_ids

        kinds = tiny_word_kinds(open_database(args.db_path, chosen["profile"], args.world), args.level)
        freeze_value_rows(model, value_token_ids(tokenizer, kinds))
    queries_per_step = getattr(args, "queries_per_step", None) or (len(rows) if args.tiny else 1)
    per_step = min(queries_per_step, len(rows)) * chosen["num_generations"]
    output_dir = args.output_dir or tempfile.mkdtemp(prefix="utp-grpo-")
    config = GRPOConfig(
        output_dir=output_dir, max_steps=args.max_steps, learning_rate=chosen["learning_rate"],
        per_device_train_batch_size=per_step, gradient_accumulation_steps=1,
        num_generations=chosen["num_generations"], max_completion_length=chosen["max_completion_length"],
        max_tool_calling_iterations=chosen["max_tool_calling_iterations"] if use_environment else None,
        temperature=chosen["temperature"], beta=args.beta, seed=args.seed, logging_steps=1, save_strategy="no",
        **({"loss_type": args.loss_type} if getattr(args, "loss_type", None) else {}),
        report_to="none", use_cpu=not torch.cuda.is_available(),
        bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(), disable_tqdm=True,
        gradient_checkpointing=not small,  # saves memory on a real model; only slows a tiny one
        **({"use_vllm": True, "vllm_mode": "colocate"} if getattr(args, "vllm", False) else {}),
        shuffle_dataset=not args.tiny)
    trainer = GRPOTrainer(model=model, reward_funcs=reward_funcs,
                          args=config, train_dataset=dataset, processing_class=tokenizer,
                          environment_factory=env_class if use_environment else None, callbacks=list(callbacks))
    # the trainable tensors of what the trainer trains (after any wrapping), to show that training moved them
    snapshot = ParameterSnapshot(trainer.model, seed=args.seed)
    trained = time.perf_counter()
    trainer.train()
    summary.seconds_per_step = (time.perf_counter() - trained) / max(args.max_steps, 1)
    change = snapshot.compare(trainer.model)
    _fill(summary, trainer, change, env_class)
    if args.save:
        trainer.save_model(output_dir)
        tokenizer.save_pretrained(output_dir)
    if reward_log is not None:
        summary.rewards = list(reward_log)
    if args.summary:
        Path(args.summary).write_text(json.dumps(summary.to_json(), indent=2), encoding="utf-8")
    if require_change:  # after the summary is written: it shows what ran
        gradient = any(e.get("grad_norm", 1.0) != 0 for e in summary.logged)
        if not gradient:
            print(f"GRPO: no step had a gradient (frac_reward_zero_std {summary.frac_reward_zero_std}): every group's "
                  "rewards were equal, so there was nothing to learn and no parameter moved", file=sys.stderr)
        change.require(f"GRPO ({args.max_steps} steps)", gradient=gradient)
    return summary


WRITTEN_WEIGHT = 50  # how often the tokenizer corpus repeats what the model must write (see `_corpus`)


def _corpus(conversations: Sequence[Any]) -> list[str]:
    """Text to train the tiny tokenizer on: every message and tool call, and the tools' JSON schemas.

    What the assistant writes (tool calls, replies) is repeated `WRITTEN_WEIGHT` times, so that BPE
    merges it into few, long tokens: a short sequence is what a one-layer model learns to write in
    order within a few dozen steps."""
    from transformers.utils.chat_template_utils import get_json_schema

    texts: list[str] = []
    schemas_done = False
    for messages, tools in conversations:
        for message in messages:
            weight = WRITTEN_WEIGHT if message.get("role") == "assistant" else 1
            texts += [str(message.get("content") or "")] * weight
            for call in message.get("tool_calls") or []:
                texts += [json.dumps(call["function"])] * weight
        if tools and not schemas_done:
            texts += [json.dumps({"type": "function", "function": get_json_schema(t)}) for t in tools]
            schemas_done = True
    return texts


def _fill(summary: Summary, trainer: Any, change: ParameterChange, env_class: type[RLToolEnv]) -> None:
    for entry in trainer.state.log_history:
        numbers = {k: float(v) for k, v in entry.items() if isinstance(v, int | float)}
        if "loss" in numbers:
            summary.losses.append(numbers["loss"])
            summary.logged.append(numbers)
            if "frac_reward_zero_std" in numbers:
                summary.frac_reward_zero_std.append(numbers["frac_reward_zero_std"])
    summary.tensors, summary.tensors_changed, summary.parameters = change.tensors, change.changed, change.parameters
    summary.param_change_l2, summary.param_change_max = change.l2, change.max
    for record in env_class.episodes:
        summary.rollouts += 1
        summary.tool_calls += record.steps
        summary.rewards.append(record.reward)
        summary.terminations[record.termination_reason] = summary.terminations.get(record.termination_reason, 0) + 1
        for tool in record.tools:
            summary.tools_called[tool] = summary.tools_called.get(tool, 0) + 1


@contextlib.contextmanager
def moved_or_exit() -> Iterator[None]:
    """Turn a run that moved no parameter (`NoParameterChangeError`) into an exit with its one line."""
    try:
        yield
    except NoParameterChangeError as exc:
        raise SystemExit(f"error: {exc}") from None


def print_summary(summary: Summary) -> None:
    """A few lines for the terminal."""
    rewards = summary.rewards
    mean = sum(rewards) / len(rewards) if rewards else float("nan")
    print(f"GRPO {summary.style} on {summary.model}: {summary.steps} steps, {summary.queries} queries, "
          f"{summary.rollouts} rollouts, {summary.tool_calls} env tool calls {summary.tools_called}")
    print(f"  rewards: mean {mean:.4f}, nonzero {sum(r > 0 for r in rewards)}/{len(rewards)}; "
          f"endings {summary.terminations}")
    print(f"  loss per step: {[round(x, 5) for x in summary.losses]}")
    zero = summary.frac_reward_zero_std
    print(f"  groups without reward variance (frac_reward_zero_std) per step: {[round(x, 3) for x in zero]}")
    print(f"  parameters: {summary.tensors_changed}/{summary.tensors} trainable tensors changed, "
          f"L2 {summary.param_change_l2:.3e}, max {summary.param_change_max:.3e}")
    print(f"  seconds: setup {summary.seconds_setup:.1f}, warm-up {summary.seconds_warm_up:.1f}, "
          f"per GRPO step {summary.seconds_per_step:.1f}")
