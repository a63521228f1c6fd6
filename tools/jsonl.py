"""One line of a JSON-lines file, decoded on its own: the value, or the one-line reason it is none.

Every reader of a `.jsonl` file that must survive bad lines (run records, plan files) decodes
through `decode_json_line`, so a bad byte, a line nested too deeply for Python's parser or an
integer of more than 4,300 digits costs that line alone and is named the same way everywhere.
"""

from __future__ import annotations

import json
from typing import Any


def decode_json_line(raw: bytes) -> tuple[Any, str | None]:
    """(value, None) for a line of UTF-8 JSON, else (None, why it is not one)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
    text = text.rstrip("\r\n")  # the line's end is not part of its JSON (an error there is at its last column)
    try:
        return json.loads(text), None
    except RecursionError:
        return None, "invalid JSON (nested too deeply to read)"
    except json.JSONDecodeError as exc:
        if exc.pos >= len(text.rstrip()):
            return None, f"invalid JSON (the line ends after column {len(text)} before the JSON does: cut off?)"
        at = "" if exc.msg.endswith(" at") else " at"  # ("Unterminated string starting at")
        return None, f"invalid JSON ({exc.msg}{at} column {exc.pos + 1})"
    except ValueError:  # Python reads no integer of more than 4,300 digits
        return None, "invalid JSON (an integer of more than 4,300 digits)"
