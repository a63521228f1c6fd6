"""The query generator, the feasibility checker and the JSONL format, on the mini sandbox."""

from __future__ import annotations

import collections
import datetime as dt
import itertools
import json

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from utp_env.config import CONFIG_DIR
from utp_env.queries import (
    QueryConfig,
    assign_split,
    cheapest_trip,
    check,
    dumps_queries,
    generate_queries,
    load_query_config,
    loads_queries,
    read_queries,
    skeleton,
    write_queries,
)
from utp_env.queries.feasibility import calendar
from utp_env.queries.generate import balanced_cells
from utp_env.queries.options import meal_costs, serves_meal, serves_meal_around, stay_admissible
from utp_env.queries.templates import house_rule_clause, long_date, ordinal
from utp_env.query import LocalConstraint, Query, house_rule_requirement
from utp_env.tools.database import Database

N = 30


@pytest.fixture(scope="module")
def queries(mini_db: Database) -> list[Query]:
    return generate_queries(mini_db, N, seed=0)


def test_queries_yaml_equals_code_defaults() -> None:
    shipped = yaml.safe_load((CONFIG_DIR / "queries.yaml").read_text())
    assert set(shipped) == set(QueryConfig.model_fields)  # every knob written out
    assert QueryConfig.model_validate(shipped) == QueryConfig()  # (YAML keeps cities_per_horizon's int keys)
    assert load_query_config() == QueryConfig()


def test_balanced_over_horizons_levels_and_risks(queries: list[Query]) -> None:
    # 30 queries over the 27 cells: every cell once or twice, each horizon/level/risk 10 times.
    cells = collections.Counter((q.days, q.level, q.risk_profile) for q in queries)
    assert len(cells) == 27 and set(cells.values()) <= {1, 2}
    for field in ("days", "level", "risk_profile"):
        assert set(collections.Counter(getattr(q, field) for q in queries).values()) == {10}


def test_same_seed_same_bytes_other_seed_other_queries(mini_db: Database, queries: list[Query]) -> None:
    again = generate_queries(mini_db, N, seed=0)
    assert dumps_queries(again).encode() == dumps_queries(queries).encode()
    other = generate_queries(mini_db, 5, seed=1)
    assert dumps_queries(other) != dumps_queries(queries[:5])


def test_every_query_is_feasible_and_well_formed(mini_db: Database, queries: list[Query]) -> None:
    start, end = calendar(mini_db)
    for i, q in enumerate(queries):
        assert q.query_id == f"utp-q-{i + 1:04d}"
        assert check(q, mini_db) == [], q.query_id
        dates = [dt.date.fromisoformat(d) for d in q.dates]
        assert len(dates) == q.days and start <= dates[0] and dates[-1] <= end
        assert all((b - a).days == 1 for a, b in itertools.pairwise(dates))
        assert 1 <= q.people_number <= 8
        if q.days == 3:
            assert q.visiting_city_number == 1 and mini_db.has_city(q.dest)
        else:
            assert q.visiting_city_number == {5: 2, 7: 3}[q.days]  # paper section 3.3
            assert q.dest != mini_db.state_of(q.org) and mini_db.cities_of_state(q.dest)
        n_constraints = len(q.local_constraint.model_dump(exclude_defaults=True))
        lo, hi = QueryConfig().constraints_per_level[q.level]
        assert lo <= n_constraints <= hi, (q.query_id, q.level, q.local_constraint)
        assert q.persona.traveler_type in QueryConfig().traveler_types
        assert str(q.people_number) in q.text and q.org in q.text and f"{q.budget_inr:.0f}" in q.text


def test_budget_is_the_cheapest_plan_times_the_level_slack(mini_db: Database, queries: list[Query]) -> None:
    config = QueryConfig()
    for q in queries:
        quote = cheapest_trip(q, mini_db)
        assert not isinstance(quote, str)
        slack = config.budget_slack[q.level] * config.spending_budget[q.persona.spending]
        assert quote.total * slack <= q.budget_inr < quote.total * slack + config.budget_round_inr
        assert q.budget_inr % config.budget_round_inr == 0


def test_every_prefix_of_the_cell_order_is_balanced() -> None:
    cells = balanced_cells(QueryConfig())
    assert len(set(cells)) == 27
    for end in range(3, 28, 3):
        for f in range(3):
            assert set(collections.Counter(c[f] for c in cells[:end]).values()) == {end // 3}


def test_hard_budgets_are_tighter_than_easy_ones() -> None:
    slack = QueryConfig().budget_slack
    assert slack["hard"] < slack["medium"] < slack["easy"]


def test_checker_reports_each_kind_of_problem(mini_db: Database, queries: list[Query]) -> None:
    q = queries[0]
    quote = cheapest_trip(q, mini_db)
    assert not isinstance(quote, str)
    poor = q.model_copy(update={"budget_inr": quote.total - 1})
    assert any("below the cheapest valid plan" in p for p in check(poor, mini_db))
    assert "unknown city" in check(q.model_copy(update={"org": "Atlantis"}), mini_db)[0]
    gap = q.model_copy(update={"dates": [q.dates[0], q.dates[0], q.dates[0]][: q.days]})
    assert check(gap, mini_db)
    early = q.model_copy(update={"dates": [f"2020-01-0{d + 1}" for d in range(q.days)]})
    assert any("outside the sandbox calendar" in p for p in check(early, mini_db))
    nothing = q.model_copy(update={"local_constraint": LocalConstraint(cuisine=["Martian"])})
    assert any("Martian" in p for p in check(nothing, mini_db))


def test_meals_on_an_event_day_are_priced_around_the_event(mini_db: Database) -> None:
    """A meal that cannot be eaten around the event's block counts nothing; a block that meets no
    meal window changes nothing (utp_env/queries/options.py meal_costs)."""
    city = max(mini_db.cities, key=lambda c: len(mini_db.city_rows("restaurants", c)))
    rows = [int(r) for r in mini_db.city_rows("restaurants", city)]
    for meal in ("breakfast", "lunch", "dinner"):
        for r in rows:
            assert serves_meal_around(mini_db, r, meal, (0, 1)) == serves_meal(mini_db, r, meal)
            assert not serves_meal_around(mini_db, r, meal, (6 * 60, 23 * 60 + 30))
    assert meal_costs(mini_db, city, 3, ((0, 1),)) == meal_costs(mini_db, city, 3)
    assert meal_costs(mini_db, city, 3, ((6 * 60, 23 * 60 + 30),)) == meal_costs(mini_db, city, 2)


def test_splits_are_a_stable_function_of_the_id(queries: list[Query]) -> None:
    for q in queries:
        assert q.split == assign_split(q.query_id, 0.2)
    ids = [f"utp-q-{i:04d}" for i in range(1, 2001)]
    share = sum(assign_split(i, 0.2) == "validation" for i in ids) / len(ids)
    assert 0.17 < share < 0.23
    assert all(assign_split(i, 0.0) == "test" for i in ids[:50])
    assert all(assign_split(i, 1.0) == "validation" for i in ids[:50])


def test_jsonl_round_trip_and_errors_name_line_and_field(tmp_path, queries: list[Query]) -> None:
    path = write_queries(tmp_path / "q.jsonl", queries)
    assert read_queries(path) == queries
    lines = path.read_text().splitlines()
    broken = json.loads(lines[1])
    broken["people_number"] = 12
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(broken)]) + "\n")
    with pytest.raises(ValueError, match=r"bad.jsonl: line 2: field 'people_number'"):
        read_queries(bad)
    with pytest.raises(ValueError, match=r"line 1: invalid JSON"):
        loads_queries("{not json\n")
    with pytest.raises(ValueError, match=r"line 2: duplicate query_id"):
        loads_queries(lines[0] + "\n" + lines[0] + "\n")


@given(days=st.sampled_from([3, 5, 7]), k=st.integers(1, 3))
def test_skeleton_spends_every_night_somewhere(days: int, k: int) -> None:
    if k > days - 1:
        with pytest.raises(ValueError, match="cannot visit"):
            skeleton(days, tuple(f"c{i}" for i in range(k)))
        return
    sk = skeleton(days, tuple(f"c{i}" for i in range(k)))
    assert sum(sk.nights) == days - 1 and min(sk.nights) >= 1 and max(sk.nights) - min(sk.nights) <= 1
    assert sk.leg_days[0] == 0 and sk.leg_days[-1] == days - 1 and len(sk.leg_days) == k + 1
    assert sum(len(sk.full_days(j)) for j in range(k)) == days - 1 - k


@given(st.dates(min_value=dt.date(2025, 1, 1), max_value=dt.date(2027, 12, 31)))
def test_long_dates_read_naturally(day: dt.date) -> None:
    text = long_date(day.isoformat(), with_year=True)
    assert text == f"{day.strftime('%B')} {ordinal(day.day)}, {day.year}"
    assert ordinal(day.day)[-2:] in ("st", "nd", "rd", "th")


def test_ordinals_by_hand() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "31st"]


# ---------------------------------------------------------------- house rules


def test_house_rules_read_in_both_forms() -> None:
    """TravelPlanner names the activity the travellers need allowed; UTP-Bench C.1 ("No_Pets",
    rendered "strictly No Pets") names the rule the stay must enforce."""
    assert house_rule_requirement("pets") == ("No pets", False)
    assert house_rule_requirement("smoking") == ("No smoking", False)
    for c1 in ("No_Pets", "No pets", "no-pets", "NO_PETS"):
        assert house_rule_requirement(c1) == ("No pets", True), c1
    assert house_rule_requirement("No_Children") == ("No children", True)
    assert house_rule_requirement("Safety Conduct") == ("Safety Conduct", True)
    assert house_rule_requirement("Check-in/Check-out") == ("Check-in/Check-out", True)
    assert house_rule_clause("pets") == "have pets allowed"
    assert house_rule_clause("No_Pets") == "be strictly no pets"


def test_stay_admissible_follows_the_house_rule_reading(mini_db: Database) -> None:
    rules = mini_db.tables["accommodations"].columns["house_rules"]
    nights = max(int(n) for n in mini_db.tables["accommodations"].columns["minimum_nights"])
    forbids = next(r for r in range(len(rules)) if "No pets" in rules[r])
    allows = next(r for r in range(len(rules)) if "No pets" not in rules[r])
    for rule, ok_forbidding, ok_allowing in (("pets", False, True), ("No_Pets", True, False), ("No pets", True, False)):
        lc = LocalConstraint(house_rule=rule)
        assert stay_admissible(mini_db, forbids, lc, nights) is ok_forbidding, rule
        assert stay_admissible(mini_db, allows, lc, nights) is ok_allowing, rule


def test_seven_day_queries_visit_three_cities_on_the_full_shape() -> None:
    config = QueryConfig()
    assert config.cities_per_horizon == {3: 1, 5: 2, 7: 3}
    with pytest.raises(ValueError, match="cities_per_horizon"):
        QueryConfig(horizons=[3, 5, 7], cities_per_horizon={3: 1, 5: 2})
