"""The cheaper ways the evaluator builds its answers give what the plain ways give:

- `itinerary.unvalidated` (models built through BaseModel's slot descriptors) is `model_validate`
  of the same values: the same fields, fields set, extra and private slots, JSON, and a later
  assignment marks the field set the same way; `report.check_result` is `CheckResult.model_validate`.
- `CrowdProfile.level_at` (read from `levels_by_hour`) is the first window holding the hour.
- A check appends `report.UNSHOWN` for a problem past the first `MAX_REASONS`: `verdict` gives the
  same result as with every problem's text, and every check gives the same report on the reference
  plans, their broken variants and a variant with every transit distance wrong whether the checks
  write every problem's text or not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from plan_outputs import cases

from utp_env.dataset import dataset_of
from utp_env.evaluation import commonsense, evaluate
from utp_env.evaluation.context import CrowdProfile, window_hours
from utp_env.evaluation.report import MAX_REASONS, UNSHOWN, CheckResult, check_result, verdict
from utp_env.itinerary import PlanItem, unvalidated
from utp_env.plan_format import PlanFormatError, parse_plan
from utp_env.tools.database import Database

texts = st.text(max_size=12)
optional_texts = st.none() | texts
times = st.none() | st.integers(0, 3000)
item_values = st.fixed_dictionaries({
    "name": texts, "activity": st.sampled_from(["stay", "visit", "check-in", "arrive", "travel"]),
    "start": times, "end": times,
    "venue_type": st.none() | st.sampled_from(["accommodation", "attraction", "restaurant"]),
    "meal": st.none() | st.sampled_from(["breakfast", "lunch", "dinner"]),
    "transit_stop": optional_texts, "transit_distance_m": st.none() | st.floats(0, 1e6),
    "note": optional_texts})


def _same_instance(built: object, validated: object) -> None:
    assert type(built) is type(validated)
    assert built.__dict__ == validated.__dict__ and list(built.__dict__) == list(validated.__dict__)
    assert built.model_fields_set == validated.model_fields_set  # type: ignore[attr-defined]
    assert built.__pydantic_extra__ == validated.__pydantic_extra__  # type: ignore[attr-defined]
    assert built.__pydantic_private__ == validated.__pydantic_private__  # type: ignore[attr-defined]
    assert built.model_dump_json() == validated.model_dump_json()  # type: ignore[attr-defined]
    assert built == validated


@settings(max_examples=300, deadline=None)
@given(item_values, st.sampled_from(["name", "start", "note"]))
def test_unvalidated_is_model_validate_of_the_same_values(values: dict[str, object], assigned: str) -> None:
    values = {name: values[name] for name in PlanItem.model_fields}  # every field, in the model's order
    built, validated = unvalidated(PlanItem, dict(values)), PlanItem.model_validate(dict(values))
    _same_instance(built, validated)
    given_fields = unvalidated(PlanItem, dict(values), given=("name", "activity"))
    assert given_fields.model_fields_set == {"name", "activity"}
    setattr(built, assigned, values[assigned])
    setattr(validated, assigned, values[assigned])
    _same_instance(built, validated)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([True, False, None]), optional_texts)
def test_check_result_is_model_validate(passed: bool | None, reason: str | None) -> None:
    _same_instance(check_result(passed, reason), CheckResult.model_validate({"passed": passed, "reason": reason}))


hour = st.integers(0, 23)
profiles = st.builds(
    CrowdProfile,
    st.lists(st.tuples(st.builds(window_hours, hour, hour), st.sampled_from(["L", "A", "H"])), max_size=6).map(tuple),
    st.frozensets(hour, max_size=4), st.just(frozenset()))


@settings(max_examples=300, deadline=None)
@given(profiles, st.integers(-30, 60))
def test_level_at_is_the_first_window_holding_the_hour(profile: CrowdProfile, at: int) -> None:
    first = next((level for hours, level in profile.windows if at in hours), None)
    assert profile.level_at(at) == first


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=8), max_size=9), st.booleans())
def test_unshown_problems_give_the_same_verdict(problems: list[str], applicable: bool) -> None:
    unwritten = [p if i < MAX_REASONS else UNSHOWN for i, p in enumerate(problems)]
    assert verdict(unwritten, applicable) == verdict(problems, applicable)


def _every_distance_wrong(text: str) -> str:
    days = json.loads(text)
    for day in days:
        pois = day.get("point_of_interest_list")
        if isinstance(pois, str):
            day["point_of_interest_list"] = pois.replace("km away", "9km away")  # 0.5km -> 0.59km, ...
    return json.dumps(days, ensure_ascii=False)


def test_checks_give_the_same_reports_whether_they_write_every_problem_or_not(
        mini_db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = dataset_of(Database.open(mini_db_path))
    db = dataset.db
    plans = []
    for _label, text, query, _ref in cases(dataset):
        for variant in (text, _every_distance_wrong(text)) if text.startswith("[") else (text,):
            try:
                plans.append((parse_plan(variant, query=query, db=db), query))
            except PlanFormatError:
                continue
    unwritten = [evaluate(plan, query, db).model_dump_json() for plan, query in plans]
    monkeypatch.setattr(commonsense, "MAX_REASONS", 10**9)  # every problem's text written
    written = [evaluate(plan, query, db).model_dump_json() for plan, query in plans]
    assert unwritten == written
    assert sum("more)" in report for report in written) > 10  # checks with more problems than they show
