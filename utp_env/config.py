"""Every parameter a researcher may vary, as pydantic models whose defaults equal `configs/*.yaml`.

`load_uncertainty(path)` reads a YAML file over the defaults; a test asserts the shipped YAML and
the defaults agree, so code and configs cannot drift apart.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, ValidationError

from utp_env.configs import CONFIG_DIR as CONFIG_DIR  # re-exported
from utp_env.tools.yamlfile import load_yaml_file

M = TypeVar("M", bound=BaseModel)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RiskRange(_Strict):
    low: float = Field(ge=0)
    high: float = Field(ge=0)


class MealWindow(_Strict):
    """A restaurant visit starting in [start_hour, end_hour] (inclusive, may wrap) is this meal."""

    start_hour: int = Field(ge=0, le=23)
    end_hour: int = Field(ge=0, le=23)
    base_minutes: float = Field(gt=0)


class MealGaussian(_Strict):
    """TripCraft's bivariate Gaussian over meal midpoint (hours) and duration (minutes)."""

    mu_hour: float
    mu_minutes: float
    sigma_hour: float
    sigma_minutes: float
    rho: float = Field(gt=-1, lt=1)


class TripCraftParams(_Strict):
    meals: dict[str, MealGaussian] = {
        "breakfast": MealGaussian(mu_hour=9.84, mu_minutes=50.71, sigma_hour=1.34, sigma_minutes=14.09, rho=0.03),
        "lunch": MealGaussian(mu_hour=14.44, mu_minutes=59.19, sigma_hour=1.07, sigma_minutes=15.82, rho=0.30),
        "dinner": MealGaussian(mu_hour=20.42, mu_minutes=69.27, sigma_hour=1.66, sigma_minutes=69.07, rho=-0.07),
    }
    attraction_sigma_minutes: float = 53.82
    attraction_k_minutes: float = 16.61
    attractions_per_day_lambda: dict[str, PositiveFloat] = {"adventure": 1.82, "other": 1.11}
    spatial_near_m: float = 5000.0
    spatial_decay_per_m: float = 0.0002


class SimulationParams(_Strict):
    """Shape parameters of the Monte Carlo delay models (docs/SIMULATION.md, "Delay models")."""

    flight_lognormal_sigma_default: float = Field(default=0.8, gt=0,
                                                  description="Log-s.d. when a flight has no delay s.d.")
    train_lognormal_sigma: float = Field(default=0.9, gt=0, description="Log-s.d. of train delay")
    road_lognormal_sigma: float = Field(default=0.6, gt=0, description="Log-s.d. of bus and cab delay")
    overrun_fraction_by_tier: dict[str, float] = Field(
        default={"L": 0.0, "BA": 0.05, "A": 0.10, "AA": 0.20, "H": 0.30},
        description="Mean visit overrun as a fraction of base duration, by crowd tier")
    overrun_lognormal_sigma: float = Field(default=0.5, gt=0)
    boarding_margin_min: dict[str, float] = Field(
        default={"flight": 45.0, "train": 15.0, "bus": 10.0, "cab": 0.0},
        description="A leg is missed if the traveller reaches it later than departure minus this")
    late_tolerance_min: float = Field(default=30.0, ge=0,
                                      description="An item starting later than this past plan breaks 'hold'")
    intra_city_travel_min: float = Field(default=0.0, ge=0,
                                         description="Minutes added between consecutive items in a city")
    skip_passed_items: bool = Field(default=True,
                                    description="An item reached after its planned end is lost (skipped)")
    missed_leg_policy: Literal["next_day"] = Field(
        default="next_day", description="A missed leg is rebooked on the same service's next departure "
                                        "the traveller can reach (whole days later)")


CompleteInformationReading = Literal["tripcraft", "travelplanner", "basic"]
EmptyMetricReading = Literal["zero", "none"]
OrderingReading = Literal["tripcraft", "day_by_day"]
PersonaBackend = Literal["keyword", "bert"]


class EvaluationReadings(_Strict):
    """Which reading of an inherited definition the evaluator computes (docs/PAPER.md, "Readings").

    The defaults are the paper's parents as their code computes them; every other value is a
    cleaner reading kept for researchers who want it. The summary names the readings it used.
    """

    complete_information: CompleteInformationReading = Field(
        default="tripcraft", description="tripcraft: TripCraft's is_not_absent (the paper's format, with "
        "event and PoI list); travelplanner: TravelPlanner's is_not_absent; basic: the project's first rules "
        "(day count, no empty day, stays, transport on travel days, timed items)")
    empty_metrics: EmptyMetricReading = Field(
        default="zero", description="zero: a delivered plan with nothing to score on a TripCraft metric scores 0 "
        "(TripCraft's code); none: it has no value and is left out of the mean")
    ordering: OrderingReading = Field(
        default="tripcraft", description="tripcraft: TripCraft's calculate_ordering_score (fixed day pairs, "
        "divided by (n-1)^2+1); day_by_day: mean day-i-with-day-i similarity")
    persona: PersonaBackend = Field(
        default="keyword", description="keyword: keyword affinity (offline); bert: TripCraft's cosine similarity "
        "of BERT embeddings (the `persona` extra)")
    persona_model: str = Field(
        default="bert-base-uncased", description="bert backend: a Hugging Face model id or a local directory")

    def describe(self) -> str:
        """One line naming every reading, for the summary's caption."""
        persona = self.persona if self.persona == "keyword" else f"bert ({self.persona_model})"
        return (f"complete information {self.complete_information}, empty TripCraft metrics "
                f"{'score 0' if self.empty_metrics == 'zero' else 'left out'}, O_ord {self.ordering}, "
                f"P_persona {persona}")


class UncertaintyConfig(_Strict):
    """Parameters of BAS, CATS, TDAS, the TripCraft metrics and the simulation, and which reading of
    an inherited definition the evaluator computes (`readings`)."""

    risk_multipliers: dict[str, RiskRange] = {
        "tolerant": RiskRange(low=0.50, high=1.00),
        "optimized": RiskRange(low=1.00, high=1.25),
        "averse": RiskRange(low=1.25, high=2.00),
    }
    congestion_factor: dict[str, float] = {"L": 1.00, "BA": 1.25, "A": 1.50, "AA": 1.75, "H": 2.00}
    crowd_intensity: dict[str, float] = {"L": 0.0, "BA": 0.25, "A": 0.5, "AA": 0.75, "H": 1.0}
    restaurant_meals: dict[str, MealWindow] = {
        "breakfast": MealWindow(start_hour=6, end_hour=10, base_minutes=50),
        "lunch": MealWindow(start_hour=11, end_hour=15, base_minutes=60),
        "dinner": MealWindow(start_hour=16, end_hour=5, base_minutes=75),
    }
    min_meal_gap_minutes: float = 240.0
    tripcraft: TripCraftParams = TripCraftParams()
    simulation: SimulationParams = SimulationParams()
    readings: EvaluationReadings = EvaluationReadings()


_RAW_CACHE: dict[Path, tuple[tuple[int, int], dict[str, Any]]] = {}
_MODEL_CACHE: dict[tuple[type[BaseModel], Path, tuple[int, int]], BaseModel] = {}


def _read_yaml(path: Path) -> tuple[dict[str, Any], tuple[int, int]]:
    """The top-level mapping of a YAML file, cached by path, modification time and size.

    A file whose `st_mtime_ns` or size changed is read again; callers must not mutate the mapping.
    """
    try:
        st = path.stat()
    except OSError as exc:
        raise FileNotFoundError(f"config file {str(path)!r} does not exist") from exc
    stamp = (st.st_mtime_ns, st.st_size)
    hit = _RAW_CACHE.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1], stamp
    data = load_yaml_file(path) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top level")
    _RAW_CACHE[path] = (stamp, data)
    return data, stamp


def load_model(model: type[M], path: str | Path | None, overrides: dict[str, Any] | None = None) -> M:
    """Read `model` from a YAML file (defaults when None), with a clear error naming the file.

    Files are cached by path, modification time and size (a changed file is read again); a frozen
    model loaded without overrides is returned as one shared instance per file version.
    """
    data: dict[str, Any] = {}
    stamp, frozen = (0, 0), False
    if path is not None:
        path = Path(path)
        raw, stamp = _read_yaml(path)
        frozen = bool(model.model_config.get("frozen")) and not overrides
        key = (model, path, stamp)
        cached = _MODEL_CACHE.get(key) if frozen else None
        if isinstance(cached, model):  # the entry of (model, path, stamp) is always a `model`
            return cached
        data = dict(raw)
    data.update(overrides or {})
    try:
        out = model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "".join(f"{p}: " for p in [".".join(str(p) for p in first["loc"])] if p)
        message = first["msg"].removeprefix("Value error, ")  # a validator's own sentence, without pydantic's tag
        top = first["loc"][0] if first["loc"] else None
        if overrides and top in overrides:  # the caller's value is wrong, not the file it overrides
            if first["type"] == "extra_forbidden":
                from utp_env.tools.names import suggest

                close = suggest(str(top), model.model_fields)
                message += f" ({'did you mean ' + ', '.join(close) + '?' if close else 'no such setting'})"
            raise ValueError(f"config override {where}{message}"
                             + (f" (the settings over {path})" if path is not None else "")) from exc
        raise ValueError(f"{path or 'config'}: {where}{message}") from exc
    if path is not None and frozen:
        for old in [k for k in _MODEL_CACHE if k[0] is model and k[1] == path]:
            del _MODEL_CACHE[old]  # one version per file: an edited file replaces its entry
        _MODEL_CACHE[(model, path, stamp)] = out
    return out


def load_uncertainty(path: str | Path | None = None) -> UncertaintyConfig:
    """The uncertainty parameters; `configs/uncertainty.yaml` by default when it is present."""
    default = CONFIG_DIR / "uncertainty.yaml"
    if path is None and default.exists():
        path = default
    return load_model(UncertaintyConfig, path)
