"""Data: refuse or repair, never trust blindly: the validated cache is checksummed and
repaired, manifest.json is checked, the validator enforces cross-field, bound and reference rules,
odd files in place of tables give one-line errors, and killed sandbox builds are cleaned up."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from utp_env.tools.columns import read_table
from utp_env.tools.database import MANIFEST, VALIDATED_CACHE, Database
from utp_env.tools.errors import DataError
from utp_env.tools.integrity import BOUNDED_COLUMNS, BOUNDS_FILE, DataBounds
from utp_env.tools.schema import TABLES

# ------------------------------------------------------------------ helpers


@pytest.fixture
def db_dir(mini_db_path: Path, tmp_path: Path) -> Path:
    """A private copy of the mini sandbox (tables, query set, manifest) with a fresh validated cache."""
    path = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    (path / VALIDATED_CACHE).unlink(missing_ok=True)
    Database.open(path)
    assert (path / VALIDATED_CACHE).exists()
    return path


def _rows(path: Path, table: str) -> list[list[str]]:
    with open(path / f"{table}.csv", encoding="utf-8", newline="") as fh:
        return list(csv.reader(fh))


def _write_rows(path: Path, table: str, rows: list[list[str]]) -> None:
    with open(path / f"{table}.csv", "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)


def _set_cells(path: Path, table: str, row: int, **cells: str) -> None:
    rows = _rows(path, table)
    for column, value in cells.items():
        rows[row][rows[0].index(column)] = value
    _write_rows(path, table, rows)


def _error(path: Path, **kwargs: object) -> DataError:
    with pytest.raises(DataError) as info:
        Database.open(path, **kwargs)  # type: ignore[arg-type]
    text = str(info.value)
    assert "\n" not in text and len(text) < 600, text  # one readable line
    return info.value


def _cache_members(path: Path) -> tuple[dict[str, np.ndarray], dict]:
    """The arrays of a validated cache file and its recorded meta."""
    with zipfile.ZipFile(path / VALIDATED_CACHE) as zf:
        meta = json.loads(zf.read("__meta__"))
        arrays = {m: np.frombuffer(zf.read(m), dtype=np.dtype(spec["dtype"])).reshape(spec["shape"]).copy()
                  for m, spec in meta["members"].items()}
    return arrays, meta


def _rewrite_cache(path: Path, edit: Callable[[dict[str, np.ndarray], dict], None], forge: bool = False) -> None:
    """Rewrite the cache the way a user with numpy would: change arrays, write a valid zip again.
    With `forge`, also update the recorded checksums (to reach the checks behind them)."""
    arrays, meta = _cache_members(path)
    edit(arrays, meta)
    with zipfile.ZipFile(path / VALIDATED_CACHE, "w") as zf:
        for member, array in arrays.items():
            data = np.ascontiguousarray(array).tobytes()
            if forge:
                meta["members"][member].update(dtype=array.dtype.str, shape=list(array.shape), crc=zlib.crc32(data))
            zf.writestr(member, data)
        zf.writestr("__meta__", json.dumps(meta))


def _set_category(arrays: dict[str, np.ndarray], member: str, row: int, value: str) -> None:
    categories = [*arrays[f"{member}|cat"].tolist(), value]
    arrays[f"{member}|cat"] = np.array(categories, dtype=str)
    arrays[f"{member}|codes"][row] = len(categories) - 1


def _assert_repaired(path: Path, reference: Database, capsys: pytest.CaptureFixture[str]) -> Database:
    """Opening prints exactly one notice, returns the CSV data, and rewrites a sound cache."""
    db = Database.open(path)
    notice = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(notice) == 1 and "validated cache" in notice[0] and "validating the tables again" in notice[0], notice
    assert db.content_hash == reference.content_hash
    for name in ("flights", "cities", "restaurants"):
        for column, values in reference.tables[name].columns.items():
            got = db.tables[name].columns[column]
            if isinstance(values, np.ndarray):
                assert np.array_equal(values, got, equal_nan=True), (name, column)
            else:
                assert values == got, (name, column)
    Database.open(path)
    assert capsys.readouterr().err == ""  # the cache was rewritten and is trusted again
    return db


# ------------------------------------------------------------------ validated cache


def test_cached_open_is_silent_and_verified(db_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    db = Database.open(db_dir)
    assert capsys.readouterr().err == ""
    _arrays, meta = _cache_members(db_dir)
    assert all(isinstance(m["crc"], int) for m in meta["members"].values())
    assert meta["rows"] == db.counts()


REWRITES: dict[str, Callable[[dict[str, np.ndarray], dict], None]] = {
    "price -1e9": lambda a, m: a["flights|price_inr|num"].__setitem__(0, -1e9),
    "duration -5": lambda a, m: a["flights|duration_min|num"].__setitem__(0, -5),
    "origin Atlantis": lambda a, m: _set_category(a, "flights|origin_city", 0, "Atlantis"),
}


@pytest.mark.parametrize("edit", list(REWRITES), ids=list(REWRITES))
def test_rewritten_cache_is_detected_and_revalidated(db_dir: Path, mini_db: Database, edit: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _rewrite_cache(db_dir, REWRITES[edit])
    capsys.readouterr()
    db = _assert_repaired(db_dir, mini_db, capsys)
    assert db.tables["flights"].value("price_inr", 0) > 0 and db.tables["flights"].value("duration_min", 0) > 0
    assert db.tables["flights"].columns["origin_city"][0] != "Atlantis"


def _truncate(path: Path) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


def _flip_data_byte(path: Path) -> None:
    """Damage one byte inside an array's data, leaving the archive's directory intact (bad CRC)."""
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("flights|price_inr|num")
    raw = bytearray(path.read_bytes())
    name_len, extra_len = struct.unpack_from("<HH", raw, info.header_offset + 26)
    at = info.header_offset + 30 + name_len + extra_len + 3
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate,
    "empty": lambda p: p.write_bytes(b""),
    "garbage": lambda p: p.write_bytes(b"not a zip file at all" * 100),
    "bad CRC": _flip_data_byte,
    "directory": lambda p: (p.unlink(), p.mkdir()),
    "old npz format": lambda p: np.savez(p.with_suffix(".tmp.npz"), __meta__=np.array(["x"])) or os.replace(
        p.with_suffix(".tmp.npz"), p),
}


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_damaged_cache_is_revalidated_with_one_notice(db_dir: Path, mini_db: Database, damage: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    cache = db_dir / VALIDATED_CACHE
    DAMAGE[damage](cache)
    capsys.readouterr()
    db = Database.open(db_dir)
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    if damage == "old npz format":
        assert err == []  # another version of the cache: revalidated quietly
    else:
        assert len(err) == 1 and "ignoring the validated cache" in err[0], err
    assert db.content_hash == mini_db.content_hash and db.counts() == mini_db.counts()
    if damage == "directory":
        shutil.rmtree(cache)
    Database.open(db_dir)
    assert capsys.readouterr().err == ""


FORGED: dict[str, Callable[[dict[str, np.ndarray], dict], None]] = {
    "wrong row count": lambda a, m: m["rows"].__setitem__("flights", m["rows"]["flights"] + 1),
    "short column": lambda a, m: a.__setitem__("flights|price_inr|num", a["flights|price_inr|num"][:-1]),
    "code out of range": lambda a, m: a["flights|airline|codes"].__setitem__(0, 10**6),
    "unknown city": lambda a, m: _set_category(a, "restaurants|city", 0, "Atlantis"),
}


@pytest.mark.parametrize("forgery", list(FORGED), ids=list(FORGED))
def test_forged_cache_fails_structural_and_reference_checks(db_dir: Path, mini_db: Database, forgery: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    _rewrite_cache(db_dir, FORGED[forgery], forge=True)
    capsys.readouterr()
    _assert_repaired(db_dir, mini_db, capsys)


def test_duplicate_key_holds_for_cached_data(db_dir: Path) -> None:
    def duplicate(a: dict[str, np.ndarray], m: dict) -> None:
        for column in ("name", "city"):
            a[f"restaurants|{column}|codes"][1] = a[f"restaurants|{column}|codes"][0]

    _rewrite_cache(db_dir, duplicate, forge=True)
    db = Database.open(db_dir)
    with pytest.raises(DataError, match=r"restaurants.csv, row 2, column 'name': duplicate key"):
        db.venue("restaurants", "Mumbai", "anything")


def test_read_only_folder_without_cache_still_opens(db_dir: Path, mini_db: Database) -> None:
    (db_dir / VALIDATED_CACHE).unlink()
    db_dir.chmod(0o555)
    try:
        assert Database.open(db_dir).content_hash == mini_db.content_hash
    finally:
        db_dir.chmod(0o755)


# ------------------------------------------------------------------ manifest.json


def test_manifest_content_hash_is_checked(db_dir: Path, mini_db: Database) -> None:
    manifest = json.loads((db_dir / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["content_hash"] == mini_db.content_hash
    (db_dir / MANIFEST).write_text(json.dumps({**manifest, "content_hash": "0" * 64}), encoding="utf-8")
    err = _error(db_dir)
    assert err.file == MANIFEST and err.column == "content_hash" and mini_db.content_hash in str(err)
    assert Database.open(db_dir, check_manifest=False).content_hash == mini_db.content_hash
    # a table edited after the build is refused the same way, after its cells pass validation
    (db_dir / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    _set_cells(db_dir, "restaurants", 1, rating="4.9")
    assert _error(db_dir).column == "content_hash"


@pytest.mark.parametrize("text, expected", [
    ("[1, 2]", "must hold a JSON object, found a list"),
    ('"sandbox"', "must hold a JSON object, found a string"),
    ("null", "must hold a JSON object, found null"),
    ("{not json", "invalid JSON"),
    ('{"content_hash": 5}', "content_hash must be a string"),
    ('{"empty_tables": ["nope"]}', "empty_tables must be a list of table names"),
    ("[" * 100_000, "invalid JSON"),
])
def test_bad_manifest_is_a_clear_error(db_dir: Path, text: str, expected: str) -> None:
    (db_dir / MANIFEST).write_text(text, encoding="utf-8")
    err = _error(db_dir)
    assert err.file == MANIFEST and expected in str(err), str(err)


def test_non_utf8_manifest(db_dir: Path) -> None:
    (db_dir / MANIFEST).write_bytes(b'{"profile": "\xff"}')
    assert "not UTF-8" in str(_error(db_dir))


# ------------------------------------------------------------------ cross-field and range rules

# (table, row, cells to set, column named by the error, words of the rule)
RULE_CASES = [
    ("flights", 1, {"arr_time": "23:59"}, "arr_time", "is not departure"),
    ("flights", 1, {"arr_day_offset": "2"}, "arr_day_offset", "is not departure"),
    ("trains", 1, {"arr_time": "00:01"}, "arr_time", "is not departure"),
    ("buses", 1, {"run_days": "0000000"}, "run_days", "runs on no day"),
    ("flights", 1, {"run_days": "0000000"}, "run_days", "runs on no day"),
    ("flights", None, {"otp_on_time": "+1"}, "otp_total", "add up to"),
    ("flights", None, {"otp_late": ""}, "otp_late", "incomplete on-time statistics"),
    ("flights", None, {"delay_avg_min": ""}, "delay_std_min", "without a mean"),
    ("flights", None, {"delay_max_min": "0"}, "delay_max_min", "below the mean"),
    ("flights", 1, {"price_inr": "-1000000000"}, "price_inr", "out of range"),
    ("flights", 1, {"price_inr": "5000000"}, "price_inr", "max_price_inr"),
    ("flights", 1, {"duration_min": "-5"}, "duration_min", "out of range"),
    ("trains", 1, {"duration_min": "20000"}, "duration_min", "max_duration_min"),
    ("flights", None, {"delay_avg_min": "9000", "delay_max_min": "9500"}, "delay_avg_min", "max_delay_min"),
    ("trains", 1, {"avg_delay_1y": "-3"}, "avg_delay_1y", "out of range"),
    ("road_routes", 1, {"historical_delay_min": "99999"}, "historical_delay_min", "max_delay_min"),
    ("distances", 1, {"cab_fare_inr": "1e9"}, "cab_fare_inr", "max_price_inr"),
    ("accommodations", 1, {"price_per_night_inr": "2e7"}, "price_per_night_inr", "max_price_inr"),
    ("attractions", 1, {"visit_duration_hr": "30"}, "visit_duration_hr", "max_visit_hours"),
    ("attractions", 1, {"categories": "[]"}, "categories", "at least 1 item"),
    ("restaurants", 1, {"cuisines": "[]"}, "cuisines", "at least 1 item"),
    ("events", 1, {"date": "2025-13-45"}, "date", "not a calendar date"),
    ("events", 1, {"date": "2026-02-30"}, "date", "not a calendar date"),
    ("crowd", 1, {"windows": "[]"}, "windows", "no crowd window"),
    ("crowd", 1, {"windows": '[[8, 24, "L"]]'}, "windows", "hour outside 0-23"),
    ("crowd", 1, {"windows": '[[-1, 5, "L"]]'}, "windows", "hour outside 0-23"),
    ("crowd", 1, {"quiet_hours": "[25]"}, "quiet_hours", "hour outside 0-23"),
    ("crowd", 1, {"peak_window": "[3, 99]"}, "peak_window", "hour outside 0-23"),
    ("crowd", 1, {"venue_name": "Atlantis Museum"}, "venue_name", "is not in"),
    ("transit_stops", 1, {"poi_name": "Atlantis Hotel"}, "poi_name", "is not in"),
]


def _first_row_with(path: Path, table: str, column: str) -> int:
    rows = _rows(path, table)
    j = rows[0].index(column)
    return next(i for i in range(1, len(rows)) if rows[i][j] not in ("", "0"))


@pytest.mark.parametrize("table, row, cells, column, rule", RULE_CASES,
                         ids=[f"{c[0]}-{c[3]}-{c[4]}" for c in RULE_CASES])
def test_validator_refuses_broken_rules(db_dir: Path, table: str, row: int | None, cells: dict[str, str],
                                        column: str, rule: str) -> None:
    if row is None:  # a flight with on-time statistics
        row = _first_row_with(db_dir, table, "delay_std_min")
    rows = _rows(db_dir, table)
    for name, value in cells.items():
        j = rows[0].index(name)
        rows[row][j] = str(int(rows[row][j]) + 1) if value == "+1" else value
    _write_rows(db_dir, table, rows)
    err = _error(db_dir)
    assert (err.file, err.row, err.column) == (f"{table}.csv", row, column), str(err)
    assert rule in str(err), str(err)


def test_table_with_header_and_no_rows(db_dir: Path) -> None:
    _write_rows(db_dir, "events", _rows(db_dir, "events")[:1])
    err = _error(db_dir, check_manifest=False)
    assert (err.file, err.row) == ("events.csv", 1) and "has a header and no rows" in str(err)
    manifest = json.loads((db_dir / MANIFEST).read_text(encoding="utf-8"))
    (db_dir / MANIFEST).write_text(json.dumps({**manifest, "empty_tables": ["events"]}), encoding="utf-8")
    assert len(Database.open(db_dir, check_manifest=False).tables["events"]) == 0


def test_bounds_yaml_equals_code_defaults() -> None:
    shipped = yaml.safe_load(BOUNDS_FILE.read_text(encoding="utf-8"))
    assert DataBounds.model_validate(shipped) == DataBounds()
    assert set(shipped) == set(DataBounds.model_fields)


def test_every_money_duration_delay_distance_column_is_bounded() -> None:
    words = ("_inr", "delay", "duration", "distance_km", "free_flow", "visit_duration")
    for name, spec in TABLES.items():
        for column in spec.model.model_fields:
            if any(w in column for w in words):
                assert column in BOUNDED_COLUMNS.get(name, {}), (name, column)
    for name, columns in BOUNDED_COLUMNS.items():
        assert set(columns) <= set(TABLES[name].model.model_fields), name
        assert set(columns.values()) <= set(DataBounds.model_fields), name


def test_custom_bounds_apply_and_key_the_cache(db_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    strict = DataBounds(max_price_inr=100)
    err = _error(db_dir, bounds=strict)
    assert "max_price_inr" in str(err)
    capsys.readouterr()
    Database.open(db_dir)  # the default rules still hold, from the cache
    assert capsys.readouterr().err == ""


# ------------------------------------------------------------------ odd files in place of tables


@pytest.fixture
def alarm() -> Iterator[None]:
    """Fail instead of hanging: a FIFO read would block forever."""
    def timeout(signum: int, frame: object) -> None:
        raise TimeoutError("Database.open hung")

    previous = signal.signal(signal.SIGALRM, timeout)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def test_symlink_outside_the_folder_is_refused(db_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.csv"
    shutil.move(db_dir / "events.csv", outside)
    (db_dir / "events.csv").symlink_to(outside)
    err = _error(db_dir)
    assert err.file == "events.csv" and "symlink pointing outside the database folder" in str(err)


def test_symlink_inside_the_folder_is_fine(db_dir: Path, mini_db: Database) -> None:
    (db_dir / "sub").mkdir()
    shutil.move(db_dir / "events.csv", db_dir / "sub" / "events.csv")
    (db_dir / "events.csv").symlink_to(Path("sub") / "events.csv")
    assert Database.open(db_dir).counts() == mini_db.counts()


def test_broken_symlink(db_dir: Path) -> None:
    (db_dir / "events.csv").unlink()
    (db_dir / "events.csv").symlink_to(db_dir / "nowhere.csv")
    assert "broken symlink" in str(_error(db_dir))


@pytest.mark.parametrize("name", ["events.csv", MANIFEST, "queries.jsonl"])
def test_fifo_in_place_of_a_file_does_not_hang(db_dir: Path, name: str, alarm: None) -> None:
    (db_dir / name).unlink()
    os.mkfifo(db_dir / name)
    err = _error(db_dir)
    assert err.file == name and "not a regular file" in str(err)


def test_fifo_in_place_of_the_cache_does_not_hang(db_dir: Path, mini_db: Database, alarm: None,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (db_dir / VALIDATED_CACHE).unlink()
    os.mkfifo(db_dir / VALIDATED_CACHE)
    capsys.readouterr()
    assert Database.open(db_dir).counts() == mini_db.counts()
    assert "not a regular file" in capsys.readouterr().err


def test_directory_in_place_of_a_table(db_dir: Path) -> None:
    (db_dir / "trains.csv").unlink()
    (db_dir / "trains.csv").mkdir()
    err = _error(db_dir)
    assert err.file == "trains.csv" and "is a directory" in str(err)


def test_device_in_place_of_a_table(db_dir: Path) -> None:
    (db_dir / "trains.csv").unlink()
    try:
        os.mknod(db_dir / "trains.csv", 0o644 | 0o020000, os.makedev(1, 3))  # a character device like /dev/null
    except (PermissionError, AttributeError, OSError):
        pytest.skip("cannot create a device node here")
    assert "not a regular file" in str(_error(db_dir))


def test_cell_over_the_csv_field_limit(db_dir: Path) -> None:
    limit = csv.field_size_limit()
    _set_cells(db_dir, "restaurants", 3, name="x" * (limit + 10))
    err = _error(db_dir)
    assert (err.file, err.row, err.column) == ("restaurants.csv", 3, "name"), str(err)
    assert "field limit" in str(err)


def test_long_bad_value_is_shortened_in_the_message(db_dir: Path) -> None:
    _set_cells(db_dir, "restaurants", 2, rating="9" * 100_000)
    err = _error(db_dir)
    assert err.column == "rating" and "characters" in str(err)


# ------------------------------------------------------------------ the CSV parser (hypothesis)

SPEC = TABLES["events"]
HEADER = list(SPEC.model.model_fields)
GOOD = {"name": "Show", "city": "Pune", "date": "2025-12-12", "start_time": "18:00", "end_time": "20:00",
        "segment": "Music", "venue": "Hall", "price_inr": "500"}


def _csv_bytes(rows: list[list[str]]) -> bytes:
    import io

    buf = io.StringIO()
    csv.writer(buf).writerows(rows)  # "\r\n" rows: the writer then quotes cells holding "\r"
    return buf.getvalue().encode("utf-8")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_any_bytes_give_columns_or_one_data_error(raw: bytes) -> None:
    try:
        read_table(Path("events.csv"), raw, SPEC)
    except DataError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=30)
                .filter(lambda t: t.strip() != ""), min_size=1, max_size=5))
def test_any_names_survive_the_csv_round_trip(names: list[str]) -> None:
    rows = [HEADER] + [[f"{name}" if c == "name" else GOOD[c] for c in HEADER] for name in names]
    columns, n, _ = read_table(Path("events.csv"), _csv_bytes(rows), SPEC)
    assert n == len(names) and columns["name"] == names


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(HEADER), st.text(max_size=12), max_size=4))
def test_any_cells_give_columns_or_one_data_error(cells: dict[str, str]) -> None:
    rows = [HEADER, [cells.get(c, GOOD[c]) for c in HEADER]]
    try:
        read_table(Path("events.csv"), _csv_bytes(rows), SPEC)
    except DataError as exc:
        assert "\n" not in str(exc) and exc.file == "events.csv"


@settings(max_examples=100, deadline=None)
@given(st.recursive(st.integers(-30, 30) | st.text(max_size=3),
                    lambda inner: st.lists(inner, max_size=4), max_leaves=20))
def test_any_crowd_json_gives_a_value_or_one_data_error(value: object) -> None:
    from utp_env.tools.integrity import check_table

    spec = TABLES["crowd"]
    header = list(spec.model.model_fields)
    good = {"venue_name": "Fort", "venue_type": "attraction", "city": "Pune", "open_hour": "8",
            "close_hour": "18", "surge_in_hour": "", "surge_out_hour": "", "windows": '[[8, 18, "L"]]',
            "quiet_hours": "[]", "peak_window": ""}
    for column in ("windows", "quiet_hours", "peak_window"):
        row = {**good, column: json.dumps(value)}
        try:
            columns, n, _ = read_table(Path("crowd.csv"), _csv_bytes([header, [row[c] for c in header]]), spec)
            check_table("crowd", columns, n, DataBounds())
        except DataError as exc:
            assert "\n" not in str(exc) and exc.column == column, str(exc)


# ------------------------------------------------------------------ killed sandbox builds


def test_leftover_build_folders_are_removed_by_the_next_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from utp_env.tools.sandbox import cache, location

    monkeypatch.setenv("UTP_ENV_CACHE", str(tmp_path))
    target = location.sandbox_path("mini", 0)
    leftovers = [tmp_path / f".{target.name}.k1ll3d00", tmp_path / ".sandbox-full-seed0-v1.abcd1234"]
    for path in leftovers:
        path.mkdir()
        (path / "cities.csv").write_text("city\n", encoding="utf-8")
    # a build in progress in another process holds its folder: it must survive
    live, lock = cache._claim_build_dir(location.sandbox_path("mini", 1))
    seen = []

    def fake_build(profile: str, seed: int, out: Path, progress: object = None) -> dict:
        seen.append(sorted(p.name for p in tmp_path.iterdir()))
        (out / MANIFEST).write_text("{}", encoding="utf-8")
        return {}

    monkeypatch.setattr(cache, "build_sandbox", fake_build)
    try:
        assert cache.ensure_sandbox("mini", 0, quiet=True) == target
        assert not any(p.exists() for p in leftovers)
        assert live.exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, live.name])
    finally:
        if lock is not None:
            os.close(lock)
    assert cache.remove_leftover_builds(tmp_path) == [live]  # released: a leftover now



@pytest.mark.parametrize("manifest", [{"profile": "full", "seed": 0}, {"profile": "mini", "seed": 3}, {}, [1]])
def test_a_cache_folder_holding_another_sandbox_is_refused_naming_both(tmp_path: Path, manifest: object,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`data build --out` can write any sandbox into the folder the cache keeps mini's in; the cache
    then refuses it rather than let every `--profile mini` command run on it."""
    from utp_env.tools.sandbox import cache, location

    monkeypatch.setenv("UTP_ENV_CACHE", str(tmp_path))
    target = location.sandbox_path("mini", 0)
    target.mkdir()
    (target / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        cache.ensure_sandbox("mini", 0, quiet=True)
    message = str(caught.value)
    assert "not the mini sandbox (seed 0)" in message and f"delete {target}" in message and "\n" not in message
    (target / MANIFEST).write_text(json.dumps({"profile": "mini", "seed": 0}), encoding="utf-8")
    assert cache.ensure_sandbox("mini", 0, quiet=True) == target
    (target / MANIFEST).write_text("{", encoding="utf-8")
    with pytest.raises(OSError, match="unreadable"):
        cache.ensure_sandbox("mini", 0, quiet=True)

    elsewhere = tmp_path / "elsewhere"  # a symlink there is the user's own choice of folder, taken as it is
    target.rename(elsewhere)
    (elsewhere / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    target.symlink_to(elsewhere, target_is_directory=True)
    assert cache.ensure_sandbox("mini", 0, quiet=True) == target


# ------------------------------------------------------------------ the CLI


def test_data_validate_prints_one_line_per_error(db_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from utp_env.cli import main as cli_main

    _set_cells(db_dir, "flights", 1, price_inr="5000000")
    capsys.readouterr()
    assert cli_main(["data", "validate", str(db_dir)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert "file flights.csv, row 1, column 'price_inr': implausible value 5,000,000 (must be ≤ 1,000,000" in err


def test_schema_edit_invalidates_the_cache(db_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from utp_env.tools import integrity

    before = integrity.rules_key(DataBounds())
    monkeypatch.setattr(integrity, "schema_fingerprint", lambda: "another schema")
    assert integrity.rules_key(DataBounds()) != before
    with zipfile.ZipFile(db_dir / VALIDATED_CACHE) as zf:
        old_key = json.loads(zf.read("__meta__"))["key"]
    capsys.readouterr()
    Database.open(db_dir)  # validated again under the new key, quietly
    assert capsys.readouterr().err == ""
    with zipfile.ZipFile(db_dir / VALIDATED_CACHE) as zf:
        assert json.loads(zf.read("__meta__"))["key"] != old_key
