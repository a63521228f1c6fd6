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


def test_loaded_configs_are_cached_and_a_changed_file_is_read_again(tmp_path) -> None:
    import os

    path = tmp_path / "u.yaml"
    path.write_text("min_meal_gap_minutes: 100\n")
    first = load_uncertainty(path)
    assert first.min_meal_gap_minutes == 100
    assert load_uncertainty(path) is first  # cached: same file version, same (frozen) instance
    path.write_text("min_meal_gap_minutes: 120.5\n")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a later mtime, whatever the clock
    second = load_uncertainty(path)
    assert second.min_meal_gap_minutes == 120.5
    assert load_uncertainty(path) is second
    # overrides never return the cached instance, and never change it
    over = load_model(UncertaintyConfig, path, overrides={"min_meal_gap_minutes": 7})
    assert over.min_meal_gap_minutes == 7 and load_uncertainty(path).min_meal_gap_minutes == 120.5


def test_missing_config_file_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_uncertainty(tmp_path / "nope.yaml")
