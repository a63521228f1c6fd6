"""`Database.open` on corrupted copies of the mini sandbox: one clear DataError naming the cell."""

from __future__ import annotations

import csv
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from utp_env.tools.database import Database
from utp_env.tools.errors import DataError


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _edit(directory: Path, table: str, change: Callable[[list[list[str]]], None]) -> None:
    """Rewrite `<table>.csv` after `change` mutates its rows (header is rows[0])."""
    path = directory / f"{table}.csv"
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    change(rows)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)


def _set(rows: list[list[str]], row: int, column: str, value: str) -> None:
    rows[row][rows[0].index(column)] = value


@pytest.fixture
def corrupt(mini_db_path: Path, tmp_path: Path) -> Path:
    return _copy(mini_db_path, tmp_path / "db")


def _open_error(path: Path) -> DataError:
    with pytest.raises(DataError) as info:
        Database.open(path)
    return info.value


def test_missing_column(corrupt: Path) -> None:
    def drop(rows: list[list[str]]) -> None:
        j = rows[0].index("rating")
        for r in rows:
            del r[j]

    _edit(corrupt, "restaurants", drop)
    err = _open_error(corrupt)
    assert (err.file, err.row, err.column) == ("restaurants.csv", 0, "rating")
    assert "missing column" in str(err)


def test_wrong_type_in_float_column(corrupt: Path) -> None:
    _edit(corrupt, "flights", lambda rows: _set(rows, 3, "price_inr", "abc"))
    err = _open_error(corrupt)
    assert (err.file, err.row, err.column) == ("flights.csv", 3, "price_inr")
    assert "'abc'" in str(err) and "not a number" in str(err)


def test_out_of_range_value(corrupt: Path) -> None:
    _edit(corrupt, "attractions", lambda rows: _set(rows, 7, "rating", "7.5"))
    err = _open_error(corrupt)
    assert (err.file, err.row, err.column) == ("attractions.csv", 7, "rating")
    assert "out of range" in str(err)


def test_bad_json_list_cell(corrupt: Path) -> None:
    _edit(corrupt, "restaurants", lambda rows: _set(rows, 2, "cuisines", '["Asian"'))
    err = _open_error(corrupt)
    assert (err.file, err.row, err.column) == ("restaurants.csv", 2, "cuisines")
    assert "invalid JSON" in str(err)


def test_duplicate_key(corrupt: Path) -> None:
    n = {}

    def duplicate(rows: list[list[str]]) -> None:
        rows.append(list(rows[2]))
        n["row"] = len(rows) - 1

    _edit(corrupt, "cities", duplicate)
    err = _open_error(corrupt)
    assert (err.file, err.row, err.column) == ("cities.csv", n["row"], "city")
    assert "duplicate key" in str(err) and "first at row 2" in str(err)


def test_unknown_city_in_foreign_column(corrupt: Path) -> None:
    _edit(corrupt, "trains", lambda rows: _set(rows, 5, "dest_city", "Atlantis"))
    err = _open_error(corrupt)
    assert (err.file, err.row, err.column) == ("trains.csv", 5, "dest_city")
    assert "unknown city 'Atlantis'" in str(err)


def test_missing_table_file(corrupt: Path) -> None:
    (corrupt / "events.csv").unlink()
    err = _open_error(corrupt)
    assert "events" in str(err) and "missing" in str(err)


def test_non_utf8_file(corrupt: Path) -> None:
    path = corrupt / "events.csv"
    raw = path.read_bytes()
    at = raw.index(b"\n") + 3
    path.write_bytes(raw[:at] + b"\xff\xfe" + raw[at:])
    err = _open_error(corrupt)
    assert err.file == "events.csv" and "not UTF-8" in str(err)


def test_content_hash_changes_with_one_cell(corrupt: Path, mini_db: Database) -> None:
    assert Database.open(corrupt).content_hash == mini_db.content_hash
    _edit(corrupt, "restaurants", lambda rows: _set(rows, 1, "avg_cost_inr", "12345"))
    assert Database.open(corrupt, check_manifest=False).content_hash != mini_db.content_hash
    # the manifest still records the old hash: opening names the mismatch
    with pytest.raises(DataError, match=r"file manifest.json, column 'content_hash': content_hash .* does not match"):
        Database.open(corrupt)
