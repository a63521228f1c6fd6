"""What a curve run writes, and what it says of itself: the files, the summary over seeds, the level's target.

Files in `--out`: `curve.csv` (one row per seed, step and target: every metric of `scoring.METRICS`, legs from
the query's origin, accepted calls), `train.csv` (TRL's per-step log: mean reward of the rollouts,
`frac_reward_zero_std`, loss, entropy, KL), `curve.json` (the settings; per target and metric each seed's
score at the start and at the end, their difference, the mean difference with its 95 % t-interval over
seeds and the seeds' spread at the start; the level's target and whether it was met; the machine: cores,
load, wall time) and `curve.png` (the scores against step, a panel per metric and target, a line per seed
and their mean).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import statistics
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from utp_env.rl.curve.scoring import METRIC_TITLES, METRICS, TARGETS
from utp_env.rl.curve.seeds import BEFORE_SFT_STEP, SeedResult
from utp_env.rl.curve.settings import CurveSettings, scoring_steps, shared_sft_seed
from utp_env.tools.atomic import write_text_atomic

# t_{0.975, n-1} for the 95 % interval of a mean over n seeds (n = 2 … 10)
T_975 = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571, 7: 2.447, 8: 2.365, 9: 2.306, 10: 2.262}
LEVEL_TARGETS: dict[int, dict[str, Any]] = {
    1: {"what": "held-out success (greedy, mean over seeds) from at most 0.10 at the recipe's start (the model "
                "before SFT, else the SFT checkpoint) to at least 0.70 at the end, within 30 minutes of wall time",
        "metric": "held_out/success", "start_at_most": 0.10,
        "end_at_least": 0.70, "minutes": 30.0},
    2: {"what": "a rise of the held-out reward (greedy) from the recipe's start (the model before SFT, else the SFT "
                "checkpoint) to the end whose 95 % interval over seeds is above 0 and whose mean is at least 3 "
                "times the seeds' spread (s.d.) at the start", "metric": "held_out/mean_reward",
        "spread_times": 3.0},
}
"""What each level's curve must show (the issue's "learning curve that leaves no doubt"), checked by
`target_met` on the run's own numbers. Both read the curve from the recipe's start, SFT and GRPO together; the
summary's `delta_*` figures are GRPO's own part (from the SFT checkpoint). With `--share-sft` the seeds share
their start and their SFT, so an interval over seeds measures how GRPO's seeds vary, not SFT's."""


def interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean of `values` and its 95 % t-interval (the mean twice when there is one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, mean, mean
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = T_975.get(n, 1.96) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def scored_metrics(results: Sequence[SeedResult], target: str | None = None) -> list[str]:
    """The metrics the run scored (of `target`, when given): the sampled ones only with `--eval-samples` above
    0, the first-leg stage only at level 4."""
    points = [p for r in results for p in r.points if target is None or p["target"] == target]
    return [m for m in METRICS if points and all(isinstance(p.get(m), (int, float)) for p in points)]


def summarise(settings: CurveSettings, results: Sequence[SeedResult], machine: dict[str, Any] | None = None
              ) -> dict[str, Any]:
    """Per target and metric: each seed's score at the start (the SFT checkpoint) and at the end, their
    difference, the mean difference with its 95 % t-interval over seeds, the seeds' spread at the start;
    then the level's target and whether the run met it."""
    out: dict[str, Any] = {"settings": asdict(settings), "targets": {}}
    for target in TARGETS:
        for metric in scored_metrics(results, target):
            per_seed = []
            origin = "sampled_from_origin" if metric.startswith("sampled") else "from_origin"
            for r in results:
                points = sorted((p for p in r.points if p["target"] == target and p["step"] >= 0),
                                key=lambda p: p["step"])
                if not points:
                    continue
                start, end = points[0], points[-1]
                before = [p[metric] for p in r.points
                          if p["target"] == target and p["step"] == BEFORE_SFT_STEP and p[metric] != ""]
                per_seed.append({"seed": r.seed, "before_sft": before[0] if before else None,
                                 "start": start[metric], "end": end[metric],
                                 "delta": end[metric] - start[metric], "best": max(p[metric] for p in points),
                                 "from_origin_start": start.get(origin), "from_origin_end": end.get(origin)})
            if not per_seed:
                continue
            mean, low, high = interval([s["delta"] for s in per_seed])
            starts = [s["start"] for s in per_seed]
            befores = [s["before_sft"] for s in per_seed if s["before_sft"] is not None]
            out["targets"][f"{target}/{metric}"] = {
                "per_seed": per_seed, "before_sft_mean": sum(befores) / len(befores) if befores else None,
                "start_mean": sum(starts) / len(starts),
                "end_mean": sum(s["end"] for s in per_seed) / len(per_seed),
                "start_spread": statistics.stdev(starts) if len(starts) > 1 else 0.0,
                "delta_mean": mean, "delta_low": low, "delta_high": high,
                "every_seed_rose": all(s["delta"] > 0 for s in per_seed)}
    zero = [e["frac_reward_zero_std"] for r in results for e in r.train_log if "frac_reward_zero_std" in e]
    out["frac_reward_zero_std_mean"] = sum(zero) / len(zero) if zero else None
    out["seconds"] = {f"seed{r.seed}": {"sft": round(r.seconds_sft, 1), "grpo": round(r.seconds_grpo, 1)}
                      for r in results}
    out["tensors_changed"] = {f"seed{r.seed}": f"{r.tensors_changed}/{r.tensors}" for r in results}
    out["machine"] = machine or {}
    out["target"] = target_met(settings, out)
    return out


def target_met(settings: CurveSettings, summary: dict[str, Any]) -> dict[str, Any] | None:
    """The level's target (`LEVEL_TARGETS`) and the run's verdict on it, from the summary's own numbers;
    None for a level without one."""
    goal = LEVEL_TARGETS.get(settings.level)
    if goal is None:
        return None
    found = summary["targets"].get(goal["metric"])
    if found is None:
        return {**goal, "met": False, "why": f"{goal['metric']} was not scored"}
    if "end_at_least" in goal:
        minutes = (summary.get("machine") or {}).get("wall_minutes")
        start = found["start_mean"] if found.get("before_sft_mean") is None else found["before_sft_mean"]
        met = (start <= goal["start_at_most"] and found["end_mean"] >= goal["end_at_least"]
               and (minutes is None or minutes <= goal["minutes"]))
        which = "at GRPO's start" if found.get("before_sft_mean") is None else "before SFT"
        why = (f"start {start:.3f} {which} (at most {goal['start_at_most']}), end {found['end_mean']:.3f} "
               f"(at least {goal['end_at_least']}), {minutes if minutes is not None else '?'} minutes of wall time")
        return {**goal, "met": met, "why": why}
    seeds = found["per_seed"]
    before = all(s["before_sft"] is not None for s in seeds)
    starts = [s["before_sft"] if before else s["start"] for s in seeds]
    mean, low, high = interval([s["end"] - start for s, start in zip(seeds, starts, strict=True)])
    spread = statistics.stdev(starts) if len(starts) > 1 else 0.0
    met = low > 0 and mean >= goal["spread_times"] * spread
    which = "before SFT" if before else "at GRPO's start"
    why = (f"mean rise from {which} {mean:+.4f} (95 % interval {low:+.4f} … {high:+.4f}), the seeds' spread at the "
           f"start {spread:.4f}")
    return {**goal, "met": met, "rise_mean": mean, "rise_low": low, "rise_high": high, "start_spread": spread,
            "why": why}


def machine_state(started: float | None = None) -> dict[str, Any]:
    """The machine a run ran on: its cores and load averages, and (from `started`, a `time.time()`) the
    wall time so far in minutes."""
    import time

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    state: dict[str, Any] = {"cpus": os.cpu_count(), "load_1_5_15": [round(x, 2) for x in load]}
    if started is not None:
        state["wall_minutes"] = round((time.time() - started) / 60, 1)
    return state


def write(out: Path, settings: CurveSettings, results: Sequence[SeedResult],
          machine: dict[str, Any] | None = None) -> dict[str, Any]:
    """curve.csv, train.csv, curve.json and curve.png in `out` (module docstring)."""
    out.mkdir(parents=True, exist_ok=True)
    fields = ["seed", "step", "target", *METRICS, "from_origin", "sampled_from_origin", "accepted_calls",
              "tool_calls", "queries"]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for r in results:
        for p in r.points:
            writer.writerow({"seed": r.seed, **{k: p.get(k, "") for k in fields if k != "seed"}})
    write_text_atomic(out / "curve.csv", text.getvalue())
    keys = ["step", "reward", "reward_std", "frac_reward_zero_std", "loss", "grad_norm", "entropy", "kl"]
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=["seed", *keys], lineterminator="\n")
    writer.writeheader()
    for r in results:
        for i, e in enumerate(r.train_log, start=1):
            writer.writerow({"seed": r.seed, "step": int(e.get("step", i)), **{k: e.get(k, "") for k in keys[1:]}})
    write_text_atomic(out / "train.csv", text.getvalue())
    summary = summarise(settings, results, machine)
    write_text_atomic(out / "curve.json", json.dumps(summary, indent=2) + "\n")
    plot(out / "curve.png", results, summary)
    return summary


def plot(path: Path, results: Sequence[SeedResult], summary: dict[str, Any]) -> None:
    """Scores against GRPO step: a row per metric, a column per target scored at every step (the paper's task,
    scored at the start and the end, is in curve.json), a thin line per seed and their mean thick."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = [t for t in TARGETS[:2] if any(p["target"] == t for r in results for p in r.points)]
    metrics = [m for m in scored_metrics(results, columns[0] if columns else None)]
    fig, axes = plt.subplots(len(metrics), len(columns), figsize=(5 * len(columns), 3.0 * len(metrics)),
                             sharex=True, squeeze=False)
    settings = summary["settings"]
    other = f"world {settings['eval_world']}" if not settings.get("eval_db_path") else "the other database"
    level = settings.get("level", 4)
    titles = {"held_out": f"level {level}, world 0 validation (held out)", "other_world": f"level {level}, {other}"}
    samples = str(settings.get("eval_samples"))
    for row, metric in enumerate(metrics):
        for ax, target in zip(axes[row], columns, strict=True):
            by_step: dict[int, list[float]] = {}
            for r in results:
                points = sorted((p for p in r.points if p["target"] == target), key=lambda p: p["step"])
                ax.plot([p["step"] for p in points], [p[metric] for p in points], lw=0.8, alpha=0.6,
                        label=f"seed {r.seed}")
                for p in points:
                    by_step.setdefault(p["step"], []).append(p[metric])
            steps = sorted(by_step)
            ax.plot(steps, [sum(by_step[s]) / len(by_step[s]) for s in steps], lw=2.2, color="black", label="mean")
            ax.set_title(f"{titles[target]}\n{METRIC_TITLES[metric].replace('k per query', samples + ' per query')}",
                         fontsize=9)
            ax.grid(alpha=0.3)
        axes[row][0].set_ylabel("mean over episodes")
    for ax in axes[-1]:
        ax.set_xlabel("GRPO step (-1: before SFT; 0: the SFT checkpoint)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


MERGE_IGNORES = ("seeds", "sft_seed")  # what may differ between the runs `merge` puts together


def read_run(folder: Path) -> tuple[CurveSettings, list[SeedResult], dict[str, Any]]:
    """A finished run's settings, per-seed results and machine, read back from curve.json, curve.csv, train.csv."""
    try:
        saved = json.loads((folder / "curve.json").read_text(encoding="utf-8"))
        points = list(csv.DictReader((folder / "curve.csv").open(encoding="utf-8")))
        logged = list(csv.DictReader((folder / "train.csv").open(encoding="utf-8")))
        settings = CurveSettings.from_saved(saved["settings"])
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
        steps = {p["step"] for p in r.points if p["target"] == "held_out"}
        if steps != scored or len(r.train_log) != settings.steps:
            raise SystemExit(f"--merge: seed {seed} of {folder} did not finish (scored at steps {sorted(steps)} of "
                             f"{sorted(scored)}, {len(r.train_log)} of {settings.steps} steps logged); merge "
                             "finished runs only")
        results.append(r)
    return settings, results, saved.get("machine") or {}


def merge(folders: Sequence[Path], out: Path) -> dict[str, Any]:
    """One curve of the seeds of several finished runs that differ only in their seeds (e.g. more seeds added
    later from the same shared SFT checkpoint with `--sft-seed`); SystemExit naming the setting that differs,
    or a seed run twice. The machines of the runs are kept, each under its folder."""
    runs = [read_run(Path(f)) for f in folders]
    first = asdict(runs[0][0])
    for folder, (settings, _, _) in zip(folders[1:], runs[1:], strict=True):
        for key, value in asdict(settings).items():
            if key not in MERGE_IGNORES and value != first[key]:
                raise SystemExit(f"--merge: {folder} ran with {key}={value!r}, {folders[0]} with {first[key]!r}; "
                                 "only runs that differ in their seeds make one curve")
    results = [r for _, rs, _ in runs for r in rs]
    seeds = [r.seed for r in results]
    if len(set(seeds)) != len(seeds):
        raise SystemExit(f"--merge: a seed is in more than one run ({sorted(seeds)}); merge runs of different seeds")
    sft_seeds = {shared_sft_seed(s) if s.share_sft else None for s, _, _ in runs}
    if len(sft_seeds) > 1:
        raise SystemExit(f"--merge: the runs started from different shared SFT checkpoints "
                         f"(seeds {sorted(map(str, sft_seeds))}); give them one with --sft-seed")
    merged = CurveSettings(**{**first, "seeds": seeds, "sft_seed": sft_seeds.pop()})
    machines = {str(folder): machine for folder, (_, _, machine) in zip(folders, runs, strict=True)}
    return write(out, merged, results, {"merged_runs": machines})
