"""How the env's reward reads each metric of a plan on what counts (`read_plan`, one `Measure` per
metric term: BAS, CATS, TDAS and the TripCraft metrics), the functions the rows of
`utp_env.env.reward.PLAN_TERMS` point at. Each returns the metric's value, how many counted items it
scores and, for a plain mean, their sum, so the reward can weigh it against what the query calls
for (`utp_env.env.reward.covered_metric`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from utp_env.config import UncertaintyConfig
from utp_env.env.reward.counted import Scope, counted_context, scoped_context
from utp_env.evaluation.commonsense import (
    transit_distance,
)
from utp_env.evaluation.context import LegContext, PlanContext, Visit
from utp_env.evaluation.evaluate import (
    DEFAULT_CONFIG,
    ScoredItems,
    ordering_of,
    scored_items,
    temporal_attraction,
)
from utp_env.evaluation.report import EvaluationReport
from utp_env.evaluation.tripcraft import ordering_token, preferred_categories, preferred_tiers, spatial_item_score


class Measure(NamedTuple):
    """A metric as the reward reads it on what counts: its `value` (a mean, or the metric's own
    formula), the number of counted items it scores (`have`), and for a plain mean the sum of their
    scores (`total`; None for a metric that is not a plain mean)."""

    value: float | None
    have: int
    total: float | None = None


@dataclass(frozen=True)
class PlanReading:
    """A plan as the reward reads it: its resolved context, what counts of it, the evaluator's
    per-item scores (of the whole plan; a measure keeps the counted ones), and the reference plan's
    counted context (O_ord compares with it)."""

    ctx: PlanContext
    counted: PlanContext
    scored: ScoredItems
    config: UncertaintyConfig
    report: EvaluationReport | None = None
    reference: PlanContext | None = None
    ids: frozenset[int] = frozenset()
    """`id` of every element of `ctx` that is in `counted`."""

    def counts(self, element: Visit | LegContext) -> bool:
        """Whether an element of `ctx` is one the reward credits (it is in `counted`)."""
        return id(element) in self.ids


def read_plan(ctx: PlanContext, config: UncertaintyConfig | None = None, report: EvaluationReport | None = None,
              reference: PlanContext | None = None, scope: Scope | None = None) -> PlanReading:
    """The reading of a resolved plan (`report`, when given, supplies the per-item details the
    evaluator already computed); with a `scope` (a level's part of the trip), only what it asks counts."""
    config = config or DEFAULT_CONFIG
    scored = scored_items(ctx, config, report.pois if report is not None else None,
                          report.legs if report is not None else None)
    counted = scoped_context(counted_context(ctx), scope)
    ids = frozenset(id(e) for e in (*counted.visits, *counted.legs))
    return PlanReading(ctx, counted, scored, config, report, reference, ids)


def _mean(total: float, have: int) -> Measure:
    return Measure(total / have if have else None, have, total)


def measure_bas(r: PlanReading) -> Measure:
    """BAS: 1 - min(1, Q) of each counted timed attraction and meal."""
    scores = [1.0 - min(1.0, d.q) for v, d in r.scored.pois if r.counts(v)]
    return _mean(sum(scores), len(scores))


def measure_cats(r: PlanReading) -> Measure:
    """CATS: the crowd-timing score of each counted visit of a venue with crowd data."""
    scores = [d.crowd_score for v, d in r.scored.pois if r.counts(v) and d.crowd_score is not None]
    return _mean(sum(scores), len(scores))


def measure_tdas(r: PlanReading) -> Measure:
    """TDAS: 1 - min(1, Q) of each counted leg."""
    scores = [1.0 - min(1.0, d.q) for lc, d in r.scored.legs if r.counts(lc)]
    return _mean(sum(scores), len(scores))


def measure_meal(r: PlanReading) -> Measure:
    """T_meal: TripCraft's meal score of each counted meal (0 for a meal at no meal's hour)."""
    scores = {id(v): s for v, s in r.scored.meals}
    meals = r.counted.of_kind("restaurant")
    return _mean(sum(scores.get(id(v), 0.0) for v in meals), len(meals))


def measure_attraction(r: PlanReading) -> Measure:
    """T_attr of the counted attraction visits (TripCraft's per-day score)."""
    return Measure(temporal_attraction(r.counted, r.config), len(r.counted.of_kind("attraction")))


def measure_spatial(r: PlanReading) -> Measure:
    """S_spatial: each counted venue with a recorded stop, once per trip, scored on the database's
    distance to it when the plan states a distance for it (0 when it states none)."""
    p = r.config.tripcraft
    first: dict[tuple[str, int], tuple[float, bool]] = {}
    for v in r.counted.visits:
        if v.ref is None:
            continue
        venue = (v.ref.table, v.ref.row)
        stated = v.item is not None and v.item.transit_distance_m is not None
        if venue in first:
            first[venue] = (first[venue][0], first[venue][1] or stated)
            continue
        distance = transit_distance(r.ctx, v)
        if distance is not None:
            first[venue] = (spatial_item_score(distance, p.spatial_near_m, p.spatial_decay_per_m), stated)
    return _mean(sum(score for score, stated in first.values() if stated), len(first))


def counted_sequences(counted: PlanContext) -> list[list[str]]:
    """Each day's counted items as O_ord's tokens (`tripcraft.ordering_token`), in order, a run of
    items at the same venue one token (a stay and the checkout after it; a copy adds nothing)."""
    out = []
    for day in counted.days:
        tokens: list[str] = []
        last: object = None
        for v in day.items:
            venue = (v.ref.table, v.ref.row) if v.ref is not None else (v.kind, v.key)
            if venue != last:
                tokens.append(ordering_token(v.kind))
            last = venue
        out.append(tokens)
    return out


def measure_ordering(r: PlanReading) -> Measure:
    """O_ord of the counted items' sequence against the reference plan's (`counted_sequences`, in
    the configured reading); counted as the distinct venues and the legs."""
    venues = {(v.ref.table, v.ref.row) for v in r.counted.visits if v.ref is not None}
    value = None if r.reference is None else ordering_of(counted_sequences(r.counted),
                                                          counted_sequences(r.reference),
                                                          r.config.readings.ordering)
    return Measure(value, len(venues) + len(r.counted.legs))


STAY_STARS: dict[str, frozenset[int]] = {
    "luxur": frozenset({4, 5}),
    "moderate": frozenset({2, 3, 4}),
    "econom": frozenset({0, 1, 2, 3}),
    "budget": frozenset({0, 1, 2, 3}),
}
"""Spending keyword (as `tripcraft.SPENDING_TIERS`) -> the stays' star ratings it favours: the stay's
quality against the spending persona, judged with the restaurants' price tiers."""


def stay_stars(spending: str) -> frozenset[int]:
    """The star ratings a spending persona favours (union over the keywords it contains)."""
    low = spending.casefold()
    return frozenset().union(*(stars for key, stars in STAY_STARS.items() if key in low))


def measure_persona(r: PlanReading) -> Measure:
    """P_persona, keyword backend: the share of the counted attractions (a favoured category),
    restaurants (a favoured price tier) and stays (a favoured star rating, `STAY_STARS`), each venue
    once; with the bert backend the report's value over the counted visits."""
    if r.config.readings.persona != "keyword":
        return Measure(r.report.persona if r.report is not None else None, len(r.counted.visits))
    pe = r.ctx.query.persona
    columns = r.ctx.db.tables
    judged: list[bool] = []
    categories = preferred_categories(pe.location_preference, pe.purpose, pe.traveler_type)
    if categories:
        judged += [bool(categories.intersection(columns["attractions"].columns["categories"][v.ref.row]))
                   for v in r.counted.of_kind("attraction") if v.ref is not None]
    tiers = preferred_tiers(pe.spending)
    if tiers:
        judged += [columns["restaurants"].columns["price_tier"][v.ref.row] in tiers
                   for v in r.counted.of_kind("restaurant") if v.ref is not None]
    stars = stay_stars(pe.spending)
    if stars:
        stays = {v.ref.row for v in r.counted.of_kind("accommodation") if v.ref is not None}
        judged += [int(columns["accommodations"].columns["star_rating"][row]) in stars for row in sorted(stays)]
    return _mean(float(sum(judged)), len(judged))
