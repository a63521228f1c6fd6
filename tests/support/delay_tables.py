"""A tiny database with delay statistics, written to a folder: the simulation's and the delay models' tests."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from utp_env.tools.database import Database
from utp_env.tools.schema import TABLES

FLIGHT_STATS = {"otp_total": 200, "otp_on_time": 150, "otp_late": 20, "otp_very_late": 10, "otp_excessive": 10,
                "otp_cancelled": 6, "otp_diverted": 4, "delay_avg_min": 40.0, "delay_std_min": 30.0,
                "delay_max_min": 300.0}

def _cities() -> list[dict]:
    return [{"city": c, "state": "Testland", "latitude": 20.0 + i, "longitude": 75.0, "population": 1000 - i,
             "has_crowd_data": "true"} for i, c in enumerate(("Alpha", "Beta", "Gamma"))]

def _service(number: str, o: str, d: str, dep: str, arr: str, dur: int, **extra: object) -> dict:
    return {"origin_city": o, "dest_city": d, "dep_time": dep, "arr_time": arr, "arr_day_offset": 0,
            "duration_min": dur, "run_days": "1111111", **extra}

def tiny_rows() -> dict[str, list[dict]]:
    """Rows of every table, with statistics chosen so expected values can be computed by hand."""
    flight = {"airline": "IndiGo", "origin_airport": "AAA", "dest_airport": "BBB", "price_inr": 4000}
    train = {"train_name": "Test Exp", "origin_station": "B Jn", "dest_station": "G Jn", "classes": '["3A"]',
             "fare_inr": 900}
    return {
        "cities": _cities(),
        "flights": [
            _service("", "Alpha", "Beta", "08:00", "10:00", 120, flight_number="6E-100", **flight, **FLIGHT_STATS),
            _service("", "Alpha", "Beta", "18:00", "20:00", 120, flight_number="6E-101", **flight),
            _service("", "Beta", "Alpha", "18:00", "20:00", 120, flight_number="6E-102", **flight, **FLIGHT_STATS),
            _service("", "Beta", "Gamma", "14:00", "15:00", 60, flight_number="6E-103", **flight,
                     **{**FLIGHT_STATS, "otp_total": 100, "otp_on_time": 75, "otp_late": 10, "otp_very_late": 5,
                        "otp_excessive": 5, "otp_cancelled": 3, "otp_diverted": 2,  # counts add up to the total
                        "delay_avg_min": 60.0, "delay_std_min": None,
                        "delay_max_min": 200.0}),
        ],
        "trains": [_service("", "Beta", "Gamma", "16:00", "20:00", 240, train_number="12345", **train,
                            avg_delay_1w=40, avg_delay_1m=44, avg_delay_3m=36, avg_delay_6m=48, avg_delay_1y=40)],
        "buses": [_service("", "Gamma", "Alpha", "09:00", "13:00", 240, bus_id="B1", operator="Op",
                           bus_type="AC Seater", fare_inr=500)],
        "road_routes": [{"origin_city": o, "dest_city": d, "distance_km": 200, "free_flow_min": 220,
                         "historical_delay_min": h, "estimated_delay_min": h}
                        for o, d, h in (("Gamma", "Alpha", 50.0), ("Beta", "Gamma", 30.0))],
        "distances": [{"origin_city": o["city"], "dest_city": d["city"], "distance_km": 200, "duration_min": 240,
                       "cab_fare_inr": 3000} for o in _cities() for d in _cities() if o != d],
        "accommodations": [{"name": "Hotel Beta", "city": "Beta", "latitude": 21, "longitude": 75,
                            "house_type": "Family Friendly", "star_rating": 3, "rating": 4.0,
                            "price_per_night_inr": 3000, "max_occupancy": 2, "house_rules": "[]",
                            "amenities": "[]", "services": "[]", "minimum_nights": 1, "check_in": "12:00",
                            "check_out": "11:00"}],
        "attractions": [{"name": n, "city": "Beta", "latitude": 21, "longitude": 75, "categories": json.dumps([c]),
                         "visit_duration_hr": h, "rating": 4.5, "entry_fee_inr": 50, "open_time": "06:00",
                         "close_time": "22:00", "open_days": "1111111"}
                        for n, c, h in (("Old Fort", "Museums", 3.0), ("Rose Garden", "Shopping", 1.5))],
        "restaurants": [{"name": "Spice Cafe", "city": "Beta", "latitude": 21, "longitude": 75,
                         "cuisines": '["Asian"]', "price_tier": "$$", "avg_cost_inr": 500, "rating": 4.1,
                         "open_time": "07:00", "close_time": "23:00"}],
        "events": [],
        "crowd": [{"venue_name": "Old Fort", "venue_type": "attraction", "city": "Beta", "open_hour": 6,
                   "close_hour": 21, "windows": '[[6, 10, "L"], [11, 16, "H"], [17, 21, "A"]]',
                   "quiet_hours": "[6, 7]", "peak_window": "[12, 15]"}],
        "transit_stops": [],
    }

def write_db(path: Path, rows: dict[str, list[dict]]) -> Database:
    """Write `rows` as the CSV files of a database directory and open it."""
    path.mkdir(parents=True, exist_ok=True)
    for name, spec in TABLES.items():
        header = list(spec.model.model_fields)
        with (path / f"{name}.csv").open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(header)
            for row in rows.get(name, []):
                writer.writerow(["" if row.get(c) is None else row[c] for c in header])
    empty = [name for name in TABLES if not rows.get(name)]  # a table with no rows must be declared
    (path / "manifest.json").write_text(json.dumps({"empty_tables": empty}), encoding="utf-8")
    return Database.open(path)
