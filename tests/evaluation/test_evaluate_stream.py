"""`utp-env evaluate` streams: duplicates of a query and trial are refused, nothing
scored exits 2 as documented, and the incremental Table 3 equals `summarize` of the same reports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from utp_env.cli import main
from utp_env.dataset import open_dataset
from utp_env.evaluation import evaluate
from utp_env.evaluation.aggregate import SummaryAccumulator, summarize
from utp_env.itinerary import Plan


def _references(db: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (db / "reference_plans.jsonl").read_text().splitlines()]


def _evaluate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["evaluate", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _failing(plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The plan with its accommodation left out: it fails checks."""
    return [{**day, "accommodation": "-"} for day in plan]


def test_one_good_plan_nine_times_and_a_failing_one_are_refused(mini_db_path: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    ref = _references(mini_db_path)[0]
    good = json.dumps({"query_id": ref["query_id"], "plan": ref["plan"]})
    bad = json.dumps({"query_id": ref["query_id"], "plan": _failing(ref["plan"])})
    plans = tmp_path / "plans.jsonl"
    plans.write_text("\n".join([good] * 9 + [bad]) + "\n")
    out = tmp_path / "report.json"
    code, stdout, err = _evaluate(capsys, "--plans", str(plans), "--db", str(mini_db_path), "--out", str(out))
    assert code == 2 and stdout == ""
    assert f"plans.jsonl lines 1 and 2 both hold a plan for query {ref['query_id']} trial 0" in err
    assert err.count("error:") == 1 and "Traceback" not in err
    assert not out.exists() and not list(tmp_path.glob(".*.tmp"))  # nothing half-written


def test_distinct_trials_of_a_query_are_scored_each(mini_db_path: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    ref = _references(mini_db_path)[0]
    lines = [{"query_id": ref["query_id"], "trial": t, "plan": ref["plan"]} for t in range(3)]
    lines.append({"query_id": ref["query_id"], "trial": 3, "plan": _failing(ref["plan"])})
    plans = tmp_path / "plans.jsonl"
    plans.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "report.json"
    code, _, err = _evaluate(capsys, "--plans", str(plans), "--db", str(mini_db_path), "--out", str(out))
    assert code == 0, err
    report = json.loads(out.read_text())
    assert [r["trial"] for r in report["results"]] == [0, 1, 2, 3]
    assert report["summary"]["groups"]["all"]["n_queries"] == 4
    assert report["summary"]["groups"]["all"]["final_pass_rate"] == pytest.approx(0.75)
    assert report["skipped"] == [] and report["db_hash"]
    # a bad trial value costs its line
    plans.write_text(json.dumps({"query_id": ref["query_id"], "trial": "x", "plan": ref["plan"]}) + "\n"
                     + json.dumps(lines[0]) + "\n")
    code, _, err = _evaluate(capsys, "--plans", str(plans), "--db", str(mini_db_path))
    assert code == 3 and "skipped: plans.jsonl line 1: 'trial' must be a non-negative integer" in err


def test_queries_with_different_numbers_of_trials_are_refused(mini_db_path: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Every line counts once in the table: a query tried three times beside one tried once would weigh
    three times as much, so such a file is refused in one line naming the queries and their counts."""
    first, second = _references(mini_db_path)[:2]
    lines = [{"query_id": first["query_id"], "trial": t, "plan": first["plan"]} for t in range(3)]
    lines.append({"query_id": second["query_id"], "plan": second["plan"]})
    plans = tmp_path / "plans.jsonl"
    plans.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "report.json"
    code, stdout, err = _evaluate(capsys, "--plans", str(plans), "--db", str(mini_db_path), "--out", str(out))
    assert code == 2 and stdout == "" and "Traceback" not in err
    assert (f"plans.jsonl: queries have different numbers of trials: 1 query has 1 trial ({second['query_id']}); "
            f"1 query has 3 trials ({first['query_id']})") in err
    assert not out.exists()
    # a skipped line can be what left a query short: the message says so
    lines = [{"query_id": qid, "trial": t, "plan": ref["plan"]} for qid, ref in
             ((first["query_id"], first), (second["query_id"], second)) for t in range(2)]
    text = [json.dumps(line) for line in lines]
    cut = text[3].index('"plan": ') + len('"plan": ')
    text[3] = text[3][:cut]  # cut off where the plan begins
    plans.write_text("\n".join(text) + "\n")
    code, _, err = _evaluate(capsys, "--plans", str(plans), "--db", str(mini_db_path))
    assert code == 2 and f"skipped: plans.jsonl line 4: invalid JSON (the line ends after column {cut}" in err
    assert "(1 line(s) were skipped, the reasons above: a skipped line leaves its query a trial short)" in err


def test_with_a_split_a_query_without_a_plan_counts_once_per_trial(mini_db_path: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    dataset = open_dataset(mini_db_path)
    split = dataset.split("validation")
    chosen = [q.query_id for q in split[:2]]
    references = {r["query_id"]: r["plan"] for r in _references(mini_db_path)}
    lines = [{"query_id": qid, "trial": t, "plan": references[qid]} for qid in chosen for t in range(2)]
    plans = tmp_path / "plans.jsonl"
    plans.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "report.json"
    code, _, err = _evaluate(capsys, "--plans", str(plans), "--db", str(mini_db_path), "--split", "validation",
                             "--out", str(out))
    assert code == 0, err
    group = json.loads(out.read_text())["summary"]["groups"]["all"]
    assert group["n_queries"] == 2 * len(split)  # every query of the split twice, as the two tried
    assert group["delivery_rate"] == pytest.approx(2 / len(split))


def test_no_line_scored_exits_2_as_documented(mini_db_path: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    plans = tmp_path / "plans.jsonl"
    plans.write_text('{"query_id": "utp-q-9999", "plan": []}\nnot json\n')
    code, stdout, err = _evaluate(capsys, "--plans", str(plans), "--db", str(mini_db_path))
    assert code == 2 and stdout == ""
    assert "skipped: plans.jsonl line 1: unknown query_id 'utp-q-9999'" in err
    assert "no line of plans.jsonl could be scored: all 2 were skipped" in err
    plans.write_text("\n\n")
    code, _, err = _evaluate(capsys, "--plans", str(plans), "--db", str(mini_db_path))
    assert code == 2 and "holds no plans (every line is blank)" in err


def test_the_incremental_summary_equals_summarize(mini_db_path: Path) -> None:
    dataset = open_dataset(str(mini_db_path))
    queries = {q.query_id: q for q in dataset.queries}
    pairs = []
    for i, (qid, plan) in enumerate(sorted(dataset.references.items())):
        query = queries[qid]
        if i % 7 == 3:
            pairs.append((query, None))  # undelivered
            continue
        if i % 5 == 1:  # a damaged plan: other checks fail
            plan = Plan.model_validate({**plan.model_dump(), "days": plan.model_dump()["days"][:1]})
        pairs.append((query, evaluate(plan, query, dataset.db)))
    accumulator = SummaryAccumulator()
    for query, report in pairs:
        accumulator.add(query, report)
    streamed, whole = accumulator.summary().model_dump(), summarize(pairs).model_dump()
    assert accumulator.count == len(pairs)
    assert streamed.keys() == whole.keys() and streamed["groups"].keys() == whole["groups"].keys()
    assert _close(streamed, whole)
    assert whole["groups"]["all"]["final_pass_rate"] not in (0.0, 1.0)  # the comparison saw both outcomes


def _close(a: Any, b: Any) -> bool:
    """Equal, floats up to summation order."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-12, abs=1e-15)
    return bool(a == b)
