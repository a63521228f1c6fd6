"""Queries go where people go and honour their personas: trips to India's tourist destinations,
beach trips to the coast, mountain trips to hill stations, budgets that follow spending preference,
no trip to two parts of one metro, plans that see the top sights and eat at natural hours
(utp_env/queries/traveller.py; the query figures `utp-env data stats` prints)."""

from __future__ import annotations

import pytest

from utp_env.dataset import dataset_of, open_dataset
from utp_env.queries.feasibility import (
    MEAL_ROOM_MIN,
    candidate_routes,
    cheapest_events,
    cheapest_trip,
    event_leaves_meals,
    span_leaves_meals,
)
from utp_env.queries.traveller import query_figures
from utp_env.query import Persona, Query
from utp_env.tools.database import Database
from utp_env.tools.india import COASTAL_CITIES, PREFERENCE_CITIES, city_tier, same_metro


def _query(dest: str, spending: str, preference: str, budget: float, days: int = 3, people: int = 1) -> Query:
    persona = Persona(traveler_type="Foodie", purpose="Relaxation", spending=spending, location_preference=preference)
    return Query(query_id=f"q-{dest}-{spending}-{budget}", org="Delhi", dest=dest, visiting_city_number=1, days=days,
                 dates=["2025-12-01", "2025-12-02", "2025-12-03"][:days], people_number=people, budget_inr=budget,
                 level="easy", persona=persona, risk_profile="tolerant", text="")


def test_same_metro_and_tiers() -> None:
    assert same_metro(("Mumbai", "Thane")) and same_metro(["Delhi", "Gurugram", "Jaipur"])
    assert not same_metro(("Mumbai", "Pune")) and not same_metro(("Mumbai",))
    assert "Panaji" in COASTAL_CITIES and "Manali" in PREFERENCE_CITIES["Mountains"]
    assert city_tier(4_000_000) == "metro"


def test_query_figures_fail_on_a_query_set_that_ignores_personas(mini_db: Database) -> None:
    """The figures can fail: a landlocked "Beaches" trip and equal luxury and economical budgets."""
    inland = next(c for c in mini_db.cities if c not in COASTAL_CITIES)
    qs = [_query(inland, "Luxury Traveler", "Beaches", 3000), _query(inland, "Economical Traveler", "Cities", 3000)]
    figures = {c.name: c for c in query_figures(qs, {}, mini_db)}
    assert not figures['"Beaches" queries visiting none of its places'].passed
    assert figures['"Beaches" queries visiting none of its places'].value == "1/1"
    assert not figures["median budget per person-day, luxury / economical"].passed
    rich = [_query("Pune", "Luxury Traveler", "Cities", 6000), _query("Pune", "Economical Traveler", "Cities", 3000)]
    figures = {c.name: c for c in query_figures(rich, {}, mini_db)}
    assert figures["median budget per person-day, luxury / economical"].passed
    assert figures['"Cities" queries visiting none of its places'].passed
    assert figures["queries going only to tourist destinations"].passed


def test_events_that_take_a_meal() -> None:
    """An evening show at 20:30 takes dinner, a match 12:30-15:30 lunch; a 19:00-21:00 show does
    not leave 150 min either; an afternoon show 15:30-18:00 or a late one from 21:30 leaves every meal."""
    assert not span_leaves_meals(20 * 60 + 30, 23 * 60 + 30)
    assert not span_leaves_meals(12 * 60 + 30, 15 * 60 + 30)
    assert not span_leaves_meals(19 * 60, 21 * 60)
    assert span_leaves_meals(15 * 60 + 30, 18 * 60)
    assert span_leaves_meals(21 * 60 + 30, 60)  # ends after midnight
    assert MEAL_ROOM_MIN >= 120


def test_mini_events_booked_leave_meals(mini_db: Database) -> None:
    ds = dataset_of(mini_db)
    for q in ds.queries:
        quote = cheapest_trip(q, mini_db)
        assert not isinstance(quote, str)
        assert all(event_leaves_meals(mini_db, e) for e in cheapest_events(q, mini_db, quote.skeleton).values())


def test_mini_query_figures(mini_db: Database) -> None:
    ds = dataset_of(mini_db)
    for c in query_figures(ds.queries, ds.references, mini_db):
        if "luxury / economical" in c.name:  # a handful of mini queries makes the ratio noise
            continue
        if c.name.startswith("median breakfast length"):
            # the meal-length targets are the full sandbox's: mini's cities are mostly crowd cities whose
            # restaurants are busier at breakfast (Cf 1.25-1.5), so its buffered meals run a few minutes
            # longer; still a traveller's breakfast, not the 75 minutes of v plus the tolerant buffer
            assert int(str(c.value).split(" / ")[0]) < 75, c
        if "length" in c.name and c.name.startswith("median"):
            # `data stats` prints such a miss as "short" with its reason, not as an unexplained FAIL
            assert c.passed or (c.result == "short" and c.shortfall and "full sandbox's" in c.shortfall), c
            continue
        assert c.passed, c
    for q in ds.queries:
        for route in candidate_routes(q, mini_db):
            assert not same_metro(route)


@pytest.mark.slow
def test_full_query_set_honours_personas() -> None:
    """Every query figure on the full query set: the top destinations among India's most visited,
    Goa, Leh, Darjeeling ... visited, no "Beaches" query without a coastal city, luxury budgets >= 2x
    economical per person-day, no trip to two parts of one metro, the top sights seen, meals at
    natural hours and lengths, no dinner past 23:30."""
    ds = open_dataset(profile="full", progress=False)
    figures = query_figures(ds.queries, ds.references, ds.db)
    assert len(figures) >= 25
    assert all(c.passed for c in figures), [c for c in figures if not c.passed]
    assert not [c for c in figures if "length" in c.name and c.shortfall]  # the targets are this set's own
