"""Table 3 as the paper computed it. Complete Information as TravelPlanner's and
TripCraft's `is_not_absent`, TripCraft's metrics as its code scores them, O_ord and P_persona in
TripCraft's readings, `utp-env evaluate --split` counting every query of the split."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from utp_env.config import EvaluationReadings, UncertaintyConfig
from utp_env.dataset import Dataset, dataset_of
from utp_env.evaluation import evaluate
from utp_env.evaluation import tripcraft as tc
from utp_env.itinerary import Plan
from utp_env.tools.database import Database


def reading(**kw: str) -> UncertaintyConfig:
    return UncertaintyConfig(readings=EvaluationReadings(**kw))


TRIPCRAFT, TRAVELPLANNER, BASIC = (reading(complete_information=p) for p in ("tripcraft", "travelplanner", "basic"))


@pytest.fixture(scope="module")
def dataset(mini_db_path: Path) -> Dataset:
    return dataset_of(Database.open(mini_db_path))


def a_full_day(ds: Dataset) -> tuple[Plan, int]:
    """A reference plan and the index of a day it spends in one city (with an attraction and lunch)."""
    for q in ds.queries:
        plan = ds.references[q.query_id]
        for i, day in enumerate(plan.days):
            if len(day.cities) == 1 and day.attractions and day.lunch:
                return plan.model_copy(deep=True), i
    raise AssertionError("no reference plan spends a day in one city")


def test_every_mini_reference_plan_passes_both_parents(dataset: Dataset) -> None:
    for q in dataset.queries:
        plan = dataset.references[q.query_id]
        for config in (TRIPCRAFT, TRAVELPLANNER, BASIC):
            report = evaluate(plan, q, dataset.db, config)
            assert report.commonsense["complete_information"].passed is True, (q.query_id, report.commonsense)


def test_a_day_without_an_attraction_fails_naming_the_day(dataset: Dataset) -> None:
    plan, i = a_full_day(dataset)
    query = dataset.query(plan.query_id or "")
    day = plan.days[i]
    names = set(day.attractions)
    day.attractions = []
    day.items = [item for item in day.items if item.name not in names]
    for config in (TRIPCRAFT, TRAVELPLANNER):
        report = evaluate(plan, query, dataset.db, config)
        part = report.subchecks["complete_information/attraction"]
        assert part.passed is False and f"day {i + 1} ({day.cities[0]}): no attraction" in str(part.reason)
        assert report.commonsense["complete_information"].passed is False and not report.final_pass
    # the rules of the earlier reading let it pass
    assert evaluate(plan, query, dataset.db, BASIC).commonsense["complete_information"].passed is True


def test_a_day_without_lunch_fails_naming_the_day(dataset: Dataset) -> None:
    plan, i = a_full_day(dataset)
    query = dataset.query(plan.query_id or "")
    day = plan.days[i]
    lunch = day.lunch
    day.lunch = None
    day.items = [item for item in day.items if item.name != lunch]
    report = evaluate(plan, query, dataset.db)
    part = report.subchecks["complete_information/meals"]
    assert part.passed is False and f"day {i + 1} ({day.cities[0]}): no lunch" in str(part.reason)
    assert not report.hard_evaluated  # Complete Information gates the hard constraints


def test_a_third_of_the_key_fields_filled_fails(dataset: Dataset) -> None:
    """Every day keeps its number, city and PoI list only: 3 of TripCraft's 10 fields per day, 3 of
    the 8 per day it needs (37.5% < 50%); TravelPlanner counts 2 of its 8 against 6 (33%)."""
    q = next(q for q in dataset.queries if q.days == 3)
    plan = dataset.references[q.query_id].model_copy(deep=True)
    for day in plan.days:
        day.transport, day.attractions, day.events = [], [], []
        day.breakfast = day.lunch = day.dinner = day.accommodation = None
    for config, share in ((TRIPCRAFT, "9 of the 24"), (TRAVELPLANNER, "6 of the 18")):
        part = evaluate(plan, q, dataset.db, config).subchecks["complete_information/filled_fields"]
        assert part.passed is False and share in str(part.reason)


def test_the_parents_differ_on_the_poi_list_and_transit_distances(dataset: Dataset) -> None:
    """TripCraft (the paper's format) requires a PoI list every day and a distance with every
    nearest transit; TravelPlanner's format has neither."""
    plan, i = a_full_day(dataset)
    query = dataset.query(plan.query_id or "")
    stated = next(k for k, item in enumerate(plan.days[i].items) if item.transit_stop is not None)
    plan.days[i].items[stated] = plan.days[i].items[stated].model_copy(update={"transit_distance_m": None})
    tripcraft = evaluate(plan, query, dataset.db, TRIPCRAFT)
    assert tripcraft.subchecks["complete_information/transit_distance"].passed is False
    assert evaluate(plan, query, dataset.db, TRAVELPLANNER).commonsense["complete_information"].passed is True
    last = plan.days[-1]
    last.items = []
    assert evaluate(plan, query, dataset.db, TRIPCRAFT).subchecks[
        "complete_information/point_of_interest_list"].passed is False
    assert "complete_information/point_of_interest_list" not in evaluate(
        plan, query, dataset.db, TRAVELPLANNER).subchecks


def test_tripcraft_metrics_with_nothing_to_score_are_zero_by_default(dataset: Dataset) -> None:
    """TripCraft's code scores a delivered plan without meals, attractions or distances 0 and keeps it
    in the mean; the `none` reading leaves it out. A plan without days has no value either way."""
    q = dataset.queries[0]
    plan = dataset.references[q.query_id].model_copy(deep=True)
    for day in plan.days:
        day.items = [item for item in day.items if item.venue_type not in ("restaurant", "attraction")]
        day.items = [item.model_copy(update={"transit_stop": None, "transit_distance_m": None})
                     for item in day.items]
        day.breakfast = day.lunch = day.dinner = None
        day.attractions = []
    zero = evaluate(plan, q, dataset.db)
    assert zero.temporal_meal == 0.0 and zero.temporal_attraction == 0.0 and zero.spatial == 0.0
    none = evaluate(plan, q, dataset.db, reading(empty_metrics="none"))
    assert none.temporal_meal is None and none.temporal_attraction is None and none.spatial is None
    empty = evaluate(Plan(days=[]), q, dataset.db)
    assert empty.temporal_meal is None and empty.spatial is None


def test_overlapping_legs_is_an_extra_check(dataset: Dataset) -> None:
    q = next(q for q in dataset.queries if any(len(d.transport) for d in dataset.references[q.query_id].days))
    plan = dataset.references[q.query_id].model_copy(deep=True)
    day = next(d for d in plan.days if d.transport)
    leg = day.transport[0]
    day.transport.append(leg.model_copy(update={"dep": leg.dep + 1, "arr": leg.arr + 1, "planned_arr": None}))
    report = evaluate(plan, q, dataset.db)
    assert report.extra["overlapping_legs"].passed is False
    assert "leaves before" not in str(report.commonsense["non_conflicting_transport"].reason)


# --- O_ord as TripCraft's code computes it ----------------------------------------------------


def test_tripcraft_wed_is_its_recurrence() -> None:
    assert tc.tripcraft_wed(["x", "y", "x"], ["x", "y", "x"]) == 0
    # dynamic time warping: a token may match several, so x y y x vs x y x costs nothing
    assert tc.tripcraft_wed(["x", "y", "y", "x"], ["x", "y", "x"]) == 0
    assert tc.levenshtein(["x", "y", "y", "x"], ["x", "y", "x"]) == 1
    assert tc.tripcraft_wed(["x", "z"], ["y", "y"]) == 2
    assert tc.tripcraft_wed([], ["x", "y"]) == 2


def test_tripcraft_ordering_by_hand_and_its_rise_with_trip_length() -> None:
    day = ["x", "y", "z", "y", "x"]
    other = ["x", "z", "y", "x"]
    # days 1-2 x days 1-2: wed(day, day) = 0, wed(day, other) = wed(other, day); plus day 3 with day 3
    cross = tc.tripcraft_wed(day, other)
    plan, ref = [day, day, day], [day, other, day]
    expected = 1 - (0 + cross + 0 + cross + 0) / ((3 - 1) ** 2 + 1) / max(len(day), len(other))
    assert tc.tripcraft_ordering_score(plan, ref) == pytest.approx(expected)
    # the same five pairs divided by (n-1)^2+1: longer plans score higher for the same days
    five = tc.tripcraft_ordering_score([day] * 5, [day, other, day, day, day])
    seven = tc.tripcraft_ordering_score([day] * 7, [day, other, day, day, day, day, day])
    assert expected < five < seven <= 1.0
    assert tc.tripcraft_ordering_score([day, day], ref) == 0.0  # fewer than three days
    assert tc.tripcraft_ordering_score([], []) is None


# --- P_persona with BERT ----------------------------------------------------------------------


def test_embedding_persona_score_on_hand_made_vectors() -> None:
    personas = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0]]
    pois = [[1.0, 0.0], [0.0, 3.0]]
    per_poi = [(1 + 0 + math.sqrt(0.5) + 1) / 4, (0 + 1 + math.sqrt(0.5) + 0) / 4]
    assert tc.embedding_persona_score(personas, pois) == pytest.approx(sum(per_poi) / 2)
    assert tc.embedding_persona_score(personas, []) is None


def tiny_bert(directory: Path) -> Path:
    """A BERT with random weights and a small word-piece vocabulary, saved where `from_pretrained` reads it."""
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    words = sorted({"laidback", "traveler", "adventure", "seeker", "cultural", "relaxation", "nature", "economical",
                    "luxury", "moderate", "beaches", "mountains", "heritage", "religious", "sites", "hotel", "resort",
                    "cafe", "temple", "fort", "museum", "park", "lake", "market", ",", ".", ";"})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, *"abcdefghijklmnopqrstuvwxyz",
             *(f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz")]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = transformers.BertTokenizer(str(directory / "vocab.txt"))
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    import torch

    torch.manual_seed(0)
    transformers.BertModel(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def test_bert_backend_computes_tripcrafts_similarity(dataset: Dataset, tmp_path: Path) -> None:
    from utp_env.evaluation.persona_bert import embedder

    model = tiny_bert(tmp_path / "tiny-bert")
    q = dataset.queries[0]
    plan = dataset.references[q.query_id]
    config = reading(persona="bert", persona_model=str(model))
    report = evaluate(plan, q, dataset.db, config)
    bert = embedder(str(model))
    personas = [bert.embed(str(getattr(q.persona, f)))
                for f in ("traveler_type", "purpose", "spending", "location_preference")]
    pois = [bert.embed(item.name) for day in plan.days for item in day.items]
    assert report.persona == pytest.approx(tc.embedding_persona_score(personas, pois))
    vector = bert.embed("Sai Resort, Surat")
    assert isinstance(vector, np.ndarray) and vector.shape == (16,)
    assert report.persona is not None and -1.0 <= report.persona <= 1.0


def test_bert_backend_without_a_model_is_a_clear_error(dataset: Dataset, tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    q = dataset.queries[0]
    config = reading(persona="bert", persona_model=str(tmp_path / "no-such-model"))
    with pytest.raises(ValueError, match=r"persona_model .*cannot load a BERT model"):
        evaluate(dataset.references[q.query_id], q, dataset.db, config)


def test_readings_are_validated_and_named_in_the_summary() -> None:
    from utp_env.evaluation.aggregate import summarize

    with pytest.raises(ValueError):
        EvaluationReadings(complete_information="strict")  # type: ignore[arg-type]
    caption = summarize([]).caption()
    assert "complete information tripcraft" in caption and "O_ord tripcraft" in caption
    assert "P_persona keyword" in caption


# --- every query of the split ------------------------------------------------------------------


def test_evaluate_split_counts_a_missing_plan_as_undelivered(mini_db_path: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    from utp_env.cli import main
    from utp_env.plan_format import format_plan

    ds = dataset_of(Database.open(mini_db_path))
    split = [q for q in ds.queries if q.split == "validation"]
    assert len(split) >= 2
    half = split[: len(split) // 2]
    plans = tmp_path / "plans.jsonl"
    plans.write_text("".join(json.dumps({"query_id": q.query_id, "plan": format_plan(ds.references[q.query_id])})
                             + "\n" for q in half), encoding="utf-8")
    out = tmp_path / "report.json"
    code = main(["evaluate", "--plans", str(plans), "--db", str(mini_db_path), "--split", "validation",
                 "--out", str(out)])
    assert code == 0
    summary = json.loads(out.read_text(encoding="utf-8"))["summary"]["groups"]["all"]
    assert summary["n_queries"] == len(split)
    assert summary["delivery_rate"] == pytest.approx(len(half) / len(split))
    err = capsys.readouterr().err
    assert f"{len(half)} of {len(split)} queries have a plan" in err
    main(["evaluate", "--plans", str(plans), "--db", str(mini_db_path)])
    assert "pass --split to count every query" in capsys.readouterr().err
    assert main(["evaluate", "--plans", str(plans), "--db", str(mini_db_path), "--split", "nope"]) != 0
    assert "no query of that split (splits:" in capsys.readouterr().err


# --- degenerate plans under the new Complete Information ---------------------------------------


def test_leaving_content_out_never_pays(dataset: Dataset) -> None:
    """The default reward (`DEFAULT_REWARD_WEIGHTS`) of each mini reference plan against the same plan
    with its PoI list dropped (the summary fields kept), with only its legs, without its
    attractions, and of an empty plan: none scores above the honest plan on any query. (A plan whose
    items keep no times is the reward's rule: BAS and CATS leave the mean then.)"""
    from utp_env.env.reward import DEFAULT_REWARD_WEIGHTS, score_plan

    def reward(plan: Plan, query_id: str) -> float:
        q, ref = dataset.query(query_id), dataset.references[query_id]
        return score_plan(plan, q, dataset.db, weights=DEFAULT_REWARD_WEIGHTS, reference=ref).reward

    def no_items(plan: Plan) -> None:
        for day in plan.days:
            day.items = []

    def legs_only(plan: Plan) -> None:
        for day in plan.days:
            day.items, day.attractions, day.events = [], [], []
            day.breakfast = day.lunch = day.dinner = day.accommodation = None

    def no_attractions(plan: Plan) -> None:
        for day in plan.days:
            names = set(day.attractions)
            day.attractions = []
            day.items = [item for item in day.items if item.name not in names]

    def nothing(plan: Plan) -> None:
        plan.days = []

    for q in dataset.queries:
        honest = reward(dataset.references[q.query_id], q.query_id)
        for degrade in (no_items, legs_only, no_attractions, nothing):
            plan = dataset.references[q.query_id].model_copy(deep=True)
            degrade(plan)
            assert reward(plan, q.query_id) < honest, (q.query_id, degrade.__name__)


def test_a_bad_reading_in_a_config_file_names_the_file_and_field(tmp_path: Path) -> None:
    from utp_env.config import load_uncertainty

    path = tmp_path / "u.yaml"
    path.write_text("readings:\n  ordering: sideways\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"u\.yaml: readings\.ordering: Input should be 'tripcraft' or "):
        load_uncertainty(path)


def test_bert_backend_without_transformers_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from utp_env.evaluation.persona_bert import BertEmbedder

    monkeypatch.setitem(sys.modules, "transformers", None)  # an import of it now fails
    with pytest.raises(ImportError, match=r"pip install 'utp-env\[persona\]'"):
        BertEmbedder("bert-base-uncased")
