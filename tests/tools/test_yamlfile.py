"""The one YAML reader (utp_env.tools.yamlfile): anchors and aliases refused, nesting bounded,
every error one line naming the file (or flag) and the line, for every config that is read."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utp_env.cli import main
from utp_env.config import CONFIG_DIR, load_uncertainty
from utp_env.tools.yamlfile import MAX_DEPTH, YamlFileError, load_yaml_file, load_yaml_text


def _bomb(levels: int = 9, indent: str = "  ") -> str:
    """A billion-laughs file: nine lists of nine aliases of the level below (387 million strings)."""
    lines = [f"{indent}a0: &a0 [" + ", ".join(['"lol"'] * 9) + "]"]
    lines += [f"{indent}a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_plain_yaml_reads_as_before() -> None:
    assert load_yaml_text("a: 1\nb: [x, 2.5, true]\nc: {d: null}\n", "f.yaml") == {
        "a": 1, "b": ["x", 2.5, True], "c": {"d": None}}
    assert load_yaml_text("", "f.yaml") is None


@pytest.mark.parametrize(("text", "message"), [
    ("a: &x 1\nb: *x\n", "f.yaml line 1: YAML anchor &x refused"),
    ("a: 1\nb: *x\n", "f.yaml line 2: YAML alias *x refused"),
    ("base: &b {k: 1}\nother:\n  <<: *b\n", "f.yaml line 1: YAML anchor &b refused"),
    ("x: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n",
     f"f.yaml line 1: nested more than {MAX_DEPTH} levels deep"),
    ("a: [1,\n", "f.yaml line 2: invalid YAML: "),
    ("a: 1\n---\nb: 2\n", "f.yaml line 2: invalid YAML: expected a single document in the stream, but found another"),
    ("a: !!python/object:os.system x\n", "f.yaml line 1: invalid YAML: "),
])
def test_refused_yaml_is_one_line_naming_the_file_and_line(text: str, message: str) -> None:
    with pytest.raises(YamlFileError) as caught:
        load_yaml_text(text, "f.yaml")
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_a_flag_value_is_named_without_a_line() -> None:
    with pytest.raises(YamlFileError, match=r"^--set model: YAML anchor &a refused"):
        load_yaml_text("&a [1]", "--set model", lines=False)


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(YamlFileError, match=r"latin1\.yaml: not UTF-8 text \(byte 0xe9"):
        load_yaml_file(path)


@given(st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_any_text_loads_or_is_refused_in_one_line(text: str) -> None:
    try:
        load_yaml_text(text, "f.yaml")
    except YamlFileError as exc:
        assert str(exc).startswith("f.yaml") and "\n" not in str(exc)


def test_every_shipped_config_reads_through_it() -> None:
    paths = sorted(CONFIG_DIR.glob("*.yaml")) + sorted((CONFIG_DIR / "agents").glob("*.yaml"))
    assert len(paths) > 5
    for path in paths:
        assert isinstance(load_yaml_file(path), dict), path


# ---------------------------------------------------------------- every reader uses it

def test_an_alias_bomb_in_a_run_config_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("agent_settings:\n" + _bomb())
    assert bomb.stat().st_size < 1024
    out = tmp_path / "r"
    code = main(["run", "--config", str(bomb), "--profile", "mini", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1  # before: 5.8 GB, then a pydantic-core panic
    assert err[0].startswith(f"utp-env run: error: {bomb} line 2: YAML anchor &a0 refused")
    assert not out.exists()


def test_an_alias_in_a_set_value_is_refused(tmp_path: Path, capsys) -> None:
    code = main(["run", "--profile", "mini", "--set", "x=&a [*a]", "--out", str(tmp_path / "r"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["utp-env run: error: --set x: YAML anchor &a refused (anchors and aliases are "
                                 "not accepted: a few nested aliases expand to gigabytes); write each value out "
                                 "instead"]


def test_an_alias_in_an_agent_config_is_refused(tmp_path: Path, capsys) -> None:
    from utp_env.agents.registry import AgentConfigError, read_config

    path = tmp_path / "agent.yaml"
    path.write_text("agent: utp_env.agents.reference:ReferencePlanner\nextra: &e [1]\nmore: *e\n")
    with pytest.raises(AgentConfigError, match=rf"^{path} line 2: YAML anchor &e refused"):
        read_config(str(path))
    code = main(["run", "--profile", "mini", "--agent", str(path), "--out", str(tmp_path / "r"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"{path} line 2: YAML anchor &e refused" in err[0]


def test_an_alias_in_the_uncertainty_config_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "u.yaml"
    path.write_text("min_meal_gap_minutes: &g 240\ncongestion_factor: {L: *g}\n")
    with pytest.raises(ValueError, match=rf"^{path} line 1: YAML anchor &g refused"):
        load_uncertainty(path)


def test_an_alias_in_a_sandbox_profile_or_the_data_bounds_is_refused(tmp_path: Path) -> None:
    from utp_env.tools.integrity import DataError, load_bounds
    from utp_env.tools.sandbox.profiles import load_profile

    path = tmp_path / "p.yaml"
    path.write_text("name: &n x\nother: *n\n")
    with pytest.raises(ValueError, match=rf"^{path} line 1: YAML anchor &n refused"):
        load_profile(path)
    with pytest.raises(DataError, match="YAML anchor &n refused"):
        load_bounds(path)
