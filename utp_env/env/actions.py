"""Parse an env action into tool calls.

Accepted forms (DESIGN section 7), alone or in a list, directly or as a JSON string:

- `{"tool": "search_flights", "args": {...}}` (`args` may be a JSON string or omitted);
- `{"name": ..., "arguments": ...}` (an OpenAI function object);
- OpenAI `tool_calls` entries `{"id": ..., "type": "function", "function": {"name", "arguments"}}`;
- an OpenAI assistant message `{"role": "assistant", "tool_calls": [...]}`.

Anything else raises `ActionError` whose message says what was wrong and shows the right format;
the env turns it into an error observation. Arguments are validated later, by the tool's model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

ACTION_FORMAT = ('{"tool": "<tool name>", "args": {<named arguments>}} — or a JSON list of such calls, '
                 'or OpenAI tool_calls entries {"id": ..., "type": "function", '
                 '"function": {"name": ..., "arguments": "<JSON object>"}}')


class ActionError(ValueError):
    """An action that is not a well-formed tool call (or list of them); the message says how to fix it."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One parsed call: the tool name, its raw arguments (dict or JSON string) and the caller's id."""

    tool: str
    args: dict[str, Any] | str | None
    call_id: str | None = None


def action_size(action: Any) -> int:
    """Approximate UTF-8 size of an action in bytes (JSON-encoded when it is not a string)."""
    if isinstance(action, bytes):
        return len(action)
    if isinstance(action, str):
        return len(action.encode("utf-8", errors="surrogatepass"))
    try:
        return len(json.dumps(action, default=str, ensure_ascii=False).encode("utf-8", errors="surrogatepass"))
    except (TypeError, ValueError, RecursionError):
        return 0


def parse_action(action: Any, max_bytes: int = 65_536, max_calls: int = 32) -> list[ToolCall]:
    """The tool calls of `action`, in order; `ActionError` if it is oversized or malformed."""
    size = action_size(action)
    if size > max_bytes:
        raise ActionError(f"the action is {size} bytes; the limit is {max_bytes}. Send fewer or shorter "
                          "tool calls per step.")
    if isinstance(action, bytes):
        try:
            action = action.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ActionError(f"the action is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if isinstance(action, str):
        action = _json(action)
    if isinstance(action, dict) and "tool_calls" in action and "tool" not in action:
        action = action["tool_calls"]
        if not isinstance(action, list):
            raise ActionError("'tool_calls' must be a list of tool calls")
    items = action if isinstance(action, list | tuple) else [action]
    if not items:
        raise ActionError(f"the action holds no tool call; send {ACTION_FORMAT}")
    if len(items) > max_calls:
        raise ActionError(f"the action holds {len(items)} tool calls; the limit is {max_calls} per step")
    return [_call(item, i if len(items) > 1 else None) for i, item in enumerate(items)]


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped:
        raise ActionError(f"the action is empty; send {ACTION_FORMAT}")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise ActionError(f"the action is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                          f"send {ACTION_FORMAT}") from None
    except RecursionError:
        raise ActionError("the action nests too deeply to parse; send a flat tool call") from None


def _call(item: Any, position: int | None) -> ToolCall:
    where = f"call {position}: " if position is not None else ""
    if not isinstance(item, dict):
        raise ActionError(f"{where}a tool call must be a JSON object, not {type(item).__name__}; send {ACTION_FORMAT}")
    call_id = item.get("id")
    call_id = str(call_id) if isinstance(call_id, str | int) else None
    if "function" in item:
        fn = item["function"]
        if not isinstance(fn, dict):
            raise ActionError(f"{where}'function' must be an object with 'name' and 'arguments'")
        name, args = fn.get("name"), fn.get("arguments")
    elif "tool" in item:
        name, args = item.get("tool"), item.get("args", item.get("arguments"))
        extra = set(item) - {"tool", "args", "arguments", "id"}
        if extra:
            raise ActionError(f"{where}unexpected key(s) {sorted(extra)} next to 'tool'; put tool arguments "
                              "inside 'args'")
    elif "name" in item:
        name, args = item.get("name"), item.get("arguments", item.get("args"))
    else:
        raise ActionError(f"{where}no tool named: the call needs a 'tool' key; send {ACTION_FORMAT}")
    if not isinstance(name, str) or not name.strip():
        raise ActionError(f"{where}the tool name must be a non-empty string, got {json.dumps(name, default=str)[:60]}")
    if args is not None and not isinstance(args, dict | str):
        raise ActionError(f"{where}arguments of {name!r} must be a JSON object (or a string holding one), "
                          f"not {type(args).__name__}")
    return ToolCall(tool=name.strip(), args=args, call_id=call_id)
