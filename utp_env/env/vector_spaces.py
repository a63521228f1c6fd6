"""The env's spaces in gymnasium's vector envs: registered with `batch_space`, `iterate` and the
shared-memory functions of `gymnasium.vector.utils` when this module is imported (utp_env/env/core.py
imports it, so every env made has them).

A vector env's action space is a `ToolCallBatch`: an action too large or nested deeper than
`MAX_ACTION_DEPTH` is replaced by a `RefusedAction` in the parent, before an async worker is sent it
(pickling a 100,000-deep list raises `RecursionError`), and answered with the same error as in a
single env. Observations of an async vector env travel through shared memory as code points
(`SharedTexts`).
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Iterator
from collections.abc import Sequence as SequenceABC
from copy import deepcopy
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium.spaces import Tuple
from gymnasium.vector.utils import (
    batch_space,
    create_shared_memory,
    iterate,
    read_from_shared_memory,
    write_to_shared_memory,
)

from utp_env.env.actions import ActionError, RefusedAction, check_action_size
from utp_env.env.spaces import TextObservation, ToolCallSpace


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

