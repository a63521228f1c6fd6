"""What one learning-curve run does: its settings, the command line that sets them, and each level's defaults.

Every default is fixed here before a run, per level and per kind of model (`TINY_DEFAULTS`, the CPU runs of
docs/RL.md; `MODEL_DEFAULTS`, a real model on a GPU); a run records all of its settings in curve.json.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields
from typing import Any

from utp_env.env.levels import LEVELS
from utp_env.rl.curve.stages import REWARDS
from utp_env.rl.recipe import LOSS_TYPES
from utp_env.rl.tiny_pretrain import copy_bar_refusal

GRPO_QUERIES = ("new", "sft")
TUNED = ("steps", "every", "demos", "sft_epochs", "eval_limit", "eval_samples", "queries_per_step", "num_generations",
         "learning_rate", "temperature", "beta", "reward", "step_limit", "max_completion_length", "max_turns",
         "pretrain_steps", "pretrain_copy_bar", "sft_learning_rate", "loss_type", "swapped_copies", "frozen_values")
"""The settings whose default depends on the level and the model (`TINY_DEFAULTS`, `MODEL_DEFAULTS`)."""

_TINY_PART = {"eval_limit": 32, "eval_samples": 2, "queries_per_step": 4, "num_generations": 8, "temperature": 0.7,
              "step_limit": 8, "max_completion_length": 384, "max_turns": 6, "pretrain_steps": 3000,
              "pretrain_copy_bar": 0.8,
              "sft_learning_rate": 1e-3, "learning_rate": 2e-4, "beta": 0.04, "reward": "env", "loss_type": "grpo",
              "swapped_copies": 0, "frozen_values": False}
TINY_DEFAULTS: dict[int, dict[str, Any]] = {
    1: {**_TINY_PART, "steps": 20, "every": 10, "demos": 8, "sft_epochs": 3.0, "swapped_copies": 32,
        "frozen_values": True, "temperature": 0.5},
    2: {**_TINY_PART, "steps": 20, "every": 10, "demos": 8, "sft_epochs": 3.0, "swapped_copies": 16,
        "frozen_values": True, "step_limit": 12, "max_completion_length": 1536, "max_turns": 10,
        "learning_rate": 1e-4},
    3: {**_TINY_PART, "steps": 32, "every": 8, "demos": 8, "sft_epochs": 2.0},
    4: {"eval_limit": 32, "eval_samples": 4, "queries_per_step": 4, "num_generations": 8, "temperature": 0.7,
        "steps": 64, "every": 8, "demos": 256, "sft_epochs": 10.0, "learning_rate": 5e-4, "beta": 0.04,
        "reward": "first_leg_shaped", "max_completion_length": 512, "step_limit": 16, "max_turns": 8,
        "pretrain_steps": 0, "pretrain_copy_bar": None, "sft_learning_rate": 5e-3, "loss_type": "dapo",
        "swapped_copies": 0,
        "frozen_values": False},
}
"""The tiny model's defaults per level (the measured runs of docs/RL.md "Learning curves by level"). A rollout's
`max_completion_length` counts the tool answers too and must hold a whole episode: the tiny tokenizer's level-1
demonstrations write at most about 300 tokens after the prompt, level 3's 290, level 4's 350; level 2's, 9 calls of
its fixed schedule (`level_demos.DAY_SCHEDULE`), fewer than its budget of 1,536 (the SFT checkpoint records the
longest, `sft_demo_lengths.json`, and GRPO refuses a budget below it); its earlier demonstrations of the reference
plan's venues and times ran to 890, which the old value 768 cut before `submit`. Level 2's GRPO learning rate is
half of level 1's: at 2e-4 one seed of its first recorded run lost what SFT gave within 4 steps (KL 0.25), at 1e-4
a one-seed probe kept it (KL at most 0.04; benchmarks/results/level2_probes/)."""
_MODEL_SMALL_LEVEL = {"steps": 12, "every": 6, "demos": 500, "eval_limit": 32, "eval_samples": 1, "queries_per_step": 4,
                      "step_limit": 16, "max_completion_length": 2048, "max_turns": 12}
_MODEL_WHOLE_TRIP = {"steps": 100, "every": 20, "demos": 1000, "eval_limit": 64, "eval_samples": 4,
                     "queries_per_step": 16, "step_limit": 40, "max_completion_length": 8192, "max_turns": 30}
MODEL_DEFAULTS: dict[int, dict[str, Any]] = {level: {
    **(_MODEL_SMALL_LEVEL if level <= 2 else _MODEL_WHOLE_TRIP),
    **({"steps": 6, "every": 3, "eval_samples": 0, "step_limit": 24, "max_turns": 20, "max_completion_length": 4096}
       if level == 2 else {}),
    "sft_epochs": 1.0, "num_generations": 8,
    "learning_rate": 1e-6, "temperature": 1.0, "beta": 0.0, "reward": "env", "pretrain_steps": 0,
    "pretrain_copy_bar": None,
    "sft_learning_rate": 1e-5, "loss_type": "grpo", "swapped_copies": 0, "frozen_values": False}
    for level in LEVELS}
"""A real model's defaults per level (docs/RL.md "The recipe on a GPU": levels 1 and 2 sized for a 0.5 B model on
one H100 with vLLM and three seeds, about 10 and 11 minutes by that section's arithmetic; levels 3 and 4 longer)."""


@dataclass
class CurveSettings:
    """What one curve run does (the command line's values, each default filled in)."""

    seeds: list[int]
    steps: int
    every: int
    demos: int
    sft_epochs: float
    eval_limit: int
    eval_samples: int
    eval_world: int
    eval_db_path: str | None
    queries_per_step: int
    num_generations: int
    learning_rate: float
    temperature: float
    beta: float
    reward: str
    grpo_queries: str
    grpo_limit: int | None
    share_sft: bool
    sft_seed: int | None
    profile: str
    db_path: str | None
    level: int = 4
    model: str | None = None
    """A model directory or hub name; None: the tiny model built on the spot."""
    step_limit: int = 16
    max_completion_length: int = 512
    max_turns: int = 8
    transfer: bool = True
    """Also score the paper's task (level 4) at the start and the end: does the level carry over?"""
    pretrain_steps: int = 0
    """The tiny model's pretraining steps before SFT (utp_env/rl/tiny_pretrain.py); 0 for a real model."""
    pretrain_copy_bar: float | None = None
    """Pretraining stops once the tiny model copies this share of new synthetic chats (`pretrain_steps` is then
    the most it takes); None: all `pretrain_steps`."""
    sft_learning_rate: float = 5e-3
    loss_type: str = "dapo"
    vllm: bool = False
    """A real model's GRPO rollouts generated with vLLM on the GPU (`utp_env.rl.recipe`'s `--vllm`)."""
    swapped_copies: int = 0
    """The tiny model's value-swapped copies per demonstration (utp_env/rl/augment.py); 0 for a real model."""
    frozen_values: bool = False
    """The tiny model's value embeddings kept as pretraining left them in SFT and GRPO
    (utp_env/rl/value_embeddings.py); False for a real model."""

    @classmethod
    def from_saved(cls, saved: dict[str, Any]) -> CurveSettings:
        """The settings a curve.json records (runs before the levels lack `level` and `model`: level 4, tiny)."""
        known = {f.name for f in fields(cls)}
        return cls(**{"sft_seed": None, "transfer": False, **{k: v for k, v in saved.items() if k in known}})


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="held-out success and reward against GRPO steps over seeds, per level "
                                "of the task (docs/RL.md)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--tiny", action="store_true", help="the tiny local model (CPU, nothing downloaded)")
    which.add_argument("--model", help="a tool-calling chat model: a local directory or a hub name (a GPU run)")
    p.add_argument("--merge", nargs="+", metavar="DIR", help="write to --out one curve of these finished runs' seeds "
                   "(runs that differ only in --seeds); nothing is trained")
    p.add_argument("--level", type=int, default=1, choices=sorted(LEVELS), help="the level of the task trained and "
                   "scored (utp_env/env/levels.py; default 1: book the first leg)")
    p.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    p.add_argument("--steps", type=int, help="GRPO steps per seed (default: the level's)")
    p.add_argument("--every", type=int, help="score the policy every N steps (default: the level's)")
    p.add_argument("--demos", type=int, help="SFT demonstrations: the first N train queries (default: the level's)")
    p.add_argument("--sft-epochs", type=float, help="SFT epochs (default: the level's)")
    p.add_argument("--share-sft", action="store_true", help="one SFT checkpoint (of the first seed, or --sft-seed) "
                   "for every seed's GRPO: the seeds then vary GRPO alone (its sampling and query order)")
    p.add_argument("--sft-seed", type=int, help="with --share-sft, the seed of the shared checkpoint (default: the "
                   "first of --seeds; give it to add seeds to an earlier run from the same checkpoint)")
    p.add_argument("--eval-limit", type=int, help="held-out queries per target (default: the level's)")
    p.add_argument("--eval-samples", type=int, help="also score K episodes per held-out query sampled at "
                   "--temperature (0: greedy only; default: the level's)")
    p.add_argument("--eval-world", type=int, default=1, help="the other world scored (default 1)")
    p.add_argument("--eval-db-path", help="score this database directory as the other world instead")
    p.add_argument("--no-transfer", dest="transfer", action="store_false",
                   help="do not score the paper's task (level 4) at the start and the end")
    p.add_argument("--queries-per-step", type=int)
    p.add_argument("--num-generations", type=int)
    p.add_argument("--learning-rate", type=float)
    p.add_argument("--temperature", type=float, help="GRPO's sampling temperature")
    p.add_argument("--beta", type=float, help="GRPO's KL coefficient to the SFT checkpoint (0: none)")
    p.add_argument("--step-limit", type=int, help="env steps per episode")
    p.add_argument("--pretrain-steps", type=int, help="the tiny model's pretraining steps before SFT "
                   "(utp_env/rl/tiny_pretrain.py; 0 with --model)")
    p.add_argument("--pretrain-copy-bar", type=float, help="stop the tiny model's pretraining once it copies this "
                   "share of new synthetic chats (default: the level's)")
    p.add_argument("--sft-learning-rate", type=float, help="SFT's learning rate")
    p.add_argument("--frozen-values", action=argparse.BooleanOptionalAction, default=None,
                   help="the tiny model: keep its value embeddings as pretraining left them in SFT and GRPO "
                   "(utp_env/rl/value_embeddings.py; default: the level's)")
    p.add_argument("--swapped-copies", type=int, help="the tiny model's value-swapped copies per demonstration "
                   "(utp_env/rl/augment.py; 0 with --model)")
    p.add_argument("--loss-type", choices=LOSS_TYPES, help="TRL's GRPO loss normalisation")
    p.add_argument("--max-completion-length", type=int, help="tokens per rollout, tool answers included")
    p.add_argument("--max-turns", type=int, help="turns per episode (TRL's tool rounds; the scoring's turns)")
    p.add_argument("--reward", choices=tuple(REWARDS), help="what GRPO trains on: env (the env's reward at the "
                   "level, the default but at level 4) or, at level 4, a first-leg stage (utp_env/rl/curve/stages.py)")
    p.add_argument("--grpo-queries", choices=GRPO_QUERIES, default="new",
                   help="the train queries GRPO trains on: new (the next train queries after the SFT demonstrations', "
                   "each trained on once: success there needs reading, not recall; the default) or sft (the "
                   "demonstrations' own queries)")
    p.add_argument("--grpo-limit", type=int, help="distinct train queries GRPO cycles through (default: steps x "
                   "queries per step with --grpo-queries new, each once; --demos with sft)")
    p.add_argument("--checkpoints", help="the folder of the SFT and GRPO checkpoints (default: OUT/checkpoints); "
                   "give an earlier run's to start from its shared SFT checkpoint (with --sft-seed)")
    p.add_argument("--vllm", action="store_true", help="with --model on a CUDA GPU: GRPO generates with vLLM "
                   "(pip install vllm; docs/RL.md \"The recipe on a GPU\")")
    p.add_argument("--jobs", type=int, default=1, help="seeds run at once, each in its own process (default 1)")
    p.add_argument("--profile", choices=("mini", "full"), help="the embedded sandbox (default: mini with --tiny, "
                   "else full)")
    p.add_argument("--db-path", help="a database directory instead of the embedded sandbox (world 0)")
    p.add_argument("--out", help="the folder for curve.csv, train.csv, curve.json, curve.png (default "
                   "runs/curve-level<N>)")
    return p


def settings_of(args: argparse.Namespace) -> CurveSettings:
    """The run's settings from the parsed command line, the level's defaults filling what it leaves out;
    SystemExit naming the argument when one is out of range."""
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        raise SystemExit(f"--seeds: {args.seeds!r} is not a comma-separated list of integers") from None
    if not seeds:
        raise SystemExit("--seeds: give at least one seed")
    if len(set(seeds)) != len(seeds):
        raise SystemExit(f"--seeds: each seed once, not {args.seeds!r}")
    defaults = (TINY_DEFAULTS if args.tiny else MODEL_DEFAULTS)[args.level]
    chosen = {key: getattr(args, key) if getattr(args, key) is not None else defaults[key] for key in TUNED}
    for name in ("steps", "every", "demos", "eval_limit", "queries_per_step", "step_limit", "max_completion_length",
                 "max_turns"):
        if chosen[name] < 1:
            raise SystemExit(f"--{name.replace('_', '-')} must be at least 1, not {chosen[name]}")
    if chosen["pretrain_steps"] < 0 or (chosen["pretrain_steps"] and not args.tiny):
        raise SystemExit("--pretrain-steps is the tiny model's (0 or more with --tiny; a real model comes pretrained)")
    refusal = copy_bar_refusal(chosen["pretrain_copy_bar"], chosen["pretrain_steps"])
    if refusal is not None:
        raise SystemExit(refusal)
    if chosen["swapped_copies"] < 0 or (chosen["swapped_copies"] and not args.tiny):
        raise SystemExit("--swapped-copies is the tiny model's (0 or more with --tiny)")
    if chosen["frozen_values"] and not args.tiny:
        raise SystemExit("--frozen-values is the tiny model's; a real model's embeddings are its own")
    if args.vllm and args.tiny:
        raise SystemExit("--vllm generates a real model's rollouts on a GPU; the tiny model runs without it")
    if args.jobs < 1:
        raise SystemExit(f"--jobs must be at least 1, not {args.jobs}")
    if chosen["num_generations"] < 2:
        raise SystemExit("--num-generations must be at least 2: GRPO compares rollouts of the same query")
    if chosen["eval_samples"] < 0:
        raise SystemExit(f"--eval-samples must be 0 or more, not {chosen['eval_samples']}")
    if chosen["sft_epochs"] < 0:
        raise SystemExit(f"--sft-epochs must be 0 or more, not {chosen['sft_epochs']}")
    if args.grpo_limit is not None and args.grpo_limit < 1:
        raise SystemExit(f"--grpo-limit must be at least 1, not {args.grpo_limit}")
    if args.sft_seed is not None and not args.share_sft:
        raise SystemExit("--sft-seed names the shared SFT checkpoint: give --share-sft too")
    if chosen["reward"] != "env" and args.level != 4:
        raise SystemExit(f"--reward {chosen['reward']} is a first-leg stage of level 4; level {args.level} trains "
                         "on its own reward (--reward env)")
    return CurveSettings(seeds=seeds, eval_world=args.eval_world, eval_db_path=args.eval_db_path,
                         grpo_queries=args.grpo_queries, grpo_limit=args.grpo_limit, share_sft=args.share_sft,
                         sft_seed=args.sft_seed, profile=args.profile or ("mini" if args.tiny else "full"),
                         db_path=args.db_path, level=args.level, model=None if args.tiny else args.model,
                         transfer=args.transfer and args.level != 4, vllm=args.vllm, **chosen)


def scoring_steps(settings: CurveSettings) -> set[int]:
    """The GRPO steps at which the policy is scored: 0 (the checkpoint), every `every`-th, and the last."""
    return {0} | {s for s in range(1, settings.steps + 1) if s % settings.every == 0 or s == settings.steps}


def grpo_train_queries(settings: CurveSettings) -> tuple[int, int]:
    """Which train queries GRPO trains on: how many of the split's first to skip, and how many after them."""
    new = settings.grpo_queries == "new"
    limit = settings.grpo_limit or (settings.steps * settings.queries_per_step if new else settings.demos)
    return (settings.demos if new else 0), limit


def shared_sft_seed(settings: CurveSettings) -> int:
    """The seed of the one SFT checkpoint of a `share_sft` run."""
    return settings.seeds[0] if settings.sft_seed is None else settings.sft_seed
