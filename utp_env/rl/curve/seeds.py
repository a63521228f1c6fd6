"""One seed of a curve, and several at once: the SFT checkpoint, then GRPO scored every `every` steps.

The checkpoint is the SFT recipe of `utp_env.rl.sft` at the run's level (the tiny model, or `--model`) on the
first `demos` train queries; GRPO (`utp_env.rl.recipe.run_grpo`, multi-turn, the env's reward at the level
through `get_reward`) trains from it on the train queries after those (`grpo_train_queries`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from utp_env.env.config import open_database
from utp_env.rl.curve.scoring import Scorer, scoring_env
from utp_env.rl.curve.settings import CurveSettings, grpo_train_queries, scoring_steps, shared_sft_seed
from utp_env.rl.curve.stages import REWARDS
from utp_env.tools.atomic import write_text_atomic


@dataclass
class SeedResult:
    """One seed's curve: scores by step and target, and TRL's per-step log."""

    seed: int
    points: list[dict[str, Any]] = field(default_factory=list)
    train_log: list[dict[str, float]] = field(default_factory=list)
    seconds_sft: float = 0.0
    seconds_grpo: float = 0.0
    tensors_changed: int = 0
    tensors: int = 0


START = "before_sft"
"""The folder, inside an SFT checkpoint's, of the model as SFT received it (scored at `BEFORE_SFT_STEP`)."""
BEFORE_SFT_STEP = -1
"""The step of the points scored on the model before SFT (the recipe's start; GRPO's starts at step 0)."""


def model_argv(settings: CurveSettings) -> list[str]:
    """The model and data arguments the SFT and GRPO recipes take for this run."""
    argv = ["--tiny"] if settings.model is None else ["--model", settings.model]
    argv += ["--level", str(settings.level)]
    return argv + (["--db-path", settings.db_path] if settings.db_path else ["--profile", settings.profile])


def checkpoint(settings: CurveSettings, seed: int, folder: Path) -> tuple[Path, float]:
    """The seed's SFT checkpoint (`utp_env.rl.sft` at the run's level, scored nowhere: the curve scores it at
    step 0) and the seconds it took. With `sft_epochs` 0 the model is saved untrained (the tiny model with its
    format warm-up only is then `--sft-epochs 0`'s start)."""
    from utp_env.rl import sft

    started = time.perf_counter()
    pretraining = ["--pretrain-steps", str(settings.pretrain_steps)] if settings.pretrain_steps else []
    if settings.pretrain_steps and settings.pretrain_copy_bar is not None:
        pretraining += ["--pretrain-copy-bar", str(settings.pretrain_copy_bar)]
    pretraining += ["--swapped-copies", str(settings.swapped_copies)] if settings.swapped_copies else []
    pretraining += ["--frozen-values"] if settings.frozen_values else []
    sft.main([*model_argv(settings), *pretraining, "--limit", str(settings.demos), "--epochs", str(settings.sft_epochs),
              "--learning-rate", str(settings.sft_learning_rate), "--grpo-steps", "0", "--eval-limit", "0",
              "--seed", str(seed), "--output-dir", str(folder), "--save-start", str(folder / START)])
    return folder, time.perf_counter() - started


def sft_checkpoint(settings: CurveSettings, seed: int, folder: Path) -> tuple[Path, float]:
    """The SFT checkpoint GRPO starts from for `seed` (its own; with `share_sft`, the one of `sft_seed`, else
    of the first seed), made unless one made with these settings is in `folder` already; and the seconds
    it took (0 when reused)."""
    sft_seed = shared_sft_seed(settings) if settings.share_sft else seed
    ckpt = folder / f"sft-level{settings.level}-seed{sft_seed}"
    made_with = {"demos": settings.demos, "sft_epochs": settings.sft_epochs, "profile": settings.profile,
                 "db_path": settings.db_path, "seed": sft_seed, "level": settings.level, "model": settings.model,
                 "pretrain_steps": settings.pretrain_steps, "pretrain_copy_bar": settings.pretrain_copy_bar,
                 "sft_learning_rate": settings.sft_learning_rate,
                 "swapped_copies": settings.swapped_copies, "frozen_values": settings.frozen_values}
    record = ckpt / "curve_sft.json"
    from utp_env.rl.recipe import DEMO_LENGTHS_FILE

    # reused only when made with these settings by today's SFT (which records its demonstrations' lengths)
    if (record.exists() and json.loads(record.read_text(encoding="utf-8")) == made_with
            and (ckpt / DEMO_LENGTHS_FILE).exists()):
        return ckpt, 0.0
    ckpt, seconds = checkpoint(settings, sft_seed, ckpt)
    write_text_atomic(record, json.dumps(made_with) + "\n")  # a later run with these settings reuses it
    return ckpt, seconds


def run_seed(settings: CurveSettings, seed: int, folder: Path) -> SeedResult:
    """SFT checkpoint, then GRPO scored at `scoring_steps` (the paper's task at the first and the last)."""
    from transformers import AutoTokenizer, TrainerCallback

    from utp_env.rl.recipe import parser as grpo_parser
    from utp_env.rl.recipe import run_grpo

    result = SeedResult(seed)
    scored = scoring_steps(settings)
    ckpt, result.seconds_sft = sft_checkpoint(settings, seed, folder)
    scorer = Scorer(settings, AutoTokenizer.from_pretrained(ckpt))
    if (ckpt / START).is_dir():  # a checkpoint made before the curve kept its start has no before-SFT point
        from transformers import AutoModelForCausalLM

        result.points += scorer.score(AutoModelForCausalLM.from_pretrained(ckpt / START).eval(), BEFORE_SFT_STEP)

    class ScoreEvery(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
            result.points += scorer.score(model, 0)

        def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
            if state.global_step in scored:
                result.points += scorer.score(model, state.global_step, last=state.global_step == settings.steps)
                model.train()

    config, tools, _ = scoring_env(settings)
    skip, limit = grpo_train_queries(settings)
    argv = ["--model", str(ckpt), "--level", str(settings.level), "--max-steps", str(settings.steps),
            "--split", "train", "--skip", str(skip), "--limit", str(limit),
            "--queries-per-step", str(settings.queries_per_step), "--num-generations", str(settings.num_generations),
            "--max-completion-length", str(settings.max_completion_length),
            "--learning-rate", str(settings.learning_rate), "--temperature", str(settings.temperature),
            "--beta", str(settings.beta), "--loss-type", settings.loss_type, "--step-limit", str(settings.step_limit),
            "--max-tool-calling-iterations", str(settings.max_turns),
            "--max-observation-chars", str(config["max_observation_chars"]), "--compact", "--seed", str(seed),
            "--output-dir", str(folder / f"grpo-level{settings.level}-seed{seed}")]
    argv += ["--tools", ",".join(tools)] if tools else []
    argv += ["--vllm"] if settings.vllm else []
    argv += ["--frozen-values"] if settings.frozen_values else []
    argv += ["--db-path", settings.db_path] if settings.db_path else ["--profile", settings.profile]
    args = grpo_parser("curve").parse_args(argv)
    started = time.perf_counter()
    summary = run_grpo(args, "multi_turn", callbacks=[ScoreEvery()], require_change=False,
                       env_base=REWARDS[settings.reward])
    result.seconds_grpo = time.perf_counter() - started
    result.train_log = summary.logged
    result.tensors_changed, result.tensors = summary.tensors_changed, summary.tensors
    return result


def prepare_data(settings: CurveSettings) -> None:
    """Build, in this process, what every seed reads: world 0's sandbox with the train queries of the SFT
    and of GRPO, and the other world's (so that parallel seeds do not build the same files at once)."""
    from utp_env.env.config import split_pool

    skip, limit = grpo_train_queries(settings)
    db = open_database(settings.db_path, settings.profile, 0)
    split_pool(db, "train", max(settings.demos, skip + limit))
    if settings.eval_db_path:
        open_database(settings.eval_db_path, settings.profile, 0)
    else:
        open_database(None, settings.profile, settings.eval_world)


def run_seeds(settings: CurveSettings, out: Path, jobs: int, checkpoints: Path | None = None,
              write: Any = None) -> list[SeedResult]:
    """Every seed's curve, in seed order; with `jobs` > 1 that many seeds at once, each in its own process
    (one thread each: the tiny model's GRPO is single-threaded). Each finished seed is written at once
    (`write(out, settings, results)`), so a stopped run keeps what it measured. The checkpoints go to
    `checkpoints` (default `out/checkpoints`), where a shared SFT checkpoint made with the same settings is
    reused."""
    folder = checkpoints or out / "checkpoints"
    results: list[SeedResult] = []
    if jobs <= 1 or len(settings.seeds) == 1:
        for seed in settings.seeds:
            results.append(run_seed(settings, seed, folder))
            if write is not None:
                write(out, settings, results)
        return results
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    prepare_data(settings)
    seconds_shared = sft_checkpoint(settings, shared_sft_seed(settings), folder)[1] if settings.share_sft else 0.0
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(run_seed, settings, seed, folder) for seed in settings.seeds]
        failures: list[tuple[int, BaseException]] = []
        for future in as_completed(futures):
            try:
                results.append(future.result())
            except Exception as e:  # the other seeds still finish and are written
                failures.append((settings.seeds[futures.index(future)], e))
                continue
            results.sort(key=lambda r: settings.seeds.index(r.seed))
            if write is not None:
                write(out, settings, results)
    if failures:
        seed, error = failures[0]
        raise RuntimeError(f"seed {seed} failed ({len(failures)} of {len(settings.seeds)} seeds); the finished ones "
                           f"are in {out}: {error}") from error
    if results:
        results[0].seconds_sft += seconds_shared  # the shared checkpoint was made once, before the workers
    return results
