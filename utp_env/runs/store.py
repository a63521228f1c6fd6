"""The run folder's `results.jsonl`: append one line per finished episode, flushed and synced,
and on restart read back what is done, detecting (and dropping) a torn last line."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

RESULTS = "results.jsonl"


def episode_key(query_id: str, trial: int) -> str:
    """The identity of an episode inside a run."""
    return f"{query_id}#{trial}"


class ResultsStore:
    """Append-only JSONL of episode results that survives being killed at any instant."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / RESULTS
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.records: dict[str, dict[str, Any]] = {}
        self.torn_lines = 0
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        data = self.path.read_bytes()
        good_end = 0
        for line in data.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                self.torn_lines += 1  # killed mid-write: the episode is redone
                break
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                self.torn_lines += 1
                break
            self.records[episode_key(record["query_id"], record["trial"])] = record
            good_end += len(line)
        if good_end != len(data):
            with self.path.open("r+b") as fh:
                fh.truncate(good_end)

    def done(self, query_id: str, trial: int) -> bool:
        """Whether the episode (query, trial) is already recorded."""
        return episode_key(query_id, trial) in self.records

    def append(self, record: dict[str, Any]) -> None:
        """Write one finished episode durably before anything else happens."""
        line = json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        self.records[episode_key(record["query_id"], record["trial"])] = record

    def ordered(self, keys: list[str]) -> list[dict[str, Any]]:
        """Records in the run's canonical episode order (independent of completion order)."""
        return [self.records[k] for k in keys if k in self.records]
