"""The run folder's `results.jsonl`: append one line per finished episode, flushed and synced,
and on restart read back every valid record, wherever the bad lines are.

A line is kept when it is UTF-8 JSON of a valid episode record (`utp_env/runs/records.py`: every
field typed and in its range, consistent with itself and, given the run's `RecordContext`, of one
of the run's episodes, database and agent), the first for its episode. Every other line
(garbage, a line torn by a kill, the wrong shape such as `{}` or `[1, 2]`, nesting too deep to
parse, bytes that are not UTF-8, a forged or foreign record, a duplicate) is moved to
`results.rejected.jsonl` with its line number and the reason, and `results.jsonl` is rewritten
atomically with the valid lines only (the rejected ones are written first, so a kill in between
loses nothing). The episodes of rejected lines are run again.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from utp_env.runs.records import RecordContext, check_record
from utp_env.tools.atomic import FileWriteError, write_bytes_atomic
from utp_env.tools.jsonl import decode_json_line

RESULTS = "results.jsonl"
REJECTED = "results.rejected.jsonl"
MAX_PREVIEW = 2000  # characters of a rejected line kept in results.rejected.jsonl


def episode_key(query_id: str, trial: int) -> str:
    """The identity of an episode inside a run."""
    return f"{query_id}#{trial}"


def encode_line(record: dict[str, Any]) -> bytes:
    """One results.jsonl line: sorted-key JSON, UTF-8; a lone surrogate is written as its JSON escape."""
    text = json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"
    return text.encode("utf-8", errors="backslashreplace")


@dataclass(frozen=True, slots=True)
class RejectedLine:
    """A line of results.jsonl that is not a valid episode record: its 1-based number and why."""

    line: int
    reason: str
    text: str


def read_record(raw: bytes, context: RecordContext | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """(record, None) for a valid results line (of the run of `context`, when given), else
    (None, the one-line reason it is not one)."""
    record, error = decode_json_line(raw)
    if error is not None:
        return None, error
    if not isinstance(record, dict):
        return None, f"a JSON {type(record).__name__}, not an episode record object"
    if not isinstance(record.get("query_id"), str) or not record["query_id"]:
        return None, "no string 'query_id'"
    trial = record.get("trial")
    if not isinstance(trial, int) or isinstance(trial, bool) or trial < 0:
        return None, "no non-negative integer 'trial'"
    reason = check_record(record, context)
    if reason is not None:
        return None, reason
    return record, None


class ResultsStore:
    """Append-only JSONL of episode results that survives being killed at any instant.

    `context`: the run the records must belong to (`RecordContext`; without it only the record's
    own schema is checked). `agent_hash`: stamped on every record appended (the run's agent)."""

    def __init__(self, run_dir: Path, context: RecordContext | None = None, agent_hash: str | None = None) -> None:
        self.path = Path(run_dir) / RESULTS
        self.rejected_path = Path(run_dir) / REJECTED
        self.context = context
        self.agent_hash = agent_hash
        self.records: dict[str, dict[str, Any]] = {}
        self.rejected: list[RejectedLine] = []
        self.torn_lines = 0  # of the rejected: a last line without its newline (a kill mid-write)
        self._load()

    @property
    def bad_lines(self) -> int:
        """How many lines the last load moved to results.rejected.jsonl (torn ones included)."""
        return len(self.rejected)

    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        kept: list[bytes] = []
        first_line: dict[str, int] = {}
        lines = data.splitlines(keepends=True)
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            if not raw.endswith(b"\n"):
                self.torn_lines += 1
                self._reject(number, "torn: no newline at the end (the run was killed while writing it)", raw)
                continue
            record, reason = read_record(raw, self.context)
            if record is None:
                self._reject(number, reason or "unreadable", raw)
                continue
            key = episode_key(record["query_id"], record["trial"])
            if key in first_line:
                self._reject(number, f"a second record of episode {key} (first on line {first_line[key]})", raw)
                continue
            first_line[key] = number
            self.records[key] = record
            kept.append(raw)
        cleaned = b"".join(kept)
        if cleaned != data:
            if self.rejected:
                self._save_rejected()
            write_bytes_atomic(self.path, cleaned)

    def _reject(self, number: int, reason: str, raw: bytes) -> None:
        text = raw.decode("utf-8", errors="backslashreplace").rstrip("\n")
        if len(text) > MAX_PREVIEW:
            text = text[:MAX_PREVIEW] + f"... [{len(text) - MAX_PREVIEW} more characters]"
        self.rejected.append(RejectedLine(number, reason, text))

    def _save_rejected(self, rejected: list[RejectedLine] | None = None) -> None:
        """Append the rejected lines to results.rejected.jsonl (durably) before results.jsonl changes."""
        lines = b"".join(encode_line({"line": r.line, "reason": r.reason, "text": r.text})
                         for r in (self.rejected if rejected is None else rejected))
        self._append_bytes(self.rejected_path, lines)

    def rejected_summary(self, limit: int = 3) -> str:
        """`line 250: not JSON (...); line 600: torn ...` for the first `limit` rejected lines."""
        shown = "; ".join(f"line {r.line}: {r.reason}" for r in self.rejected[:limit])
        more = f"; and {len(self.rejected) - limit} more" if len(self.rejected) > limit else ""
        return shown + more

    def done(self, query_id: str, trial: int) -> bool:
        """Whether the episode (query, trial) is already recorded."""
        return episode_key(query_id, trial) in self.records

    @staticmethod
    def _append_bytes(path: Path, data: bytes) -> None:
        """Append `data` durably; on failure (disk full, read-only) cut the file back to its old
        size, so that no partial line is left, and raise a `FileWriteError` naming the file."""
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise FileWriteError.of(exc, path) from exc
        try:
            size = os.fstat(fd).st_size
            try:
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                raise FileWriteError.of(exc, path) from exc
        finally:
            os.close(fd)

    def append(self, record: dict[str, Any]) -> str | None:
        """Write one finished episode durably before anything else happens (stamped with the run's
        `agent_hash`). A record that fails its own checks (`check_record`; e.g. a NaN reward) is
        written to results.rejected.jsonl instead, left out of the run, and the reason returned
        (its episode is run again on resume); None when it was recorded."""
        if self.agent_hash is not None:
            record = {**record, "agent_hash": self.agent_hash}
        line = encode_line(record)
        reason = check_record(json.loads(line), self.context)
        if reason is not None:
            text = line.decode("utf-8", errors="backslashreplace").rstrip("\n")
            if len(text) > MAX_PREVIEW:
                text = text[:MAX_PREVIEW] + f"... [{len(text) - MAX_PREVIEW} more characters]"
            self._save_rejected([RejectedLine(0, f"refused when recorded: {reason}", text)])
            return reason
        self._append_bytes(self.path, line)
        self.records[episode_key(record["query_id"], record["trial"])] = record
        return None

    def retire(self, keys: list[str], reason: str) -> None:
        """Take the records of episodes `keys` out of the run so that they run again: their lines move to
        results.rejected.jsonl with `reason` (written first, so a kill in between loses nothing) and
        results.jsonl is rewritten atomically without them."""
        gone = set(keys) & set(self.records)
        if not gone:
            return
        moved = [RejectedLine(0, reason, encode_line(self.records[k]).decode("utf-8", errors="backslashreplace")
                              .rstrip("\n")[:MAX_PREVIEW]) for k in sorted(gone)]
        self._save_rejected(moved)
        for key in gone:
            del self.records[key]
        write_bytes_atomic(self.path, b"".join(encode_line(r) for r in self.records.values()))

    def ordered(self, keys: list[str]) -> list[dict[str, Any]]:
        """Records in the run's canonical episode order (independent of completion order)."""
        return [self.records[k] for k in keys if k in self.records]
