"""The vendored-source reader (tools/india/sources.py): a damaged file is refused in one line that
names the file, and the row and column where there is one."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from utp_env.tools.india.sources import SourceError, integer, read_source, text, update_record, weekdays

PARSERS = {"number": text, "stops": integer, "days": weekdays}
GOOD = "number,stops,days\n12951,8,1111111\n12002,6,1111110\n22439,5,1101111\n"


def _vendor(root: Path, body: str, rows: int | None = None, digest: str | None = None) -> None:
    folder = root / "rail"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trains.csv").write_bytes(body.encode("utf-8"))
    good = GOOD.encode()
    record = {"trains.csv": {"rows": 3 if rows is None else rows,
                             "sha256": digest or hashlib.sha256(good).hexdigest(),
                             "licence": "CC0-1.0", "source": "test", "retrieved": "2026-12-02", "derived": "test"}}
    (folder / "SOURCE.json").write_text(json.dumps(record), encoding="utf-8")


def test_reads_a_sound_file(tmp_path: Path) -> None:
    _vendor(tmp_path, GOOD)
    rows = read_source("rail/trains.csv", PARSERS, root=tmp_path)
    assert rows[0] == {"number": "12951", "stops": 8, "days": "1111111"}
    assert len(rows) == 3


@pytest.mark.parametrize(("body", "fragment"), [
    (GOOD.replace("6,1111110", "six,1111110"), "row 2, column 'stops'"),
    (GOOD.replace("1101111", "1101"), "row 3, column 'days'"),
    (GOOD[: GOOD.index("22439") + 7], "row 3: 2 of 3 columns"),
    (GOOD.rsplit("22439", 1)[0], "2 rows where 3 are recorded (truncated after row 2)"),
    (GOOD + "12049,4,1111111\n", "4 rows where 3 are recorded (extended"),
    (GOOD.replace("12951", "12952"), "differs from the SHA-256"),
    ("num,stops,days\n", "header"),
    ('number,stops,days\n"12951,8,1111111\n', "row 1"),
])
def test_refuses_damage_in_one_line(tmp_path: Path, body: str, fragment: str) -> None:
    _vendor(tmp_path, body)
    with pytest.raises(SourceError) as err:
        read_source("rail/trains.csv", PARSERS, root=tmp_path)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path.name}/rail/trains.csv")
    assert fragment in message


def test_refuses_non_utf8_naming_the_line(tmp_path: Path) -> None:
    _vendor(tmp_path, GOOD)
    path = tmp_path / "rail" / "trains.csv"
    path.write_bytes(GOOD.encode().replace(b"22439", b"22\xff39"))
    with pytest.raises(SourceError, match=r"line 4: not UTF-8"):
        read_source("rail/trains.csv", PARSERS, root=tmp_path)


def test_refuses_a_missing_file_or_record(tmp_path: Path) -> None:
    _vendor(tmp_path, GOOD)
    (tmp_path / "rail" / "trains.csv").unlink()
    with pytest.raises(SourceError, match=r"trains\.csv: missing"):
        read_source("rail/trains.csv", PARSERS, root=tmp_path)
    (tmp_path / "rail" / "SOURCE.json").write_text("{}", encoding="utf-8")
    with pytest.raises(SourceError, match=r"no complete entry for .trains\.csv."):
        read_source("rail/trains.csv", PARSERS, root=tmp_path)


def test_update_records_a_deliberate_edit(tmp_path: Path) -> None:
    edited = GOOD + "12049,4,1111111\n"
    _vendor(tmp_path, edited)
    update_record("rail/trains.csv", root=tmp_path)
    assert len(read_source("rail/trains.csv", PARSERS, root=tmp_path)) == 4
