"""parse_plan and evaluate answer exactly what they answered before they were made faster:
every reference plan and the broken variants of tests/support/plan_outputs.py, compared with the hashes
recorded in tests/support/data/plan_outputs/ (mini here, full under -m slow)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plan_outputs import RECORDS, cases, digest, outcome, record

from utp_env.dataset import Dataset, dataset_of, open_dataset
from utp_env.tools.database import Database


def _compare(dataset: Dataset, profile: str) -> None:
    saved = json.loads((RECORDS / f"{profile}.json").read_text(encoding="utf-8"))
    assert saved["db_hash"] == dataset.db.content_hash, (
        f"the {profile} sandbox changed since tests/support/data/plan_outputs/{profile}.json was recorded; record it "
        f"again with `python tests/support/plan_outputs.py --profile {profile} --write` on a commit whose parser and "
        "evaluator are known good")
    now = record(dataset)
    assert now["cases"] == saved["cases"]
    differ = [label for label, h in saved["outputs"].items() if now["outputs"].get(label) != h]
    assert not differ, f"{len(differ)} of {saved['cases']} plans parse or evaluate differently, e.g. {differ[:5]}"


def test_mini_reference_and_broken_plans_give_the_recorded_outputs(mini_db_path: Path) -> None:
    _compare(dataset_of(Database.open(mini_db_path)), "mini")


def test_the_record_covers_parse_errors_failures_and_passes(mini_db_path: Path) -> None:
    """The broken variants reach the parser's errors and the evaluator's failing checks, so the
    comparison above would see a change in either."""
    dataset = dataset_of(Database.open(mini_db_path))
    kinds = set()
    for _label, text, query, ref in cases(dataset):
        out = json.loads(outcome(text, query, dataset, ref))
        if "parse_error" in out:
            kinds.add("error")
        else:
            kinds.add("pass" if all(c["passed"] is not False for c in out["report"]["commonsense"].values())
                      else "fail")
        if kinds == {"error", "pass", "fail"}:
            break
    assert kinds == {"error", "pass", "fail"}
    assert digest("a") != digest("b")


@pytest.mark.slow
def test_full_reference_and_broken_plans_give_the_recorded_outputs() -> None:
    _compare(open_dataset(profile="full", progress=False), "full")
