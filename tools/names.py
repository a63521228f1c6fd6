"""Name matching: how the database compares names, and the suggestions an unknown name gets."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def normalize(name: str) -> str:
    """Canonical form of a name for matching: collapsed whitespace, case-folded."""
    return " ".join(str(name).split()).casefold()


def suggest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The closest known names to `name`, best first (for 'did you mean' errors)."""
    pool = {normalize(c): c for c in candidates}
    key = normalize(name)
    close = difflib.get_close_matches(key, list(pool), n=n, cutoff=0.6)
    if len(close) < n:
        close += [k for k in pool if key and (key in k or k in key) and k not in close][: n - len(close)]
    return [pool[k] for k in close]
