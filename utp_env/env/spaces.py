"""The env's action grammar and its gymnasium spaces.

Actions. `parse_action` turns an action into `ToolCall`s. Accepted forms, alone or in a list,
directly or as a JSON string:

- `{"tool": "search_flights", "args": {...}}` (`args` may be a JSON string or omitted);
- `{"name": ..., "arguments": ...}` (an OpenAI function object);
- OpenAI `tool_calls` entries `{"id": ..., "type": "function", "function": {"name", "arguments"}}`;
- an OpenAI assistant message `{"role": "assistant", "tool_calls": [...]}`.

Anything else raises `ActionError` whose message says what was wrong and shows the right format;
the env turns it into an error observation. Arguments are validated later, by the tool's model.

Spaces. `TextObservation` accepts any `str` up to `max_length` characters (gymnasium's `Text`
allows only a small alphabet). `ToolCallSpace` accepts what `parse_action` accepts, with every
call naming a known tool and carrying arguments its model validates; its `sample()` draws a
valid, harmless call (view the plan, or a lookup about random cities of the database) from the
space's own generator. Both register with gymnasium's vector utilities, so `make_vec` works in
`sync` and `async` mode (observations travel through shared memory as code points). A vector env's
action space is a `ToolCallBatch`: an action too large or nested deeper than `MAX_ACTION_DEPTH` is
replaced by a `RefusedAction` in the parent, before an async worker is sent it (pickling a
100,000-deep list raises `RecursionError`), and answered with the same error as in a single env.
"""

from __future__ import annotations

import json
import multiprocessing as mp
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Sequence as SequenceABC
from copy import deepcopy
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium.spaces import Space, Tuple
from gymnasium.vector.utils import (
    batch_space,
    create_shared_memory,
    iterate,
    read_from_shared_memory,
    write_to_shared_memory,
)

from utp_env.tools.json_depth import MAX_JSON_DEPTH

if TYPE_CHECKING:
    from utp_env.tools.toolkit import ToolSpec

# ---------------------------------------------------------------- actions

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


# ---------------------------------------------------------------- spaces


_SAMPLE_ALPHABET = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;-_()[]{}\n"
                                 "éñüहिंदीதமிழ்₹"))


class TextObservation(Space[str]):
    """Any string of at most `max_length` characters."""

    def __init__(self, max_length: int = 200_000, seed: int | np.random.Generator | None = None) -> None:
        self.max_length = int(max_length)
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A random short string (up to 64 characters) drawn with the space's generator."""
        n = int(self.np_random.integers(0, min(64, self.max_length) + 1))
        return "".join(self.np_random.choice(_SAMPLE_ALPHABET, size=n).tolist())

    def __repr__(self) -> str:
        return f"TextObservation(max_length={self.max_length})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TextObservation) and other.max_length == self.max_length

    def __hash__(self) -> int:
        return self.max_length


class ToolCallSpace(Space[Any]):
    """Tool-call actions over a set of tools (name -> `ToolSpec`), sampled over `cities`."""

    def __init__(self, tools: Mapping[str, ToolSpec[Any]], cities: Sequence[str], max_bytes: int = 65_536,
                 max_calls: int = 32, seed: int | np.random.Generator | None = None) -> None:
        self.tools = dict(tools)
        self.cities = list(cities)
        self.max_bytes = max_bytes
        self.max_calls = max_calls
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        """True when `x` parses as tool calls that all name known tools with valid arguments."""
        try:
            calls = parse_action(x, self.max_bytes, self.max_calls)
        except ActionError:
            return False
        for call in calls:
            spec = self.tools.get(call.tool)
            if spec is None or isinstance(spec.parse_args(call.args), str):
                return False
        return True

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        """A valid call that does not end the episode: view_plan or a lookup about random cities."""
        rng = self.np_random
        options: list[dict[str, Any]] = [{"tool": "view_plan", "args": {}}]
        if self.cities:
            a, b = (self.cities[int(i)] for i in rng.integers(0, len(self.cities), size=2))
            for tool in ("search_attractions", "search_restaurants", "search_stays"):
                options.append({"tool": tool, "args": {"city": a, "limit": int(rng.integers(1, 6))}})
            if a != b:
                options.append({"tool": "distance", "args": {"origin": a, "destination": b}})
                options.append({"tool": "cab_route", "args": {"origin": a, "destination": b}})
        options = [o for o in options if o["tool"] in self.tools] or [{"tool": next(iter(self.tools)), "args": {}}]
        return options[int(rng.integers(0, len(options)))]

    def __repr__(self) -> str:
        return f"ToolCallSpace({len(self.tools)} tools, {len(self.cities)} cities)"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ToolCallSpace) and list(other.tools) == list(self.tools)
                and other.cities == self.cities)

    def __hash__(self) -> int:
        return len(self.tools)


# ---------------------------------------------------------------- vector envs: actions


class ToolCallBatch(Tuple):
    """The action space of a vector env over `ToolCallSpace`s: gymnasium's batch of a custom space (a
    `Tuple` of n seeded copies), whose `iterate` checks every action before a sub-env receives it."""


@batch_space.register(ToolCallSpace)
def _batch_tool_calls(space: ToolCallSpace, n: int = 1) -> ToolCallBatch:
    """As gymnasium batches any custom space (`_batch_space_custom`: n deep copies, seeded from the
    space's generator, so sampling is unchanged), as a `ToolCallBatch`."""
    batched = ToolCallBatch(tuple(deepcopy(space) for _ in range(n)), seed=deepcopy(space.np_random))
    rng = deepcopy(space.np_random)
    batched.seed(list(map(int, rng.integers(0, int(1e8), n))))
    return batched


@iterate.register(ToolCallBatch)
def _iterate_tool_calls(space: ToolCallBatch, items: Any) -> Iterator[Any]:  # type: ignore[misc]  # Space[_T]
    """Each sub-env's action, with the ones too large or too deep replaced by a `RefusedAction`.

    An async vector env pickles each action to its worker: a 100,000-deep list would raise
    `RecursionError` in the parent, mid-send, and leave the vector env unusable. Checked here (the
    same size and depth bounds as `parse_action`, without recursion), such an action never travels;
    its sub-env answers the `RefusedAction` as it answers the action in a single env."""
    for sub, action in zip(space.spaces, items, strict=True):
        assert isinstance(sub, ToolCallSpace)
        try:
            check_action_size(action, sub.max_bytes)
        except ActionError as exc:
            action = RefusedAction(str(exc))
        yield action


# ---------------------------------------------------------------- async vector env: shared memory


@create_shared_memory.register(TextObservation)
def _create_text_memory(space: TextObservation, n: int = 1, ctx: ModuleType = mp) -> Any:
    """One int32 slot for the length plus `max_length` code points per env."""
    return ctx.Array(np.dtype(np.int32).char, n * (space.max_length + 1))


class SharedTexts(SequenceABC[str]):
    """A live view of the n texts in shared memory: each access decodes the current contents
    (like the numpy views gymnasium returns for arrays); `deepcopy` gives a plain tuple."""

    def __init__(self, data: np.ndarray) -> None:
        self._data = data

    def __len__(self) -> int:
        return self._data.shape[0]

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return tuple(self[k] for k in range(*i.indices(len(self))))
        row = self._data[i]
        return "".join(map(chr, row[1:1 + int(row[0])].tolist()))

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return f"SharedTexts({tuple(self)!r})"


@read_from_shared_memory.register(TextObservation)
def _read_text_memory(space: TextObservation, shared_memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape(n, space.max_length + 1))


@write_to_shared_memory.register(TextObservation)
def _write_text_memory(space: TextObservation, index: int, value: str, shared_memory: Any) -> None:
    size = space.max_length + 1
    dest = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[index * size:(index + 1) * size]
    codes = np.fromiter(map(ord, value), dtype=np.int32, count=len(value))
    dest[0] = codes.size
    dest[1:1 + codes.size] = codes
