"""Simulation parameters not (yet) in `utp_env.config.SimulationParams`.

Defined here with their defaults until the config owner adds them to `SimulationParams` and
`configs/uncertainty.yaml`; `RolloutParams.of(config)` reads them from the config once they exist.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from utp_env.config import UncertaintyConfig


class RolloutParams(BaseModel):
    """How a rollout walks the plan, beyond the delay models' shape parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    intra_city_travel_min: float = Field(default=0.0, ge=0,
                                         description="Minutes added between consecutive items in a city")
    skip_passed_items: bool = Field(default=True,
                                    description="An item reached after its planned end is lost (skipped)")
    missed_leg_policy: Literal["next_day"] = Field(
        default="next_day", description="A missed leg is rebooked on the same service's next departure "
                                        "the traveller can reach (whole days later)")

    @classmethod
    def of(cls, config: UncertaintyConfig) -> RolloutParams:
        """The parameters from `config.simulation` where it defines them, defaults otherwise."""
        sim = config.simulation.model_dump()
        return cls(**{k: sim[k] for k in cls.model_fields if k in sim})
