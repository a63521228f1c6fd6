"""Natural-language query text from varied templates in the style of the paper's C.1 examples (no LLM).

Every choice of wording comes from the caller's seeded generator, so the same query gets the
same text on every run.
"""

from __future__ import annotations

import datetime as dt

import numpy as np

from utp_env.query import LocalConstraint, Persona, house_rule_requirement

OPENINGS = (
    "Plan a {days}-day trip for {party} from {org} to {where} from {start} to {end}, with a budget of INR {budget}.",
    "Organize a {days}-day itinerary for {party} traveling from {org} to {where}, between {start} and {end}. "
    "The budget is INR {budget}.",
    "Create a detailed {days}-day travel plan for {party} starting from {org} and visiting {where} "
    "between {start} and {end}. The budget is INR {budget}.",
    "We are {party} leaving {org} on {start} and coming back on {end}; please plan {days} days in {where} "
    "within INR {budget}.",
    "Could you put together a {days}-day journey from {org} to {where} for {party}, {start} to {end}, "
    "keeping the total under INR {budget}?",
    "I need a {days}-day itinerary from {org} to {where} for {party}, departing {start} and returning {end}, "
    "on a budget of INR {budget}.",
)
RISK_TEXT = {
    "tolerant": ("Risk Tolerant", "we are relaxed about delays and tight connections",
                 "a lean schedule is fine, we tolerate some risk"),
    "optimized": ("Risk Optimized", "keep sensible buffers for delays and crowds",
                  "balance the schedule against delays and crowds"),
    "averse": ("Risk Averse", "we want generous buffers around every connection and visit",
               "please avoid tight connections; we are risk averse"),
}
HOUSE_RULE_TEXT = {"pets": "pets allowed", "smoking": "smoking allowed", "children": "children allowed"}


def house_rule_clause(house_rule: str) -> str:
    """The stay clause of a house rule: 'pets' -> 'have pets allowed' (the stay must allow it);
    'No_Pets' (appendix C.1's form) -> 'be strictly no pets' (the stay must enforce it)."""
    if house_rule in HOUSE_RULE_TEXT:
        return f"have {HOUSE_RULE_TEXT[house_rule]}"
    rule, must_list = house_rule_requirement(house_rule)
    if must_list and rule.casefold().startswith("no "):
        return f"be strictly {rule.lower()}"
    return f"follow the house rule {rule!r}" if must_list else f"have {rule.lower()} allowed"


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def long_date(date: str, with_year: bool) -> str:
    d = dt.date.fromisoformat(date)
    text = f"{d.strftime('%B')} {ordinal(d.day)}"
    return f"{text}, {d.year}" if with_year else text


def _a(noun: str) -> str:
    """`a`/`an` with the lower-cased noun phrase."""
    low = noun.lower()
    return f"{'an' if low[:1] in 'aeiou' else 'a'} {low}"


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def constraint_sentences(lc: LocalConstraint, rng: np.random.Generator) -> list[str]:
    """One clause per local constraint, wording varied by `rng`."""
    out = []
    stay = []
    if lc.house_type:
        stay.append(f"be {lc.house_type}")
    if lc.house_rule:
        stay.append(house_rule_clause(lc.house_rule))
    if lc.amenities:
        stay.append(f"offer {_join(lc.amenities)}")
    if lc.services:
        stay.append(f"provide {_join(lc.services)} services")
    if stay:
        lead = ("Accommodations should", "The stay must", "Please pick lodging that will")[int(rng.integers(3))]
        out.append(f"{lead} {_join(stay)}.")
    if lc.cuisine:
        lead = ("We would like to try", "Meals should include",
                "Please include restaurants serving")[int(rng.integers(3))]
        out.append(f"{lead} {_join(lc.cuisine)} cuisine.")
    if lc.transportation:
        mode = "flights" if lc.transportation == "no flight" else "cabs"
        out.append(("Please avoid {m}.", "We do not want to take {m}.", "No {m}, please.")[int(rng.integers(3))]
                   .format(m=mode))
    if lc.event_types:
        out.append(f"We want to attend a {_join(lc.event_types)} event.")
    if lc.attraction_categories:
        lead = ("Make sure to include", "We are keen on", "Please plan visits to")[int(rng.integers(3))]
        out.append(f"{lead} {_join(lc.attraction_categories)} attractions.")
    return out


def render_text(*, org: str, where: str, days: int, dates: list[str], people: int, budget: int,
                persona: Persona, risk_profile: str, lc: LocalConstraint, rng: np.random.Generator) -> str:
    """The natural-language request of one query."""
    same_year = dates[0][:4] == dates[-1][:4]
    party = f"{people} {'person' if people == 1 else 'people'}"
    opening = OPENINGS[int(rng.integers(len(OPENINGS)))].format(
        days=days, party=party, org=org, where=where, budget=budget,
        start=long_date(dates[0], not same_year), end=long_date(dates[-1], True))
    risk_label, *risk_phrases = RISK_TEXT[risk_profile]
    if rng.random() < 0.5:
        persona_text = (f"Traveler Type: {persona.traveler_type}; {risk_label}; Spending: {persona.spending}; "
                        f"Purpose: {persona.purpose}; Preference: {persona.location_preference}.")
    else:
        persona_text = (f"I am {_a(persona.traveler_type)} and {_a(persona.spending)}, travelling for "
                        f"{persona.purpose.lower()} and fond of {persona.location_preference.lower()}; "
                        f"{risk_phrases[int(rng.integers(len(risk_phrases)))]}.")
    return " ".join([opening, *constraint_sentences(lc, rng), persona_text])
