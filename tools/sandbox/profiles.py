"""Sandbox profiles: how big the generated database is and what it is calibrated to.

The code defaults below equal `configs/sandbox/<name>.yaml` (a test asserts it); `full` matches
the paper's Table 1 counts exactly for the generated tables; `mini` is a few states for fast tests.
The trains and flights tables have no count: they are every real train calling at two of the
profile's cities (tools/sandbox/rail.py) and the real air network between them (tools/sandbox/air.py),
so their size follows the city set (docs/DATA.md compares them with Table 1).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from utp_env.configs import CONFIG_DIR as _SHIPPED_CONFIGS
from utp_env.tools.yamlfile import load_yaml_file

CONFIG_DIR = _SHIPPED_CONFIGS / "sandbox"


class Calibration(BaseModel):
    """Targets of the delay statistics (paper section 3.6) and the right skew of each mode."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    train_horizon_means_min: dict[str, float] = Field(
        default={"avg_delay_1w": 41.0, "avg_delay_1m": 42.4, "avg_delay_3m": 43.8, "avg_delay_6m": 45.1,
                 "avg_delay_1y": 46.5},
        description="Target mean delay of each train horizon column, spread over the paper's 40.8-46.7")
    train_range_min: tuple[float, float] = (40.8, 46.7)
    flight_delayed_mean_min: float = Field(40.59, description="Late-count-weighted mean of delay_avg_min")
    flight_tolerance_min: float = 1.5
    road_mean_min: float = Field(52.2, description="Mean historical_delay_min of road routes")
    road_tolerance_min: float = 2.0
    lognormal_sigma: float = Field(0.6, gt=0, description="Shape of the log-normal delay draws")


class SandboxProfile(BaseModel):
    """Sizes of one sandbox; every count is the exact number of rows written (the trains and flights
    tables, built from real timetables and routes, have none)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    states: list[str] | None = Field(None, description="Restrict to these states (None: the n_states largest)")
    n_states: int = Field(ge=1)
    n_cities: int = Field(ge=2)
    buses: int = Field(ge=0)
    road_routes: int = Field(ge=0, description="Ordered pairs; even (routes go both ways)")
    restaurants: int = Field(ge=0)
    attractions: int = Field(ge=0)
    accommodations: int = Field(ge=0)
    events: int = Field(ge=0)
    transit_stops: int = Field(ge=0)
    crowd_cities: int = Field(ge=0, description="Major cities whose venues get crowd profiles")
    airport_radius_km: float = 40.0
    bus_max_km: float = 700.0
    road_factor: float = 1.28
    calendar_start: str = "2025-11-01"
    calendar_end: str = "2026-03-31"
    calibration: Calibration = Calibration()


PROFILES: dict[str, SandboxProfile] = {
    "full": SandboxProfile(
        name="full", n_states=33, n_cities=504, buses=34_925,
        road_routes=4_052, restaurants=3_433, attractions=2_990, accommodations=3_670, events=783,
        transit_stops=10_025, crowd_cities=20,
    ),
    "mini": SandboxProfile(
        name="mini", states=["Maharashtra", "Goa", "Karnataka", "Gujarat"], n_states=4, n_cities=36,
        buses=900, road_routes=180, restaurants=500, attractions=360,
        accommodations=240, events=60, transit_stops=1_100, crowd_cities=6,
    ),
}


def load_profile(profile: str | Path) -> SandboxProfile:
    """A profile by name (`full`, `mini`) or from a YAML file, with an error naming the bad field."""
    if isinstance(profile, str) and profile in PROFILES:
        return PROFILES[profile]
    path = Path(profile)
    if not path.is_file():
        raise ValueError(f"unknown sandbox profile {str(profile)!r}: use one of {', '.join(PROFILES)} "
                         "or the path of a profile YAML file")
    try:
        data = load_yaml_file(path) or {}
        return SandboxProfile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{path}: {where}: {first['msg']}") from exc
