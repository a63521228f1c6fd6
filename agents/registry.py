"""Load an agent from a name, a YAML config file or a `module:Class` import path.

A config file is YAML with an `agent: module:Class` key and the agent's settings beside it:

    agent: utp_env.agents.llm.direct:DirectAgent
    model: openai:gpt-4o-mini
    temperature: 0.0
    uncertainty: true

The short names `reference`, `deterministic`, `no_repair`, `direct`, `direct_no_uncertainty`,
`direct_metric_aware` (an ablation), `atlas`, `atlas_uncertainty` and `tool_calling` stand for
`configs/agents/<name>.yaml` (`reference`, `deterministic` and `no_repair` have built-in
defaults when their file is absent). The class is imported by its path, never
by `eval`; the settings (file values updated by `overrides`) are checked against the class's
`Settings` pydantic model when it has one, else against its constructor's parameters, so an
unknown or mistyped key is an error that names the key and lists the valid ones.
"""

from __future__ import annotations

import importlib
import inspect
import re
import traceback
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from utp_env.config import CONFIG_DIR
from utp_env.tools.yamlfile import YamlFileError, load_yaml_file

AGENT_CONFIG_DIR = CONFIG_DIR / "agents"
NAMES = ("reference", "deterministic", "no_repair", "direct", "direct_no_uncertainty", "direct_metric_aware", "atlas",
         "atlas_uncertainty", "tool_calling")
# Used when configs/agents/<name>.yaml is absent (the reference planner has no model settings).
BUILTIN: dict[str, dict[str, Any]] = {
    "reference": {"agent": "utp_env.agents.reference:ReferencePlanner"},
    "deterministic": {"agent": "utp_env.agents.reference:ReferencePlanner", "buffers": False},
    "no_repair": {"agent": "utp_env.agents.no_repair:NoRepairAgent"},
}
IMPORT_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")


class AgentConfigError(ValueError):
    """An agent name, config file, import path or setting is wrong; the message says which and how to fix."""


def import_agent_class(path: str, where: str = "agent") -> type:
    """The class at `module:Class` (a dotted module path and a class name; nothing else is accepted)."""
    if not isinstance(path, str) or not IMPORT_PATH.match(path):
        raise AgentConfigError(f"{where}: {path!r} is not an import path; write 'package.module:ClassName', "
                               "e.g. 'utp_env.agents.llm.direct:DirectAgent'")
    module_name, cls_name = path.split(":")
    try:
        module = importlib.import_module(module_name)
    except SyntaxError as exc:  # the user's module does not parse: where, not a traceback
        raise AgentConfigError(f"{where}: module {module_name!r} has a syntax error at {exc.filename}, line "
                               f"{exc.lineno}: {exc.msg}; fix the file and run again") from None
    except ImportError as exc:
        raise AgentConfigError(f"{where}: cannot import module {module_name!r} ({exc}); check the path and that "
                               "the package is installed or on PYTHONPATH") from exc
    except Exception as exc:  # the module's own code raised while it was imported
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        raise AgentConfigError(f"{where}: importing module {module_name!r} raised {type(exc).__name__}: {exc} "
                               f"(at {frame.filename}, line {frame.lineno}); fix the module and run again") from exc
    cls = getattr(module, cls_name, None)
    if not isinstance(cls, type):
        raise AgentConfigError(f"{where}: module {module_name!r} has no class {cls_name!r}")
    if not callable(getattr(cls, "run", None)):
        raise AgentConfigError(f"{where}: {path} has no run(query, toolkit) method; see docs/AGENTS.md")
    return cls


def read_config(source: str | Path) -> tuple[dict[str, Any], str]:
    """The settings mapping of a config name or file, and a label naming where it came from."""
    path = Path(source)
    if isinstance(source, str) and source in NAMES:
        path = AGENT_CONFIG_DIR / f"{source}.yaml"
        if not path.exists() and source in BUILTIN:
            return dict(BUILTIN[source]), f"agent {source} (built-in)"
        if not path.exists():
            raise AgentConfigError(f"agent {source!r}: its config {path} is missing")
    elif not path.exists():
        import difflib

        close = difflib.get_close_matches(str(source), NAMES, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]}? " if close else ""
        raise AgentConfigError(f"unknown agent {str(source)!r}: {hint}give one of {', '.join(NAMES)}, a YAML config "
                               "file, or an import path 'package.module:ClassName'")
    try:
        data = load_yaml_file(path)
    except YamlFileError as exc:
        raise AgentConfigError(str(exc)) from None
    if not isinstance(data, dict) or "agent" not in data:
        raise AgentConfigError(f"{path}: expected a mapping with an 'agent: package.module:ClassName' key")
    return data, str(path)


def unknown_settings_error(cls: type, unknown: list[str], valid: list[str], where: str,
                           given: frozenset[str] = frozenset()) -> AgentConfigError:
    """The one-line error for settings `cls` does not take: names them, where they came from (`given`: the
    ones passed with --set or a run config's agent_settings, not the config file `where`), the closest valid
    name, and the valid ones."""
    import difflib

    close = difflib.get_close_matches(unknown[0], valid, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    if set(unknown) <= given:
        origin = f"--set {unknown[0]}" if len(unknown) == 1 else f"--set {', '.join(unknown)}"
        return AgentConfigError(f"{origin}: unknown setting(s) {', '.join(unknown)} for {cls.__name__} ({where}); "
                                f"{hint}valid settings: {', '.join(valid) or 'none'}")
    return AgentConfigError(f"{where}: unknown setting(s) {', '.join(unknown)} for {cls.__name__}; {hint}"
                            f"valid settings: {', '.join(valid) or 'none'}")


def check_settings(cls: type, settings: dict[str, Any], where: str,
                   given: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Validate settings against `cls.Settings` (pydantic) or the constructor; return them unchanged.
    `given`: the names that came from --set (or a run config) rather than from `where`."""
    model = getattr(cls, "Settings", None)
    if isinstance(model, type) and issubclass(model, BaseModel):
        unknown = sorted(set(settings) - set(model.model_fields))
        if unknown:
            raise unknown_settings_error(cls, unknown, list(model.model_fields), where, given)
        try:
            model.model_validate(settings)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            field = ".".join(str(p) for p in first["loc"]) or "settings"
            origin = (f"setting {field} (given with --set)" if field.split(".")[0] in given
                      else f"{where}: setting {field}")
            raise AgentConfigError(f"{origin}: {first['msg']} (got {first.get('input')!r})") from exc
        return settings
    params = inspect.signature(cls).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return settings
    unknown = sorted(set(settings) - set(params))
    if unknown:
        raise unknown_settings_error(cls, unknown, list(params), where, given)
    return settings


def load_agent(source: str | Path, overrides: dict[str, Any] | None = None) -> Any:
    """Build an agent from a short name, a YAML config file, or a `module:Class` path.

    `overrides` update the file's settings (e.g. `{"model": "openai:gpt-4o", "K": 2}`); the key
    `agent` in overrides replaces the class.
    """
    overrides = dict(overrides or {})
    if isinstance(source, str) and ":" in source and not Path(source).exists() and source not in NAMES:
        data: dict[str, Any] = {"agent": source}
        where = f"agent {source}"
    else:
        data, where = read_config(source)
    data.update(overrides)
    cls = import_agent_class(data.pop("agent"), where)
    settings = check_settings(cls, data, where, frozenset(overrides))
    return cls(**settings)
