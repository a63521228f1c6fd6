"""A tiny hand-made world (two cities, their services and venues), its queries and a plan that passes every
check: the evaluation's and the env's tests build on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from utp_env.itinerary import Day, Plan, PlanItem, TransportLeg, parse_hhmm
from utp_env.query import LocalConstraint, Persona, Query
from utp_env.tools.database import Database
from utp_env.tools.sandbox.writer import write_table
from utp_env.tools.schema import TABLES

PAPER = Path(__file__).resolve().parent / "data" / "paper_plans"

FLIGHT_STATS = dict(otp_total=100, otp_on_time=78, otp_late=10, otp_very_late=5, otp_excessive=5,
                    otp_cancelled=2, otp_diverted=0, delay_avg_min=30, delay_std_min=10, delay_max_min=200)

TINY: dict[str, list[dict[str, Any]]] = {
    "cities": [
        dict(city="Vadodara", state="Gujarat", latitude=22.3, longitude=73.2, population=1_800_000,
             has_crowd_data=True),
        dict(city="Surat", state="Gujarat", latitude=21.2, longitude=72.8, population=4_500_000, has_crowd_data=True),
        dict(city="Pune", state="Maharashtra", latitude=18.5, longitude=73.9, population=3_100_000,
             has_crowd_data=False),
        dict(city="Kanpur", state="Uttar Pradesh", latitude=26.4, longitude=80.3, population=2_900_000,
             has_crowd_data=False),
    ],
    "flights": [
        # E[D] = (10+5+5)/100 * (30+10) + (2+0)/100 * 200 = 8 + 4 = 12
        dict(flight_number="6E-101", airline="IndiGo", origin_city="Pune", dest_city="Vadodara",
             origin_airport="PNQ", dest_airport="BDQ", dep_time="06:00", arr_time="07:30", arr_day_offset=0,
             duration_min=90, run_days="1111111", price_inr=4000, **FLIGHT_STATS),
        # E[D] = 5/50 * (20+10) = 3
        dict(flight_number="AI-201", airline="Air India", origin_city="Surat", dest_city="Pune",
             origin_airport="STV", dest_airport="PNQ", dep_time="20:00", arr_time="21:40", arr_day_offset=0,
             duration_min=100, run_days="1111100", price_inr=3500, otp_total=50, otp_on_time=45, otp_late=5,
             otp_very_late=0, otp_excessive=0, otp_cancelled=0, otp_diverted=0, delay_avg_min=20,
             delay_std_min=10, delay_max_min=100),
        # no statistics: E[D] = median(12, 3) = 7.5
        dict(flight_number="6E-102", airline="IndiGo", origin_city="Vadodara", dest_city="Pune",
             origin_airport="BDQ", dest_airport="PNQ", dep_time="18:00", arr_time="19:30", arr_day_offset=0,
             duration_min=90, run_days="1111111", price_inr=4200),
    ],
    "trains": [
        # E[D] = (10 + 2*10 + 3*20 + 4*20 + 6*30) / 16 = 350/16 = 21.875
        dict(train_number="12901", train_name="Gujarat Mail", origin_city="Vadodara", dest_city="Surat",
             origin_station="Vadodara Jn", dest_station="Surat", dep_time="08:00", arr_time="10:00",
             arr_day_offset=0, duration_min=120, run_days="1111111", classes=["SL", "3A"], fare_inr=500,
             avg_delay_1w=10, avg_delay_1m=10, avg_delay_3m=20, avg_delay_6m=20, avg_delay_1y=30),
        dict(train_number="12903", train_name="Golden Temple Mail", origin_city="Surat", dest_city="Vadodara",
             origin_station="Surat", dest_station="Vadodara Jn", dep_time="23:00", arr_time="01:30",
             arr_day_offset=1, duration_min=150, run_days="1111111", classes=["3A"], fare_inr=450),
    ],
    "buses": [
        dict(bus_id="GSRTC-1", operator="GSRTC", bus_type="AC Seater", origin_city="Vadodara", dest_city="Surat",
             dep_time="14:00", arr_time="17:00", arr_day_offset=0, duration_min=180, run_days="1111111",
             fare_inr=300),
    ],
    "road_routes": [
        dict(origin_city="Vadodara", dest_city="Surat", distance_km=150, free_flow_min=150,
             historical_delay_min=30, estimated_delay_min=20),
        dict(origin_city="Surat", dest_city="Vadodara", distance_km=150, free_flow_min=160,
             historical_delay_min=0, estimated_delay_min=0),
        dict(origin_city="Pune", dest_city="Vadodara", distance_km=600, free_flow_min=600,
             historical_delay_min=60, estimated_delay_min=50),
        dict(origin_city="Vadodara", dest_city="Pune", distance_km=600, free_flow_min=600,
             historical_delay_min=60, estimated_delay_min=50),
    ],
    "distances": [
        dict(origin_city=a, dest_city=b, distance_km=100 + 10 * i, duration_min=120, cab_fare_inr=2000)
        for i, (a, b) in enumerate((a, b) for a in ("Vadodara", "Surat", "Pune", "Kanpur")
                                   for b in ("Vadodara", "Surat", "Pune", "Kanpur") if a != b)
    ],
    "accommodations": [
        dict(name="Courtyard by Marriott Vadodara", city="Vadodara", latitude=22.3, longitude=73.2,
             house_type="Family Friendly", star_rating=4, rating=4.4, price_per_night_inr=5000, max_occupancy=2,
             house_rules=["No smoking"], amenities=["Wellness Spa", "Free WiFi"], services=["Laundry"],
             minimum_nights=1, check_in="12:00", check_out="11:00"),
        dict(name="Surat Marriott Hotel", city="Surat", latitude=21.2, longitude=72.8, house_type="Luxury Boutique",
             star_rating=5, rating=4.6, price_per_night_inr=6000, max_occupancy=3, house_rules=["No pets"],
             amenities=["Free WiFi"], services=["Laundry", "Cleaning"], minimum_nights=1, check_in="12:00",
             check_out="11:00"),
    ],
    "attractions": [
        dict(name="Maharaja Fatesingh Museum", city="Vadodara", latitude=22.3, longitude=73.2,
             categories=["Museums"], visit_duration_hr=3.0, rating=4.5, entry_fee_inr=100, open_time="10:00",
             close_time="17:30", open_days="1111111"),
        dict(name="Sayaji Garden", city="Vadodara", latitude=22.3, longitude=73.2, categories=["Nature & Parks"],
             visit_duration_hr=4.5, rating=4.2, entry_fee_inr=0, open_time="06:00", close_time="20:00",
             open_days="1111111"),
        dict(name="Dumas Beach", city="Surat", latitude=21.1, longitude=72.7,
             categories=["Nature & Parks", "Outdoor Activities"], visit_duration_hr=4.25, rating=4.0,
             entry_fee_inr=0, open_time="06:00", close_time="22:00", open_days="1111111"),
    ],
    "restaurants": [
        dict(name="22nd Parallel", city="Vadodara", latitude=22.3, longitude=73.2, cuisines=["Indian Subcontinent"],
             price_tier="$$", avg_cost_inr=400, rating=4.1, open_time="07:00", close_time="23:00"),
        dict(name="Candle Light Date N Dinner & Rooftop Restaurant", city="Vadodara", latitude=22.3,
             longitude=73.2, cuisines=["International Fusion"], price_tier="$$$", avg_cost_inr=900, rating=4.0,
             open_time="12:00", close_time="23:30"),
        dict(name="Le Prive World Cuisine & Pizzeria", city="Vadodara", latitude=22.3, longitude=73.2,
             cuisines=["Pizza/Italian Specialties", "European"], price_tier="$$$", avg_cost_inr=800, rating=4.3,
             open_time="12:00", close_time="01:00"),
        dict(name="Mysore Cafe", city="Surat", latitude=21.2, longitude=72.8, cuisines=["Indian Subcontinent"],
             price_tier="$", avg_cost_inr=200, rating=4.0, open_time="07:00", close_time="22:00"),
    ],
    "events": [
        dict(name="Garba Night", city="Vadodara", date="2025-11-25", start_time="19:00", end_time="22:00",
             segment="Music", venue="Navlakhi Ground", price_inr=500),
    ],
    "crowd": [
        dict(venue_name="Maharaja Fatesingh Museum", venue_type="attraction", city="Vadodara", open_hour=9,
             close_hour=17, surge_in_hour=None, surge_out_hour=None,
             windows=[[9, 9, "L"], [10, 11, "BA"], [12, 15, "AA"], [16, 17, "A"]], quiet_hours=[9],
             peak_window=[13, 15]),
        dict(venue_name="22nd Parallel", venue_type="restaurant", city="Vadodara", open_hour=8, close_hour=14,
             surge_in_hour=None, surge_out_hour=None, windows=[[8, 10, "BA"], [11, 14, "A"]], quiet_hours=[],
             peak_window=None),
        dict(venue_name="Le Prive World Cuisine & Pizzeria", venue_type="restaurant", city="Vadodara",
             open_hour=18, close_hour=1, surge_in_hour=None, surge_out_hour=None,
             windows=[[18, 19, "A"], [20, 21, "H"], [22, 1, "AA"]], quiet_hours=[], peak_window=[20, 21]),
        dict(venue_name="Mysore Cafe", venue_type="restaurant", city="Surat", open_hour=7, close_hour=12,
             surge_in_hour=None, surge_out_hour=None, windows=[[7, 9, "L"], [10, 12, "A"]], quiet_hours=[7, 8],
             peak_window=None),
    ],
    "transit_stops": [
        dict(poi_name="Maharaja Fatesingh Museum", poi_type="attraction", city="Vadodara", stop_name="Museum Gate",
             stop_latitude=22.31, stop_longitude=73.19, distance_m=2500.0),
        dict(poi_name="Sayaji Garden", poi_type="attraction", city="Vadodara", stop_name="Kala Ghoda",
             stop_latitude=22.32, stop_longitude=73.18, distance_m=10000.0),
    ],
}

def build_tiny_db(path: Path) -> Database:
    """Write the TINY tables as a database directory and open it."""
    path.mkdir(parents=True, exist_ok=True)
    for name, spec in TABLES.items():
        rows = TINY[name]
        write_table(path, name, {f: [r.get(f) for r in rows] for f in spec.model.model_fields})
    empty = [name for name in TABLES if not TINY[name]]  # a table with no rows must be declared
    (path / "manifest.json").write_text(json.dumps({"empty_tables": empty}), encoding="utf-8")
    return Database.open(path)

PERSONA = Persona(traveler_type="Laidback Traveler", purpose="Relaxation", spending="Luxury Traveler",
                  location_preference="Historical Sites")

def make_query(days: int = 3, dest: str = "Vadodara", cities: int = 1, people: int = 2, budget: float = 60000,
               risk: str = "tolerant", constraint: LocalConstraint | None = None, persona: Persona = PERSONA) -> Query:
    dates = [f"2025-11-{24 + i:02d}" for i in range(days)]  # 2025-11-24 is a Monday
    return Query(query_id="q1", org="Pune", dest=dest, visiting_city_number=cities, days=days, dates=dates,
                 people_number=people, budget_inr=budget, level="easy", persona=persona, risk_profile=risk,
                 local_constraint=constraint or LocalConstraint(), text="test")

def item(name: str, activity: str, start: str | None, end: str | None, **kw: Any) -> PlanItem:
    s = parse_hhmm(start) if start else None
    e = parse_hhmm(end) if end else None
    if s is not None and e is not None and e < s:
        e += 1440
    return PlanItem(name=name, activity=activity, start=s, end=e, **kw)

HOTEL = "Courtyard by Marriott Vadodara"

def good_plan() -> Plan:
    """A valid 3-day Pune -> Vadodara -> Pune trip for the tiny database."""
    d1 = Day(day=1, cities=["Pune", "Vadodara"], accommodation=HOTEL, attractions=["Maharaja Fatesingh Museum"],
             lunch="22nd Parallel", dinner="Le Prive World Cuisine & Pizzeria",
             transport=[TransportLeg(mode="flight", number="6E-101", origin="Pune", destination="Vadodara",
                                     dep=360, arr=450, planned_arr=460)],
             items=[item("Pune Airport", "arrive", "04:30", "05:00"),
                    item(HOTEL, "check-in", "08:00", "08:30"),
                    item("Maharaja Fatesingh Museum", "visit", "09:00", "13:00"),
                    item("22nd Parallel", "visit", "13:30", "14:40", meal="lunch"),
                    item("Le Prive World Cuisine & Pizzeria", "visit", "19:00", "20:30", meal="dinner"),
                    item(HOTEL, "stay", "21:00", "08:00")])
    d2 = Day(day=2, cities=["Vadodara"], accommodation=HOTEL, attractions=["Sayaji Garden"],
             dinner="Candle Light Date N Dinner & Rooftop Restaurant", events=["Garba Night"],
             items=[item(HOTEL, "stay", "08:00", "09:00"),
                    item("Sayaji Garden", "visit", "09:30", "16:00"),
                    item("Candle Light Date N Dinner & Rooftop Restaurant", "visit", "17:00", "18:15", meal="dinner"),
                    item("Garba Night", "event", "19:00", "22:00"),
                    item(HOTEL, "stay", "22:30", "08:00")])
    d3 = Day(day=3, cities=["Vadodara", "Pune"],
             transport=[TransportLeg(mode="flight", number="6E-102", origin="Vadodara", destination="Pune",
                                     dep=1080, arr=1170, planned_arr=1178)],
             items=[item(HOTEL, "checkout", "08:00", "10:00"),
                    item("Vadodara Airport", "arrive", "16:30", "17:00")])
    return Plan(query_id="q1", days=[d1, d2, d3])
