"""The noise floor of `--trials` (utp_env/runs/noise.py): flips, spread and MDD against hand computations."""

from __future__ import annotations

import math

import pytest
from compare_records import queries, record

from utp_env.runs.noise import FACTOR, minimum_detectable, noise_floor, noise_lines, trials_needed


def test_flips_spread_and_mdd_by_hand() -> None:
    """Three trials of 40 queries. Query q000 passes in trial 0 only (a flip); the reward is 0.5, 0.6, 0.7 on
    every query in trials 0, 1, 2: per-trial means 0.5, 0.6, 0.7, sd 0.1, MDD 3.96 x 0.1 (one trial each) and
    3.96 x 0.1 / sqrt(3) (three each)."""
    q = queries()
    records = []
    for t, reward in enumerate((0.5, 0.6, 0.7)):
        for qid in q:
            records.append(record(qid, passed=(qid == "q000" and t == 0), bas=0.5, reward=reward, trial=t))
    noise = noise_floor(records, q, trials=3)
    assert noise is not None and (noise.trials, noise.queries, noise.flipped) == (3, 40, 1)
    assert noise.flipped_ids == ["q000"]
    rows = {row.key: row for row in noise.rows}
    reward = rows["reward"]
    assert reward.per_trial == pytest.approx([0.5, 0.6, 0.7]) and reward.sd == pytest.approx(0.1)
    assert reward.mdd_single == pytest.approx(FACTOR * 0.1)
    assert reward.mdd_run == pytest.approx(FACTOR * 0.1 / math.sqrt(3))
    macro = rows["commonsense_macro"]
    assert macro.per_trial == pytest.approx([1 / 40, 0, 0]) and macro.sd == pytest.approx(math.sqrt(1 / 3) / 40)
    assert rows["uncertainty.bas.tolerant"].sd == 0  # the same in every trial
    text = "\n".join(noise_lines(noise))
    assert "final-pass verdict flips on 1 (2.5%), e.g. q000" in text
    assert "Reward (of the plan, UTP-v0): per trial" in text


def test_the_mdd_formula() -> None:
    assert pytest.approx((1.959964 + 0.841621) * math.sqrt(2), abs=1e-5) == FACTOR
    assert minimum_detectable(0.05, 4) == pytest.approx(FACTOR * 0.025)
    assert trials_needed(0.05, FACTOR * 0.05) == 1 and trials_needed(0.05, FACTOR * 0.025) == 4
    with pytest.raises(ValueError, match="must be positive"):
        trials_needed(0.05, 0)


def test_one_trial_has_no_noise_floor() -> None:
    q = queries()
    assert noise_floor([record(qid, True, 0.5, 0.5) for qid in q], q, trials=1) is None


def test_the_summary_shows_the_mean_reward_with_its_interval() -> None:
    """The reward appears in a single run's summary (not only beside another run's), with interval and n."""
    from utp_env.runs.summary import render_text, summarize_run

    q = queries()
    records = [record(qid, True, 0.5, 0.4 + 0.01 * (i % 10)) for i, qid in enumerate(sorted(q))]
    summary = summarize_run(records, q, "x", "validation", 1)
    cell = summary.episode_means["reward"]["all"]
    assert cell.n == len(q) and cell.mean == pytest.approx(sum(r["reward"] for r in records) / len(q))
    assert cell.low is not None and cell.high is not None and cell.low < cell.mean < cell.high
    assert "reward (of the plan, UTP-v0), mean per episode [95% interval] n: 3-day 0." in render_text(summary)
