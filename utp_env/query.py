"""The travel query (DESIGN section 3): who travels where, when, with what budget and constraints."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Level = Literal["easy", "medium", "hard"]
RiskProfile = Literal["tolerant", "optimized", "averse"]
Horizon = Literal[3, 5, 7]


class Persona(BaseModel):
    """The four persona dimensions of TripCraft (paper Table 8)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    traveler_type: str = Field(description="e.g. 'Laidback Traveler', 'Adventure Seeker'")
    purpose: str = Field(description="e.g. 'Relaxation', 'Cultural Exploration'")
    spending: str = Field(description="e.g. 'Luxury Traveler', 'Economical Traveler'")
    location_preference: str = Field(description="e.g. 'Beaches', 'Historical Sites'")


class LocalConstraint(BaseModel):
    """Hard constraints a query may set; None (or empty) means the query does not set it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    house_rule: str | None = Field(
        default=None, description="'pets' / 'smoking' / 'children': the stay must allow it (TravelPlanner form); "
        "'No_Pets' / 'No pets' (UTP-Bench C.1 form): the stay must enforce that rule; see house_rule_requirement")
    house_type: str | None = Field(default=None, description="Required stay type, e.g. 'Family Friendly'")
    amenities: list[str] = Field(default_factory=list, description="Amenities every stay must offer")
    services: list[str] = Field(default_factory=list, description="Services every stay must offer")
    cuisine: list[str] = Field(default_factory=list, description="Cuisine groups the meals must cover")
    transportation: Literal["no flight", "no cab"] | None = Field(default=None, description="Forbidden mode")
    event_types: list[str] = Field(default_factory=list, description="Event segments to attend")
    attraction_categories: list[str] = Field(default_factory=list, description="Categories to visit")

    def is_set(self, name: str) -> bool:
        value = getattr(self, name)
        return bool(value)


def house_rule_requirement(house_rule: str) -> tuple[str, bool]:
    """How a query's house rule reads: (rule, listed), the stay rule in the database's spelling and
    whether a stay must list it (True) or must not list it (False).

    - An activity, TravelPlanner's form (`pets`, `smoking`, `children`): the travellers need it
      allowed, so the stay must NOT list the forbidding rule: 'pets' -> ('No pets', False).
    - A rule, UTP-Bench appendix C.1's form (`No_Pets`, `No pets`, `no-smoking`): the stay must
      enforce it ("strictly No Pets"), so it must list it: 'No_Pets' -> ('No pets', True).
    - Any other rule (`Safety Conduct`): the stay must list it.

    Underscores and hyphens read as spaces and case does not matter.
    """
    from utp_env.tools.schema import HOUSE_RULE_FORBIDS, HOUSE_RULES

    key = " ".join(house_rule.replace("_", " ").replace("-", " ").split()).casefold()
    for activity, rule in HOUSE_RULE_FORBIDS.items():
        if key == activity.casefold():
            return rule, False
    for rule in HOUSE_RULES:
        if key == " ".join(rule.replace("-", " ").split()).casefold():
            return rule, True
    return house_rule, True


class Query(BaseModel):
    """One benchmark query. `dest` is a city for 3 days, a state for 5 and 7 days."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    query_id: str
    org: str = Field(description="Origin city; the trip starts and ends here")
    dest: str = Field(description="Destination city (3 days) or state (5 and 7 days)")
    visiting_city_number: int = Field(ge=1, le=3)
    days: Horizon
    dates: list[str] = Field(description="One YYYY-MM-DD date per day")
    people_number: int = Field(ge=1, le=8)
    budget_inr: float = Field(gt=0)
    level: Level
    persona: Persona
    risk_profile: RiskProfile
    local_constraint: LocalConstraint = Field(default_factory=LocalConstraint)
    text: str = Field(description="The natural-language request")
    split: Literal["validation", "test"] | None = None
