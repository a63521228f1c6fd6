"""`evaluate(plan, query, db)`: every check, every metric and the per-item details of one plan.

The plan is resolved against the database once (`context.build_context`); the checks and the
formulas of `commonsense`, `hard`, `uncertainty` and `tripcraft` then read that context.
"""

from __future__ import annotations

from utp_env.config import UncertaintyConfig
from utp_env.evaluation import tripcraft as tc
from utp_env.evaluation import uncertainty as un
from utp_env.evaluation.commonsense import commonsense_checks
from utp_env.evaluation.context import KIND_TABLE, PlanContext, Visit, build_context
from utp_env.evaluation.hard import hard_checks, trip_cost
from utp_env.evaluation.report import EvaluationReport, LegDetail, PoiDetail, build
from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.tools.database import Database

DEFAULT_CONFIG = UncertaintyConfig()


def _poi_details(ctx: PlanContext, config: UncertaintyConfig) -> list[PoiDetail]:
    """BAS (and CATS where crowd windows exist) inputs of every timed attraction/restaurant visit.

    Attractions need their database row (for v); restaurants are scored from the start hour even
    when not found (Cf 1). Untimed visits are skipped (complete_information flags them).
    """
    risk = un.risk_range(config, ctx.query.risk_profile)
    out: list[PoiDetail] = []
    for visit in ctx.visits:
        if not visit.timed or visit.kind not in ("attraction", "restaurant"):
            continue
        start, end = visit.item.start, visit.item.end  # type: ignore[union-attr]
        if visit.kind == "attraction" and visit.ref is None:
            continue
        v = un.base_visit_minutes(ctx.db, KIND_TABLE[visit.kind], visit.ref.row if visit.ref else None,
                                  start, config.restaurant_meals)  # type: ignore[arg-type]
        profile = ctx.index.crowd(visit.crowd_row) if visit.crowd_row is not None else None
        cf, tier = un.congestion(profile, start, config.congestion_factor)  # type: ignore[arg-type]
        buffer = (end - start) - v  # type: ignore[operator]
        low, high = un.bas_range(v, cf, risk)
        crowd = un.crowd_timing_score(profile, start, end, config.crowd_intensity) if profile else None  # type: ignore[arg-type]
        out.append(build(PoiDetail,
            day=visit.day + 1, name=visit.name, venue_type=visit.kind, start=start, end=end, v=v, cf=cf,
            tier=tier, buffer=buffer, range_low=low, range_high=high, q=un.deviation(buffer, low, high),
            crowd_score=crowd[0] if crowd else None, crowd_intensity=crowd[1] if crowd else None))
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
        buffer = un.transport_buffer(leg.dep, leg.planned_arrival, hist)
        low, high = un.tdas_range(res.expected_delay, risk)
        out.append(build(LegDetail,
            day=lc.day + 1, mode=leg.mode, number=leg.number, origin=leg.origin, destination=leg.destination,
            found=res.found, expected_delay=res.expected_delay, measured=res.delay_measured, hist_duration=hist,
            hist_source=source, planned_duration=float(leg.planned_arrival - leg.dep), buffer=buffer,
            range_low=low, range_high=high, q=un.deviation(buffer, low, high)))
    return out


def _meal_label(visit: Visit, config: UncertaintyConfig) -> str | None:
    return visit.meal or un.meal_of_hour(visit.item.start // 60, config.restaurant_meals)  # type: ignore[union-attr,operator]


def temporal_meal(ctx: PlanContext, config: UncertaintyConfig) -> float | None:
    """Mean TripCraft meal score over timed restaurant visits of positive duration."""
    scores = []
    for v in ctx.visits:
        if v.kind == "restaurant" and v.timed and v.item.end > v.item.start:  # type: ignore[union-attr,operator]
            label = _meal_label(v, config)
            gaussian = config.tripcraft.meals.get(label) if label else None
            if gaussian is not None:
                mid = (v.item.start + v.item.end) / 120.0  # type: ignore[union-attr,operator]
                scores.append(tc.meal_score(mid, float(v.item.end - v.item.start), gaussian))  # type: ignore[union-attr,operator]
    return sum(scores) / len(scores) if scores else None


def temporal_attraction(ctx: PlanContext, config: UncertaintyConfig) -> float | None:
    """Mean over days with timed, known attraction visits of (mean duration score x count score)."""
    p = config.tripcraft
    style = tc.persona_style(ctx.query.persona.traveler_type)
    lam = p.attractions_per_day_lambda["adventure" if style > 0 else "other"]
    hours = ctx.db.tables["attractions"].columns["visit_duration_hr"]
    days = []
    for day in ctx.days:
        visits = [v for v in day.visits if v.kind == "attraction"]
        timed = [v for v in visits if v.timed and v.ref is not None]
        if timed:
            durations = [float(v.item.end - v.item.start) for v in timed]  # type: ignore[union-attr,operator]
            vs = [float(hours[v.ref.row]) * 60.0 for v in timed]  # type: ignore[union-attr]
            days.append(tc.day_attraction_score(durations, vs, len(visits), style, p.attraction_sigma_minutes,
                                                p.attraction_k_minutes, lam))
    return sum(days) / len(days) if days else None


def spatial(ctx: PlanContext, config: UncertaintyConfig) -> float | None:
    """Mean spatial score over venue items (not journeys) that state a transit distance."""
    p = config.tripcraft
    scores = [tc.spatial_item_score(v.item.transit_distance_m, p.spatial_near_m, p.spatial_decay_per_m)  # type: ignore[union-attr,arg-type]
              for v in ctx.visits
              if v.item is not None and v.item.transit_distance_m is not None and v.kind != "transport"]
    return sum(scores) / len(scores) if scores else None


def type_sequences(ctx: PlanContext) -> list[list[str]]:
    """Each day's item kinds in order (the tokens of the ordering score)."""
    return [[v.kind for v in day.items] for day in ctx.days]


def persona(ctx: PlanContext) -> float | None:
    """Share of known attraction/restaurant visits matching the persona's keyword tables."""
    pe = ctx.query.persona
    categories = tc.preferred_categories(pe.location_preference, pe.purpose, pe.traveler_type)
    tiers = tc.preferred_tiers(pe.spending)
    att = ctx.db.tables["attractions"].columns["categories"]
    res = ctx.db.tables["restaurants"].columns["price_tier"]
    visited = [v for v in ctx.visits if v.ref is not None]
    return tc.persona_score([att[v.ref.row] for v in visited if v.kind == "attraction"],  # type: ignore[union-attr]
                            [res[v.ref.row] for v in visited if v.kind == "restaurant"],  # type: ignore[union-attr]
                            categories, tiers)


def evaluate(plan: Plan, query: Query, db: Database, config: UncertaintyConfig | None = None,
             reference: Plan | None = None) -> EvaluationReport:
    """Score `plan` for `query` on `db`: commonsense and hard checks, BAS/CATS/TDAS with per-item
    details, the TripCraft metrics (ordering only with a `reference` plan)."""
    config = config or DEFAULT_CONFIG
    ctx = build_context(plan, query, db)
    cost = trip_cost(ctx)
    pois = _poi_details(ctx, config)
    legs = _leg_details(ctx, config)
    crowd = [p.crowd_score for p in pois if p.crowd_score is not None]
    ordering = None
    if reference is not None:
        ordering = tc.ordering_score(type_sequences(ctx), type_sequences(build_context(reference, query, db)))
    return build(EvaluationReport,
        query_id=query.query_id,
        commonsense=commonsense_checks(ctx, config.min_meal_gap_minutes),
        hard=hard_checks(ctx, cost),
        bas=un.absorption_score([p.q for p in pois]),
        cats=sum(crowd) / len(crowd) if crowd else None,
        tdas=un.absorption_score([leg.q for leg in legs]),
        temporal_meal=temporal_meal(ctx, config),
        temporal_attraction=temporal_attraction(ctx, config),
        spatial=spatial(ctx, config),
        ordering=ordering,
        persona=persona(ctx),
        pois=pois, legs=legs, cost=cost)
