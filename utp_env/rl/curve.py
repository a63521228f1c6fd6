"""The learning curve: held-out reward against GRPO steps, over several seeds, on a CPU (docs/RL.md).

    python -m utp_env.rl.curve --tiny --seeds 0,1,2 --jobs 3 --share-sft --steps 64 --every 8 --demos 256 \
        --sft-epochs 10 --grpo-queries new --eval-limit 32 --eval-samples 4 --queries-per-step 4 \
        --num-generations 8 --temperature 0.7 --learning-rate 5e-4 --beta 0.04 --reward first_leg_shaped \
        --out benchmarks/results/grpo_curve  # measured (docs/RL.md)
    python -m utp_env.rl.curve --tiny --seeds 0 --steps 4 --every 2 --sft-epochs 2 --eval-limit 8 --out /tmp/c

For each seed, the tiny recipe of `utp_env.rl.sft` (the two-layer tiny model, SFT on the lookup →
`add_leg` → `submit` demonstrations of the first `--demos` train queries) makes a checkpoint; GRPO
(`utp_env.rl.recipe.run_grpo`, multi-turn, the env's reward through `get_reward`) trains from it for
`--steps` steps on the train queries after those (`--grpo-queries new`: none the checkpoint has seen,
each trained on once unless `--grpo-limit` cycles fewer), and every `--every` steps (and at step 0,
the SFT checkpoint) the policy is scored (`sft.evaluate_policy`) on the first `--eval-limit` queries
of the training world's validation split and of world `--eval-world`'s validation split: by greedy
rollouts, and by `--eval-samples` rollouts per query sampled at GRPO's temperature (the policy GRPO
trains; one seed at every scoring). None of those queries is trained on (the training queries are
train-split queries of world 0). `--jobs N` runs N seeds at once, each in its own process.

`--reward` chooses what GRPO trains on: `env` (the env's reward), `first_leg` (the curriculum's first
stage, `first_leg_reward`) or `first_leg_shaped` (that stage with partial credit for a first leg that
leaves the query's origin, `first_leg_shaped_reward`; docs/RL.md "Learning curve (measured on
CPU)"); the held-out score stays the env's own reward and the first stage's either way.

Writes to `--out`: `curve.csv` (one row per seed, step and target: the greedy and the sampled mean
reward, legs from the query's origin, accepted calls), `train.csv` (TRL's per-step log: mean reward of the rollouts,
`frac_reward_zero_std`, loss), `curve.json` (the settings, per seed the held-out reward at the start
and at the end and their difference, the mean difference with its 95 % t-interval over seeds) and
`curve.png` (held-out scores against step, a panel per metric and target, a line per seed and their mean).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from utp_env.env.config import open_database
from utp_env.rl.data import MULTI_TURN_REQUEST, MULTI_TURN_SYSTEM
from utp_env.rl.env import RLToolEnv
from utp_env.tools.atomic import write_text_atomic

TARGETS = ("held_out", "other_world")
# the curriculum stage's reward and the env's reward of greedy episodes; the env's reward of sampled ones
METRICS = ("first_leg_reward", "mean_reward", "sampled_reward")
METRIC_TITLES = {"first_leg_reward": "first-leg reward (stage 1), greedy",
                 "mean_reward": "env reward, greedy", "sampled_reward": "env reward, sampled (k per query)"}
# t_{0.975, n-1} for the 95 % interval of a mean over n seeds (n = 2 … 10)
T_975 = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 7: 2.447, 8: 2.365, 9: 2.306, 10: 2.262}


@dataclass
class CurveSettings:
    """What one curve run does (the command line's values)."""

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


@dataclass
class SeedResult:
    """One seed's curve: held-out scores by step and target, and TRL's per-step log."""

    seed: int
    points: list[dict[str, Any]] = field(default_factory=list)
    train_log: list[dict[str, float]] = field(default_factory=list)
    seconds_sft: float = 0.0
    seconds_grpo: float = 0.0
    tensors_changed: int = 0
    tensors: int = 0


def first_leg_reward(plan: dict[str, Any] | None, query_org: str, reward: float) -> float:
    """The curriculum's first stage: the env's reward of a plan whose first leg (day 1's first) leaves
    the query's own origin, else 0. Composed from the env's public outputs (the final plan, `info["plan"]`,
    and the reward); the env's reward itself is untouched. On this reward a plan holding a valid leg
    between two other cities (a memorised leg) earns nothing, which the env's reward of this branch
    does not yet say (docs/RL.md "What each reward means")."""
    days = (plan or {}).get("days") or []
    legs = (days[0].get("transport") or []) if days and days[0].get("day") == 1 else []
    return float(reward) if legs and legs[0].get("origin") == query_org else 0.0


LEAVES_ORIGIN_CREDIT = 0.02  # the shaped stage's partial credit: under a third of an honest first leg's reward
SEARCHED_ORIGIN_CREDIT = 0.005  # and, below it, for a transport search from the query's origin
TRANSPORT_SEARCHES = ("search_buses", "search_trains", "search_flights")


def first_leg_shaped_reward(plan: dict[str, Any] | None, query_org: str, reward: float,
                            searched_origin: bool = False) -> float:
    """The curriculum's first stage with partial credit: `first_leg_reward` when it is above 0, else
    `LEAVES_ORIGIN_CREDIT` when day 1's first leg at least leaves the query's origin (to a city that is
    not the trip's, so the env's reward is 0), else 0. In the multi-turn env a leg is in the plan only
    when `add_leg` accepted it (a service that runs), so the credit is for a real service from the
    right city: the half of the first leg the policy got right. Below that, `SEARCHED_ORIGIN_CREDIT`
    when `searched_origin` (the rollout looked a service up from the query's origin: the first step of
    the demonstrations). Each level is paid once, so repeating a search or a leg earns no more. Measured
    need (docs/RL.md "Learning curve (measured on CPU)"): on the first-leg stage alone every group of
    sampled rollouts earned the same 0."""
    staged = first_leg_reward(plan, query_org, reward)
    if staged > 0:
        return staged
    days = (plan or {}).get("days") or []
    legs = (days[0].get("transport") or []) if days and days[0].get("day") == 1 else []
    if legs and legs[0].get("origin") == query_org:
        return LEAVES_ORIGIN_CREDIT
    return SEARCHED_ORIGIN_CREDIT if searched_origin else 0.0


class FirstLegRewardEnv(RLToolEnv):
    """`RLToolEnv` whose reward is the curriculum's first stage (`first_leg_reward`)."""

    def get_reward(self) -> float:
        from utp_env.env.config import find_query

        reward = super().get_reward()
        final, query_id = self._engine.final, self._engine.query_id
        query = find_query(self._env.db, query_id) if query_id else None
        if final is None or query is None:
            return 0.0
        return self._staged(final.info.get("plan"), query.org, reward)

    def _staged(self, plan: dict[str, Any] | None, query_org: str, reward: float) -> float:
        """The stage's reward of the final plan (private: TRL offers every public method as a tool)."""
        return first_leg_reward(plan, query_org, reward)


class FirstLegShapedRewardEnv(FirstLegRewardEnv):
    """`RLToolEnv` whose reward is the shaped first stage (`first_leg_shaped_reward`); it notes the
    origins of the rollout's transport searches (the env's answer is unchanged)."""

    def reset(self, **kwargs: Any) -> str | None:
        self._searched_from: set[str] = set()
        return super().reset(**kwargs)

    def _call(self, name: str, args: dict[str, Any]) -> str:
        if name in TRANSPORT_SEARCHES and isinstance(args.get("origin"), str):
            self._searched_from.add(args["origin"])
        return super()._call(name, args)

    def _staged(self, plan: dict[str, Any] | None, query_org: str, reward: float) -> float:
        searched = query_org in getattr(self, "_searched_from", set())
        return first_leg_shaped_reward(plan, query_org, reward, searched)


GRPO_QUERIES = ("new", "sft")
EVAL_SAMPLING_SEED = 0  # the sampled scorings' seed: the same at every step and for every training seed
REWARDS: dict[str, type[RLToolEnv]] = {"env": RLToolEnv, "first_leg": FirstLegRewardEnv,
                                       "first_leg_shaped": FirstLegShapedRewardEnv}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="held-out reward against GRPO steps over seeds (docs/RL.md)")
    p.add_argument("--merge", nargs="+", metavar="DIR", help="write to --out one curve of these finished runs' seeds "
                   "(runs that differ only in --seeds); nothing is trained")
    p.add_argument("--tiny", action="store_true", required=True,
                   help="the tiny local model (CPU, nothing downloaded); the only model this curve runs")
    p.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    # the defaults are the measured run's (docs/RL.md "Learning curve (measured on CPU)")
    p.add_argument("--steps", type=int, default=64, help="GRPO steps per seed (default 64)")
    p.add_argument("--every", type=int, default=8, help="score the policy every N steps (default 8)")
    p.add_argument("--demos", type=int, default=256, help="SFT demonstrations: the first N train queries")
    p.add_argument("--share-sft", action="store_true", help="one SFT checkpoint (of the first seed, or --sft-seed) "
                   "for every seed's GRPO: the seeds then vary GRPO alone (its sampling and query order)")
    p.add_argument("--sft-seed", type=int, help="with --share-sft, the seed of the shared checkpoint (default: the "
                   "first of --seeds; give it to add seeds to an earlier run from the same checkpoint)")
    p.add_argument("--sft-epochs", type=float, default=10.0,
                   help="SFT epochs (default 10, the tiny SFT recipe's: a checkpoint whose sampled rollouts earn a "
                   "reward often enough for GRPO's groups to differ; after 4, almost never; docs/RL.md)")
    p.add_argument("--eval-limit", type=int, default=32, help="held-out queries per target (default 32)")
    p.add_argument("--eval-samples", type=int, default=4,
                   help="also score K episodes per held-out query sampled at --temperature (0: greedy only; default 4)")
    p.add_argument("--eval-world", type=int, default=1, help="the other world scored (default 1)")
    p.add_argument("--eval-db-path", help="score this database directory as the other world instead")
    p.add_argument("--queries-per-step", type=int, default=4)
    p.add_argument("--num-generations", type=int, default=8)
    p.add_argument("--learning-rate", type=float, default=5e-4)
    p.add_argument("--temperature", type=float, default=0.7, help="GRPO's sampling temperature (default 0.7)")
    p.add_argument("--beta", type=float, default=0.04,
                   help="GRPO's KL coefficient to the SFT checkpoint (0: none; > 0 holds the policy near it)")
    p.add_argument("--reward", choices=tuple(REWARDS), default="first_leg_shaped",
                   help="what GRPO trains on: the env's reward, the curriculum's first stage (the env's reward of "
                   "a plan whose first leg leaves the query's origin), or that stage with partial credit for a "
                   "first leg that leaves the origin (first_leg_shaped, the default)")
    p.add_argument("--grpo-queries", choices=GRPO_QUERIES, default="new",
                   help="the train queries GRPO trains on: new (the next train queries after the SFT demonstrations', "
                   "each trained on once: success there needs copying, not recall; the default) or sft (the "
                   "demonstrations' own queries, which the checkpoint has seen)")
    p.add_argument("--grpo-limit", type=int, help="distinct train queries GRPO cycles through (default: steps x "
                   "queries per step with --grpo-queries new, each once; --demos with sft)")
    p.add_argument("--checkpoints", help="the folder of the SFT and GRPO checkpoints (default: OUT/checkpoints); "
                   "give an earlier run's to start from its shared SFT checkpoint (with --sft-seed)")
    p.add_argument("--jobs", type=int, default=1, help="seeds run at once, each in its own process (default 1)")
    p.add_argument("--profile", choices=("mini", "full"), default="mini")
    p.add_argument("--db-path", help="a database directory instead of the embedded sandbox (world 0)")
    p.add_argument("--out", required=True, help="the folder for curve.csv, train.csv, curve.json, curve.png")
    return p


def checkpoint(settings: CurveSettings, seed: int, folder: Path) -> tuple[Path, float]:
    """The seed's SFT checkpoint (the tiny recipe of `utp_env.rl.sft`, scored nowhere: the curve scores
    it at step 0) and the seconds it took."""
    from utp_env.rl import sft

    started = time.perf_counter()
    argv = ["--tiny", "--limit", str(settings.demos), "--epochs", str(settings.sft_epochs), "--grpo-steps", "0",
            "--eval-limit", "0", "--seed", str(seed), "--output-dir", str(folder)]
    argv += ["--db-path", settings.db_path] if settings.db_path else ["--profile", settings.profile]
    sft.main(argv)
    return folder, time.perf_counter() - started


class Scorer:
    """Scores a policy on the held-out targets: greedy multi-turn rollouts in the env and, with `eval_samples`,
    sampled ones (`sft.evaluate_policy`)."""

    def __init__(self, settings: CurveSettings, tokenizer: Any) -> None:
        from utp_env.rl import sft

        self.settings, self.tokenizer = settings, tokenizer
        base: dict[str, Any] = {"db_path": settings.db_path, "profile": settings.profile, "world": 0}
        other = ({**base, "db_path": settings.eval_db_path} if settings.eval_db_path
                 else {**base, "db_path": None, "world": settings.eval_world})
        self.targets = {"held_out": base, "other_world": other}
        self.config = dict(sft.TINY_ENV)
        self.dbs = {name: open_database(kw["db_path"], kw["profile"], kw["world"]) for name, kw in self.targets.items()}
        self.schemas = sft.trl_tool_schemas(sft.TINY_SFT_TOOLS, base, self.config)

    def score(self, model: Any, step: int) -> list[dict[str, Any]]:
        from utp_env.env.config import find_query
        from utp_env.rl import sft

        out = []
        for target, kwargs in self.targets.items():
            result = sft.evaluate_policy(model, self.tokenizer, kwargs, "validation", self.settings.eval_limit,
                                         self.schemas, self.config, system=MULTI_TURN_SYSTEM,
                                         request=MULTI_TURN_REQUEST, max_new_tokens=96, rounds=8)
            orgs = [find_query(self.dbs[target], q).org for q in result["query_ids"]]  # type: ignore[union-attr]
            staged = [first_leg_reward(plan, org, r) for plan, org, r in
                      zip(result["plans"], orgs, result["rewards"], strict=True)]
            out.append({"step": step, "target": target, "mean_reward": result["mean_reward"],
                        "first_leg_reward": sum(staged) / max(len(staged), 1),
                        "from_origin": result["from_origin"] / max(result["queries"], 1),
                        "accepted_calls": result["accepted_calls"], "tool_calls": result["tool_calls"],
                        "queries": result["queries"], **self._sampled(model, kwargs)})
        return out

    def _sampled(self, model: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The env's mean reward of `eval_samples` episodes per query sampled at GRPO's temperature (the
        policy GRPO trains), with one seed at every step: each scoring draws the same random numbers."""
        from utp_env.rl import sft

        if not self.settings.eval_samples:
            return {"sampled_reward": "", "sampled_from_origin": ""}
        result = sft.evaluate_policy(model, self.tokenizer, kwargs, "validation", self.settings.eval_limit,
                                     self.schemas, self.config, system=MULTI_TURN_SYSTEM, request=MULTI_TURN_REQUEST,
                                     max_new_tokens=96, rounds=8, samples=self.settings.eval_samples,
                                     temperature=self.settings.temperature, seed=EVAL_SAMPLING_SEED, batch_size=32)
        return {"sampled_reward": result["mean_reward"],
                "sampled_from_origin": result["from_origin"] / max(result["queries"], 1)}


def scoring_steps(settings: CurveSettings) -> set[int]:
    """The GRPO steps at which the policy is scored: 0 (the checkpoint), every `every`-th, and the last."""
    return {0} | {s for s in range(1, settings.steps + 1) if s % settings.every == 0 or s == settings.steps}


def grpo_train_queries(settings: CurveSettings) -> tuple[int, int]:
    """Which train queries GRPO trains on: how many of the split's first to skip, and how many after them."""
    new = settings.grpo_queries == "new"
    limit = settings.grpo_limit or (settings.steps * settings.queries_per_step if new else settings.demos)
    return (settings.demos if new else 0), limit


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


def shared_sft_seed(settings: CurveSettings) -> int:
    """The seed of the one SFT checkpoint of a `share_sft` run."""
    return settings.seeds[0] if settings.sft_seed is None else settings.sft_seed


def sft_checkpoint(settings: CurveSettings, seed: int, folder: Path) -> tuple[Path, float]:
    """The SFT checkpoint GRPO starts from for `seed` (its own; with `share_sft`, the one of `sft_seed`, else
    of the first seed), made unless one made with these settings is in `folder` already; and the seconds
    it took (0 when reused)."""
    sft_seed = shared_sft_seed(settings) if settings.share_sft else seed
    ckpt = folder / f"sft-seed{sft_seed}"
    made_with = {"demos": settings.demos, "sft_epochs": settings.sft_epochs, "profile": settings.profile,
                 "db_path": settings.db_path, "seed": sft_seed}
    record = ckpt / "curve_sft.json"
    if record.exists() and json.loads(record.read_text(encoding="utf-8")) == made_with:
        return ckpt, 0.0
    ckpt, seconds = checkpoint(settings, sft_seed, ckpt)
    write_text_atomic(record, json.dumps(made_with) + "\n")  # a later run with these settings reuses it
    return ckpt, seconds


def run_seed(settings: CurveSettings, seed: int, folder: Path) -> SeedResult:
    """SFT checkpoint, then GRPO scored every `every` steps."""
    from transformers import AutoTokenizer, TrainerCallback

    from utp_env.rl import sft
    from utp_env.rl.recipe import parser as grpo_parser
    from utp_env.rl.recipe import run_grpo

    result = SeedResult(seed)
    scored = scoring_steps(settings)
    ckpt, result.seconds_sft = sft_checkpoint(settings, seed, folder)
    scorer = Scorer(settings, AutoTokenizer.from_pretrained(ckpt))

    class ScoreEvery(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
            result.points += scorer.score(model, 0)

        def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kw: Any) -> None:
            if state.global_step in scored:
                result.points += scorer.score(model, state.global_step)
                model.train()

    skip, limit = grpo_train_queries(settings)
    queries = ["--skip", str(skip), "--limit", str(limit)]
    argv = ["--model", str(ckpt), "--max-steps", str(settings.steps), "--split", "train",
            *queries, "--queries-per-step", str(settings.queries_per_step),
            "--num-generations", str(settings.num_generations), "--max-completion-length", "512",
            "--learning-rate", str(settings.learning_rate), "--temperature", str(settings.temperature),
            "--beta", str(settings.beta),
            "--step-limit", str(sft.TINY_ENV["step_limit"]), "--max-tool-calling-iterations", "8",
            "--max-observation-chars", str(sft.TINY_ENV["max_observation_chars"]),
            "--tools", ",".join(sft.TINY_SFT_TOOLS), "--compact", "--seed", str(seed),
            "--output-dir", str(folder / f"grpo-seed{seed}")]
    argv += ["--db-path", settings.db_path] if settings.db_path else ["--profile", settings.profile]
    args = grpo_parser("curve").parse_args(argv)
    started = time.perf_counter()
    summary = run_grpo(args, "multi_turn", callbacks=[ScoreEvery()], require_change=False,
                       env_base=REWARDS[settings.reward])
    result.seconds_grpo = time.perf_counter() - started
    result.train_log = summary.logged
    result.tensors_changed, result.tensors = summary.tensors_changed, summary.tensors
    return result


def interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean of `values` and its 95 % t-interval (the mean twice when there is one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, mean, mean
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = T_975.get(n, 1.96) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def scored_metrics(results: Sequence[SeedResult]) -> list[str]:
    """The metrics the run scored (the sampled one only with `--eval-samples` above 0)."""
    points = [p for r in results for p in r.points]
    return [m for m in METRICS if points and all(isinstance(p.get(m), (int, float)) for p in points)]


def summarise(settings: CurveSettings, results: Sequence[SeedResult]) -> dict[str, Any]:
    """Per target and metric: each seed's held-out score at the start (the SFT checkpoint) and at the
    end, their difference, and the mean difference with its 95 % t-interval over seeds."""
    out: dict[str, Any] = {"settings": asdict(settings), "targets": {}}
    for target in TARGETS:
        for metric in scored_metrics(results):
            per_seed = []
            origin = "sampled_from_origin" if metric == "sampled_reward" else "from_origin"
            for r in results:
                points = sorted((p for p in r.points if p["target"] == target), key=lambda p: p["step"])
                if not points:
                    continue
                start, end = points[0], points[-1]
                per_seed.append({"seed": r.seed, "start": start[metric], "end": end[metric],
                                 "delta": end[metric] - start[metric], "best": max(p[metric] for p in points),
                                 "from_origin_start": start[origin], "from_origin_end": end[origin]})
            if not per_seed:
                continue
            mean, low, high = interval([s["delta"] for s in per_seed])
            out["targets"][f"{target}/{metric}"] = {
                "per_seed": per_seed, "delta_mean": mean, "delta_low": low, "delta_high": high,
                "every_seed_rose": all(s["delta"] > 0 for s in per_seed)}
    zero = [e["frac_reward_zero_std"] for r in results for e in r.train_log if "frac_reward_zero_std" in e]
    out["frac_reward_zero_std_mean"] = sum(zero) / len(zero) if zero else None
    out["seconds"] = {f"seed{r.seed}": {"sft": round(r.seconds_sft, 1), "grpo": round(r.seconds_grpo, 1)}
                      for r in results}
    out["tensors_changed"] = {f"seed{r.seed}": f"{r.tensors_changed}/{r.tensors}" for r in results}
    return out


def write(out: Path, settings: CurveSettings, results: Sequence[SeedResult]) -> dict[str, Any]:
    """curve.csv, train.csv, curve.json and curve.png in `out` (module docstring)."""
    import io

    out.mkdir(parents=True, exist_ok=True)
    fields = ["seed", "step", "target", *METRICS, "from_origin", "sampled_from_origin", "accepted_calls", "tool_calls",
              "queries"]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for r in results:
        for p in r.points:
            writer.writerow({"seed": r.seed, **{k: p[k] for k in fields if k != "seed"}})
    write_text_atomic(out / "curve.csv", text.getvalue())
    keys = ["step", "reward", "reward_std", "frac_reward_zero_std", "loss", "grad_norm", "entropy", "kl"]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=["seed", *keys], lineterminator="\n")
    writer.writeheader()
    for r in results:
        for i, e in enumerate(r.train_log, start=1):
            writer.writerow({"seed": r.seed, "step": int(e.get("step", i)), **{k: e.get(k, "") for k in keys[1:]}})
    write_text_atomic(out / "train.csv", text.getvalue())
    summary = summarise(settings, results)
    write_text_atomic(out / "curve.json", json.dumps(summary, indent=2) + "\n")
    plot(out / "curve.png", results, summary)
    return summary


def plot(path: Path, results: Sequence[SeedResult], summary: dict[str, Any]) -> None:
    """Held-out scores against GRPO step: a row per metric, a column per target, a thin line per seed and
    their mean thick."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = scored_metrics(results)
    fig, axes = plt.subplots(len(metrics), len(TARGETS), figsize=(5 * len(TARGETS), 3.2 * len(metrics)),
                             sharex=True, squeeze=False)
    settings = summary["settings"]
    other = f"world {settings['eval_world']}" if not settings.get("eval_db_path") else "the other database"
    titles = {"held_out": "world 0 validation (held out)", "other_world": f"{other}, validation"}
    titled = {**METRIC_TITLES, "sampled_reward": METRIC_TITLES["sampled_reward"].replace(
        "k per query", f"{settings.get('eval_samples')} per query")}
    for row, metric in enumerate(metrics):
        for ax, target in zip(axes[row], TARGETS, strict=True):
            by_step: dict[int, list[float]] = {}
            for r in results:
                points = sorted((p for p in r.points if p["target"] == target), key=lambda p: p["step"])
                ax.plot([p["step"] for p in points], [p[metric] for p in points], lw=0.8, alpha=0.6,
                        label=f"seed {r.seed}")
                for p in points:
                    by_step.setdefault(p["step"], []).append(p[metric])
            steps = sorted(by_step)
            ax.plot(steps, [sum(by_step[s]) / len(by_step[s]) for s in steps], lw=2.2, color="black", label="mean")
            ax.set_title(f"{titles[target]}\n{titled[metric]}", fontsize=9)
            ax.grid(alpha=0.3)
        axes[row][0].set_ylabel("mean over queries")
    for ax in axes[-1]:
        ax.set_xlabel("GRPO step (0: the SFT checkpoint)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run_seeds(settings: CurveSettings, out: Path, jobs: int, checkpoints: Path | None = None) -> list[SeedResult]:
    """Every seed's curve, in seed order; with `jobs` > 1 that many seeds at once, each in its own process
    (one thread each: the tiny model's GRPO is single-threaded). Each finished seed is written at once, so
    a stopped run keeps what it measured. The checkpoints go to `checkpoints` (default `out/checkpoints`),
    where a shared SFT checkpoint made with the same settings is reused."""
    folder = checkpoints or out / "checkpoints"
    results: list[SeedResult] = []
    if jobs <= 1 or len(settings.seeds) == 1:
        for seed in settings.seeds:
            results.append(run_seed(settings, seed, folder))
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
            write(out, settings, results)
    if failures:
        seed, error = failures[0]
        raise RuntimeError(f"seed {seed} failed ({len(failures)} of {len(settings.seeds)} seeds); the finished ones "
                           f"are in {out}: {error}") from error
    if results:
        results[0].seconds_sft += seconds_shared  # the shared checkpoint was made once, before the workers
    return results


MERGE_IGNORES = ("seeds", "sft_seed")  # what may differ between the runs `merge` puts together


def read_run(folder: Path) -> tuple[CurveSettings, list[SeedResult]]:
    """A finished run's settings and per-seed results, read back from its curve.json, curve.csv and train.csv."""
    try:
        saved = json.loads((folder / "curve.json").read_text(encoding="utf-8"))
        points = list(csv.DictReader((folder / "curve.csv").open(encoding="utf-8")))
        logged = list(csv.DictReader((folder / "train.csv").open(encoding="utf-8")))
        settings = CurveSettings(**{"sft_seed": None, **saved["settings"]})  # runs before --sft-seed lack it
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as e:
        raise SystemExit(f"--merge: {folder} is not a finished curve run of this version "
                         f"(curve.json, curve.csv, train.csv): {e}") from None

    def number(key: str, text: str) -> int | float | str:
        if text in ("", None):
            return ""
        return int(text) if key in ("step", "accepted_calls", "tool_calls", "queries") else float(text)

    scored = scoring_steps(settings)
    results = []
    for seed in settings.seeds:
        r = SeedResult(seed)
        r.points = [{**{k: number(k, v) for k, v in row.items() if k not in ("seed", "target")},
                     "target": row["target"]} for row in points if int(row["seed"]) == seed]
        r.train_log = [{k: float(v) for k, v in row.items() if k != "seed" and v != ""}
                       for row in logged if int(row["seed"]) == seed]
        seconds = saved.get("seconds", {}).get(f"seed{seed}", {})
        r.seconds_sft, r.seconds_grpo = float(seconds.get("sft", 0.0)), float(seconds.get("grpo", 0.0))
        changed = str(saved.get("tensors_changed", {}).get(f"seed{seed}", "0/0")).split("/")
        r.tensors_changed, r.tensors = int(changed[0]), int(changed[1])
        steps = {t: {p["step"] for p in r.points if p["target"] == t} for t in TARGETS}
        if any(found != scored for found in steps.values()) or len(r.train_log) != settings.steps:
            raise SystemExit(f"--merge: seed {seed} of {folder} did not finish (scored at steps "
                             f"{sorted(steps['held_out'])} of {sorted(scored)}, {len(r.train_log)} of "
                             f"{settings.steps} steps logged); merge finished runs only")
        results.append(r)
    return settings, results


def merge(folders: Sequence[Path], out: Path) -> dict[str, Any]:
    """One curve of the seeds of several finished runs that differ only in their seeds (e.g. more seeds
    added later from the same shared SFT checkpoint with `--sft-seed`); SystemExit naming the setting
    that differs, or a seed run twice."""
    runs = [read_run(Path(f)) for f in folders]
    first = asdict(runs[0][0])
    for folder, (settings, _) in zip(folders[1:], runs[1:], strict=True):
        for key, value in asdict(settings).items():
            if key not in MERGE_IGNORES and value != first[key]:
                raise SystemExit(f"--merge: {folder} ran with {key}={value!r}, {folders[0]} with {first[key]!r}; "
                                 "only runs that differ in their seeds make one curve")
    results = [r for _, rs in runs for r in rs]
    seeds = [r.seed for r in results]
    if len(set(seeds)) != len(seeds):
        raise SystemExit(f"--merge: a seed is in more than one run ({sorted(seeds)}); merge runs of different seeds")
    sft_seeds = {shared_sft_seed(s) if s.share_sft else None for s, _ in runs}
    if len(sft_seeds) > 1:
        raise SystemExit(f"--merge: the runs started from different shared SFT checkpoints "
                         f"(seeds {sorted(map(str, sft_seeds))}); give them one with --sft-seed")
    merged = CurveSettings(**{**first, "seeds": seeds, "sft_seed": sft_seeds.pop()})
    return write(out, merged, results)


def settings_of(args: argparse.Namespace) -> CurveSettings:
    """The run's settings from the parsed command line; SystemExit naming the argument when one is out of range."""
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        raise SystemExit(f"--seeds: {args.seeds!r} is not a comma-separated list of integers") from None
    for name in ("steps", "every", "demos", "eval_limit", "queries_per_step", "jobs"):
        if getattr(args, name) < 1:
            raise SystemExit(f"--{name.replace('_', '-')} must be at least 1, not {getattr(args, name)}")
    if args.eval_samples < 0:
        raise SystemExit(f"--eval-samples must be 0 or more, not {args.eval_samples}")
    if args.grpo_limit is not None and args.grpo_limit < 1:
        raise SystemExit(f"--grpo-limit must be at least 1, not {args.grpo_limit}")
    if not seeds:
        raise SystemExit("--seeds: give at least one seed")
    if args.sft_seed is not None and not args.share_sft:
        raise SystemExit("--sft-seed names the shared SFT checkpoint: give --share-sft too")
    return CurveSettings(seeds=seeds, steps=args.steps, every=args.every, demos=args.demos,
                         sft_epochs=args.sft_epochs, eval_limit=args.eval_limit, eval_samples=args.eval_samples,
                         eval_world=args.eval_world, eval_db_path=args.eval_db_path,
                         queries_per_step=args.queries_per_step, num_generations=args.num_generations,
                         learning_rate=args.learning_rate, temperature=args.temperature, beta=args.beta,
                         reward=args.reward, grpo_queries=args.grpo_queries, grpo_limit=args.grpo_limit,
                         share_sft=args.share_sft, sft_seed=args.sft_seed, profile=args.profile, db_path=args.db_path)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    args = parser().parse_args(argv)
    out = Path(args.out)
    if args.merge:
        summary = merge([Path(f) for f in args.merge], out)
    else:
        settings = settings_of(args)
        checkpoints = Path(args.checkpoints) if args.checkpoints else None
        summary = write(out, settings, run_seeds(settings, out, args.jobs, checkpoints))
    for name, t in summary["targets"].items():
        seeds_text = ", ".join(f"seed {s['seed']}: {s['start']:.4f} → {s['end']:.4f}" for s in t["per_seed"])
        print(f"{name}: {seeds_text}; mean change {t['delta_mean']:+.4f} "
              f"(95 % interval {t['delta_low']:+.4f} … {t['delta_high']:+.4f})")
    print(f"frac_reward_zero_std (mean over steps and seeds): {summary['frac_reward_zero_std_mean']}")
    print(f"wrote {out / 'curve.csv'}, {out / 'train.csv'}, {out / 'curve.json'}, {out / 'curve.png'}")
    return summary


if __name__ == "__main__":
    main()
