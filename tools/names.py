"""Name matching: how the database compares names, and the suggestions an unknown name gets."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from utp_env.tools.memo import remember

_NORMALIZED: dict[str, str] = {}
_NORMALIZED_MAX = 1 << 16  # entries kept before the memo starts afresh (bounded memory)


def normalize(name: str) -> str:
    """Canonical form of a name for matching: collapsed whitespace, case-folded.

    Names repeat (every plan and lookup compares the same venues), so results for `str` input are
    memoised; the memo is a pure function's cache and is cleared when it reaches its bound.
    """
    if type(name) is str:
        hit = _NORMALIZED.get(name)
        if hit is None:
            hit = remember(_NORMALIZED, name, " ".join(name.split()).casefold(), _NORMALIZED_MAX)
        return hit
    return " ".join(str(name).split()).casefold()


def suggest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The closest known names to `name`, best first (for 'did you mean' errors)."""
    pool = {normalize(c): c for c in candidates}
    key = normalize(name)
    close = difflib.get_close_matches(key, list(pool), n=n, cutoff=0.6)
    if len(close) < n:
        close += [k for k in pool if key and (key in k or k in key) and k not in close][: n - len(close)]
    return [pool[k] for k in close]
