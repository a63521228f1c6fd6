"""Write generated columns as CSV files whose bytes depend only on the values.

Columns are written in the order of the table's row model; floats with fixed decimals, missing
optional values as empty cells, lists and tuples as compact JSON, booleans as true/false.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from utp_env.tools.schema import TABLES

DECIMALS = {"latitude": 5, "longitude": 5, "stop_latitude": 5, "stop_longitude": 5}
DEFAULT_DECIMALS = 2


def _cell(value: Any, decimals: int) -> str:
    if value is None:
        return ""
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return ""
        if float(value).is_integer():
            return str(int(value))
        return f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, list | tuple):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


def format_column(name: str, values: Any) -> list[str]:
    """The CSV cells of one column (the cells `_cell` gives; a column of only strings, only ints or
    only lists of strings takes a shortcut to the same cells, as the big tables' columns do)."""
    decimals = DECIMALS.get(name, DEFAULT_DECIMALS)
    if isinstance(values, np.ndarray):
        values = values.tolist()
    kinds = {type(v) for v in values}
    if kinds == {str}:
        return list(values)
    if kinds == {int}:
        return [str(v) for v in values]
    if kinds == {list} and all(type(x) is str for v in values for x in v):
        memo: dict[tuple[str, ...], str] = {}
        out = []
        for v in values:
            key = tuple(v)
            cell = memo.get(key)
            if cell is None:
                cell = memo[key] = _cell(v, decimals)
            out.append(cell)
        return out
    return [_cell(v, decimals) for v in values]


def write_table(directory: Path, table: str, columns: dict[str, Any]) -> int:
    """Write `<table>.csv` in `directory`; returns the row count. Raises if a column is missing."""
    fields = list(TABLES[table].model.model_fields)
    missing = [f for f in fields if f not in columns]
    if missing:
        raise ValueError(f"generator bug: table {table} lacks column(s) {missing}")
    cells = [format_column(f, columns[f]) for f in fields]
    n = len(cells[0]) if cells else 0
    if any(len(c) != n for c in cells):
        raise ValueError(f"generator bug: columns of {table} differ in length")
    with open(directory / f"{table}.csv", "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(fields)
        writer.writerows(zip(*cells, strict=True))
    return n
