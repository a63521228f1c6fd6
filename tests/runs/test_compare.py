"""`utp-env compare` (utp_env/runs/compare.py): no difference between a run and itself, a planted one
found, Holm's adjustment by hand, and every refusal in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from compare_records import N, queries, record

from utp_env.cli import main
from utp_env.runs.compare import ComparisonError, check_comparable, compare_records, holm


def records(passing: set[int], bas: float = 0.5, jitter: float = 0.0) -> dict[str, dict[str, Any]]:
    return {f"q{i:03d}#0": record(f"q{i:03d}", i in passing, bas + jitter * ((i * 7) % 5 - 2), 0.5 + 0.01 * (i % 3))
            for i in range(N)}


def test_a_run_compared_with_itself_differs_in_nothing() -> None:
    a = records(set(range(0, N, 2)), jitter=0.05)
    rows = compare_records(a, json.loads(json.dumps(a)), queries())
    assert all(not row.significant for row in rows)
    assert all(row.diff in (0.0, None) for row in rows)


def test_a_planted_difference_is_found_and_an_unplanted_one_is_not() -> None:
    """B passes the commonsense checks on 36 of 40 queries where A passes 8; BAS and reward are left equal
    up to noise that is the same in both runs."""
    a = records(set(range(8)), jitter=0.05)
    b = records(set(range(36)), jitter=0.05)
    rows = {row.key: row for row in compare_records(a, b, queries())}
    macro = rows["commonsense_macro"]
    assert macro.diff == pytest.approx((36 - 8) / N) and macro.significant
    assert macro.ci_low is not None and macro.ci_low > 0.4 and macro.p is not None and macro.p < 0.001
    assert rows["final_pass_rate"].significant
    assert not rows["uncertainty.bas.tolerant"].significant and not rows["reward"].significant


def test_a_small_difference_on_few_queries_is_not_significant() -> None:
    a = records(set(range(10)))
    b = records(set(range(12)))  # two more queries pass: the permutation test cannot tell this from chance
    rows = {row.key: row for row in compare_records(a, b, queries())}
    assert rows["commonsense_macro"].diff == pytest.approx(2 / N) and not rows["commonsense_macro"].significant


def test_trials_of_a_query_are_paired_and_swapped_together() -> None:
    q = queries()
    a = {f"q{i:03d}#{t}": record(f"q{i:03d}", i < 10, 0.5, 0.5, trial=t) for i in range(N) for t in range(2)}
    b = {f"q{i:03d}#{t}": record(f"q{i:03d}", i < 30, 0.5, 0.5, trial=t) for i in range(N) for t in range(2)}
    row = {r.key: r for r in compare_records(a, b, q)}["commonsense_macro"]
    assert (row.queries, row.n_a, row.n_b) == (N, 2 * N, 2 * N) and row.significant


@pytest.mark.parametrize(("n", "p"), [(1, 1.0), (2, 0.5), (3, 0.25), (13, 2 / 2**13)])
def test_few_queries_get_the_exact_sign_flip_p(n: int, p: float) -> None:
    """A fails and B passes on each of n queries: of the 2^n swaps, only none and all keep |B - A| = 1, so the
    exact p is 2 / 2^n (1 for a single query); a sample of swaps would only come near it."""
    import numpy as np

    from utp_env.runs.compare import compare_arrays

    zeros, ones = np.zeros((n, 1)), np.ones((n, 1))
    *_, pvalues = compare_arrays(zeros, ones, ones, ones)
    assert pvalues == [pytest.approx(min(1.0, p), rel=1e-12)]


def test_many_queries_get_the_sampled_p_with_its_plus_one() -> None:
    """Past 13 queries (2^14 > 10,000 swaps) the swaps are sampled: with 20 queries only 2 of 2^20 swaps are as
    extreme as a planted difference, which the seeded sample does not draw, so p is its floor 1 / (1 + 10,000)."""
    import numpy as np

    from utp_env.runs.compare import PERMUTATIONS, compare_arrays

    zeros, ones = np.zeros((20, 1)), np.ones((20, 1))
    *_, pvalues = compare_arrays(zeros, ones, ones, ones)
    assert pvalues == [pytest.approx(1 / (1 + PERMUTATIONS))]


def test_holm_by_hand() -> None:
    """p = 0.01, 0.04, 0.03 over three rows: sorted 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, then max(0.06, 0.04 x 1)."""
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def config(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"config": {"split": "validation", "horizons": [3, 5, 7], "limit": 10, "trials": 1,
                                       "env": "plan", "seed": 0, "rollouts": 1000, "replan": {}},
                            "db_hash": "abc", "env_config": {"env": "1", "uncertainty": "2"}}
    for key, value in over.items():
        if key in base["config"]:
            base["config"][key] = value
        else:
            base[key] = value
    return base


@pytest.mark.parametrize(("other", "message"), [
    (config(db_hash="xyz"), "the runs were made on different databases (A: abc, B: xyz)"),
    (config(split="test"), "the runs have different query sets: split is \"validation\" in A and \"test\" in B"),
    (config(trials=3), "the runs have different query sets: trials is 1 in A and 3 in B"),
    (config(limit=None), "the runs have different query sets: limit is 10 in A and null in B"),
    (config(seed=4), "the runs have different env configurations: seed is 0 in A and 4 in B"),
    (config(env="replan"), "the runs have different env configurations: env is \"plan\" in A and \"replan\" in B"),
    (config(env_config={"env": "9", "uncertainty": "2"}),
     "the runs have different env configurations: configs/env.yaml differs (A: 1, B: 9)"),
])
def test_runs_that_differ_are_refused_with_the_reason(other: dict[str, Any], message: str) -> None:
    with pytest.raises(ComparisonError) as error:
        check_comparable(config(), other, ("A", "B"))
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_runs_with_other_episodes_or_seeds_are_refused() -> None:
    a = records(set())
    b = dict(a)
    del b["q005#0"]
    with pytest.raises(ComparisonError, match=r"different query sets: 1 episode\(s\) only in A, 0 only in B "
                                              r"\(e.g. q005#0 only in A\)"):
        compare_records(a, b, queries())
    c = {k: {**v, "seed": 9} if k == "q003#0" else v for k, v in a.items()}
    with pytest.raises(ComparisonError, match="episode q003#0 has seed 0 in A and 9 in B"):
        compare_records(a, c, queries())


@pytest.fixture(scope="module")
def two_runs(mini_db_path: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("compare")
    for agent in ("reference", "deterministic"):
        assert main(["run", "--db", str(mini_db_path), "--agent", agent, "--limit", "12", "--rollouts", "0",
                     "--out", str(root / agent), "--quiet"]) == 0
    shutil.copytree(root / "reference", root / "copy")
    return root / "reference", root / "deterministic", root / "copy"


def test_the_command_prints_markdown_and_json(two_runs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    reference, deterministic, copy = two_runs
    capsys.readouterr()
    assert main(["compare", str(reference), str(deterministic), "--out", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    episodes = sum(1 for _ in (reference / "results.jsonl").open())
    assert out.startswith(f"B - A over {episodes} episodes ({episodes} queries) of A = reference and B = deterministic")
    assert "| Row | A | B | B - A | 95% CI | p | p (Holm) |" in out
    data = json.loads((tmp_path / "c.json").read_text())
    rows = {row["key"]: row for row in data["rows"]}
    # the no-buffer baseline loses the buffers' reward on every query: found on the split's queries
    assert rows["reward"]["diff"] < 0 and rows["reward"]["significant"]
    assert main(["compare", str(reference), str(copy), "--json"]) == 0
    same = json.loads(capsys.readouterr().out)
    assert not any(row["significant"] for row in same["rows"])
    for command in ("compare", "show", "report"):  # one check (runs/summary.py check_run_folders) for all three
        assert main([command, str(reference), str(reference) + "/"]) == 2, command
        assert f"{reference} is given twice: compare two different run folders" in capsys.readouterr().err, command


def test_the_command_refuses_another_query_set(two_runs: tuple[Path, Path, Path], mini_db_path: Path,
                                               tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reference, _, _ = two_runs
    assert main(["run", "--db", str(mini_db_path), "--limit", "2", "--rollouts", "0", "--out", str(tmp_path / "r3"),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", str(reference), str(tmp_path / "r3")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == ("utp-env compare: error: the runs have different query sets: limit is 12 in reference and 2 in r3; "
                   "compare runs made with the same --split, --horizons, --limit and --trials")
