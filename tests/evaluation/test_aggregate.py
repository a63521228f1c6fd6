"""Aggregation into the paper's Table 3 layout; expected rates counted by hand."""

from __future__ import annotations

import pytest
from reports import report
from tiny_world import make_query

from utp_env.evaluation.aggregate import summarize
from utp_env.query import LocalConstraint


def results() -> list:
    cuisine = LocalConstraint(cuisine=["Asian"])
    return [
        # A: nothing to check for diverse_events (counts as passed): 10 of 10; hard 1 of 2 (cuisine fails)
        (make_query(risk="tolerant", constraint=cuisine),
         report(cs_none=("diverse_events",), hard_set=("budget", "cuisine"), hard_fail=("cuisine",),
                bas=0.5, cats=0.6, temporal_meal=0.8)),
        # B: 9 of 10 commonsense (meal gaps fail); hard 1 of 1
        (make_query(risk="averse"), report(cs_fail=("meal_gaps",), bas=0.2, tdas=1.0, temporal_meal=0.4)),
        # C: not delivered; its query sets cuisine: 0 of 10 commonsense, 0 of 2 hard
        (make_query(risk="tolerant", constraint=cuisine), None),
        # E: an invented venue (within sandbox fails): 9 of 10; its budget 'passes' but is not counted (gate)
        (make_query(risk="tolerant"), report(cs_fail=("within_sandbox",))),
        # D: 5 days, passes everything
        (make_query(days=5, dest="Gujarat", risk="optimized"), report(bas=0.9)),
    ]


def test_summary_by_hand() -> None:
    """TravelPlanner's evaluation/eval.py formulas, computed by hand for the five plans above."""
    s = summarize(results())
    assert list(s.groups) == ["3", "5", "all"]
    three = s.groups["3"]
    assert (three.n_queries, three.n_delivered, three.n_hard_evaluated) == (4, 3, 2)
    assert three.delivery_rate == pytest.approx(3 / 4)
    assert three.commonsense_denominator == 40 and three.hard_denominator == 6
    assert three.commonsense_micro == pytest.approx(28 / 40)   # (10 + 9 + 0 + 9) / (4 x 10)
    assert three.commonsense_macro == pytest.approx(1 / 4)     # only A
    assert three.hard_micro == pytest.approx(2 / 6)            # (A 1 + B 1 + C 0 + E not counted) / (2 + 1 + 2 + 1)
    assert three.hard_macro == pytest.approx(1 / 4)            # only B (E is not counted)
    assert three.final_pass_rate == 0
    assert three.commonsense_checks["meal_gaps"] == pytest.approx(2 / 4)      # A and E
    assert three.commonsense_checks["diverse_events"] == pytest.approx(3 / 4)  # A (nothing to check), B, E
    assert three.hard_checks["cuisine"] == 0 and three.hard_checks["budget"] == pytest.approx(2 / 4)
    assert three.hard_checks["house_type"] is None                          # no query sets it
    assert three.uncertainty["bas"]["tolerant"].mean == 0.5 and three.uncertainty["bas"]["tolerant"].n == 1
    assert three.uncertainty["bas"]["averse"].mean == 0.2
    assert three.uncertainty["bas"]["optimized"].mean is None
    assert three.uncertainty["tdas"]["tolerant"].mean is None
    assert three.qualitative["temporal_meal"].mean == pytest.approx(0.6)
    five = s.groups["5"]
    assert (five.delivery_rate, five.commonsense_macro, five.hard_macro, five.final_pass_rate) == (1, 1, 1, 1)
    everything = s.groups["all"]
    assert everything.commonsense_micro == pytest.approx(38 / 50)
    assert everything.hard_micro == pytest.approx(3 / 7)
    assert everything.final_pass_rate == pytest.approx(1 / 5)


def test_rendering() -> None:
    s = summarize(results())
    md = s.to_markdown(ci=False)
    caption, blank, head = md.splitlines()[:3]
    assert caption.startswith("Aggregation: pass rates as TravelPlanner evaluation/eval.py") and blank == ""
    assert head == "| Metric | 3-day | 5-day | all |"
    assert "| BAS Risk_tol % \u2191 | 50.00 | - | 50.00 |" in md
    assert "| Delivery rate % \u2191 | 75.00 | 100.00 | 80.00 |" in md
    assert "| T_attr \u2191 |" in md
    text = s.to_text(ci=False)
    lines = text.splitlines()
    assert len({len(line) for line in lines[1:]}) == 1      # fixed width under the caption
    assert "T_meal" in text and "TDAS Risk_av %" in text and "Extra: transit point" in text
    assert len(lines) == len(md.splitlines()) - 2           # same rows; markdown adds a blank and a separator


def test_empty_input() -> None:
    s = summarize([])
    assert list(s.groups) == ["all"]
    assert s.groups["all"].delivery_rate is None
    assert "-" in s.to_text()


def test_cli_evaluate(tmp_path, capsys) -> None:
    import json

    from tiny_world import build_tiny_db, good_plan

    from utp_env.cli import main
    from utp_env.plan_format import format_plan
    from utp_env.queries import write_queries

    db_dir = tmp_path / "db"
    build_tiny_db(db_dir)
    q1 = make_query()
    q2 = q1.model_copy(update={"query_id": "q2", "risk_profile": "averse"})
    write_queries(tmp_path / "q.jsonl", [q1, q2])
    plans = tmp_path / "plans.jsonl"
    plans.write_text(json.dumps({"query_id": "q1", "plan": format_plan(good_plan())}) + "\n"
                     + json.dumps({"query_id": "q2", "plan": "no plan here, sorry"}) + "\n"
                     + "{not json\n", encoding="utf-8")
    out = tmp_path / "report.json"
    rc = main(["evaluate", "--plans", str(plans), "--queries", str(tmp_path / "q.jsonl"), "--db", str(db_dir),
               "--out", str(out)])
    captured = capsys.readouterr()
    assert rc == 3  # line 3 was skipped (docs/RUNS.md, "Scoring plans"); the others were scored
    assert "Delivery rate %" in captured.out and "50.00" in captured.out       # 1 of 2 delivered
    assert "not delivered: q2 (line 2)" in captured.err
    assert "plans.jsonl line 3: invalid JSON" in captured.err
    data = json.loads(out.read_text())
    assert [r["delivered"] for r in data["results"]] == [True, False]
    assert data["results"][0]["report"]["subchecks"]["valid_poi_list/chronological_order"]["passed"] is True
    assert len(data["results"][0]["report"]["commonsense"]) == 10
    assert data["summary"]["groups"]["3"]["n_queries"] == 2
    # without --queries and without a query set next to the database: a clear error
    rc = main(["evaluate", "--plans", str(plans), "--db", str(db_dir)])
    assert rc == 2
    assert "pass --queries" in capsys.readouterr().err


def test_real_plans_delivered_undelivered_and_invented(tmp_path) -> None:
    """Evaluated plans: a valid one, one whose stay is invented (costs nothing, so its budget
    'passes', but TravelPlanner's gate does not count it) and an undelivered one; the rates equal
    TravelPlanner's formulas computed by hand."""
    from tiny_world import HOTEL, build_tiny_db, good_plan

    from utp_env.config import EvaluationReadings, UncertaintyConfig
    from utp_env.evaluation import evaluate

    db = build_tiny_db(tmp_path / "db")
    cuisine = LocalConstraint(cuisine=["Pizza/Italian Specialties"])   # Le Prive serves it
    queries = [make_query(constraint=cuisine), make_query(constraint=cuisine), make_query()]
    invented = good_plan()
    for day in invented.days:
        day.accommodation = "Hotel Nowhere" if day.accommodation else day.accommodation
        day.items = [i.model_copy(update={"name": "Hotel Nowhere"}) if i.name == HOTEL else i for i in day.items]
    basic = UncertaintyConfig(readings=EvaluationReadings(complete_information="basic"))  # good_plan's day 2 has
    good, fake = evaluate(good_plan(), queries[0], db, basic), evaluate(invented, queries[1], db, basic)  # one meal
    assert good.final_pass and good.hard_evaluated
    assert fake.commonsense["within_sandbox"].passed is False and not fake.hard_evaluated
    assert fake.hard["budget"].passed is True and fake.hard["cuisine"].passed is True   # but not counted
    fake_cs = sum(c.passed is not False for c in fake.commonsense.values())
    group = summarize([(queries[0], good), (queries[1], fake), (queries[2], None)]).groups["all"]
    assert group.delivery_rate == pytest.approx(2 / 3)
    assert group.commonsense_micro == pytest.approx((10 + fake_cs + 0) / 30)
    assert group.commonsense_macro == pytest.approx(1 / 3)
    assert group.hard_micro == pytest.approx((2 + 0 + 0) / (2 + 2 + 1))   # budget + cuisine, twice; budget
    assert group.hard_macro == pytest.approx(1 / 3)
    assert group.final_pass_rate == pytest.approx(1 / 3)


def test_a_summary_written_before_the_travelplanner_aggregation_still_loads_and_says_so() -> None:
    from utp_env.evaluation.aggregate import EvaluationSummary

    data = summarize(results()).model_dump(mode="json")
    assert data["aggregation"].startswith("pass rates as TravelPlanner")
    data.pop("aggregation")
    for group in data["groups"].values():
        for key in ("commonsense_denominator", "hard_denominator", "n_hard_evaluated", "commonsense_checks",
                    "hard_checks", "extra_checks"):
            group.pop(key)
    old = EvaluationSummary.model_validate(data)
    assert old.caption().startswith("Aggregation: per-plan applicable checks, 11 commonsense checks")
    assert "Extra: transit point before each departure % |" in old.to_markdown()


def test_a_run_record_with_an_empty_plan_counts_as_undelivered(tmp_path) -> None:
    """An empty plan passes every check that has nothing to check; the run summary must count it
    as undelivered (as `utp-env evaluate` does), not as a delivered plan with 80% commonsense."""
    from tiny_world import build_tiny_db, make_query

    from utp_env.env.config import DEFAULT_REWARD_WEIGHTS
    from utp_env.env.episode import TerminationReason, finish
    from utp_env.itinerary import Plan
    from utp_env.runs.summary import summarize_run

    db = build_tiny_db(tmp_path / "db")
    query = make_query()
    outcome = finish(TerminationReason.SUBMITTED, Plan(query_id=query.query_id, days=[]), query, db,
                     weights=DEFAULT_REWARD_WEIGHTS)
    record = {"query_id": query.query_id, "trial": 0, **outcome.to_json()}
    group = summarize_run([record], {query.query_id: query}, "test", "all", 1).evaluation.groups["all"]
    assert group.delivery_rate == 0.0 and group.commonsense_micro == 0.0
