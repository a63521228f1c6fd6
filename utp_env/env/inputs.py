"""What a caller hands the env, checked at the boundary: `reset`'s seed and options (each bad one a
one-line `ValueError` naming it), the message of a failed `reset`, and a bounded preview of any
input for a message or the trace (it never recurses deeply and never raises).
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any

import numpy as np
from pydantic import ValidationError

from utp_env.query import SPLITS, Query
from utp_env.tools.errors import first_validation_error
from utp_env.tools.json_depth import check_depth


def checked_seed(seed: Any) -> int | None:
    """`reset`'s seed as an int (numpy integers accepted), or None; `ValueError` for anything else."""
    if seed is None:
        return None
    if isinstance(seed, np.integer):
        seed = int(seed)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"reset: seed must be a non-negative int or None, not {type(seed).__name__} "
                         f"({preview(seed, 60)})")
    return seed


def reset_message(exc: BaseException) -> str:
    """The one-line `ValueError` message of a failed `reset`: the error's own when it is ours
    ('reset: ...'), else what it is, prefixed."""
    if isinstance(exc, ValidationError):
        text = first_validation_error(exc)
    elif isinstance(exc, RecursionError):
        text = "an argument nests too deeply to read"
    else:
        text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return text if text.startswith("reset") else f"reset: {text}"


_PREVIEW = reprlib.Repr()
_PREVIEW.maxlevel, _PREVIEW.maxstring, _PREVIEW.maxother, _PREVIEW.maxlong = 4, 120, 60, 40


def preview(action: Any, limit: int = 300) -> str:
    """At most `limit` characters showing `action`, for the trace; never recurses deeper than
    `reprlib`'s 4 levels and never raises (a bad action must not crash the answer to it)."""
    if isinstance(action, str):
        return action[:limit]
    if isinstance(action, bytes | bytearray):
        return bytes(action[:limit]).decode("utf-8", errors="replace")
    try:
        return _PREVIEW.repr(action)[:limit]
    except Exception:  # a user object whose __repr__ fails
        return f"<{type(action).__name__}>"


def checked_split(split: Any, where: str) -> str | None:
    """`split` when it is None or a split's name (`query.SPLITS`); a ValueError naming `where` (the env's
    argument or reset option) and the closest split otherwise: said when it is given, not at a later
    reset that never named it."""
    if split is None or (isinstance(split, str) and split in SPLITS):
        return split
    from utp_env.tools.names import suggest

    close = suggest(str(split), SPLITS, n=1) if isinstance(split, str) else []
    shown = repr(preview(split, 60)) if isinstance(split, str) else preview(split, 60)
    raise ValueError(f"{where}={shown} is not a split: use one of {', '.join(SPLITS)}"
                     + (f" (did you mean {close[0]!r}?)" if close else ""))


def checked_options(options: Any, allowed: frozenset[str]) -> dict[str, Any]:
    """`reset`'s options as a new dict, each checked for its type and depth; `ValueError` naming
    the first bad one (`allowed`: the env's `RESET_OPTIONS`)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(f"reset: options must be a dict (option name -> value) or None, not "
                         f"{type(options).__name__}; valid options: {sorted(allowed)}")
    bad_key = next((k for k in options if not isinstance(k, str)), None)
    if bad_key is not None:
        raise ValueError(f"reset: option names are strings; got {preview(bad_key, 60)} "
                         f"({type(bad_key).__name__}); valid options: {sorted(allowed)}")
    unknown = set(options) - allowed
    if unknown:
        raise ValueError(f"reset: unknown option(s) {sorted(unknown)}; valid: {sorted(allowed)}")
    out = dict(options)
    for name, value in out.items():
        if isinstance(value, dict | list | tuple):
            check_depth(value, f"reset: options[{name!r}]")
    for name in ("query_id", "split"):
        value = out.get(name)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"reset: options[{name!r}] must be a string, not {type(value).__name__} "
                             f"({preview(value, 60)})")
    checked_split(out.get("split"), "reset: options['split']")
    stochastic = out.get("stochastic")
    if stochastic is not None and not isinstance(stochastic, bool | np.bool_):
        raise ValueError(f"reset: options['stochastic'] must be True or False, not {type(stochastic).__name__} "
                         f"({preview(stochastic, 60)})")
    query = out.get("query")
    if query is not None and not isinstance(query, Query | Mapping):
        raise ValueError(f"reset: options['query'] must be a Query or a dict of its fields, not "
                         f"{type(query).__name__}")
    return out
