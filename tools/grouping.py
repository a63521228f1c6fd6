"""Row indices grouped by normalized key values: the hash indices behind every keyed lookup."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from utp_env.tools.names import normalize

EMPTY = np.empty(0, dtype=np.int64)


def codes_of(values: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Integer codes of the normalized values and the normalized names they stand for."""
    # Codes in first-occurrence order, mapped in C (dict.fromkeys, map) rather than a Python loop per row.
    raw_code = {v: i for i, v in enumerate(dict.fromkeys(values))}
    raw = np.fromiter(map(raw_code.__getitem__, values), dtype=np.int64, count=len(values))
    names: list[str] = []
    code_of: dict[str, int] = {}
    remap = np.empty(len(raw_code), dtype=np.int64)
    for value, i in raw_code.items():
        key = normalize(value)
        if key not in code_of:
            code_of[key] = len(names)
            names.append(key)
        remap[i] = code_of[key]
    return remap[raw], names


class Grouping:
    """Row indices grouped by normalized key: one sorted order array and a (start, end) per key,
    so that grouping a 250k-row table costs a sort, not 250k small arrays."""

    def __init__(self, order: np.ndarray, spans: dict[tuple[str, ...], tuple[int, int]]) -> None:
        self.order = order
        self.spans = spans

    def get(self, key: tuple[str, ...], default: np.ndarray | None = None) -> np.ndarray | None:
        span = self.spans.get(key)
        return default if span is None else self.order[span[0]:span[1]]

    def __contains__(self, key: object) -> bool:
        return key in self.spans

    def __len__(self) -> int:
        return len(self.spans)

    def items(self) -> Iterator[tuple[tuple[str, ...], np.ndarray]]:
        return ((k, self.order[a:b]) for k, (a, b) in self.spans.items())


def group(columns: dict[str, Any], keys: Sequence[str], n: int) -> Grouping:
    """Row indices by the normalized value(s) of the `keys` columns, rows in order within a group."""
    if n == 0:
        return Grouping(EMPTY, {})
    combined = np.zeros(n, dtype=np.int64)
    parts = []
    for column in keys:
        codes, names = codes_of(columns[column])
        combined = combined * max(len(names), 1) + codes
        parts.append((codes, np.array(names, dtype=object)))
    order = np.argsort(combined, kind="stable")
    sorted_keys = combined[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    ends = np.r_[starts[1:], n]
    first_rows = order[starts]
    group_keys = zip(*(names[codes[first_rows]].tolist() for codes, names in parts), strict=True)
    return Grouping(order, dict(zip(group_keys, zip(starts.tolist(), ends.tolist(), strict=True), strict=True)))
