"""Compact result tables for LLMs: a heading, a `|`-separated header, one line per row.

Every tool renders through `table_text`, so results look alike and say how many rows were cut
and how to narrow the search, and an empty result says so and what to try.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


def page(indices: Sequence[int] | np.ndarray, limit: int) -> tuple[np.ndarray, int]:
    """The first `limit` row indices and the number left out."""
    arr = np.asarray(indices, dtype=np.int64)
    return arr[:limit], max(0, arr.size - limit)


def cell(value: Any) -> str:
    """A value as a short table cell: no pipes or newlines, floats without noise, '-' for none.

    Type dispatch is by exact type first: this runs for every cell of every result.
    """
    kind = type(value)
    if kind is str:
        return value.replace("|", "/").replace("\n", " ") if ("|" in value or "\n" in value) else value
    if kind is int:
        return str(value)
    if value is None:
        return "-"
    if kind is float or isinstance(value, np.floating):
        v = float(value)
        if v != v:
            return "-"
        return str(int(v)) if v.is_integer() else f"{v:.1f}"
    if isinstance(value, list | tuple):
        return ", ".join(cell(v) for v in value) or "-"
    return cell(str(value))


def table_text(heading: str, header: Sequence[str], lines: Sequence[Sequence[Any]], *, total: int,
               truncated: int, narrow: str, empty: str, notes: Sequence[str] = ()) -> str:
    """Render a result table.

    `total` is the number of matching rows, `lines` the (at most `limit`) rows shown; `narrow` says
    how to cut a long result down and `empty` what to try when nothing matched.
    """
    if total == 0:
        return f"{heading}: no results. {empty}"
    shown = f"{total} found" if not truncated else f"{total} found, showing {len(lines)}"
    out = [f"{heading}: {shown}", " | ".join(header)]
    out.extend(" | ".join([cell(v) for v in line]) for line in lines)
    if truncated:
        out.append(f"… {truncated} more rows; {narrow}")
    out.extend(notes)
    return "\n".join(out)
