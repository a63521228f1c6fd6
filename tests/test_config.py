"""The shipped YAML configs and the code defaults must agree."""

import pytest
import yaml

from utp_env.config import CONFIG_DIR, UncertaintyConfig, load_model, load_uncertainty


def test_uncertainty_yaml_equals_code_defaults() -> None:
    shipped = yaml.safe_load((CONFIG_DIR / "uncertainty.yaml").read_text())
    assert shipped == UncertaintyConfig().model_dump()
    assert load_uncertainty() == UncertaintyConfig()


def test_bad_config_names_the_field(tmp_path) -> None:
    bad = tmp_path / "u.yaml"
    bad.write_text("risk_multipliers:\n  tolerant: {low: -1, high: 1}\n")
    with pytest.raises(ValueError, match=r"u.yaml: risk_multipliers.tolerant.low"):
        load_model(UncertaintyConfig, bad)
    unknown = tmp_path / "v.yaml"
    unknown.write_text("not_a_parameter: 3\n")
    with pytest.raises(ValueError, match="not_a_parameter"):
        load_model(UncertaintyConfig, unknown)
