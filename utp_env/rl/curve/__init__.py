"""Learning curves: held-out success and reward against GRPO steps, over seeds, per level of the task (docs/RL.md).

    python -m utp_env.rl.curve --level 1 --tiny          # the CPU curve of level 1 (its defaults: the measured run)
    python -m utp_env.rl.curve --level 2 --tiny --jobs 2
    python -m utp_env.rl.curve --level 1 --model ckpt/Qwen2.5-0.5B-Instruct    # a real model, on a GPU
    python -m utp_env.rl.curve --level 1 --tiny --seeds 0 --steps 2 --every 1 --eval-limit 4 --out /tmp/c  # smoke

For each seed, the SFT recipe of `utp_env.rl.sft` at the level (`seeds.py`) makes a checkpoint from the first
`--demos` train queries' demonstrations (utp_env/rl/level_demos.py); GRPO trains from it on the train queries
after those, with the env's reward at the level; every `--every` steps (and at step 0, the checkpoint) the policy
is scored on held-out queries (`scoring.py`: world 0's and another world's validation queries at the level, and
the paper's task at the start and the end). Every default is the level's (`settings.TINY_DEFAULTS`,
`settings.MODEL_DEFAULTS`), fixed before a run and recorded in its curve.json with the machine's load and the
wall time; the level's target (`results.LEVEL_TARGETS`) is checked on the run's own numbers. `--jobs N` runs N
seeds at once, each in its own process; `--merge DIR ...` makes one curve of runs that differ only in their seeds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from utp_env.rl.curve.results import LEVEL_TARGETS, interval, machine_state, merge, summarise, write
from utp_env.rl.curve.scoring import METRICS, TARGETS, Scorer
from utp_env.rl.curve.seeds import SeedResult, run_seeds
from utp_env.rl.curve.settings import (
    CurveSettings,
    grpo_train_queries,
    parser,
    scoring_steps,
    settings_of,
)
from utp_env.rl.curve.stages import (
    LEAVES_ORIGIN_CREDIT,
    SEARCHED_ORIGIN_CREDIT,
    FirstLegRewardEnv,
    FirstLegShapedRewardEnv,
    first_leg_reward,
    first_leg_shaped_reward,
)

__all__ = ["LEAVES_ORIGIN_CREDIT", "LEVEL_TARGETS", "METRICS", "SEARCHED_ORIGIN_CREDIT", "TARGETS", "CurveSettings",
           "FirstLegRewardEnv", "FirstLegShapedRewardEnv", "Scorer", "SeedResult", "first_leg_reward",
           "first_leg_shaped_reward", "grpo_train_queries", "interval", "main", "merge", "parser", "scoring_steps",
           "settings_of", "summarise", "write"]


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run (or `--merge`) a curve, write its files, print what it shows."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    args = parser().parse_args(argv)
    out = Path(args.out or f"runs/curve-level{args.level}")
    if args.merge:
        summary = merge([Path(f) for f in args.merge], out)
    else:
        settings = settings_of(args)
        started = time.time()
        before = machine_state()
        checkpoints = Path(args.checkpoints) if args.checkpoints else None

        def progress(folder: Path, run: CurveSettings, results: list[SeedResult]) -> None:
            write(folder, run, results, {**machine_state(started), "load_at_start": before["load_1_5_15"]})

        results = run_seeds(settings, out, args.jobs, checkpoints, write=progress)
        summary = write(out, settings, results, {**machine_state(started), "load_at_start": before["load_1_5_15"]})
    for name, t in summary["targets"].items():
        seeds_text = ", ".join(f"seed {s['seed']}: {s['start']:.3f} → {s['end']:.3f}" for s in t["per_seed"])
        print(f"{name}: {seeds_text}; mean change {t['delta_mean']:+.4f} "
              f"(95 % interval {t['delta_low']:+.4f} … {t['delta_high']:+.4f})")
    if summary.get("target"):
        goal = summary["target"]
        print(f"target of level {summary['settings']['level']} ({goal['what']}): {'met' if goal['met'] else 'NOT met'}"
              f" — {goal['why']}")
    print(f"frac_reward_zero_std (mean over steps and seeds): {summary['frac_reward_zero_std_mean']}")
    print(f"machine: {summary.get('machine')}")
    print(f"wrote {out / 'curve.csv'}, {out / 'train.csv'}, {out / 'curve.json'}, {out / 'curve.png'}")
    return summary
