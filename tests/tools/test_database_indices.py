"""Indices kept in `.indices.npz` (a worker loads them instead of building them): loaded
indices answer exactly like freshly built ones, and a stale, damaged, foreign or unreadable file
is ignored and written again."""

from __future__ import annotations

import csv
import gc
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from utp_env.tools.database import INDEX_CACHE, PAIR_TABLES, Database, DataError, collector_paused, normalize
from utp_env.tools.grouping import group
from utp_env.tools.lookup.index import LookupIndex, lookup_index


def _copy(mini_db_path: Path, tmp_path: Path) -> Path:
    path = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    (path / INDEX_CACHE).unlink(missing_ok=True)
    return path


def _pairs_as_groups(db: Database) -> None:
    """Every pair of every transport table answers the rows a plain grouping gives, in file order;
    unknown cities answer no rows."""
    for name in PAIR_TABLES:
        table = db.tables[name]
        groups = group(table.columns, ("origin_city", "dest_city"), table.n)
        assert len(groups) > 0
        for (origin, dest), rows in groups.items():
            found = db.pair_rows(name, origin.upper(), f"  {dest} ")
            assert found.dtype == np.int64 and found.tolist() == rows.tolist(), (name, origin, dest)
        assert db.pair_rows(name, "Atlantis", dest).size == 0
        assert db.pair_rows(name, dest, "") .size == 0


def _same_lookup_index(a: LookupIndex, b: LookupIndex) -> None:
    for field, value in vars(a).items():
        other = vars(b)[field]
        if isinstance(value, np.ndarray):
            assert value.dtype == other.dtype and np.array_equal(value, other), field
        elif isinstance(value, dict) and value and isinstance(next(iter(value.values())), np.ndarray):
            assert value.keys() == other.keys(), field
            for key in value:
                assert value[key].dtype == other[key].dtype and np.array_equal(value[key], other[key]), (field, key)
        else:
            assert value == other, field


def test_indices_are_stored_once_and_loaded_equal(mini_db_path: Path, tmp_path: Path) -> None:
    path = _copy(mini_db_path, tmp_path)
    built = Database.open(path)
    built.build_indices()
    built_index = LookupIndex.build(built)
    assert (path / INDEX_CACHE).is_file()
    loaded = Database.open(path)
    stored = loaded._stored_arrays()
    assert any(k.startswith("pairs/distances/") for k in stored) and any(k.startswith("lookup/") for k in stored)
    _pairs_as_groups(loaded)
    _pairs_as_groups(built)
    _same_lookup_index(built_index, lookup_index(loaded))


@pytest.mark.parametrize("damage", ["garbage", "flipped byte", "foreign key", "directory", "fifo"])
def test_a_bad_index_file_is_ignored_and_rewritten(mini_db_path: Path, tmp_path: Path, damage: str) -> None:
    path = _copy(mini_db_path, tmp_path)
    first = Database.open(path)
    first.build_indices()
    expected = LookupIndex.build(first)
    file = path / INDEX_CACHE
    if damage == "garbage":
        file.write_bytes(b"not an npz file")
    elif damage == "flipped byte":
        data = bytearray(file.read_bytes())
        data[len(data) // 2] ^= 0xFF  # inside an array's bytes: its CRC no longer matches
        file.write_bytes(bytes(data))
    elif damage == "foreign key":
        other = Database.open(path)
        other.tables_hash = "0" * 64  # as if written for other tables
        other.build_indices()
        other.tables_hash = first.tables_hash
    elif damage == "directory":
        file.unlink()
        file.mkdir()
    else:
        file.unlink()
        os.mkfifo(file)
    reopened = Database.open(path)
    _pairs_as_groups(reopened)
    _same_lookup_index(expected, lookup_index(reopened))
    if damage in ("garbage", "flipped byte", "foreign key"):  # written again, now for these tables
        assert Database.open(path)._stored_arrays()


def test_edited_tables_get_their_own_indices(mini_db_path: Path, tmp_path: Path) -> None:
    path = _copy(mini_db_path, tmp_path)
    Database.open(path).build_indices()
    with open(path / "distances.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    del rows[1]  # one pair fewer
    with open(path / "distances.csv", "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    edited = Database.open(path, check_manifest=False)
    _pairs_as_groups(edited)


def test_a_read_only_folder_still_answers(mini_db_path: Path, tmp_path: Path) -> None:
    path = _copy(mini_db_path, tmp_path)
    Database.open(path)  # the validated cache exists already
    path.chmod(0o555)
    try:
        db = Database.open(path)
        _pairs_as_groups(db)
        lookup_index(db)
        assert not (path / INDEX_CACHE).exists() or os.geteuid() == 0  # root writes anyway
    finally:
        path.chmod(0o755)


def test_use_cache_false_neither_reads_nor_writes_the_index_file(mini_db_path: Path, tmp_path: Path) -> None:
    path = _copy(mini_db_path, tmp_path)
    db = Database.open(path, use_cache=False)
    _pairs_as_groups(db)
    lookup_index(db)
    assert not (path / INDEX_CACHE).exists()


def test_keyed_index_is_one_row_per_normalised_key(mini_db: Database) -> None:
    """`by_key` maps every row's normalised key to that row (built per distinct value, the same
    answer as normalising row by row)."""
    for table in mini_db.tables.values():
        keys = zip(*(table.columns[c] for c in table.spec.key), strict=True)
        expected = {tuple(normalize(v) for v in key): i for i, key in enumerate(keys)}
        if len(expected) == table.n:
            assert table.by_key == expected, table.spec.name


def test_loading_pauses_the_collector_and_restores_it(mini_db_path: Path) -> None:
    """The collector is off while a database loads, back on afterwards, also when loading raises,
    and a nested pause does not re-enable it early."""
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(DataError), collector_paused():
        Database.open(mini_db_path / "no-such-folder")
    assert gc.isenabled()
    Database.open(mini_db_path)
    assert gc.isenabled()
    gc.disable()
    try:
        Database.open(mini_db_path)
        assert not gc.isenabled()  # a caller's choice is left as it was
    finally:
        gc.enable()
