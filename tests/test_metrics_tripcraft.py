"""TripCraft metrics: formulas with hand-computed values, and on a whole plan."""

from __future__ import annotations

import math

import pytest
from test_checks import PERSONA, build_tiny_db, good_plan, make_query
from utp_env.tools.database import Database

from utp_env.config import TripCraftParams
from utp_env.evaluation import evaluate
from utp_env.evaluation import tripcraft as tc
from utp_env.query import Persona

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
    # laid-back: mu = 180 - 16.61; d = 180: exp(-16.61^2/(2*53.82^2)) = exp(-0.0476236) = 0.953493
    assert tc.attraction_duration_score(180, 180, -1, 53.82, 16.61) == pytest.approx(0.953493, abs=1e-6)
    assert tc.attraction_duration_score(196.61, 180, 1, 53.82, 16.61) == pytest.approx(1.0)
    assert tc.persona_style("Adventure Seeker") == 1 and tc.persona_style("Laidback Traveler") == -1
    assert tc.persona_style("Culture Enthusiast") == 0
    # Poisson normalised by its mode floor(lambda): ratios pmf(n)/pmf(1)
    assert tc.poisson_count_score(1, 1.82) == pytest.approx(1.0)
    assert tc.poisson_count_score(2, 1.82) == pytest.approx(0.91)          # lambda/2
    assert tc.poisson_count_score(0, 1.11) == pytest.approx(1 / 1.11)      # 1/lambda
    assert tc.poisson_count_score(3, 1.11) == pytest.approx(1.11 ** 2 / 6)  # lambda^2/3!
    assert tc.day_attraction_score([180, 196.61], [180, 180], 2, 1, 53.82, 16.61, 1.82) == pytest.approx(
        (math.exp(-(16.61 ** 2) / (2 * 53.82 ** 2)) + 1) / 2 * 0.91)


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
    report = evaluate(plan, make_query(persona=PERSONA), tiny_db, reference=reference)
    # meals: lunch 13:30-14:40 (mid 14.0833 h, 70 min), dinners 19:00-20:30 (19.75 h, 90) and 17:00-18:15
    expected_meal = (tc.meal_score(14 + 5 / 60, 70, P.meals["lunch"])
                     + tc.meal_score(19.75, 90, P.meals["dinner"]) + tc.meal_score(17.625, 75, P.meals["dinner"])) / 3
    assert report.temporal_meal == pytest.approx(expected_meal)
    # laid-back (lambda 1.11, mu = v - 16.61); one attraction a day (count score 1):
    # day 1 museum 240 min vs mu 163.39; day 2 garden 390 min vs mu 253.39
    g1 = math.exp(-(76.61 ** 2) / (2 * 53.82 ** 2))
    g2 = math.exp(-(136.61 ** 2) / (2 * 53.82 ** 2))
    assert report.temporal_attraction == pytest.approx((g1 + g2) / 2)
    assert report.spatial == pytest.approx((0.75 + 0.5 * math.exp(-1)) / 2)
    # day 2: plan [acc, attr, rest, event, acc] vs reference [acc, attr, rest, acc]: 1 edit / 5
    assert report.ordering == pytest.approx((1 + 0.8 + 1) / 3)
    # Historical Sites / Relaxation / Laidback favour Museums and Nature & Parks (both attractions match);
    # Luxury favours $$$ and $$$$ (2 of 3 restaurants): 4/5
    assert report.persona == pytest.approx(0.8)
    assert evaluate(plan, make_query(), tiny_db).ordering is None        # no reference


def test_adventure_persona_uses_its_lambda(tiny_db: Database) -> None:
    persona = Persona(traveler_type="Adventure Seeker", purpose="Adventure", spending="Economical",
                      location_preference="Mountains")
    report = evaluate(good_plan(), make_query(persona=persona), tiny_db)
    g1 = math.exp(-((240 - 196.61) ** 2) / (2 * 53.82 ** 2))
    g2 = math.exp(-((390 - 286.61) ** 2) / (2 * 53.82 ** 2))
    # one attraction a day, mode of Poisson(1.82) is 1: count score 1
    assert report.temporal_attraction == pytest.approx((g1 + g2) / 2)
