"""Compact result tables for LLMs: a heading, a `|`-separated header, one line per row.

Every tool renders through `table_text`, so results look alike and say how many rows were cut
and how to narrow the search, and an empty result says so and what to try.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from utp_env.tools.database import Database

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


def line_text(values: Sequence[Any]) -> str:
    """One result line: the cells joined by ` | `."""
    return " | ".join([cell(v) for v in values])


def table_text(heading: str, header: Sequence[str], lines: Sequence[Sequence[Any]], *, total: int,
               truncated: int, narrow: str, empty: str, notes: Sequence[str] = ()) -> str:
    """Render a result table.

    `total` is the number of matching rows, `lines` the (at most `limit`) rows shown; `narrow` says
    how to cut a long result down and `empty` what to try when nothing matched.
    """
    return table_of_lines(heading, header, [line_text(line) for line in lines], total=total, truncated=truncated,
                          narrow=narrow, empty=empty, notes=notes)


def table_of_lines(heading: str, header: Sequence[str], lines: Sequence[str], *, total: int, truncated: int,
                   narrow: str, empty: str, notes: Sequence[str] = ()) -> str:
    """`table_text` of lines already rendered (`line_text`, e.g. from a `RowMemo`)."""
    if total == 0:
        return f"{heading}: no results. {empty}"
    shown = f"{total} found" if not truncated else f"{total} found, showing {len(lines)}"
    out = [f"{heading}: {shown}", " | ".join(header), *lines]
    if truncated:
        out.append(f"… {truncated} more rows; {narrow}")
    out.extend(notes)
    return "\n".join(out)


class RowMemo:
    """Rendered result lines and row dicts of a database's rows, made on a row's first display.

    A line depends only on its row (and the tool's line format), so once rendered it is kept: a
    later result that shows the row joins cached strings instead of formatting every cell again.
    Each table's memo keeps at most `MAX_ROWS` rows and starts afresh when full (bounded memory,
    a few tens of MB at worst). One per database (`row_memo`).
    """

    MAX_ROWS = 8192

    def __init__(self) -> None:
        self._lines: dict[str, dict[int, str]] = {}
        self._rows: dict[str, dict[int, dict[str, Any]]] = {}

    def clear(self) -> None:
        """Forget every rendered line and row (benchmarks time the first display with it)."""
        self._lines.clear()
        self._rows.clear()

    def lines(self, fmt: str, shown: list[int], make: Callable[[list[int]], list[list[Any]]]) -> list[str]:
        """The lines of rows `shown` in format `fmt`; `make(rows)` gives the cell values of rows not yet seen."""
        cache = self._filled(self._lines.setdefault(fmt, {}), shown,
                             lambda missing: [line_text(values) for values in make(missing)])
        return [cache[i] for i in shown]

    def rows(self, db: Database, table: str, shown: list[int]) -> list[dict[str, Any]]:
        """`db.tables[table].rows(shown)`: fresh dicts (callers may change them) of cached values."""
        cache = self._filled(self._rows.setdefault(table, {}), shown, db.tables[table].rows)
        return [cache[i].copy() for i in shown]

    def _filled(self, cache: dict[int, Any], shown: list[int],
                make: Callable[[list[int]], list[Any]]) -> dict[int, Any]:
        """`cache` holding every row of `shown`: `make(rows)` gives the values of rows not yet in it
        (the cache is emptied first when they would not fit in MAX_ROWS)."""
        missing = [i for i in shown if i not in cache]
        if missing:
            if len(cache) + len(missing) > self.MAX_ROWS:
                cache.clear()
                missing = list(dict.fromkeys(shown))
            for i, value in zip(missing, make(missing), strict=True):
                cache[i] = value
        return cache


def row_memo(db: Database) -> RowMemo:
    """The RowMemo of `db` (one per opened database)."""
    return db.derived(_new_memo)


def _new_memo(db: Database) -> RowMemo:
    return RowMemo()
