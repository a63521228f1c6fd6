"""The one YAML reader of utp-env: safe, without anchors and aliases, nesting bounded, errors in one line.

Every config file (run configs, agent configs, `configs/*.yaml`, sandbox profiles, data bounds)
and every `--set KEY=VALUE` value is read through `load_yaml_text` / `load_yaml_file`. YAML
anchors (`&name`) and aliases (`*name`) are refused: nine nested aliases in a 500-byte file expand
to 387 million strings, and a 1 KB run config grew to 5.8 GB before this reader existed.
No config of utp-env needs them; a value used twice is written twice. Nesting deeper than
`MAX_DEPTH` is refused too (PyYAML composes recursively). Each error names the file (or the flag)
and the line, and says what to do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MAX_DEPTH = 100
"""Deepest nesting of mappings and lists accepted in a YAML file (configs nest four or five levels)."""


class YamlFileError(ValueError):
    """A YAML text that is refused; the message is one line naming the source and the line."""


class _Refused(Exception):
    """Raised inside the loader; turned into a YamlFileError naming the source."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's SafeLoader, refusing anchors, aliases and nesting deeper than MAX_DEPTH."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        line = event.start_mark.line + 1 if event.start_mark is not None else 0
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(line, f"YAML alias *{event.anchor} refused (anchors and aliases are not accepted: "
                                 "a few nested aliases expand to gigabytes); write the value out instead")
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise _Refused(line, f"YAML anchor &{anchor} refused (anchors and aliases are not accepted: "
                                 "a few nested aliases expand to gigabytes); write each value out instead")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Refused(line, f"nested more than {MAX_DEPTH} levels deep; a config needs a few levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load_yaml_text(text: str, source: str, lines: bool = True) -> Any:
    """The value of the YAML document `text`; `source` (a file name, or e.g. `--set model`) names it
    in errors, followed by the line unless `lines` is False (a one-line flag value). A
    `YamlFileError` (a ValueError) in one line for invalid YAML, an anchor or alias, or nesting
    deeper than MAX_DEPTH."""
    loader: _BoundedLoader | None = None
    try:
        loader = _BoundedLoader(text)  # reads the text at once: a control character is refused here
        return loader.get_single_data()
    except _Refused as exc:
        raise YamlFileError(f"{source}{f' line {exc.line}' if lines else ''}: {exc.message}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" line {mark.line + 1}" if mark is not None and lines else ""
        what = " ".join(", ".join(str(part) for part in (exc.context, exc.problem) if part).split()) or "unreadable"
        raise YamlFileError(f"{source}{where}: invalid YAML: {what}") from None
    except yaml.YAMLError as exc:
        raise YamlFileError(f"{source}: invalid YAML: {' '.join(str(exc).split())}") from None
    finally:
        if loader is not None:
            loader.dispose()


def load_yaml_file(path: str | Path) -> Any:
    """The value of the YAML file `path` (UTF-8), read with `load_yaml_text`; an unreadable file is a
    `YamlFileError` naming it too."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise YamlFileError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
                            "save it as UTF-8") from None
    return load_yaml_text(text, str(path))
