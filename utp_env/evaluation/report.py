"""The evaluation report: every check with its reason, every metric, per-item details.

These are the pydantic models at the boundary of the evaluation (they are serialised into
`report.json` and the env's `info`). The evaluator fills them with already-typed values via
`model_construct` in its hot path; their field types document the contract.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from utp_env.itinerary import unvalidated

M = TypeVar("M", bound=BaseModel)


def build(model: type[M], **values: Any) -> M:
    """An instance of `model` from values the evaluator has already typed, without validation.

    Equivalent to `model.model_construct(**values)` when every field is given (the evaluator
    always passes every field; a property test validates dumped reports against the schema),
    but several times cheaper, which matters in the per-item hot path.
    """
    return unvalidated(model, values)

# The paper's ten commonsense checks (Table 8; chronological order is part of the valid PoI list,
# section 3.2), in Table 8's order. They are the ones the pass rates count.
COMMONSENSE_CHECKS: tuple[str, ...] = (
    "within_sandbox", "complete_information", "meal_gaps", "valid_poi_list", "diverse_events",
    "within_current_city", "reasonable_city_route", "diverse_restaurants", "diverse_attractions",
    "non_conflicting_transport",
)
# The parts of valid_poi_list, each reported in EvaluationReport.subchecks as "valid_poi_list/<part>".
VALID_POI_LIST_PARTS: tuple[str, ...] = ("stays_and_transfers", "chronological_order")
# The parts of complete_information, reported as "complete_information/<part>" (which ones depends on
# `EvaluationReadings.complete_information`; complete_information.complete_information_parts).
# Rules the paper does not have: reported in EvaluationReport.extra, never counted in a pass rate.
EXTRA_CHECKS: tuple[str, ...] = ("transit_before_departure", "service_schedule", "overlapping_legs", "timed_items",
                                 "open_hours", "transit_distances")
# The checks that gate the hard constraints (TravelPlanner evaluation/eval.py: hard constraints are
# evaluated only for a plan whose "complete information" and "within sandbox" pass).
HARD_GATE: tuple[str, ...] = ("complete_information", "within_sandbox")
HARD_CHECKS: tuple[str, ...] = (
    "budget", "house_rule", "house_type", "amenities", "services", "cuisine", "transportation",
    "event_type", "attraction_type",
)
METRICS: tuple[str, ...] = (
    "bas", "cats", "tdas", "temporal_meal", "temporal_attraction", "spatial", "ordering", "persona",
)


class CheckResult(BaseModel):
    """Outcome of one constraint check: passed True/False, or None when it does not apply."""

    model_config = ConfigDict(extra="forbid")

    passed: bool | None = None
    reason: str | None = Field(default=None, description="Why it failed (or why it does not apply)")


def check_result(passed: bool | None, reason: str | None) -> CheckResult:
    """A CheckResult of values already of its types (`passed` a bool or None, `reason` a str or
    None, as every caller passes them): what `build` gives (every check of every plan makes one)."""
    return unvalidated(CheckResult, {"passed": passed, "reason": reason})


def pass_rate(checks: Mapping[str, CheckResult]) -> float | None:
    """Share of applicable checks (passed is not None) that passed; None when none applies."""
    applicable = [c.passed for c in checks.values() if c.passed is not None]
    return sum(applicable) / len(applicable) if applicable else None


class PoiDetail(BaseModel):
    """BAS and CATS inputs and outcome of one attraction or restaurant visit."""

    model_config = ConfigDict(extra="forbid")

    day: int = Field(description="1-based day number")
    name: str
    venue_type: str = Field(description="attraction | restaurant")
    start: int = Field(description="Minutes from the day's midnight")
    end: int
    v: float = Field(description="Base visit duration, minutes")
    cf: float = Field(description="Congestion factor of the crowd tier at the start hour")
    tier: str | None = Field(default=None, description="Crowd level at the start hour; None without data")
    buffer: float = Field(description="B = (end - start) - v, minutes")
    range_low: float
    range_high: float
    q: float = Field(description="Normalised deviation of B from the range (0 inside)")
    crowd_score: float | None = Field(default=None, description="CATS score; None without crowd windows")
    crowd_intensity: float | None = None


class LegDetail(BaseModel):
    """TDAS inputs and outcome of one transport leg."""

    model_config = ConfigDict(extra="forbid")

    day: int
    mode: str
    number: str | None
    origin: str
    destination: str
    found: bool = Field(description="Whether the service (or road route) is in the database")
    expected_delay: float = Field(description="E[D], minutes")
    measured: bool = Field(description="False when E[D] is the mode's median fallback")
    hist_duration: float
    hist_source: str = Field(description="'database' or 'stated schedule' (service not found)")
    planned_duration: float
    buffer: float
    range_low: float
    range_high: float
    q: float


class CostBreakdown(BaseModel):
    """Trip cost in INR by component, as the budget check computes it."""

    model_config = ConfigDict(extra="forbid")

    transport: float = 0.0
    stays: float = 0.0
    meals: float = 0.0
    attractions: float = 0.0
    events: float = 0.0
    total: float = 0.0


RETIRED_FIELDS = ("units", "unit_sums")
"""Fields older reports hold that the report no longer has (read and dropped)."""


class EvaluationReport(BaseModel):
    """Everything the evaluator found about one plan for one query."""

    model_config = ConfigDict(extra="forbid")

    query_id: str
    commonsense: dict[str, CheckResult] = Field(description="The paper's ten checks (COMMONSENSE_CHECKS)")
    hard: dict[str, CheckResult] = Field(description="Budget and the constraints the query sets (HARD_CHECKS)")
    subchecks: dict[str, CheckResult] = Field(
        default_factory=dict,
        description="Parts of a composite check, keyed 'check/part' (valid_poi_list, complete_information)")
    extra: dict[str, CheckResult] = Field(
        default_factory=dict, description="Rules the paper does not have (EXTRA_CHECKS); not in any pass rate")
    bas: float | None = None
    cats: float | None = None
    tdas: float | None = None
    temporal_meal: float | None = None
    temporal_attraction: float | None = None
    spatial: float | None = None
    ordering: float | None = None
    persona: float | None = None
    pois: list[PoiDetail] = Field(default_factory=list)
    legs: list[LegDetail] = Field(default_factory=list)
    cost: CostBreakdown = Field(default_factory=CostBreakdown)

    @model_validator(mode="before")
    @classmethod
    def _drop_reward_counts(cls, data: Any) -> Any:
        """Reports written before the env's reward had its own module (utp_env/env/reward/) carried
        its counts (`units`, `unit_sums`); a record that has them is read with them dropped."""
        if isinstance(data, dict) and any(name in data for name in RETIRED_FIELDS):
            return {key: value for key, value in data.items() if key not in RETIRED_FIELDS}
        return data

    @property
    def commonsense_pass(self) -> bool:
        """No commonsense check failed (a check with nothing to check passes, as in TravelPlanner)."""
        return all(c.passed is not False for c in self.commonsense.values())

    @property
    def hard_evaluated(self) -> bool:
        """Whether the hard constraints count: complete information and within sandbox did not fail
        (TravelPlanner evaluation/eval.py evaluates hard constraints only then)."""
        return all(self.commonsense[name].passed is not False for name in HARD_GATE if name in self.commonsense)

    @property
    def hard_pass(self) -> bool:
        """The hard constraints count (`hard_evaluated`) and none of those the query sets failed."""
        return self.hard_evaluated and all(c.passed is not False for c in self.hard.values())

    @property
    def final_pass(self) -> bool:
        """Every commonsense and hard check passed (extra checks do not count)."""
        return self.commonsense_pass and self.hard_pass

    def metrics(self) -> dict[str, float | None]:
        """The eight scalar metrics by name."""
        return {name: getattr(self, name) for name in METRICS}


MAX_REASONS = 3
UNSHOWN = ""
"""What a check may append for a problem past the first `MAX_REASONS` (`len(problems) >= MAX_REASONS`):
`verdict` counts it but never shows its text, so a check whose problems are many (a distance wrong on
every item) need not write each one's text."""


def verdict(problems: list[str], applicable: bool = True, why_not: str = "nothing to check") -> CheckResult:
    """True without problems, False naming the first few, None when the check does not apply."""
    if problems:
        more = f" (+{len(problems) - MAX_REASONS} more)" if len(problems) > MAX_REASONS else ""
        return check_result(False, "; ".join(problems[:MAX_REASONS]) + more)
    if not applicable:
        return check_result(None, why_not)
    return check_result(True, None)


def combine(parts: dict[str, CheckResult]) -> CheckResult:
    """One verdict from the parts of a composite check: False if any part fails (its reasons
    prefixed with the part's name), True if some part passed, None if no part applies."""
    failed = [(name, c) for name, c in parts.items() if c.passed is False]
    if failed:
        reason = "; ".join(f"{name.replace('_', ' ')}: {c.reason}" for name, c in failed)
        return check_result(False, reason)
    if any(c.passed for c in parts.values()):
        return check_result(True, None)
    return check_result(None, "; ".join(c.reason or "" for c in parts.values()))
