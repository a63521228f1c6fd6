"""The env's action grammar: `parse_action` turns an action into `ToolCall`s. Accepted forms, alone
or in a list, directly or as a JSON string:

- `{"tool": "search_flights", "args": {...}}` (`args` may be a JSON string or omitted);
- `{"name": ..., "arguments": ...}` (an OpenAI function object);
- OpenAI `tool_calls` entries `{"id": ..., "type": "function", "function": {"name", "arguments"}}`;
- an OpenAI assistant message `{"role": "assistant", "tool_calls": [...]}`.

Anything else raises `ActionError` whose message says what was wrong and shows the right format;
the env turns it into an error observation. Arguments are validated later, by the tool's model.
An action too large or nested deeper than `MAX_ACTION_DEPTH` is refused before it is read
(`check_action_size`); a vector env replaces it by a `RefusedAction` (utp_env/env/vector_spaces.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from utp_env.tools.json_depth import MAX_JSON_DEPTH

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


MAX_ACTION_DEPTH = MAX_JSON_DEPTH
"""How deeply an action may nest (objects and lists, counting the action itself as level 1): the
one bound of untrusted JSON (tools/json_depth.py); a whole plan in the paper's format nests about 8
deep inside an OpenAI tool_calls message."""


@dataclass(frozen=True, slots=True)
class RefusedAction:
    """What a vector env sends its sub-env in place of an action refused before it could travel:
    too deep or too large to be pickled to an async worker (`_iterate_tool_calls`). The env answers
    it as it answers the action itself: an error observation with `reason`, and a step counted."""

    reason: str


MAX_INT_BITS = 14_284  # about 4,300 decimal digits: Python's limit for turning an int into text


def _text_bytes(text: str, budget: int) -> int:
    """UTF-8 size of `text` (lone surrogates count 3 bytes), or more than `budget` when it is over."""
    if len(text) > budget:  # every character takes at least one byte
        return len(text)
    return len(text.encode("utf-8", errors="surrogatepass"))


def _scalar_bytes(value: Any) -> int:
    if value is None or isinstance(value, bool):
        return 5
    if isinstance(value, int):  # without str(): a 5,000-digit integer cannot be printed (ValueError)
        return value.bit_length() * 30103 // 100000 + 2
    if isinstance(value, float):
        return 24
    return 16  # another object: refused by the grammar or the tool's argument model later


def measure_action(action: Any, max_bytes: int, max_depth: int = MAX_ACTION_DEPTH) -> int:
    """The size in bytes of `action` as JSON text, measured without parsing or recursion.

    Counting stops as soon as the size passes `max_bytes` (the value returned is then larger
    than `max_bytes`, not exact). An `ActionError` when `action` nests deeper than `max_depth`
    (this also ends a self-containing list).
    """
    if isinstance(action, bytes | bytearray):
        return len(action)
    if isinstance(action, str):
        return _text_bytes(action, max_bytes)
    total = 0
    stack: list[tuple[Any, int]] = [(action, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            total += _text_bytes(value, max_bytes) + 2
        elif isinstance(value, dict | list | tuple):
            if depth > max_depth:
                raise ActionError(f"the action nests more than {max_depth} levels deep; send a flat tool call "
                                  f"such as {ACTION_FORMAT}")
            total += 2 + 2 * len(value)
            if total > max_bytes:
                return total
            if isinstance(value, dict):
                for key, item in value.items():
                    stack.append((key if isinstance(key, str) else str(type(key).__name__), depth + 1))
                    stack.append((item, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in value)
        else:
            if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
                raise ActionError("the action holds an integer of more than 4,300 digits; no argument takes one")
            total += _scalar_bytes(value)
        if total > max_bytes:
            return total
    return total


def action_size(action: Any, max_bytes: int = 2**62) -> int:
    """Approximate UTF-8 size of an action in bytes (as JSON when it is not text), measured
    before any parsing; at most a little over `max_bytes`. Depth is bounded by `measure_action`."""
    try:
        return measure_action(action, max_bytes)
    except ActionError:
        return max_bytes + 1


def check_action_size(action: Any, max_bytes: int) -> None:
    """`ActionError` when `action` is larger than `max_bytes` or nests deeper than `MAX_ACTION_DEPTH`,
    measured before anything is parsed (or pickled: `_iterate_tool_calls`); a `RefusedAction`
    raises its reason."""
    if isinstance(action, RefusedAction):
        raise ActionError(action.reason)
    size = measure_action(action, max_bytes)
    if size > max_bytes:
        what = str(size) if isinstance(action, str | bytes | bytearray) else f"more than {max_bytes}"
        raise ActionError(f"the action is {what} bytes; the limit is {max_bytes}. Send fewer or shorter "
                          "tool calls per step.")


def parse_action(action: Any, max_bytes: int = 65_536, max_calls: int = 32) -> list[ToolCall]:
    """The tool calls of `action`, in order; `ActionError` if it is oversized, too deep or malformed.

    The size (and, for objects, the depth) is measured before anything is parsed; JSON text is
    checked for depth after parsing, and so are arguments given as a JSON string.
    """
    check_action_size(action, max_bytes)
    if isinstance(action, bytes | bytearray):
        try:
            action = bytes(action).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ActionError(f"the action is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if isinstance(action, str):
        action = _json(action)
        measure_action(action, max_bytes)  # depth of what the text held
    if isinstance(action, dict) and "tool_calls" in action and "tool" not in action:
        action = action["tool_calls"]
        if not isinstance(action, list):
            raise ActionError("'tool_calls' must be a list of tool calls")
    items = action if isinstance(action, list | tuple) else [action]
    if not items:
        raise ActionError(f"the action holds no tool call; send {ACTION_FORMAT}")
    if len(items) > max_calls:
        raise ActionError(f"the action holds {len(items)} tool calls; the limit is {max_calls} per step")
    return [_call(item, i if len(items) > 1 else None, max_bytes) for i, item in enumerate(items)]


def _json(text: str) -> Any:
    stripped = text.strip()
    if not stripped:
        raise ActionError(f"the action is empty; send {ACTION_FORMAT}")
    try:
        return json.loads(stripped)
    except RecursionError:
        raise ActionError("the action nests too deeply to parse; send a flat tool call") from None
    except json.JSONDecodeError as exc:
        raise ActionError(f"the action is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
                          f"send {ACTION_FORMAT}") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise ActionError(f"the action cannot be read: {exc}") from None


def _check_args_text(args: str, where: str, max_bytes: int) -> None:
    """Bound the depth of arguments sent as a JSON string (their syntax is the tool's to report)."""
    try:
        parsed = json.loads(args)
    except RecursionError:
        raise ActionError(f"{where}the arguments nest too deeply to parse") from None
    except ValueError:
        return
    try:
        measure_action(parsed, max_bytes)
    except ActionError as exc:
        raise ActionError(f"{where}arguments: {exc}") from None


def _call(item: Any, position: int | None, max_bytes: int = 65_536) -> ToolCall:
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


