"""Hard constraints (paper Table 8; docs/METRICS.md): budget always, the others when the query
sets them (`passed=None`, "not set by the query", otherwise). Names and list values are compared
exactly after `utp_env.tools.database.normalize`."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from utp_env.evaluation.context import PlanContext, Visit, night_stay
from utp_env.evaluation.report import CheckResult, CostBreakdown, build, check_result, verdict
from utp_env.query import LocalConstraint, house_rule_requirement
from utp_env.tools.database import normalize
from utp_env.tools.schema import CAB_SEATS, FARE_COLUMN, SERVICE_TABLE

NOT_SET = "not set by the query"


def rooms_needed(people: int, max_occupancy: int) -> int:
    """Rooms for `people` guests: ceil(people / max_occupancy)."""
    return math.ceil(people / max(1, max_occupancy))


def cabs_needed(people: int) -> int:
    """Cabs for `people` travellers, 4 seats each."""
    return math.ceil(people / CAB_SEATS)


def trip_cost(ctx: PlanContext) -> CostBreakdown:
    """Fares x people (cab fare x cabs), stays x rooms per night, meals, entry fees and tickets x people.

    Unresolved legs and venues cost nothing here (they fail within_sandbox instead).
    """
    db, people = ctx.db, ctx.query.people_number
    transport = 0.0
    for lc in ctx.legs:
        res = lc.resolved
        if lc.leg.mode == "cab":
            row = ctx.index.distance_row(lc.leg.origin, lc.leg.destination)
            if row is not None:
                transport += float(db.tables["distances"].columns["cab_fare_inr"][row]) * cabs_needed(people)
        elif res.row is not None:
            table = SERVICE_TABLE[lc.leg.mode]
            transport += float(db.tables[table].columns[FARE_COLUMN[table]][res.row]) * people
    column = ctx.index.column  # the venue tables' numeric columns as lists (small tables): the same values
    stays = 0.0
    prices, occupancy = column("accommodations", "price_per_night_inr"), column("accommodations", "max_occupancy")
    last = len(ctx.days) - 1
    for day in ctx.days:
        stay = night_stay(day, day.index == last)
        if stay is not None and stay.ref is not None:
            stays += float(prices[stay.ref.row]) * rooms_needed(people, int(occupancy[stay.ref.row]))
    meals = _per_person(ctx.of_kind("restaurant"), column("restaurants", "avg_cost_inr")) * people
    attractions = _per_person(ctx.of_kind("attraction"), column("attractions", "entry_fee_inr")) * people
    events = _per_person(ctx.of_kind("event"), column("events", "price_inr")) * people
    total = transport + stays + meals + attractions + events
    return build(CostBreakdown, transport=transport, stays=stays, meals=meals, attractions=attractions,
                                         events=events, total=total)


def _per_person(visits: Iterable[Visit], prices: Sequence[float]) -> float:
    return float(sum(prices[v.ref.row] for v in visits if v.ref is not None))


def budget(ctx: PlanContext, cost: CostBreakdown) -> CheckResult:
    """Total cost within the query's budget."""
    if cost.total > ctx.query.budget_inr:
        return verdict([f"costs INR {cost.total:,.0f}, over the budget of INR {ctx.query.budget_inr:,.0f}"])
    return verdict([])


def _stay_rows(ctx: PlanContext) -> list[int]:
    """Rows of the plan's known stays, each once, in order of first mention."""
    rows = (v.ref.row for v in ctx.of_kind("accommodation") if v.ref is not None)
    return list(dict.fromkeys(rows))


def _each_stay(ctx: PlanContext, requirement: str, ok: Callable[[int], bool]) -> CheckResult:
    rows = _stay_rows(ctx)
    if not rows:
        return verdict([f"the query requires {requirement} but the plan has no known stay"])
    names = ctx.db.tables["accommodations"].columns["name"]
    return verdict([f"{names[row]!r} does not offer {requirement}" for row in rows if not ok(row)])


def house_rule(ctx: PlanContext) -> CheckResult:
    """Every stay meets the query's house rule as `utp_env.query.house_rule_requirement` reads it
    (the one reading the query generator and the reference planner use too): an activity the
    travellers need allowed ('pets') -> the stay does not list its forbidding rule ('No pets');
    a rule ('No_Pets', 'Safety Conduct') -> the stay lists it."""
    wanted = ctx.query.local_constraint.house_rule
    if wanted is None:
        return check_result(None, NOT_SET)
    rule, must_list = house_rule_requirement(wanted)
    rule_key, normalized = normalize(rule), ctx.index.normalized

    def ok(row: int) -> bool:
        listed = rule_key in normalized("accommodations", "house_rules", row)
        return listed if must_list else not listed
    return _each_stay(ctx, f"house rule {wanted!r}", ok)


def house_type(ctx: PlanContext) -> CheckResult:
    """Every stay is of the required house type."""
    wanted = ctx.query.local_constraint.house_type
    if wanted is None:
        return check_result(None, NOT_SET)
    types = ctx.db.tables["accommodations"].columns["house_type"]
    return _each_stay(ctx, f"house type {wanted!r}", lambda row: normalize(types[row]) == normalize(wanted))


def _covers(ctx: PlanContext, column: str, wanted: list[str]) -> Callable[[int], bool]:
    """Whether a stay's row lists every one of `wanted` in its `column` (after normalize)."""
    need, normalized = {normalize(w) for w in wanted}, ctx.index.normalized
    return lambda row: need <= normalized("accommodations", column, row)


def amenities(ctx: PlanContext) -> CheckResult:
    """Every stay offers every amenity asked for."""
    wanted = ctx.query.local_constraint.amenities
    return _each_stay(ctx, f"amenities {', '.join(wanted)}", _covers(ctx, "amenities", wanted))


def services(ctx: PlanContext) -> CheckResult:
    """Every stay offers every service asked for."""
    wanted = ctx.query.local_constraint.services
    return _each_stay(ctx, f"services {', '.join(wanted)}", _covers(ctx, "services", wanted))


def _missing(wanted: list[str], have: set[str] | frozenset[str]) -> list[str]:
    """Those of `wanted` not in `have` (normalised values)."""
    return [w for w in wanted if normalize(w) not in have]


def _offered(ctx: PlanContext, kind: str, table: str, column: str) -> frozenset[str]:
    """Every normalised value of a list `column` over the plan's known visits of `kind`."""
    normalized = ctx.index.normalized
    return frozenset().union(*(normalized(table, column, v.ref.row) for v in ctx.of_kind(kind) if v.ref is not None))


def cuisine(ctx: PlanContext) -> CheckResult:
    """Every cuisine asked for is served by at least one restaurant of the plan."""
    served = _offered(ctx, "restaurant", "restaurants", "cuisines")
    return verdict([f"no restaurant serves {c}" for c in _missing(ctx.query.local_constraint.cuisine, served)])


def transportation(ctx: PlanContext) -> CheckResult:
    """`no flight` / `no cab`: no leg of that mode."""
    rule = ctx.query.local_constraint.transportation
    if rule is None:
        return check_result(None, NOT_SET)
    banned = rule.split()[-1]
    return verdict([f"day {lc.day + 1} uses a {banned} against {rule!r}" for lc in ctx.legs
                    if lc.leg.mode == banned])


def event_type(ctx: PlanContext) -> CheckResult:
    """Every event type asked for is attended at least once."""
    col = ctx.db.tables["events"].columns["segment"]
    seen = {normalize(col[v.ref.row]) for v in ctx.of_kind("event") if v.ref is not None}
    return verdict([f"no {t} event" for t in _missing(ctx.query.local_constraint.event_types, seen)])


def attraction_type(ctx: PlanContext) -> CheckResult:
    """Every attraction category asked for is covered by at least one visited attraction."""
    seen = _offered(ctx, "attraction", "attractions", "categories")
    return verdict([f"no {c} attraction" for c in _missing(ctx.query.local_constraint.attraction_categories, seen)])


OPTIONAL = {
    "house_rule": ("house_rule", house_rule),
    "house_type": ("house_type", house_type),
    "amenities": ("amenities", amenities),
    "services": ("services", services),
    "cuisine": ("cuisine", cuisine),
    "transportation": ("transportation", transportation),
    "event_type": ("event_types", event_type),
    "attraction_type": ("attraction_categories", attraction_type),
}


def hard_checks(ctx: PlanContext, cost: CostBreakdown) -> dict[str, CheckResult]:
    """Budget plus every optional check (None, 'not set by the query', when the query omits it)."""
    out = {"budget": budget(ctx, cost)}
    constraint = ctx.query.local_constraint
    for name, (field_name, check) in OPTIONAL.items():
        out[name] = check(ctx) if constraint.is_set(field_name) else check_result(None, NOT_SET)
    return out


def applicable_hard_checks(constraint: LocalConstraint) -> int:
    """How many hard checks a query makes applicable (budget plus those it sets)."""
    return 1 + sum(1 for field_name, _ in OPTIONAL.values() if constraint.is_set(field_name))
