"""The learning curve (utp_env/rl/curve/): its level-4 curriculum reward cannot be gamed beyond the env's, the
summary and each level's target are read off the run's own numbers, and a run writes its CSV, JSON and plot at
every level (the measured runs are docs/RL.md's; no duration here)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from degenerate_policies import POLICIES, VARIANTS

from utp_env.dataset import Dataset, dataset_of
from utp_env.env.config import DEFAULT_REWARD_WEIGHTS
from utp_env.env.episode import TerminationReason, finish
from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.rl.curve import (
    LEAVES_ORIGIN_CREDIT,
    SEARCHED_ORIGIN_CREDIT,
    FirstLegShapedRewardEnv,
    first_leg_reward,
    first_leg_shaped_reward,
    interval,
)
from utp_env.tools.database import Database


def env_reward(plan: Plan, query: Query, dataset: Dataset) -> tuple[float, dict]:
    outcome = finish(TerminationReason.SUBMITTED, plan, query, dataset.db, weights=DEFAULT_REWARD_WEIGHTS,
                     reference=dataset.references.get(query.query_id))
    return outcome.reward, outcome.to_json()["plan"] or {}


def test_no_degenerate_policy_earns_as_much_as_the_honest_plan_on_either_first_stage(mini_db: Database) -> None:
    """For every degenerate policy of the reward-hacking suite: its first-leg reward is at most its env
    reward, and below the honest plan's, which keeps its whole env reward (its first leg leaves the
    origin); the shaped stage (partial credit, with or without a search from the origin) pays it at
    least the first-leg reward and still less than the honest plan, and an empty plan nothing beyond
    the search's credit."""
    dataset = dataset_of(mini_db)
    queries = [q for q in dataset.queries if q.query_id in dataset.references][:15]
    assert queries
    for n, query in enumerate(queries):
        honest = dataset.references[query.query_id]
        other = dataset.references[queries[(n + 1) % len(queries)].query_id]
        value, plan_json = env_reward(honest, query, dataset)
        assert first_leg_reward(plan_json, query.org, value) == value > LEAVES_ORIGIN_CREDIT
        assert first_leg_shaped_reward(plan_json, query.org, value, searched_origin=True) == value
        for name, policy in {**POLICIES, **VARIANTS}.items():
            bad, bad_json = env_reward(policy(honest, query, mini_db, other), query, dataset)
            staged = first_leg_reward(bad_json, query.org, bad)
            assert staged <= bad and staged < value, (name, query.query_id, staged, value)
            for searched in (False, True):
                shaped = first_leg_shaped_reward(bad_json, query.org, bad, searched)
                assert staged <= shaped < value, (name, query.query_id, searched)
        empty_value, empty_json = env_reward(honest.model_copy(update={"days": []}), query, dataset)
        assert first_leg_shaped_reward(empty_json, query.org, empty_value) == 0.0
        assert first_leg_shaped_reward(empty_json, query.org, empty_value, True) == SEARCHED_ORIGIN_CREDIT
    wrong_city = {"days": [{"day": 1, "transport": [{"origin": queries[0].org, "destination": "elsewhere"}]}]}
    assert first_leg_shaped_reward(wrong_city, queries[0].org, 0.0) == LEAVES_ORIGIN_CREDIT
    assert first_leg_shaped_reward(wrong_city, "another origin", 0.0) == 0.0


def test_the_shaped_stage_pays_a_search_from_the_origin_once_and_below_a_leg(mini_db_path: Path) -> None:
    """A rollout that only searched from the query's origin earns `SEARCHED_ORIGIN_CREDIT`, however often
    it searched; one that searched from elsewhere earns 0; an accepted leg from the origin earns more."""
    from utp_env.env.config import split_pool
    from utp_env.rl.env import rl_env_class

    env_class = rl_env_class(tools=["search_buses", "search_trains", "add_leg", "submit"],
                             base=FirstLegShapedRewardEnv, db_path=str(mini_db_path), config={"compact": True})
    query = split_pool(env_class()._env.db, "validation", 1)[0]

    def rollout(origin: str, times: int) -> float:
        env = env_class()
        env.reset(query_id=query.query_id)
        for _ in range(times):
            env.search_trains(origin=origin, destination=query.dest, date=query.dates[0])
        return env.get_reward()

    assert rollout(query.org, 1) == rollout(query.org, 3) == SEARCHED_ORIGIN_CREDIT < LEAVES_ORIGIN_CREDIT
    assert rollout(query.dest, 2) == 0.0
    assert first_leg_shaped_reward(None, query.org, 0.0, searched_origin=True) == SEARCHED_ORIGIN_CREDIT


def test_a_memorised_leg_between_two_other_cities_earns_nothing(mini_db: Database) -> None:
    """What the tiny SFT model does (docs/RL.md): submit one valid leg of another trip. The env's reward of
    this branch pays it; the curriculum's first stage does not."""
    dataset = dataset_of(mini_db)
    queries = [q for q in dataset.queries if q.query_id in dataset.references]
    for query in queries:
        for other in queries:
            leg = dataset.references[other.query_id].days[0].transport[0]
            if query.org in (leg.origin, leg.destination):
                continue
            day = dataset.references[query.query_id].days[0].model_copy(update={
                "transport": [leg], "items": [], "cities": [leg.origin, leg.destination], "breakfast": None,
                "lunch": None, "dinner": None, "attractions": [], "accommodation": None, "events": []})
            memorised = Plan(query_id=query.query_id, days=[day])
            value, plan_json = env_reward(memorised, query, dataset)
            assert first_leg_reward(plan_json, query.org, value) == 0.0
            assert first_leg_shaped_reward(plan_json, query.org, value) == 0.0
            return
    pytest.fail("no leg between two cities other than a query's origin was found")


def test_the_interval_over_seeds() -> None:
    mean, low, high = interval([0.01, 0.02, 0.03])
    assert mean == pytest.approx(0.02) and low == pytest.approx(0.02 - 4.303 * 0.01 / math.sqrt(3))
    assert high == pytest.approx(0.02 + 4.303 * 0.01 / math.sqrt(3))
    assert interval([0.5]) == (0.5, 0.5, 0.5)


def test_the_summary_compares_each_seeds_end_with_its_start_and_bounds_the_mean_change() -> None:
    """What the Done-when is read from (curve.json): per seed and target, the greedy score at the first
    point (step 0, the checkpoint) and the last, their difference, and the t-interval of the mean
    difference over seeds; `every_seed_rose` only when each seed's end is above its start."""
    from utp_env.rl.curve import SeedResult, parser, settings_of, summarise

    settings = settings_of(parser().parse_args(["--tiny", "--level", "4", "--out", "o", "--seeds", "0,1,2",
                                                "--steps", "4", "--every", "2", "--demos", "4", "--eval-samples", "0"]))

    def point(step: int, target: str, value: float) -> dict:
        return {"step": step, "target": target, "success": value > 0.03, "mean_reward": value,
                "first_leg_reward": value / 2, "from_origin": value, "accepted_calls": 0, "tool_calls": 0,
                "queries": 2}

    results = []
    for seed, (end_held, end_other) in enumerate([(0.03, 0.02), (0.04, 0.01), (0.05, 0.03)]):
        r = SeedResult(seed, train_log=[{"step": 1, "frac_reward_zero_std": 0.25 * seed}])
        # scored out of order: the summary sorts by step
        r.points = [point(4, "held_out", end_held), point(0, "held_out", 0.02), point(2, "held_out", 0.9),
                    point(0, "other_world", 0.02), point(4, "other_world", end_other)]
        results.append(r)
    summary = summarise(settings, results)
    held = summary["targets"]["held_out/mean_reward"]
    assert [(s["start"], s["end"]) for s in held["per_seed"]] == [(0.02, 0.03), (0.02, 0.04), (0.02, 0.05)]
    assert held["delta_mean"] == pytest.approx(0.02) and held["every_seed_rose"]
    assert (held["delta_low"], held["delta_high"]) == pytest.approx(interval([0.01, 0.02, 0.03])[1:])
    assert held["per_seed"][0]["best"] == 0.9  # the best point is kept, but the end is what is compared
    assert summary["targets"]["held_out/first_leg_reward"]["delta_mean"] == pytest.approx(0.01)
    other = summary["targets"]["other_world/mean_reward"]
    assert not other["every_seed_rose"] and other["delta_low"] < 0 < other["delta_high"]
    assert summary["frac_reward_zero_std_mean"] == pytest.approx(0.25)
    assert "held_out/sampled_reward" not in summary["targets"]  # not scored (--eval-samples 0): not summarised


def test_grpo_trains_on_queries_the_sft_demonstrations_did_not_use() -> None:
    from utp_env.rl import curve

    def settings(*extra: str) -> curve.CurveSettings:
        args = curve.parser().parse_args(["--tiny", "--out", "o", "--demos", "256", "--steps", "32",
                                          "--queries-per-step", "4", *extra])
        return curve.settings_of(args)

    assert curve.grpo_train_queries(settings()) == (256, 32 * 4)  # the next 128 train queries, each once
    assert curve.grpo_train_queries(settings("--grpo-limit", "16")) == (256, 16)
    assert curve.grpo_train_queries(settings("--grpo-queries", "sft")) == (0, 256)


@pytest.mark.parametrize(("argv", "message"), [
    (["--jobs", "0"], "--jobs must be at least 1"), (["--eval-samples", "-1"], "--eval-samples must be 0 or more"),
    (["--grpo-limit", "0"], "--grpo-limit must be at least 1"), (["--seeds", "a"], "is not a comma-separated"),
    (["--sft-seed", "0"], "give --share-sft too"), (["--seeds", "1,1"], "each seed once"),
    (["--steps", "0"], "--steps must be at least 1"), (["--num-generations", "1"], "at least 2"),
    (["--sft-epochs", "-1"], "--sft-epochs must be 0 or more"),
    (["--swapped-copies", "-1"], "--swapped-copies is the tiny model's"),
    (["--pretrain-copy-bar", "0"], r"--pretrain-copy-bar is a share in \(0, 1\]"),
    (["--pretrain-steps", "0", "--pretrain-copy-bar", "0.5"], "of a run that pretrains"),
    (["--vllm"], "the tiny model runs without it"),
    (["--level", "2", "--reward", "first_leg"], "level 2 trains on its own reward")])
def test_the_curve_refuses_bad_arguments(argv: list[str], message: str, tmp_path: Path) -> None:
    from utp_env.rl import curve

    with pytest.raises(SystemExit, match=message):
        curve.main(["--tiny", "--out", str(tmp_path), *argv])


@pytest.mark.slow
@pytest.mark.usefixtures("rl_extra")
@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_the_curve_of_every_level_writes_its_csv_json_and_plot(mini_db_path: Path, tmp_path: Path,
                                                               level: int) -> None:
    """The CPU twin of the GPU recipe, per level: the tiny model (20 pretraining steps, not the level's 1,000: a
    smoke run), SFT on 4 demonstrations, 2 GRPO steps, each scored; at level 4 two seeds at once (--jobs 2) from
    one shared checkpoint."""
    import shutil

    from utp_env.rl import curve
    from utp_env.train_split import build_train_set

    db = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    # level 3 views the 3-day queries only: one train query in three, so it needs a longer prefix
    build_train_set(db, n=20 if level == 3 else 8, progress=False)
    out = tmp_path / "curve"
    seeds = ["--seeds", "0,1", "--share-sft", "--jobs", "2"] if level == 4 else ["--seeds", "0"]
    # on train queries after the demonstrations' (the default --grpo-queries new)
    summary = curve.main(["--tiny", "--level", str(level), *seeds, "--steps", "2", "--every", "1", "--demos", "4",
                          "--sft-epochs", "1", "--eval-limit", "2", "--eval-samples", "2", "--queries-per-step", "2",
                          "--num-generations", "2", "--pretrain-steps", "20", "--db-path", str(db),
                          "--eval-db-path", str(mini_db_path),
                          "--out", str(out)])
    rows = list(csv.DictReader((out / "curve.csv").open()))
    seed_names = ("0", "1") if level == 4 else ("0",)
    # -1: the model before SFT (the recipe's start), 0: the SFT checkpoint, then GRPO's steps
    expected = {(s, k, t) for s in seed_names for k in ("-1", "0", "1", "2") for t in ("held_out", "other_world")}
    if level != 4:  # the paper's task at the start and the end: does the level carry over?
        expected |= {(s, k, "paper_task") for s in seed_names for k in ("0", "2")}
    assert {(r["seed"], r["step"], r["target"]) for r in rows} == expected
    assert all(0 <= float(r["mean_reward"]) <= 1 and 0 <= float(r["sampled_reward"]) <= 1
               and float(r["success"]) in (0.0, 0.5, 1.0) for r in rows)
    if level == 4:
        assert all(float(r["first_leg_reward"]) <= float(r["mean_reward"]) for r in rows)
    assert len(list(csv.DictReader((out / "train.csv").open()))) == 2 * len(seed_names)
    saved = json.loads((out / "curve.json").read_text())
    assert saved == json.loads(json.dumps(summary))
    assert saved["settings"]["level"] == level and saved["machine"]["cpus"] >= 1
    assert "wall_minutes" in saved["machine"] and len(saved["machine"]["load_at_start"]) == 3
    assert (saved["target"] is not None) == (level in curve.LEVEL_TARGETS)
    assert "held_out/success" in saved["targets"] and "other_world/sampled_reward" in saved["targets"]
    assert saved["targets"]["held_out/success"]["before_sft_mean"] is not None
    assert (out / "curve.png").stat().st_size > 0
    if level == 4:  # the shared SFT checkpoint was made once and reused by the second seed
        assert saved["seconds"]["seed0"]["sft"] > 0 and saved["seconds"]["seed1"]["sft"] == 0


def fake_results(seeds: list[int]) -> list:
    """Seed results as a run records them (points of both targets and every metric, a train log)."""
    from utp_env.rl.curve import SeedResult

    results = []
    for seed in seeds:
        r = SeedResult(seed, seconds_sft=0.0, seconds_grpo=10.0 + seed, tensors_changed=24, tensors=24)
        r.train_log = [{"step": float(step), "reward": 0.01 * seed, "frac_reward_zero_std": 0.25, "loss": 0.1,
                        "grad_norm": 0.2, "entropy": 0.1, "kl": 0.01} for step in (1, 2)]
        r.points = [{"step": step, "target": target, "first_leg_reward": 0.01 * step, "mean_reward": 0.02 * step,
                     "success": 0.5, "sampled_success": 0.25, "sampled_reward": 0.005 * (seed + step),
                     "from_origin": 0.5, "sampled_from_origin": 0.25, "accepted_calls": 3, "tool_calls": 4,
                     "queries": 2}
                    for step in (0, 2) for target in ("held_out", "other_world")]
        results.append(r)
    return results


def test_merging_runs_of_other_seeds_gives_the_curve_of_all_seeds(tmp_path: Path) -> None:
    """Seeds added later (`--sft-seed` of the first run's checkpoint) merge into the curve one run of all
    of them writes; runs that differ in anything but their seeds, or repeat a seed, are refused."""
    from dataclasses import replace

    from utp_env.rl import curve

    settings = curve.settings_of(curve.parser().parse_args(["--tiny", "--level", "4", "--out", "o", "--seeds",
                                                            "0,1,2", "--steps", "2", "--every", "2", "--share-sft"]))
    everything = curve.write(tmp_path / "all", settings, fake_results([0, 1, 2]))
    curve.write(tmp_path / "a", replace(settings, seeds=[0, 1]), fake_results([0, 1]))
    curve.write(tmp_path / "b", replace(settings, seeds=[2], sft_seed=0), fake_results([2]))
    merged = curve.main(["--tiny", "--merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "m")])
    assert merged["targets"] == everything["targets"]
    assert merged["settings"]["seeds"] == [0, 1, 2] and merged["settings"]["sft_seed"] == 0
    # the share of episodes from the origin that goes with each score: the sampled one for the sampled score
    assert merged["targets"]["held_out/sampled_reward"]["per_seed"][0]["from_origin_start"] == 0.25
    assert merged["targets"]["held_out/mean_reward"]["per_seed"][0]["from_origin_start"] == 0.5
    assert (tmp_path / "m" / "curve.csv").read_text() == (tmp_path / "all" / "curve.csv").read_text()
    assert (tmp_path / "m" / "train.csv").read_text() == (tmp_path / "all" / "train.csv").read_text()
    curve.write(tmp_path / "c", replace(settings, seeds=[2], learning_rate=1e-3), fake_results([2]))
    with pytest.raises(SystemExit, match=r"ran with learning_rate=0\.001"):
        curve.main(["--tiny", "--merge", str(tmp_path / "a"), str(tmp_path / "c"), "--out", str(tmp_path / "m")])
    with pytest.raises(SystemExit, match="a seed is in more than one run"):
        curve.main(["--tiny", "--merge", str(tmp_path / "a"), str(tmp_path / "a"), "--out", str(tmp_path / "m")])
    curve.write(tmp_path / "d", replace(settings, seeds=[2]), fake_results([2]))  # its own checkpoint (seed 2's)
    with pytest.raises(SystemExit, match="different shared SFT checkpoints"):
        curve.main(["--tiny", "--merge", str(tmp_path / "a"), str(tmp_path / "d"), "--out", str(tmp_path / "m")])
    stopped = fake_results([2])
    stopped[0].points = [p for p in stopped[0].points if p["step"] == 0]  # stopped before its last scoring
    curve.write(tmp_path / "e", replace(settings, seeds=[2], sft_seed=0), stopped)
    with pytest.raises(SystemExit, match=r"seed 2 of .* did not finish \(scored at steps \[0\] of \[0, 2\]"):
        curve.main(["--tiny", "--merge", str(tmp_path / "a"), str(tmp_path / "e"), "--out", str(tmp_path / "m")])
    with pytest.raises(SystemExit, match="is not a finished curve run"):
        curve.main(["--tiny", "--merge", str(tmp_path / "nowhere"), "--out", str(tmp_path / "m")])


@pytest.mark.parametrize(("level", "starts", "ends", "minutes", "met"), [
    (1, [0.05, 0.0, 0.1], [0.8, 0.7, 0.75], 25.0, True),
    (1, [0.05, 0.0, 0.1], [0.8, 0.6, 0.7], 25.0, False),    # the mean end is below 0.70
    (1, [0.2, 0.1, 0.1], [0.9, 0.9, 0.9], 25.0, False),     # the mean start is above 0.10
    (1, [0.05, 0.0, 0.1], [0.8, 0.7, 0.75], 31.0, False),   # beyond 30 minutes of wall time
    (2, [0.10, 0.11, 0.12], [0.20, 0.22, 0.21], 50.0, True),
    (2, [0.10, 0.20, 0.30], [0.20, 0.30, 0.40], 50.0, False),  # a rise of 0.1, the start's spread 0.1
    (2, [0.10, 0.11, 0.12], [0.30, 0.09, 0.21], 50.0, False),  # the interval reaches below 0
])
def test_a_levels_target_is_read_off_the_runs_own_numbers(level: int, starts: list[float], ends: list[float],
                                                          minutes: float, met: bool) -> None:
    summary = _summary_of(level, starts, ends, minutes)
    metric = "success" if level == 1 else "mean_reward"
    assert summary["target"]["metric"] == f"held_out/{metric}" and summary["target"]["met"] is met


@pytest.mark.parametrize(("befores", "starts", "ends", "met"), [
    ([0.0, 0.0, 0.0], [0.30, 0.30, 0.30], [0.31, 0.29, 0.30], True),   # SFT's rise counts, GRPO's alone is nil
    ([0.0, 0.1, 0.2], [0.30, 0.30, 0.30], [0.31, 0.29, 0.30], False),  # a rise of 0.2, the start's spread 0.1
    ([0.0, 0.0, 0.0], [0.30, 0.30, 0.30], [0.40, -0.30, 0.30], False),  # the interval reaches below 0
])
def test_level_twos_rise_is_read_from_before_sft_when_that_was_scored(befores: list[float], starts: list[float],
                                                                      ends: list[float], met: bool) -> None:
    summary = _summary_of(2, starts, ends, 50.0, befores)
    assert summary["target"]["met"] is met
    assert summary["target"]["rise_mean"] == pytest.approx(sum(ends) / 3 - sum(befores) / 3)
    assert "before SFT" in summary["target"]["why"]


def _summary_of(level: int, starts: list[float], ends: list[float], minutes: float,
                befores: list[float] | None = None) -> dict:
    from utp_env.rl.curve import SeedResult, parser, settings_of, summarise
    from utp_env.rl.curve.seeds import BEFORE_SFT_STEP

    settings = settings_of(parser().parse_args(["--tiny", "--level", str(level), "--seeds", "0,1,2",
                                                "--steps", "2", "--every", "2", "--eval-samples", "0"]))
    results = []
    for seed, (start, end) in enumerate(zip(starts, ends, strict=True)):
        r = SeedResult(seed)
        steps = [(0, start), (2, end)] + ([(BEFORE_SFT_STEP, befores[seed])] if befores is not None else [])
        r.points = [{"step": step, "target": "held_out", "success": value, "mean_reward": value, "from_origin": 0.0,
                     "accepted_calls": 0, "tool_calls": 0, "queries": 2} for step, value in steps]
        results.append(r)
    return summarise(settings, results, {"wall_minutes": minutes})
