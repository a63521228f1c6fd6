"""`evaluate(plan, query, db)`: every check, every metric and the per-item details of one plan.

The plan is resolved against the database once (`context.build_context`); the checks and the
formulas of `commonsense`, `hard`, `uncertainty` and `tripcraft` then read that context
(`evaluate_context`, which the env's reward calls with the context it reads too,
utp_env/env/reward/).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from utp_env.config import EvaluationReadings, UncertaintyConfig
from utp_env.evaluation import tripcraft as tc
from utp_env.evaluation import uncertainty as un
from utp_env.evaluation.commonsense import (
    commonsense_checks,
    extra_checks,
    valid_poi_list_parts,
)
from utp_env.evaluation.complete_information import complete_information_parts
from utp_env.evaluation.context import LegContext, PlanContext, Visit, build_context
from utp_env.evaluation.hard import hard_checks, trip_cost
from utp_env.evaluation.report import EvaluationReport, LegDetail, PoiDetail, build
from utp_env.itinerary import Plan, check_plan_query, unvalidated
from utp_env.query import Query
from utp_env.tools.database import Database
from utp_env.tools.schema import VENUE_TABLE

DEFAULT_CONFIG = UncertaintyConfig()


@dataclass(frozen=True)
class ScoredItems:
    """The per-item scores of one plan the evaluator computes, each with the plan element it scores
    (what the env's reward counts, utp_env/env/reward/)."""

    pois: list[tuple[Visit, PoiDetail]]  # BAS/CATS inputs of each scored timed visit (`scored_visits`)
    legs: list[tuple[LegContext, LegDetail]]  # TDAS inputs of each leg
    meals: list[tuple[Visit, float]]  # T_meal score of each timed meal of positive length (`meal_scores`)


def bas_scores(visit: Visit) -> bool:
    """Whether BAS scores a visit of this kind: a restaurant (even when not found) or an attraction found
    in the database (its v is its row's)."""
    return visit.kind == "restaurant" or (visit.kind == "attraction" and visit.ref is not None)


def scored_visits(ctx: PlanContext) -> list[tuple[Visit, int, int]]:
    """(visit, start, end) of the timed visits BAS scores (`bas_scores`), in plan order."""
    return [(visit, start, end) for day in ctx.days for visit, start, end in day.timed if bas_scores(visit)]


# What an untimed visit BAS or CATS would score counts as: no buffer can be read from it (Q = 1, the most a
# visit loses) and no hour was chosen for it (crowd score 0). Else a plan would raise its BAS and CATS by
# deleting the times of its worst-buffered or most crowded visits, which are then left out of the means.
UNTIMED_Q = 1.0
UNTIMED_CROWD_SCORE = 0.0


def untimed_scored_visits(ctx: PlanContext) -> list[Visit]:
    """The visits `scored_visits` would score had they a start and an end: restaurants and known
    attractions without both times (an item written without times, or a venue only a summary field
    names). A restaurant only a summary field names counts when the database knows it: an unknown one
    may be a timed item's venue spelled another way, which must not count twice."""
    return [visit for visit in ctx.visits if not visit.timed and bas_scores(visit)
            and (visit.item is not None or visit.ref is not None)]


def bas_of(pois: list[PoiDetail], untimed: list[Visit]) -> float | None:
    """BAS of a plan: `absorption_score` of its timed visits' Q, each untimed one counting `UNTIMED_Q`."""
    return un.absorption_score([p.q for p in pois] + [UNTIMED_Q] * len(untimed))


def cats_of(scored: list[tuple[Visit, PoiDetail]], untimed: list[Visit]) -> float | None:
    """CATS of a plan: the mean crowd score of its scored visits (`scored_visits`, each with its detail) of
    venues with crowd windows; a visit of such a venue without a score (it lasts no time) and an untimed one
    count `UNTIMED_CROWD_SCORE`. None when no visit is of a venue with crowd windows."""
    scores = [UNTIMED_CROWD_SCORE if p.crowd_score is None else p.crowd_score
              for visit, p in scored if p.crowd_score is not None or visit.crowd_row is not None]
    scores += [UNTIMED_CROWD_SCORE for visit in untimed if visit.crowd_row is not None]
    return sum(scores) / len(scores) if scores else None


def _poi_details(ctx: PlanContext, config: UncertaintyConfig,
                 visits: list[tuple[Visit, int, int]] | None = None) -> list[PoiDetail]:
    """BAS (and CATS where crowd windows exist) inputs of every timed attraction/restaurant visit
    (`visits`: `scored_visits(ctx)` when the caller has them).

    Attractions need their database row (for v); restaurants are scored from the start hour even
    when not found (Cf 1). Untimed visits are skipped (the extra check timed_items flags them).
    """
    risk = un.risk_range(config, ctx.query.risk_profile)
    db, crowd_profile = ctx.db, ctx.index.crowd
    meals, factors, intensities = config.restaurant_meals, config.congestion_factor, config.crowd_intensity
    out: list[PoiDetail] = []
    for visit, start, end in scored_visits(ctx) if visits is None else visits:
        kind: Literal["attraction", "restaurant"] = "restaurant" if visit.kind == "restaurant" else "attraction"
        ref = visit.ref
        v = un.base_visit_minutes(db, VENUE_TABLE[kind], ref.row if ref is not None else None, start, meals)
        crowd_row = visit.crowd_row
        profile = crowd_profile(crowd_row) if crowd_row is not None else None
        cf, tier = un.congestion(profile, start, factors)
        buffer = (end - start) - v
        low, high = un.bas_range(v, cf, risk)
        crowd = un.crowd_timing_score(profile, start, end, intensities) if profile is not None else None
        out.append(unvalidated(PoiDetail, {
            "day": visit.day + 1, "name": visit.name, "venue_type": kind, "start": start, "end": end, "v": v,
            "cf": cf, "tier": tier, "buffer": buffer, "range_low": low, "range_high": high,
            "q": un.deviation(buffer, low, high), "crowd_score": crowd[0] if crowd else None,
            "crowd_intensity": crowd[1] if crowd else None}))
    return out


def _leg_details(ctx: PlanContext, config: UncertaintyConfig) -> list[LegDetail]:
    """TDAS inputs of every leg; an unknown service's historical duration is its stated schedule."""
    risk = un.risk_range(config, ctx.query.risk_profile)
    out: list[LegDetail] = []
    for lc in ctx.legs:
        leg, res = lc.leg, lc.resolved
        hist, source = res.hist_duration, "database"
        if hist is None:
            hist, source = float(leg.arr - leg.dep), "stated schedule"
        planned = leg.planned_arrival
        buffer = un.transport_buffer(leg.dep, planned, hist)
        low, high = un.tdas_range(res.expected_delay, risk)
        out.append(unvalidated(LegDetail, {
            "day": lc.day + 1, "mode": leg.mode, "number": leg.number, "origin": leg.origin,
            "destination": leg.destination, "found": res.found, "expected_delay": res.expected_delay,
            "measured": res.delay_measured, "hist_duration": hist, "hist_source": source,
            "planned_duration": float(planned - leg.dep), "buffer": buffer, "range_low": low, "range_high": high,
            "q": un.deviation(buffer, low, high)}))
    return out


def meal_scores(ctx: PlanContext, config: UncertaintyConfig) -> list[tuple[Visit, float]]:
    """TripCraft's meal score of each timed restaurant visit of positive duration."""
    scores = []
    gaussians, meals = config.tripcraft.meals, config.restaurant_meals
    for day in ctx.days:
        for v, start, end in day.timed:
            if v.kind == "restaurant" and end > start:
                label = v.meal or un.meal_of_hour(start // 60, meals)  # the stated meal, else the start hour's
                gaussian = gaussians.get(label) if label else None
                if gaussian is not None:
                    scores.append((v, tc.meal_score((start + end) / 120.0, float(end - start), gaussian)))
    return scores


def temporal_meal(ctx: PlanContext, config: UncertaintyConfig) -> float | None:
    """Mean TripCraft meal score over timed restaurant visits of positive duration (`meal_scores`)."""
    scores = [score for _, score in meal_scores(ctx, config)]
    return sum(scores) / len(scores) if scores else None


def temporal_attraction(ctx: PlanContext, config: UncertaintyConfig) -> float | None:
    """T_attr: mean over days with timed, known attraction visits of `tc.day_attraction_score`
    (TripCraft's scale: at most the Poisson mode's probability; higher is better)."""
    p = config.tripcraft
    adventurer = tc.is_adventurer(ctx.query.persona.traveler_type)
    lam = p.attractions_per_day_lambda["adventure" if adventurer else "other"]
    hours = ctx.index.column("attractions", "visit_duration_hr")
    days = []
    for day in ctx.days:
        timed = [(v.ref.row, start, end) for v, start, end in day.timed if v.kind == "attraction" and v.ref is not None]
        if timed:
            visits = sum(1 for v in day.visits if v.kind == "attraction")
            durations = [float(end - start) for _, start, end in timed]
            vs = [float(hours[row]) * 60.0 for row, _, _ in timed]
            days.append(tc.day_attraction_score(durations, vs, visits, adventurer, p.attraction_sigma_minutes,
                                                p.attraction_k_minutes, lam))
    return sum(days) / len(days) if days else None


def spatial_scores(ctx: PlanContext, config: UncertaintyConfig) -> list[list[tuple[Visit, float]]]:
    """Each day's venue items (not journeys) that state a transit distance, with their item score.

    The score is of the database's distance (`transit_distance`), not of the number the plan
    states: TripCraft's plans copy it from the database, and a plan that writes 0 m everywhere must
    not earn a perfect S_spatial. An item whose venue has no recorded stop is not scored."""
    p = config.tripcraft
    near, decay = p.spatial_near_m, p.spatial_decay_per_m
    out = []
    for day in ctx.days:
        scores = []
        for v in day.items:
            if v.stated_distance is None or v.kind == "transport":  # (an item's stated distance)
                continue
            distance = v.stop_distance  # (`transit_distance`)
            if distance is not None:
                scores.append((v, tc.spatial_item_score(distance, near, decay)))
        out.append(scores)
    return out


def spatial(ctx: PlanContext, config: UncertaintyConfig) -> float | None:
    """S_spatial: mean over days of the mean item score of the day's venue items (not journeys)
    that state a transit distance (`spatial_scores`, `tc.mean_of_day_means`)."""
    return tc.mean_of_day_means([[score for _, score in day] for day in spatial_scores(ctx, config)])


def type_sequences(ctx: PlanContext) -> list[list[str]]:
    """Each day's items in order as TripCraft's ordering tokens (`tc.ordering_token`)."""
    return [[tc.ordering_token(v.kind) for v in day.items] for day in ctx.days]


def persona_matches(ctx: PlanContext) -> tuple[int, int] | None:
    """(matched, judged) known attraction/restaurant visits of the keyword backend
    (`tc.persona_counts`); None when the persona names no favoured category or tier."""
    pe = ctx.query.persona
    categories = tc.preferred_categories(pe.location_preference, pe.purpose, pe.traveler_type)
    tiers = tc.preferred_tiers(pe.spending)
    if not categories and not tiers:
        return None
    att = ctx.db.tables["attractions"].columns["categories"]
    res = ctx.db.tables["restaurants"].columns["price_tier"]
    return tc.persona_counts([att[v.ref.row] for v in ctx.of_kind("attraction") if v.ref is not None],
                             [res[v.ref.row] for v in ctx.of_kind("restaurant") if v.ref is not None],
                             categories, tiers)


def persona(ctx: PlanContext, readings: EvaluationReadings) -> float | None:
    """The keyword backend: share of known attraction/restaurant visits matching the persona's
    keyword tables (`persona_matches`). None when the persona names no favoured category or tier (it
    cannot be judged); a persona that can be judged and a plan that gives nothing to judge:
    `zero_if_empty`."""
    counts = persona_matches(ctx)
    if counts is None:
        return None
    matched, judged = counts
    return zero_if_empty(matched / judged if judged else None, readings, bool(ctx.days))


PERSONA_FIELDS = ("traveler_type", "purpose", "spending", "location_preference")  # TripCraft's four components


def persona_bert(ctx: PlanContext, model: str) -> float | None:
    """The bert backend: TripCraft's cosine similarity of BERT embeddings of every point-of-interest
    item's name and the persona's four fields (`tc.embedding_persona_score`)."""
    from utp_env.evaluation.persona_bert import embedder

    bert = embedder(model)
    pe = ctx.query.persona
    personas = [bert.embed(str(getattr(pe, name))) for name in PERSONA_FIELDS]
    pois = [bert.embed(v.name) for day in ctx.days for v in day.items]
    return tc.embedding_persona_score(personas, pois)


def ordering(ctx: PlanContext, reference: PlanContext, reading: str) -> float | None:
    """O_ord against the reference plan, in TripCraft's reading or the day-by-day one."""
    return ordering_of(type_sequences(ctx), type_sequences(reference), reading)


def ordering_of(plan_days: list[list[str]], reference_days: list[list[str]], reading: str) -> float | None:
    """O_ord of two plans' token sequences (`type_sequences`) in the reading `reading`."""
    score = tc.tripcraft_ordering_score if reading == "tripcraft" else tc.ordering_score
    return score(plan_days, reference_days)


def zero_if_empty(value: float | None, readings: EvaluationReadings, delivered: bool) -> float | None:
    """A TripCraft metric with nothing to score in a delivered plan (one with days): 0 as TripCraft's
    code scores it (`empty_metrics: zero`), or None, left out of the mean (`none`). A plan without
    days keeps None: TripCraft leaves such a plan (`days == 0`) out of every mean."""
    return 0.0 if value is None and delivered and readings.empty_metrics == "zero" else value


def scored_items(ctx: PlanContext, config: UncertaintyConfig, pois: list[PoiDetail] | None = None,
                 legs: list[LegDetail] | None = None) -> ScoredItems:
    """The per-item scores of a plan with the elements they score (the details computed when not given)."""
    pois = _poi_details(ctx, config) if pois is None else pois
    legs = _leg_details(ctx, config) if legs is None else legs
    return ScoredItems(pois=[(visit, detail) for (visit, _, _), detail in zip(scored_visits(ctx), pois, strict=True)],
                       legs=list(zip(ctx.legs, legs, strict=True)), meals=meal_scores(ctx, config))


def evaluate(plan: Plan, query: Query, db: Database, config: UncertaintyConfig | None = None,
             reference: Plan | None = None) -> EvaluationReport:
    """Score `plan` for `query` on `db`: the paper's commonsense checks (with the parts of
    valid_poi_list and complete_information in `subchecks`), the hard checks, the extra checks,
    BAS/CATS/TDAS with per-item details, the TripCraft metrics (ordering only with a `reference`
    plan), each in the reading `config.readings` names. A plan that names another query is refused
    (`itinerary.check_plan_query`)."""
    check_plan_query(plan, query.query_id)
    return evaluate_context(build_context(plan, query, db), config, reference)


def evaluate_context(ctx: PlanContext, config: UncertaintyConfig | None = None,
                     reference: Plan | None = None) -> EvaluationReport:
    """`evaluate` of a plan already resolved (`context.build_context`)."""
    config = config or DEFAULT_CONFIG
    readings = config.readings
    query, db = ctx.query, ctx.db
    delivered = bool(ctx.days)
    cost = trip_cost(ctx)
    visits = scored_visits(ctx)
    pois = _poi_details(ctx, config, visits)
    legs = _leg_details(ctx, config)
    untimed = untimed_scored_visits(ctx)
    order = None
    if reference is not None:
        order = zero_if_empty(ordering(ctx, build_context(reference, query, db), readings.ordering), readings,
                              delivered)
    poi_parts = valid_poi_list_parts(ctx)
    information_parts = complete_information_parts(ctx, readings.complete_information)
    if readings.persona == "bert":
        persona_value = zero_if_empty(persona_bert(ctx, readings.persona_model), readings, delivered)
    else:
        persona_value = persona(ctx, readings)
    subchecks = {f"valid_poi_list/{name}": check for name, check in poi_parts.items()}
    subchecks.update({f"complete_information/{name}": check for name, check in information_parts.items()})
    return build(EvaluationReport,
        query_id=query.query_id,
        commonsense=commonsense_checks(ctx, config.min_meal_gap_minutes, poi_parts, information_parts),
        hard=hard_checks(ctx, cost),
        subchecks=subchecks,
        extra=extra_checks(ctx),
        bas=bas_of(pois, untimed),
        cats=cats_of([(visit, p) for (visit, _, _), p in zip(visits, pois, strict=True)], untimed),
        tdas=un.absorption_score([leg.q for leg in legs]),
        temporal_meal=zero_if_empty(temporal_meal(ctx, config), readings, delivered),
        temporal_attraction=zero_if_empty(temporal_attraction(ctx, config), readings, delivered),
        spatial=zero_if_empty(spatial(ctx, config), readings, delivered),
        ordering=order,
        persona=persona_value,
        pois=pois, legs=legs, cost=cost)
