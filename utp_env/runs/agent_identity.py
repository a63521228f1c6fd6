"""The identity of a run's agent: its class, its code and its settings, hashed.

A run folder's results hold only for the agent that made them. `utp-env run` records the agent's
identity in `config.json` and stamps its hash on every record (`agent_hash`); resuming a folder
with an agent whose code or settings changed is refused, naming what changed, unless the user
passes `--accept-agent-change` (docs/RUNS.md, "The agent's identity").

The agent's code is:

- for a class from an installed distribution (a module under `site-packages`/`dist-packages`),
  that distribution's name and version (`utp-env==0.4.0`): an installed package changes by version;
- otherwise (a module in a source tree: the user's `my_pkg.my_mod`, an editable install such as
  a development checkout of utp-env), the SHA-256 of the source of the folder each module is in:
  every `.py` file of the module's package folder (not its subfolders), or the module file alone
  for a top-level module, for the module of the class and of each of its base classes.

So editing `my_pkg/my_mod.py`, or a helper beside it in `my_pkg/`, changes the identity; editing
an unrelated package does not. The settings are the agent's resolved settings (its config file's
values updated by `--set`).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

INSTALLED = ("site-packages", "dist-packages")
HASH_CHARS = 16


def _module_file(name: str) -> Path | None:
    module = sys.modules.get(name)
    file = getattr(module, "__file__", None)
    return Path(file).resolve() if file else None


def _distribution(name: str, file: Path) -> str | None:
    """'dist==version' of the installed distribution providing module `name` at `file`, or None
    when the file is not installed (a source tree, an editable install)."""
    if not any(part in INSTALLED for part in file.parts):
        return None
    top = name.split(".")[0]
    for dist in metadata.packages_distributions().get(top, []):
        try:
            return f"{dist}=={metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            continue
    return None


def _package(name: str) -> str | None:
    """The package a module's code is hashed with: the module itself when it is a package, its
    parent package for a module in one, None for a top-level module (hashed alone)."""
    module = sys.modules.get(name)
    if getattr(module, "__path__", None) is not None:
        return name
    return name.rpartition(".")[0] or None


def _source_files(file: Path, package: str | None) -> list[Path]:
    """The files whose text is a module's code: its package folder's .py files, or the file alone."""
    if package is None:
        return [file]
    return sorted(p for p in file.parent.glob("*.py") if p.is_file())


def code_identity(cls: type) -> dict[str, str]:
    """{module or folder: 'dist==version' or 'sha256:<hex>'} for the class and its base classes
    (builtins and the standard library left out)."""
    stdlib = Path(sys.modules["json"].__file__ or "").resolve().parent.parent
    out: dict[str, str] = {}
    for klass in cls.__mro__:
        name = klass.__module__
        file = _module_file(name)
        if file is None or file.suffix != ".py" or (file.is_relative_to(stdlib)
                                                    and not any(p in INSTALLED for p in file.parts)):
            continue
        dist = _distribution(name, file)
        if dist is not None:
            out[name.split(".")[0]] = dist
            continue
        package = _package(name)
        key = package or name
        if key in out:
            continue
        files = _source_files(file, package)
        digest = hashlib.sha256()
        for path in files:
            digest.update(path.name.encode() + b"\0")
            try:
                digest.update(path.read_bytes())
            except OSError:
                digest.update(b"<unreadable>")
            digest.update(b"\0")
        out[key] = f"sha256:{digest.hexdigest()}"
    return dict(sorted(out.items()))


def agent_identity(cls: type, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The agent's identity: class, code (`code_identity`), settings, and `hash` of the three."""
    identity: dict[str, Any] = {"class": f"{cls.__module__}:{cls.__qualname__}", "code": code_identity(cls),
                                "settings": json.loads(json.dumps(dict(settings), sort_keys=True, default=str))}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    identity["hash"] = hashlib.sha256(text.encode()).hexdigest()[:HASH_CHARS]
    return identity


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    if text.startswith("sha256:"):
        return text[7:19]
    return text if len(text) <= 40 else text[:37] + "..."


def _entry_changes(old: Any, new: Any, label: str, missing: str, whole: str) -> list[str]:
    """Each entry of two mappings that differs, as 'label: old in the folder, new here' (`missing`
    for an entry one side lacks); `whole` when they are not both mappings and differ."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return [whole] if old != new else []
    return [f"{label.format(key)}: {_short(old.get(key, missing))} in the folder, {_short(new.get(key, missing))} here"
            for key in sorted(set(old) | set(new)) if old.get(key) != new.get(key)]


def identity_changes(saved: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """What differs between two agent identities, as short phrases ('its class', 'the code of
    my_pkg (my_pkg/*.py): 1a2b3c4d5e6f in the folder, 9f8e7d6c5b4a here', 'setting buffers: ...')."""
    out: list[str] = []
    if saved.get("class") != current.get("class"):
        out.append(f"its class: {_short(saved.get('class'))} in the folder, {_short(current.get('class'))} here")
    out += _entry_changes(saved.get("code") or {}, current.get("code") or {}, "the code of {}", "absent", "its code")
    out += _entry_changes(saved.get("settings") or {}, current.get("settings") or {}, "setting {}", "unset",
                          "its settings")
    if not out and saved.get("hash") != current.get("hash"):
        out.append("its recorded identity")
    return out
