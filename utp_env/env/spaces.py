"""The env's gymnasium spaces.

`TextObservation` accepts any `str` up to `max_length` characters (gymnasium's `Text` allows only a
small alphabet). `ToolCallSpace` accepts what `parse_action` (utp_env/env/actions.py) accepts, with
every call naming a known tool and carrying arguments its model validates; its `sample()` draws a
valid, harmless call (view the plan, or a lookup about random cities of the database) from the
space's own generator. utp_env/env/vector_spaces.py registers both with gymnasium's vector
utilities (utp_env/env/core.py imports it), so `make_vec` works in `sync` and `async` mode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium.spaces import Space

from utp_env.env.actions import ActionError, parse_action

if TYPE_CHECKING:
    from utp_env.tools.toolkit import ToolSpec

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


