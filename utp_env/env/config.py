"""`EnvConfig`: every knob of the gym environment, with defaults equal to `configs/env.yaml`.

Reward weights name the metrics of the `EvaluationReport` (see `utp_env.env.reward`); a weight of 0
drops a metric from the reward. A test asserts the shipped YAML equals these defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from utp_env.config import CONFIG_DIR, load_model

ENV_CONFIG_PATH = CONFIG_DIR / "env.yaml"

DEFAULT_REWARD_WEIGHTS: dict[str, float] = {
    "commonsense_pass_rate": 1.0,
    "hard_pass_rate": 1.0,
    "bas": 1.0,
    "cats": 1.0,
    "tdas": 1.0,
    "temporal_meal": 0.5,
    "temporal_attraction": 0.5,
    "spatial": 0.5,
    "ordering": 0.5,
    "persona": 0.5,
}


class EnvConfig(BaseModel):
    """Parameters of `UTPEnv`: limits, reward weights and which optional features run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    step_limit: int = Field(default=100, ge=1, description="Steps before the episode is truncated")
    max_action_bytes: int = Field(default=65_536, ge=256, description="Largest accepted action (UTF-8 bytes)")
    max_calls_per_action: int = Field(default=32, ge=1, description="Most tool calls in one action")
    max_observation_chars: int = Field(default=200_000, ge=1_000,
                                       description="Observations longer than this are cut (and say so)")
    reward_weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_REWARD_WEIGHTS),
                                             description="Metric name -> weight (>= 0)")
    check_plan: bool = Field(default=True, description="Expose the check_plan tool")
    stochastic: bool = Field(default=False, description="Draw one delay realisation at the end of each episode")
    robustness: bool = Field(default=False, description="Run Monte Carlo robustness on the final plan")
    robustness_rollouts: int = Field(default=1000, ge=1, description="Rollouts of the robustness report")
    split: str = Field(default="validation", description="Query split sampled when reset names none")

    @model_validator(mode="after")
    def _weights(self) -> EnvConfig:
        bad = {k: w for k, w in self.reward_weights.items() if not w >= 0}
        if bad:
            raise ValueError(f"reward_weights must be >= 0; got {bad}")
        unknown = set(self.reward_weights) - set(DEFAULT_REWARD_WEIGHTS)
        if unknown:
            raise ValueError(f"reward_weights: unknown metric(s) {sorted(unknown)}; "
                             f"known: {', '.join(DEFAULT_REWARD_WEIGHTS)}")
        return self


def load_env_config(config: EnvConfig | dict[str, Any] | str | Path | None = None) -> EnvConfig:
    """An `EnvConfig` from an instance, a dict of overrides, a YAML path, or `configs/env.yaml`."""
    if isinstance(config, EnvConfig):
        return config
    if isinstance(config, dict):
        path = ENV_CONFIG_PATH if ENV_CONFIG_PATH.exists() else None
        return load_model(EnvConfig, path, overrides=config)
    if config is None:
        return load_model(EnvConfig, ENV_CONFIG_PATH if ENV_CONFIG_PATH.exists() else None)
    return load_model(EnvConfig, config)
