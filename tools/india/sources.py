"""The vendored open-data sources of the sandbox: where each file comes from, and a reader that
refuses a damaged one in one line.

Each data folder under `tools/india/` (e.g. `rail/`) holds compact CSV files derived from public
open data together with a `SOURCE.json` that records, per file: the number of data rows, the
SHA-256 of the file's bytes, the licence, the public source it was derived from (repository or
page and commit or date) and the rule that derived it. `read_source` parses a file row by row with
the column parsers it is given and checks it against that record, so that a corrupted cell names
its row and column, a file cut in the middle of a row names that row, a file cut at a row boundary
says how many rows are missing, and any other change is refused by the hash. The sandbox build
reads its sources only through this module.

`python -m utp_env.tools.india.sources --update DIR/FILE` records a deliberate edit (new row count
and hash) in the folder's `SOURCE.json`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

SOURCES_DIR = Path(__file__).resolve().parent
RECORD = "SOURCE.json"
RECORD_FIELDS = ("rows", "sha256", "licence", "source", "retrieved", "derived")
Parser = Callable[[str], Any]


class SourceError(ValueError):
    """A vendored source file is missing, damaged or disagrees with its `SOURCE.json` record."""


def _fix() -> str:
    return ("restore it from the utp-env repository or reinstall utp-env; after a deliberate edit run "
            "`python -m utp_env.tools.india.sources --update <file>`")


def source_path(relative: str, root: Path = SOURCES_DIR) -> Path:
    """Absolute path of a vendored file given relative to `root`, `tools/india/` (`rail/trains.csv`)."""
    return root / relative


def source_record(relative: str, root: Path = SOURCES_DIR) -> dict[str, Any]:
    """The `SOURCE.json` entry of a vendored file (rows, sha256, licence, source, retrieved, derived)."""
    path = source_path(relative, root)
    record_file = path.parent / RECORD
    where = f"{root.name}/{record_file.relative_to(root)}"
    try:
        records = json.loads(record_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SourceError(f"{where}: missing (the record of the vendored sources in {path.parent.name}/); "
                          f"{_fix()}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"{where}: unreadable ({exc}); {_fix()}") from None
    entry = records.get(path.name) if isinstance(records, dict) else None
    if not isinstance(entry, dict) or any(field not in entry for field in RECORD_FIELDS):
        raise SourceError(f"{where}: no complete entry for {path.name!r} (needs {', '.join(RECORD_FIELDS)}); "
                          f"{_fix()}")
    return entry


def read_source(relative: str, parsers: Mapping[str, Parser], root: Path = SOURCES_DIR) -> list[dict[str, Any]]:
    """The rows of the vendored CSV `relative` (to `tools/india/`), each cell through its column's parser.

    The header must name exactly the columns of `parsers`, in that order. Raises `SourceError`, one
    line naming the file (and the row and column where there is one), when the file is missing, is
    not UTF-8 CSV, has a row of the wrong width or a cell its parser refuses, has fewer or more
    rows than recorded, or differs from the recorded SHA-256.
    """
    path = source_path(relative, root)
    name = f"{root.name}/{relative}"
    record = source_record(relative, root)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SourceError(f"{name}: missing; {_fix()}") from None
    except OSError as exc:
        raise SourceError(f"{name}: unreadable ({exc.strerror}); {_fix()}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SourceError(f"{name}, line {line}: not UTF-8 text (damaged); {_fix()}") from None
    columns = list(parsers)
    rows: list[dict[str, Any]] = []
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = next(reader, None)
        if header != columns:
            raise SourceError(f"{name}, header: columns {header} where {columns} are expected; {_fix()}")
        for number, cells in enumerate(reader, 1):
            if len(cells) != len(columns):
                raise SourceError(f"{name}, row {number}: {len(cells)} of {len(columns)} columns "
                                  f"(a damaged or truncated row); {_fix()}")
            row: dict[str, Any] = {}
            for column, cell in zip(columns, cells, strict=True):
                try:
                    row[column] = parsers[column](cell)
                except (ValueError, TypeError, KeyError) as exc:
                    raise SourceError(f"{name}, row {number}, column {column!r}: {cell[:60]!r} is not valid "
                                      f"({exc}); {_fix()}") from None
            rows.append(row)
    except csv.Error as exc:
        raise SourceError(f"{name}, row {len(rows) + 1}: malformed CSV ({exc}); {_fix()}") from None
    expected = int(record["rows"])
    if len(rows) != expected:
        what = "truncated" if len(rows) < expected else "extended"
        raise SourceError(f"{name}: {len(rows):,} rows where {expected:,} are recorded ({what} after row "
                          f"{min(len(rows), expected):,}); {_fix()}")
    digest = hashlib.sha256(raw).hexdigest()
    if digest != record["sha256"]:
        raise SourceError(f"{name}: content differs from the SHA-256 recorded in {RECORD} (edited or damaged); "
                          f"{_fix()}")
    return rows


# Column parsers shared by the sources.
def text(cell: str) -> str:
    """A non-empty string, stripped."""
    value = cell.strip()
    if not value:
        raise ValueError("empty")
    return value


def optional_text(cell: str) -> str | None:
    """A string, or None for an empty cell."""
    return cell.strip() or None


def integer(cell: str) -> int:
    """A base-10 integer."""
    return int(cell)


def number(cell: str) -> float:
    """A finite decimal number."""
    value = float(cell)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError("not finite")
    return value


def optional_number(cell: str) -> float | None:
    """A finite decimal number, or None for an empty cell."""
    return number(cell) if cell.strip() else None


def hhmm(cell: str) -> str:
    """A clock time `HH:MM` (00:00-23:59)."""
    if len(cell) != 5 or cell[2] != ":" or not (cell[:2] + cell[3:]).isdigit():
        raise ValueError("not HH:MM")
    if int(cell[:2]) > 23 or int(cell[3:]) > 59:
        raise ValueError("not a clock time")
    return cell


def optional_hhmm(cell: str) -> str | None:
    """A clock time `HH:MM`, or None for an empty cell."""
    return hhmm(cell) if cell else None


def weekdays(cell: str) -> str:
    """Seven characters of 1/0 for Monday..Sunday, at least one 1."""
    if len(cell) != 7 or set(cell) - {"0", "1"} or "1" not in cell:
        raise ValueError("not 7 characters of 1/0 with at least one 1")
    return cell


def words(cell: str) -> tuple[str, ...]:
    """Space-separated tokens (at least one)."""
    items = tuple(cell.split())
    if not items:
        raise ValueError("empty")
    return items


def optional_words(cell: str) -> tuple[str, ...]:
    """`|`-free space-separated tokens, possibly none."""
    return tuple(cell.split())


def listed(cell: str) -> tuple[str, ...]:
    """A `|`-separated list of non-empty items, possibly empty."""
    if not cell:
        return ()
    items = tuple(item.strip() for item in cell.split("|"))
    if any(not item for item in items):
        raise ValueError("an empty item in a |-separated list")
    return items


def update_record(relative: str, root: Path = SOURCES_DIR) -> dict[str, Any]:
    """Record the current row count and SHA-256 of `relative` in its folder's `SOURCE.json`
    (after a deliberate edit or a new derivation); the other fields must already be there."""
    path = source_path(relative, root)
    record_file = path.parent / RECORD
    records = json.loads(record_file.read_text(encoding="utf-8")) if record_file.exists() else {}
    raw = path.read_bytes()
    rows = sum(1 for _ in csv.reader(io.StringIO(raw.decode("utf-8"), newline=""))) - 1
    entry = dict(records.get(path.name, {}))
    entry.update(rows=rows, sha256=hashlib.sha256(raw).hexdigest())
    records[path.name] = entry
    from utp_env.tools.atomic import write_text_atomic

    write_text_atomic(record_file, json.dumps(records, indent=2, ensure_ascii=False) + "\n")
    return entry


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] != "--update":
        print("usage: python -m utp_env.tools.india.sources --update DIR/FILE (relative to tools/india/)",
              file=sys.stderr)
        return 2
    entry = update_record(args[1])
    print(f"{args[1]}: {entry['rows']:,} rows, sha256 {entry['sha256'][:16]}…")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
