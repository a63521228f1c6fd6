"""The validated cache: a database's columns as they were after validation, stored beside the
tables in `.validated.npz` (plain arrays, no pickle) and keyed by the hash of the table files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from utp_env.tools.columns import columns_of
from utp_env.tools.schema import TABLES

VALIDATED_CACHE = ".validated.npz"
_CACHE_FORMAT = "utp-validated-1"


def save(path: Path, content_hash: str, tables: dict[str, tuple[dict[str, Any], int]],
         json_text: dict[str, dict[str, list[str]]]) -> None:
    """Remember validated columns (numbers as arrays, text as categories) of tables given as
    name -> (columns, row count); best effort."""
    arrays: dict[str, np.ndarray] = {"__meta__": np.array([_CACHE_FORMAT, content_hash])}
    for name, (table_columns, n) in tables.items():
        arrays[f"{name}|__n__"] = np.array([n], dtype=np.int64)
        for column, values in table_columns.items():
            if isinstance(values, np.ndarray):
                arrays[f"{name}|{column}|num"] = values
                continue
            text = json_text[name].get(column, values)
            code_of: dict[str, int] = {}
            codes = np.fromiter((code_of.setdefault(v, len(code_of)) for v in text), dtype=np.int32, count=len(text))
            arrays[f"{name}|{column}|cat"] = np.array(list(code_of), dtype=str)
            arrays[f"{name}|{column}|codes"] = codes
    tmp = path / f"{VALIDATED_CACHE}.{os.getpid()}.tmp.npz"
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path / VALIDATED_CACHE)
    except OSError:  # a read-only database directory simply is not cached
        tmp.unlink(missing_ok=True)


def load(path: Path, content_hash: str) -> dict[str, tuple[dict[str, Any], int]] | None:
    """The validated tables (name -> (columns, row count)) remembered for exactly this hash, or None."""
    file = path / VALIDATED_CACHE
    if not file.exists():
        return None
    try:
        with np.load(file, allow_pickle=False) as npz:
            meta = npz["__meta__"].tolist()
            if meta != [_CACHE_FORMAT, content_hash]:
                return None
            tables = {}
            for name, spec in TABLES.items():
                columns: dict[str, Any] = {}
                for col in columns_of(spec.model):
                    key = f"{name}|{col.name}"
                    if col.kind in ("int", "float", "bool"):
                        columns[col.name] = npz[f"{key}|num"]
                        continue
                    categories = npz[f"{key}|cat"].tolist()
                    if col.kind == "json":  # validated when cached: parse each distinct text once
                        categories = [None if c == "" and col.optional else col.adapter.validate_json(c)  # type: ignore[union-attr]
                                      for c in categories]
                    lookup = np.empty(len(categories), dtype=object)
                    lookup[:] = categories
                    columns[col.name] = lookup[npz[f"{key}|codes"]].tolist()
                tables[name] = (columns, int(npz[f"{name}|__n__"][0]))
            return tables
    except (OSError, KeyError, ValueError):  # unreadable or from another version: validate again
        return None
