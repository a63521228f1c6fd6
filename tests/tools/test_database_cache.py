"""The validated cache: reopening loads the same columns, and any edit forces revalidation."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import pytest

from utp_env.tools.database import VALIDATED_CACHE, Database, DataError


def _same_tables(a: Database, b: Database) -> None:
    for name, table in a.tables.items():
        other = b.tables[name]
        assert table.n == other.n
        for column, values in table.columns.items():
            if isinstance(values, np.ndarray):
                assert values.dtype == other.columns[column].dtype, (name, column)
                assert np.array_equal(values, other.columns[column], equal_nan=True), (name, column)
            else:
                assert values == other.columns[column], (name, column)


def test_cached_open_equals_validation(mini_db_path: Path, tmp_path: Path) -> None:
    path = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    (path / VALIDATED_CACHE).unlink(missing_ok=True)
    validated = Database.open(path)
    assert (path / VALIDATED_CACHE).exists()
    cached = Database.open(path)
    assert cached.content_hash == validated.content_hash
    _same_tables(validated, cached)
    # indices built lazily from cached columns answer like the eager ones
    pair = ("Mumbai", "Pune") if cached.has_city("Pune") else tuple(cached.cities[:2])
    assert list(cached.pair_rows("distances", *pair)) == list(validated.pair_rows("distances", *pair))
    assert cached.tables["restaurants"].by_key == validated.tables["restaurants"].by_key


def test_edit_after_caching_is_revalidated(mini_db_path: Path, tmp_path: Path) -> None:
    path = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    Database.open(path)
    with open(path / "restaurants.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    rows[1][rows[0].index("rating")] = "abc"
    with open(path / "restaurants.csv", "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    with pytest.raises(DataError, match=r"restaurants.csv, row 1, column 'rating'"):
        Database.open(path)


def test_stale_or_foreign_cache_is_ignored(mini_db_path: Path, tmp_path: Path) -> None:
    path = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    (path / VALIDATED_CACHE).write_bytes(b"not an npz file")
    db = Database.open(path)
    assert db.counts()["cities"] > 0
