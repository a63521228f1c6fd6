"""Tiny hand-written database tables and `write_database`: the lookup tools' and the schemas' tests."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from utp_env.tools.schema import TABLES

CITIES = [("Pune", "Maharashtra", 18.52, 73.86, 3_100_000), ("Mumbai", "Maharashtra", 19.08, 72.88, 12_400_000),
          ("Nagpur", "Maharashtra", 21.15, 79.09, 2_400_000), ("Indore", "Madhya Pradesh", 22.72, 75.86, 1_900_000),
          ("Bhopal", "Madhya Pradesh", 23.26, 77.41, 1_800_000)]

FLIGHT = dict(airline="IndiGo", origin_airport="PNQ", dest_airport="IDR", dep_time="05:15", arr_time="07:10",
              arr_day_offset=0, duration_min=115, run_days="1111111", price_inr=4520.0)

NO_OTP = dict(otp_total=None, otp_on_time=None, otp_late=None, otp_very_late=None, otp_excessive=None,
              otp_cancelled=None, otp_diverted=None, delay_avg_min=None, delay_std_min=None, delay_max_min=None)

TRAIN = dict(train_name="Pune Indore Express", origin_station="Pune Jn", dest_station="Indore Jn", dep_time="18:25",
             arr_time="06:45", arr_day_offset=1, duration_min=740, run_days="1111111", classes=["SL", "3A"],
             fare_inr=1450.0)

NO_TRAIN_DELAY = dict(avg_delay_1w=None, avg_delay_1m=None, avg_delay_3m=None, avg_delay_6m=None, avg_delay_1y=None)

STAY = dict(city="Pune", latitude=18.5, longitude=73.8, star_rating=4, max_occupancy=2, minimum_nights=1,
            check_in="14:00", check_out="11:00")

VENUE = dict(city="Pune", latitude=18.5, longitude=73.8, open_time="09:00", close_time="18:00")

def tiny_tables() -> dict[str, list[dict[str, Any]]]:
    """Five cities; E[D] worked out by hand in the tests below."""
    t: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    t["cities"] = [dict(city=c, state=s, latitude=la, longitude=lo, population=p, has_crowd_data=c == "Pune")
                   for c, s, la, lo, p in CITIES]
    # 6E-284: n_late = 10+5+5 = 20 of N = 100, n_dis = 2; E[D] = 0.2*(30+10) + 0.02*180 = 11.6
    t["flights"].append(dict(FLIGHT, flight_number="6E-284", origin_city="Pune", dest_city="Indore", otp_total=100,
                             otp_on_time=78, otp_late=10, otp_very_late=5, otp_excessive=5, otp_cancelled=2,
                             otp_diverted=0, delay_avg_min=30.0, delay_std_min=10.0, delay_max_min=180.0))
    # 6E-285: 5 of 50 late, E[D] = 0.1*(20+10) = 3.0; flight median over {11.6, 3.0} = 7.3
    t["flights"].append(dict(FLIGHT, flight_number="6E-285", origin_city="Indore", dest_city="Pune", otp_total=50,
                             otp_on_time=45, otp_late=5, otp_very_late=0, otp_excessive=0, otp_cancelled=0,
                             otp_diverted=0, delay_avg_min=20.0, delay_std_min=10.0, delay_max_min=100.0,
                             origin_airport="IDR", dest_airport="PNQ"))
    # AI-101 runs Mondays only, no statistics (median 7.3 stands in), cheaper and later.
    t["flights"].append(dict(FLIGHT, **NO_OTP, flight_number="AI-101", airline="Air India", origin_city="Pune",
                             dest_city="Indore", run_days="1000000", dep_time="09:00", arr_time="11:00",
                             duration_min=120, price_inr=3900.0))
    # 25 daily Pune -> Mumbai flights to exercise the 20-row cap.
    for k in range(25):
        dep = f"{6 + k // 2:02d}:{(k % 2) * 30:02d}"
        arr = f"{7 + k // 2:02d}:{(k % 2) * 30:02d}"  # an hour after departure (the validator checks it)
        t["flights"].append(dict(FLIGHT, **NO_OTP, flight_number=f"6E-{1000 + k}", origin_city="Pune",
                                 dest_city="Mumbai", dest_airport="BOM", dep_time=dep, arr_time=arr,
                                 duration_min=60, price_inr=3000.0 + k))
    # 12191: E[D] = (10 + 2*20 + 3*30 + 4*40 + 6*50) / 16 = 600/16 = 37.5 (the only measured train)
    t["trains"].append(dict(TRAIN, train_number="12191", origin_city="Pune", dest_city="Indore", avg_delay_1w=10.0,
                            avg_delay_1m=20.0, avg_delay_3m=30.0, avg_delay_6m=40.0, avg_delay_1y=50.0))
    t["trains"].append(dict(TRAIN, **NO_TRAIN_DELAY, train_number="11111", origin_city="Pune", dest_city="Indore",
                            run_days="0000011", dep_time="07:00", arr_time="19:00", arr_day_offset=0,
                            duration_min=720))
    t["trains"].append(dict(TRAIN, **NO_TRAIN_DELAY, train_number="22222", origin_city="Nagpur", dest_city="Bhopal",
                            run_days="0000011"))  # weekends only
    t["buses"] = [dict(bus_id=f"B{k}", operator="Neeta Travels", bus_type="AC Sleeper", origin_city="Pune",
                       dest_city="Mumbai", dep_time=f"{20 + k}:00", arr_time="02:00", arr_day_offset=1,
                       duration_min=360 - 60 * k, run_days="1111111", fare_inr=800.0 - 100 * k) for k in range(2)]
    # road E[D]: Pune->Mumbai 40, Mumbai->Pune 60, median 50 (cab Pune->Indore has no road route)
    t["road_routes"] = [dict(origin_city="Pune", dest_city="Mumbai", distance_km=150.0, free_flow_min=180.0,
                             historical_delay_min=40.0, estimated_delay_min=25.0),
                        dict(origin_city="Mumbai", dest_city="Pune", distance_km=150.0, free_flow_min=185.0,
                             historical_delay_min=60.0, estimated_delay_min=30.0)]
    for o, *_ in CITIES:
        for d, *_ in CITIES:
            if o != d:
                t["distances"].append(dict(origin_city=o, dest_city=d, distance_km=150.0 if {o, d} == {"Pune", "Mumbai"}
                                           else 600.0, duration_min=200.0, cab_fare_inr=3600.0))
    t["accommodations"] = [
        dict(STAY, name="Conrad Pune", house_type="Luxury Boutique", rating=4.8, price_per_night_inr=9000.0,
             house_rules=["No pets"], amenities=["Wellness Spa", "Pool"], services=["Laundry", "Cleaning"]),
        dict(STAY, name="Hotel Sunshine", house_type="Family Friendly", rating=4.1, price_per_night_inr=2500.0,
             house_rules=["No smoking"], amenities=["Pool"], services=["Laundry"], max_occupancy=4),
        dict(STAY, name="Koregaon Suites", house_type="Apartment Extended", rating=3.9, price_per_night_inr=4000.0,
             house_rules=[], amenities=["Wellness Spa"], services=["Cleaning"]),
    ]
    t["attractions"] = [
        dict(VENUE, name="Shaniwar Wada", categories=["Sights & Landmarks", "Museums"], visit_duration_hr=3.0,
             rating=4.5, entry_fee_inr=25.0, open_days="1111111"),
        dict(VENUE, name="Aga Khan Palace", categories=["Museums"], visit_duration_hr=3.0, rating=4.6,
             entry_fee_inr=50.0, open_days="1111111"),
    ]
    t["restaurants"] = [
        dict(VENUE, name="Vaishali", cuisines=["Indian Subcontinent"], price_tier="$", avg_cost_inr=300.0, rating=4.4),
        dict(VENUE, name="Malaka Spice", cuisines=["Asian"], price_tier="$$$", avg_cost_inr=1500.0, rating=4.5),
    ]
    t["events"] = [
        dict(name="Sawai Gandharva", city="Pune", date="2025-12-12", start_time="18:00", end_time="01:00",
             segment="Music", venue="Ramanbaug", price_inr=500.0),
        dict(name="Pune Comedy Night", city="Pune", date="2025-11-21", start_time="20:00", end_time="22:00",
             segment="Comedy", venue="Hard Rock", price_inr=799.0),
    ]
    t["crowd"] = [dict(venue_name="Shaniwar Wada", venue_type="attraction", city="Pune", open_hour=8, close_hour=18,
                       surge_in_hour=11, surge_out_hour=17, windows=[[8, 10, "L"], [11, 16, "H"], [17, 18, "A"]],
                       quiet_hours=[8, 9], peak_window=[12, 15])]
    t["transit_stops"] = [dict(poi_name="Shaniwar Wada", poi_type="attraction", city="Pune", stop_name="Mandai",
                               stop_latitude=18.51, stop_longitude=73.85, distance_m=450.0)]
    return t

def write_database(path: Path, tables: dict[str, list[dict[str, Any]]]) -> Path:
    """Write `tables` as the CSV files `Database.open` reads (lists as JSON, None as empty)."""
    path.mkdir(parents=True, exist_ok=True)
    for name, spec in TABLES.items():
        columns = list(spec.model.model_fields)
        with open(path / f"{name}.csv", "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(columns)
            for row in tables[name]:
                w.writerow(["" if row[c] is None else json.dumps(row[c]) if isinstance(row[c], list)
                            else str(row[c]).lower() if isinstance(row[c], bool) else row[c] for c in columns])
    (path / "manifest.json").write_text(json.dumps({"calendar": {"start": "2025-11-01", "end": "2026-03-31"}}))
    return path
