"""Bounded memos of pure functions: the one place where a memo's bound is kept.

The parser, the evaluator and name matching remember answers that plans ask for again and again
(a name's normal form, a clock token, a venue found in a city). Each memo is a plain dict read at
its call site (a `dict.get` is the cheapest lookup on those hot paths); a new answer is stored with
`remember`, which empties a memo that has reached its bound first, so memory stays bounded however
long a process runs and however varied its plans are.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def remember(memo: dict[K, V], key: K, value: V, limit: int) -> V:
    """Store `value` under `key` in `memo` and return it; a memo already holding `limit` entries is
    emptied first (it starts afresh rather than grow without bound)."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value
