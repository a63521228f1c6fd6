"""TripCraft metrics: formulas with hand-computed values, and on a whole plan."""

from __future__ import annotations

import math

import pytest
from tiny_world import PERSONA, build_tiny_db, good_plan, make_query

from utp_env.config import EvaluationReadings, TripCraftParams, UncertaintyConfig
from utp_env.evaluation import evaluate
from utp_env.evaluation import tripcraft as tc
from utp_env.query import Persona
from utp_env.tools.database import Database

P = TripCraftParams()


@pytest.fixture(scope="module")
def tiny_db(tmp_path_factory: pytest.TempPathFactory) -> Database:
    return build_tiny_db(tmp_path_factory.mktemp("tiny_tripcraft_db"))


def test_meal_score_by_hand() -> None:
    b, lunch, dinner = P.meals["breakfast"], P.meals["lunch"], P.meals["dinner"]
    assert tc.meal_score(9.84, 50.71, b) == pytest.approx(1.0)
    # one sigma late, mean duration: q = 1/(1 - 0.03^2) = 1.0009008; exp(-q/2) = 0.606257
    assert tc.meal_score(9.84 + 1.34, 50.71, b) == pytest.approx(0.606257, abs=1e-6)
    # lunch one sigma late and one sigma long, rho 0.3: q = (1 - 0.6 + 1)/0.91 = 1.538462; exp(-q/2) = 0.463369
    assert tc.meal_score(14.44 + 1.07, 59.19 + 15.82, lunch) == pytest.approx(0.463369, abs=1e-6)
    # a dinner whose midpoint is 00:25 (0.42 h) is read as 24.42 h: zx = 4/1.66 = 2.409639,
    # q = 5.806358/0.9951 = 5.834949; exp(-q/2) = 0.054070
    assert tc.meal_score(0.42, 69.27, dinner) == pytest.approx(0.054070, abs=1e-6)


def test_attraction_scores_by_hand() -> None:
    """TripCraft's formulation (evaluation/qualitative_metrics.py of its public code), in minutes:
    mean duration v - k*n (adventure seekers) or v + k*(4 - n) (everyone else), times Poisson(n)."""
    assert tc.is_adventurer("Adventure Seeker") and not tc.is_adventurer("Laidback Traveler")
    assert not tc.is_adventurer("Culture Enthusiast")
    assert tc.attraction_mean_minutes(180, 1, False, 16.61) == pytest.approx(180 + 3 * 16.61)
    assert tc.attraction_mean_minutes(180, 2, True, 16.61) == pytest.approx(180 - 2 * 16.61)
    # d = 180 against mean 229.83: exp(-49.83^2 / (2 * 53.82^2)) = exp(-0.428612) = 0.651413
    assert tc.attraction_duration_score(180, 229.83, 53.82) == pytest.approx(0.651413, abs=1e-6)
    assert tc.attraction_duration_score(150, 150, 53.82) == 1.0
    # the raw Poisson probabilities (not normalised): the best day scores at most these
    assert tc.poisson_pmf(1, 1.11) == pytest.approx(1.11 * math.exp(-1.11))       # 0.366
    assert tc.poisson_pmf(2, 1.82) == pytest.approx(1.82 ** 2 / 2 * math.exp(-1.82))  # 0.268
    assert tc.poisson_pmf(0, 1.11) == pytest.approx(math.exp(-1.11))
    # an adventurer's day with two visits of v = 180: means 146.78; durations 146.78 and 180
    g = math.exp(-(33.22 ** 2) / (2 * 53.82 ** 2))
    assert tc.day_attraction_score([146.78, 180], [180, 180], 2, True, 53.82, 16.61, 1.82) == pytest.approx(
        (1 + g) / 2 * tc.poisson_pmf(2, 1.82))


def test_t_attr_on_the_papers_scale() -> None:
    """Table 3's T_attr values (0.004-0.072) lie below the best a day can score (the Poisson mode's
    probability: 0.366 for lambda 1.11, 0.295 for lambda 1.82); a visit 2 sigma off scores near them."""
    best_other = tc.day_attraction_score([229.83], [180], 1, False, 53.82, 16.61, 1.11)
    best_adventure = tc.day_attraction_score([180 - 16.61], [180], 1, True, 53.82, 16.61, 1.82)
    assert best_other == pytest.approx(0.366, abs=1e-3)
    assert best_adventure < 0.3
    off = tc.day_attraction_score([229.83 + 2 * 53.82], [180], 1, False, 53.82, 16.61, 1.11)
    assert 0.004 < off < 0.072


def test_spatial_by_hand() -> None:
    assert tc.spatial_item_score(0) == 1.0
    assert tc.spatial_item_score(2500) == 0.75
    assert tc.spatial_item_score(5000) == 0.5
    assert tc.spatial_item_score(10000) == pytest.approx(0.5 * math.exp(-1))   # 0.0002 * 5000 = 1


def test_levenshtein_and_ordering() -> None:
    assert tc.levenshtein("kitten", "sitting") == 3
    assert tc.levenshtein([], ["a", "b"]) == 2
    assert tc.levenshtein(["a", "b", "c"], ["a", "c"]) == 1
    assert tc.sequence_similarity(["a", "b", "c"], ["a", "c"]) == pytest.approx(2 / 3)
    assert tc.sequence_similarity([], []) == 1.0
    # day 1 identical (1), day 2 one substitution of 4 (0.75), day 3 missing in the plan (0)
    plan = [["s", "a"], ["s", "a", "r", "s"]]
    ref = [["s", "a"], ["s", "a", "a", "s"], ["s"]]
    assert tc.ordering_score(plan, ref) == pytest.approx((1 + 0.75 + 0) / 3)
    assert tc.ordering_score([], []) is None


def test_ordering_tokens_are_tripcrafts() -> None:
    assert [tc.ordering_token(k) for k in ("accommodation", "restaurant", "attraction", "event", "transit",
                                           "transport")] == ["x", "y", "z", "z", "z", "z"]


def test_persona_keyword_tables() -> None:
    cats = tc.preferred_categories("Historical Sites", "Cultural Exploration", "Culture Enthusiast")
    assert {"Museums", "Sights & Landmarks"} <= cats and "Shopping" not in cats
    assert tc.preferred_tiers("Economical Traveler") == {"$", "$$"}
    # 1 of 2 attractions and 1 of 1 restaurant match: 2/3
    assert tc.persona_score([["Museums"], ["Shopping"]], ["$"], cats, frozenset({"$"})) == pytest.approx(2 / 3)
    assert tc.persona_score([["Museums"]], [], frozenset(), frozenset()) is None   # nothing to judge


def test_tripcraft_on_a_plan(tiny_db: Database) -> None:
    plan = good_plan()
    plan.days[0].items[2].transit_distance_m = 2500        # museum: 0.75
    plan.days[1].items[1].transit_distance_m = 10000       # garden: 0.5 e^-1
    reference = good_plan()
    reference.days[1].items.pop(3)                         # reference day 2 has no event
    day_by_day = UncertaintyConfig(readings=EvaluationReadings(ordering="day_by_day", empty_metrics="none"))
    report = evaluate(plan, make_query(persona=PERSONA), tiny_db, day_by_day, reference=reference)
    tripcraft = evaluate(plan, make_query(persona=PERSONA), tiny_db, reference=reference)
    # meals: lunch 13:30-14:40 (mid 14.0833 h, 70 min), dinners 19:00-20:30 (19.75 h, 90) and 17:00-18:15
    expected_meal = (tc.meal_score(14 + 5 / 60, 70, P.meals["lunch"])
                     + tc.meal_score(19.75, 90, P.meals["dinner"]) + tc.meal_score(17.625, 75, P.meals["dinner"])) / 3
    assert report.temporal_meal == pytest.approx(expected_meal)
    # laid-back (lambda 1.11, mean v + 3k with one attraction a day, times Poisson(1; 1.11)):
    # day 1 museum 240 min vs 229.83; day 2 garden 390 min vs 319.83
    g1 = math.exp(-(10.17 ** 2) / (2 * 53.82 ** 2))
    g2 = math.exp(-(70.17 ** 2) / (2 * 53.82 ** 2))
    assert report.temporal_attraction == pytest.approx((g1 + g2) / 2 * 1.11 * math.exp(-1.11))
    # one distance a day: the mean of the day means
    assert report.spatial == pytest.approx((0.75 + 0.5 * math.exp(-1)) / 2)
    # day 2: plan [acc, attr, rest, event, acc] -> x z y z x vs reference x z y x: 1 edit / 5
    assert report.ordering == pytest.approx((1 + 0.8 + 1) / 3)
    assert tripcraft.ordering == pytest.approx(tc.tripcraft_ordering_score(
        [["z", "x", "z", "y", "y", "x"], ["x", "z", "y", "z", "x"], ["x", "x", "z"]],
        [["z", "x", "z", "y", "y", "x"], ["x", "z", "y", "x"], ["x", "x", "z"]]))
    # Historical Sites / Relaxation / Laidback favour Museums and Nature & Parks (both attractions match);
    # Luxury favours $$$ and $$$$ (2 of 3 restaurants): 4/5
    assert report.persona == pytest.approx(0.8)
    assert evaluate(plan, make_query(), tiny_db).ordering is None        # no reference


def test_adventure_persona_uses_its_lambda(tiny_db: Database) -> None:
    persona = Persona(traveler_type="Adventure Seeker", purpose="Adventure", spending="Economical",
                      location_preference="Mountains")
    report = evaluate(good_plan(), make_query(persona=persona), tiny_db)
    # mean v - k with one attraction a day: 163.39 and 253.39; Poisson(1; 1.82)
    g1 = math.exp(-((240 - 163.39) ** 2) / (2 * 53.82 ** 2))
    g2 = math.exp(-((390 - 253.39) ** 2) / (2 * 53.82 ** 2))
    assert report.temporal_attraction == pytest.approx((g1 + g2) / 2 * 1.82 * math.exp(-1.82))
