"""Prompt texts of the LLM baselines, in our own words.

Two prompt styles:

- `paper` (the default): the content of UTP-Bench appendix C.2 (`uncertainty=True`) or C.4
  (`uncertainty=False`). C.4 is the planner's role, the day-format rules and a one-shot example.
  C.2 adds the uncertainty heuristics (15-30 extra minutes for a visit in a High or Above average
  crowd window, trains plus their last-month average delay, 30-45 minutes after a flight with a
  poor on-time record, road legs as travel time plus the estimated delay), what each risk profile
  asks for, the usual meal times and attractions per day, a guide to the data and a JSON-only
  reply. Neither states the metric formulas.
- `metric_aware` (an ablation, `configs/agents/direct_metric_aware.yaml`): our rules of a valid
  plan plus the exact BAS/TDAS ranges, E[D] per leg and the congestion factors, taken from
  `UncertaintyConfig` so the prompt quotes the parameters the metrics use.

A direct prompt is: instructions, a one-shot example plan in the paper's JSON day format (made
from our own `Plan` model by `plan_to_json`, so it always parses), the gathered reference
information, the query and the persona. The ATLAS roles (search agent, constraint manager,
planner, checker, search advisor) get short role prompts of their own.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from typing import Literal

from utp_env.config import UncertaintyConfig
from utp_env.itinerary import MINUTES_PER_DAY, Activity, Day, Meal, Plan, PlanItem, TransportLeg, VenueType, parse_hhmm
from utp_env.query import Query

PromptStyle = Literal["paper", "metric_aware"]
PROMPT_STYLES: tuple[str, ...] = ("paper", "metric_aware")

# ---------------------------------------------------------------- paper style (C.2 / C.4 content)

PAPER_ROLE = (
    "You plan trips within India. From the reference information, the query and the traveller persona "
    "below, write a detailed day-by-day travel plan that names the concrete services and places: flight or "
    "train numbers (such as 6E-284 or 12191), restaurants and stays. Take every detail from the reference "
    "information and nothing from elsewhere, follow the format of the example exactly, and keep the plan "
    "sensible.")

PAPER_RULES = """How to fill in the plan:
- Write "-" in a field that does not apply; for instance nothing is planned once the traveller is back
  in the origin city.
- On a day that moves from one city to another, write the current city as "from A to B", as the
  example does.
- Add the events that take place on a day, if there are any.
- point_of_interest_list is the day's places in the order they are visited (stays, attractions,
  restaurants), each with the time it starts and the time it ends.
- Each day begins and ends at the stay where the traveller sleeps."""

PAPER_UNCERTAINTY = """Plan for delays and crowds. The reference information holds historical figures; use them to
build slack into the schedule:
1. Attractions and restaurants: the crowd windows show how busy a place is hour by hour. When a visit
   falls in a High (H) or Above average (AA) window, make it 15 to 30 minutes longer than usual. Keep
   away from a venue's peak window where you can.
2. Buses and cabs: count the trip as its usual travel time plus the route's estimated historical delay
   (estimated_delay_min), so the arrival you plan with is realistic.
3. Trains: look up the train's average delay over the past month (avg_delay_1m, or the nearest delay
   figure given) and add it to the arrival time before planning what comes next.
4. Flights: look at the on-time record and delay statistics (otp_* and delay_* columns). If a flight
   is often late or likely to be delayed, leave 30 to 45 minutes after its arrival before the next item.
Write the arrival you plan with as the Arrival Time; you may add the timetable's arrival in a remark,
e.g. "Arrival Time: 08:15 (scheduled 07:40)"."""

PAPER_RISK = """The traveller's risk profile says how much slack to keep. Risk tolerant: a tighter schedule with
little extra time. Risk optimized: a balanced schedule with moderate slack. Risk averse: a cautious
schedule with generous safety margins. This traveller is {risk}."""

RISK_LABELS = {"tolerant": "risk tolerant", "optimized": "risk optimized", "averse": "risk averse"}

PAPER_HABITS = """Usual rhythm of a day: breakfast at about 09:40 for some 50 minutes, lunch at about 14:20 for
around an hour, dinner at about 20:45 for roughly an hour and a quarter. Laid-back travellers usually
see one attraction a day, now and then more; adventure seekers usually see two or three, sometimes more."""

PAPER_DATA_GUIDE = """How to read the reference information: every tool result is a small table (a heading, a
`|`-separated header, one line per row). Times are 24-hour local HH:MM; `+1 day` means the next day.
A crowd window `HH:00-HH:59 | level` covers whole hours, both ends included (11:00-16:59 is the hours 11
to 16); levels are L Low, BA Below average, A Average, AA Above average, H High. `quiet hours` are the
calmest hours (good for short waits), `peak window` the busiest stretch. `-` means unknown or not
applicable. Do not assume anything the tables do not say."""

PAPER_OUTPUT = """Reply with the plan only: one JSON array with one object per day, keyed as in the example. No
explanations, no markdown, no text outside the JSON."""

# ---------------------------------------------------------------- metric-aware style (ablation)

ROLE = (
    "You are an experienced travel planner for trips within India. From the reference information, the "
    "query and the traveller persona below, write a complete day-by-day itinerary that names concrete "
    "services and venues: flight or train numbers (such as 6E-284 or 12191), bus ids, stays, restaurants, "
    "attractions and events. Use ONLY names, numbers and times that appear in the reference information, "
    "spelled exactly as listed there; never invent a venue or a service.")

RULES = """Rules of a valid plan:
- The trip is a closed loop: day 1 leaves the origin city, the last day returns to it. On a day that
  changes city write "current_city": "from A to B" and give the leg in "transportation".
- Take the departure time of a flight, train or bus from its schedule exactly; the service must run
  on that date's weekday. Respect a forbidden mode ("no flight", "no cab").
- Each day's point_of_interest_list is ordered and timed ("Name, <stay|visit|check-in|checkout|arrive>
  from HH:MM to HH:MM"). Every day except the last starts and ends at the stay; check in after
  arriving and check out before leaving; include arriving at the airport or station before a departure.
  Nothing happens in a city before you arrive there, and no two items overlap.
- Leave at least {gap_h:g} hours between the end of one meal and the start of the next. Typical meals:
  breakfast around 09:40 for ~{bf:g} min, lunch around 14:20 for ~{lu:g} min, dinner around 20:45 for ~{di:g} min.
- Do not repeat a restaurant, attraction or event anywhere in the trip. Keep one stay per city.
- Honour every hard constraint of the query (house rule, house type, amenities, services, cuisines,
  event types, attraction categories) and keep the total cost within the budget: fares x people,
  cabs per vehicle of 4, rooms x nights, meals, entry fees and event tickets.
- Laid-back travellers see about one attraction a day; adventure seekers two or three.
- Use "-" for a field that does not apply (for example no dinner after returning home)."""

UNCERTAINTY = """Plan for uncertainty: every duration you write must contain a buffer sized to the
risk profile of the traveller ({risk}). The acceptable buffer is a range of multiples of an expected value:
{ranges}. This traveller's range is {low:g}x to {high:g}x.
- Transport legs: the expected delay E[D] is given in the exp_delay_min column (flights from on-time
  statistics, trains from their 1-week..1-year delay history, buses and cabs from the road route's
  historical traffic delay). Write the arrival you count on as the Arrival Time and the timetable
  arrival in a remark, e.g. "Departure Time: 06:10, Arrival Time: 08:15 (scheduled 07:40)", and start
  nothing in the destination before it: planned minus scheduled arrival should lie in
  [{low:g}, {high:g}] x E[D]. For a cab or bus the buffer is measured against the free-flow drive time.
- Attraction and restaurant visits: the expected visit time is the base duration (attractions: visit_hr
  of the venue; meals: breakfast {bf:g}, lunch {lu:g}, dinner {di:g} min) times the congestion factor of the
  crowd level at the hour the visit starts ({factors}; Low without crowd data). The extra time beyond the
  base duration should lie in [{low:g}, {high:g}] x base x factor.
- Prefer quiet hours, avoid the peak window of each venue (see crowd_profile); a visit that overlaps a
  crowded window is scored worse than one in quiet hours."""

NO_UNCERTAINTY = "Write scheduled arrival times as listed, and plan realistic durations for each visit."

FORMAT_GUIDE = """How to read the reference information: each tool result is a small table, a heading,
a `|`-separated header and one line per row. Times are 24-hour local HH:MM; `+1 day` means the next day.
Crowd windows are `HH:00-HH:59 | level` with levels L Low, BA Below average, A Average, AA Above average,
H High; hours are inclusive (11:00-16:59 covers the hours 11 to 16). `quiet hours` are the least crowded
hours, `peak window` the busiest stretch. `exp_delay_min` is the expected delay E[D] in minutes. `-` means
unknown or not applicable. Do not assume anything the tables do not say."""

OUTPUT = """Answer with the plan only: one JSON array with one object per day and the keys
"days", "current_city", "transportation", "breakfast", "attraction", "lunch", "dinner", "accommodation",
"event", "point_of_interest_list" exactly as in the example. No markdown, no comments, no text outside the JSON."""


def meal_minutes(cfg: UncertaintyConfig) -> tuple[float, float, float]:
    """Base minutes of breakfast, lunch and dinner in `cfg`."""
    meals = cfg.restaurant_meals
    return meals["breakfast"].base_minutes, meals["lunch"].base_minutes, meals["dinner"].base_minutes


def rules_text(cfg: UncertaintyConfig) -> str:
    """The metric-aware style's rules of a valid plan (also the tool-calling agent's and ATLAS's
    constraint manager's commonsense list)."""
    bf, lu, di = meal_minutes(cfg)
    return RULES.format(gap_h=cfg.min_meal_gap_minutes / 60, bf=bf, lu=lu, di=di)


def metric_uncertainty_text(query: Query, cfg: UncertaintyConfig) -> str:
    """The metric-aware uncertainty section: the BAS/TDAS ranges and factors of `cfg` (an ablation)."""
    bf, lu, di = meal_minutes(cfg)
    ranges = "; ".join(f"risk {name} {r.low:g}-{r.high:g}x" for name, r in cfg.risk_multipliers.items())
    factors = ", ".join(f"{level} {f:g}" for level, f in cfg.congestion_factor.items())
    mine = cfg.risk_multipliers[query.risk_profile]
    return UNCERTAINTY.format(risk=query.risk_profile, ranges=ranges, low=mine.low, high=mine.high, bf=bf, lu=lu,
                              di=di, factors=factors)


def uncertainty_text(query: Query, cfg: UncertaintyConfig | None = None) -> str:
    """The paper-style uncertainty section (C.2's heuristics and what the traveller's risk profile
    asks for); `cfg` is accepted for symmetry with `metric_uncertainty_text` and not used."""
    return "\n\n".join([PAPER_UNCERTAINTY, PAPER_RISK.format(risk=RISK_LABELS[query.risk_profile])])


def instructions(query: Query, cfg: UncertaintyConfig, uncertainty: bool = True,
                 style: PromptStyle = "paper") -> str:
    """The system instructions of a planner call.

    `paper`: role and day-format rules (C.4), plus with `uncertainty` the heuristics, risk profile,
    day rhythm, data guide and JSON-only reply of C.2. `metric_aware`: role, rules, the metric
    uncertainty section (or a one-line plain variant), data guide and output format.
    """
    if style == "paper":
        parts = [PAPER_ROLE, PAPER_RULES]
        if uncertainty:
            parts += [uncertainty_text(query, cfg), PAPER_HABITS, PAPER_DATA_GUIDE, PAPER_OUTPUT]
        return "\n\n".join(parts)
    if style != "metric_aware":
        raise ValueError(f"unknown prompt style {style!r}; use one of {', '.join(PROMPT_STYLES)}")
    parts = [ROLE, rules_text(cfg), metric_uncertainty_text(query, cfg) if uncertainty else NO_UNCERTAINTY,
             FORMAT_GUIDE, OUTPUT]
    return "\n\n".join(parts)


def query_text(query: Query) -> str:
    """The query, the persona, the risk profile and the structured hard constraints."""
    p = query.persona
    lc = query.local_constraint.model_dump(exclude_defaults=True)
    where = query.dest if query.days == 3 else f"{query.visiting_city_number} cities of {query.dest}"
    lines = [
        f"Query: {query.text}",
        f"Trip: {query.days} days from {query.org} to {where}, dates {', '.join(query.dates)}, "
        f"{query.people_number} people, budget INR {query.budget_inr:g}.",
        f"Traveller persona: type {p.traveler_type}; purpose {p.purpose}; spending {p.spending}; "
        f"location preference {p.location_preference}; risk profile {query.risk_profile}.",
        "Hard constraints: " + (json.dumps(lc, ensure_ascii=False) if lc else "none besides the budget."),
    ]
    return "\n".join(lines)


def estimated_tokens(text: str) -> int:
    """A deterministic size estimate of a prompt in tokens: ceil(characters / 4) (no tokenizer needed)."""
    return math.ceil(len(text) / 4)


# ---------------------------------------------------------------- the one-shot example


def _t(hhmm: str, next_day: bool = False) -> int:
    return parse_hhmm(hhmm) + (MINUTES_PER_DAY if next_day else 0)


def _visit(name: str, start: str, end: str, kind: VenueType, note: str | None, meal: Meal | None = None,
           stop: str | None = None, dist_m: float | None = None) -> PlanItem:
    return PlanItem(name=name, activity="visit", start=_t(start), end=_t(end), venue_type=kind, meal=meal,
                    note=note, transit_stop=stop, transit_distance_m=dist_m)


def _stay(name: str, activity: Activity, start: str, end: str, next_day: bool = False) -> PlanItem:
    return PlanItem(name=name, activity=activity, start=_t(start), end=_t(end, next_day=next_day),
                    venue_type="accommodation")


def paper_example_plan(uncertainty: bool = True) -> Plan:
    """A short 3-day plan in the spirit of the paper's one-shot example (risk profile 'optimized').

    Meals at the usual times and lengths; with `uncertainty` the heuristics show: a flight with a
    poor on-time record gets 35 minutes before the next item, a visit in an Above average or High
    crowd window 20 minutes more, a punctual flight none. Without it (C.4) every time is the
    timetable's or the usual length. Names are illustrative.
    """
    stay = "Radisson Blu Hotel Indore"
    u = uncertainty

    def note(text: str) -> str | None:
        return text if u else None

    return Plan(query_id="example", source="hand-made example", days=[
        Day(day=1, date="2025-11-20", cities=["Mumbai", "Indore"],
            transport=[TransportLeg(mode="flight", number="6E-5312", origin="Mumbai", destination="Indore",
                                    dep=_t("06:10"), arr=_t("07:40"), planned_arr=_t("08:15") if u else None)],
            attractions=["Lal Baag Palace"], lunch="Nafees Restaurant", dinner="Shreemaya Celebration",
            accommodation=stay,
            items=[PlanItem(name="Mumbai Airport", activity="arrive", start=_t("04:40"), end=_t("05:10"),
                            venue_type="transit"),
                   PlanItem(name=stay, activity="check-in", start=_t("08:45") if u else _t("08:15"),
                            end=_t("09:15") if u else _t("08:45"), venue_type="accommodation",
                            transit_stop="Palasia Square", transit_distance_m=600),
                   _visit("Lal Baag Palace", "09:40", "11:40", "attraction", note("quiet morning hours"),
                          stop="Lal Bagh", dist_m=300),
                   _visit("Nafees Restaurant", "14:20", "15:40" if u else "15:20", "restaurant",
                          note("+20 min: Above average crowd at lunch time"), meal="lunch"),
                   _visit("Shreemaya Celebration", "20:45", "22:00", "restaurant", None, meal="dinner"),
                   _stay(stay, "stay", "22:15", "07:30", next_day=True)]),
        Day(day=2, date="2025-11-21", cities=["Indore"],
            breakfast="Apna Sweets", attractions=["Rajwada Palace"], lunch="Guru Kripa Restaurant",
            dinner="Mediterra Restaurant", accommodation=stay,
            items=[_stay(stay, "stay", "07:30", "09:20"),
                   _visit("Apna Sweets", "09:40", "10:30", "restaurant", None, meal="breakfast"),
                   _visit("Rajwada Palace", "11:00", "12:50" if u else "12:30", "attraction",
                          note("+20 min: High crowd around noon"), stop="Rajwada", dist_m=150),
                   _visit("Guru Kripa Restaurant", "14:20", "15:20", "restaurant", None, meal="lunch"),
                   _visit("Mediterra Restaurant", "20:45", "22:00", "restaurant", None, meal="dinner"),
                   _stay(stay, "stay", "22:15", "07:30", next_day=True)]),
        Day(day=3, date="2025-11-22", cities=["Indore", "Mumbai"],
            transport=[TransportLeg(mode="flight", number="6E-5318", origin="Indore", destination="Mumbai",
                                    dep=_t("14:30"), arr=_t("16:05"))],
            breakfast="Vijay Chaat House",
            items=[_stay(stay, "stay", "07:30", "09:20"),
                   _visit("Vijay Chaat House", "09:40", "10:30", "restaurant", None, meal="breakfast"),
                   _stay(stay, "checkout", "10:45", "11:15"),
                   PlanItem(name="Indore Airport", activity="arrive", start=_t("12:30"), end=_t("13:00"),
                            venue_type="transit")]),
    ])


def metric_example_plan() -> Plan:
    """A short, valid, well-buffered 3-day plan (risk profile 'optimized', multipliers 1.0-1.25).

    Flights with E[D] 30 min get a 35-min planned-arrival buffer; each visit's extra time is
    1.0-1.25 x base x congestion factor (e.g. breakfast 50 min at Low crowd -> +55 min); meals are
    at least 4 h apart; the airport is reached 70-90 min before departure. Names are illustrative.
    """
    stay = "Radisson Blu Hotel Indore"
    return Plan(query_id="example", source="hand-made example", days=[
        Day(day=1, date="2025-11-20", cities=["Mumbai", "Indore"],
            transport=[TransportLeg(mode="flight", number="6E-5312", origin="Mumbai", destination="Indore",
                                    dep=_t("06:10"), arr=_t("07:40"), planned_arr=_t("08:15"))],
            attractions=["Lal Baag Palace"], lunch="Nafees Restaurant", dinner="Shreemaya Celebration",
            accommodation=stay,
            items=[PlanItem(name="Mumbai Airport", activity="arrive", start=_t("04:40"), end=_t("05:10"),
                            venue_type="transit"),
                   PlanItem(name=stay, activity="check-in", start=_t("08:45"), end=_t("09:15"),
                            venue_type="accommodation", transit_stop="Palasia Square", transit_distance_m=600),
                   _visit("Lal Baag Palace", "09:30", "13:30", "attraction",
                          "base 120 min, Low crowd in the morning, +120 min buffer", stop="Lal Bagh", dist_m=300),
                   _visit("Nafees Restaurant", "13:45", "16:05", "restaurant",
                          "base 60 min, Below average crowd, +80 min buffer", meal="lunch"),
                   _visit("Shreemaya Celebration", "20:15", "22:50", "restaurant",
                          "base 75 min, Low crowd, +80 min buffer", meal="dinner"),
                   PlanItem(name=stay, activity="stay", start=_t("23:00"), end=_t("07:30", next_day=True),
                            venue_type="accommodation")]),
        Day(day=2, date="2025-11-21", cities=["Indore"],
            breakfast="Apna Sweets", attractions=["Rajwada Palace"], lunch="Guru Kripa Restaurant",
            dinner="Mediterra Restaurant", accommodation=stay,
            items=[PlanItem(name=stay, activity="stay", start=_t("07:30"), end=_t("08:00"),
                            venue_type="accommodation"),
                   _visit("Apna Sweets", "08:15", "10:00", "restaurant",
                          "base 50 min, Low crowd, +55 min buffer", meal="breakfast"),
                   _visit("Rajwada Palace", "10:30", "13:45", "attraction",
                          "base 90 min, visited before its 16:00-18:59 peak, +105 min buffer", stop="Rajwada",
                          dist_m=150),
                   _visit("Guru Kripa Restaurant", "14:00", "16:20", "restaurant",
                          "base 60 min, Below average crowd, +80 min buffer", meal="lunch"),
                   _visit("Mediterra Restaurant", "20:30", "23:05", "restaurant",
                          "base 75 min, Low crowd, +80 min buffer", meal="dinner"),
                   PlanItem(name=stay, activity="stay", start=_t("23:15"), end=_t("07:30", next_day=True),
                            venue_type="accommodation")]),
        Day(day=3, date="2025-11-22", cities=["Indore", "Mumbai"],
            transport=[TransportLeg(mode="flight", number="6E-5318", origin="Indore", destination="Mumbai",
                                    dep=_t("14:30"), arr=_t("16:05"), planned_arr=_t("16:40"))],
            breakfast="Vijay Chaat House",
            items=[PlanItem(name=stay, activity="stay", start=_t("07:30"), end=_t("08:00"),
                            venue_type="accommodation"),
                   _visit("Vijay Chaat House", "08:15", "10:00", "restaurant",
                          "base 50 min, Low crowd, +55 min buffer", meal="breakfast"),
                   PlanItem(name=stay, activity="checkout", start=_t("10:15"), end=_t("10:45"),
                            venue_type="accommodation"),
                   PlanItem(name="Indore Airport", activity="arrive", start=_t("12:30"), end=_t("13:00"),
                            venue_type="transit")]),
    ])


def example_plan(style: PromptStyle = "paper", uncertainty: bool = True) -> Plan:
    """The one-shot example plan of a prompt style (the metric-aware one always shows buffers)."""
    return metric_example_plan() if style == "metric_aware" else paper_example_plan(uncertainty)


@lru_cache(maxsize=4)
def example_block(style: PromptStyle = "paper", uncertainty: bool = True) -> str:
    """The one-shot example: a query, its persona and a plan in the paper's JSON format."""
    from utp_env.plan_format import plan_to_json

    return "\n".join([
        "****** Example (names are illustrative; use only names from the reference information) ******",
        EXAMPLE_QUERY,
        "Travel plan:",
        plan_to_json(example_plan(style, uncertainty), indent=None),
        "****** End of example ******",
    ])


EXAMPLE_QUERY = ("Query: Plan a 3-day trip for 2 people from Mumbai to Indore from 2025-11-20 to 2025-11-22 "
                 "with a budget of INR 30000.\nTraveller persona: type Culture Enthusiast; purpose Cultural "
                 "Exploration; spending Moderate; location preference Historical Sites; risk profile optimized.")


# ---------------------------------------------------------------- ATLAS roles

SEARCH_AGENT = """You are the search agent of a travel-planning team. Your job is to collect, with the lookup
tools, every fact the planner will need for the query below: the cities to visit (list_cities for a state),
transport for each leg on its date (search_flights, search_trains, search_buses, cab_route) with delays
(delay_stats), stays that meet the stay constraints (search_stays), restaurants (search_restaurants, by the
required cuisines), attractions (search_attractions), events in the travel dates (search_events), and crowd
profiles of candidate venues (crowd_profile). Call several tools at once when they are independent. When
you have gathered enough, answer with a short text saying so and call no tool."""

SEARCH_ADVICE = """The team could not build a valid plan from the information gathered so far. The search
advisor suggests: {advice}
Run the searches needed to fill these gaps, then answer without a tool call."""

CONSTRAINT_MANAGER = """You are the constraint manager of a travel-planning team. From the query and the
information gathered, list every constraint a valid plan must satisfy, as JSON with two arrays:
{{"explicit": [...], "implicit": [...]}}.
- explicit: what the query states (route and dates, people, budget in INR, house rule, house type, amenities,
  services, cuisines, transport restrictions, event types, attraction categories), made concrete with the
  facts found (e.g. "the stay in Pune must allow pets: candidates X, Y").
- implicit: commonsense rules every plan must keep. Always include these:
{rules}
Answer with the JSON only."""

PLANNER_EXTRA = """Constraints identified by the constraint manager (all must hold):
{constraints}"""

REVISE = """The checker rejected your previous plan:
{feedback}
Write the complete corrected plan (the whole JSON array, not only the changes)."""

CHECKER = """You are the checker of a travel-planning team. Verify the candidate plan below against the
constraints and the gathered information: every name and number must appear in the information, times must
match the schedules, the route must be a closed loop, items must not overlap, meals at least {gap_h:g} hours
apart, no venue repeated, every hard constraint met and the total cost within the budget.
Answer with JSON only: {{"verdict": "pass" | "fail" | "unsatisfiable", "feedback": "<what is wrong and how
to fix it>"}}. Use "unsatisfiable" only when no valid plan can be built from the information gathered
(for example no transport, stay or restaurant meeting a constraint was found), and say what is missing."""

SEARCH_ADVISOR = """You are the search advisor of a travel-planning team. The checker found that no valid
plan can be built from the information gathered so far. Its feedback: {feedback}
Propose the searches that would fill the gap (which tools, which cities, dates and filters; alternatives such as
other cities of the state, other modes, relaxed filters). Answer in a few short lines."""


def checker_text(cfg: UncertaintyConfig) -> str:
    return CHECKER.format(gap_h=cfg.min_meal_gap_minutes / 60)


def constraint_manager_text(cfg: UncertaintyConfig) -> str:
    return CONSTRAINT_MANAGER.format(rules=rules_text(cfg).split("\n", 1)[1])
