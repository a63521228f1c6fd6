"""Local pool workers: forked from the driver, which holds the run's context, where the
platform can fork; spawned otherwise (and when this process has started Ray). Either way the
records equal a one-worker run's; and runs with other output folders share the dataset."""

from __future__ import annotations

import json
import multiprocessing
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from utp_env.runs import episode
from utp_env.runs.config import RunConfig
from utp_env.runs.runner import run

pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")


def _config(db: Path, out: Path, **kw: Any) -> RunConfig:
    return RunConfig(**({"db": str(db), "split": "all", "limit": 4, "rollouts": 50, "out": str(out)} | kw))


def _stable(run_dir: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return sorted(({k: v for k, v in r.items() if k != "duration_s"} for r in records),
                  key=lambda r: (r["query_id"], r["trial"]))


def _methods(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    used: list[str] = []
    real = multiprocessing.get_context

    def spy(method: str | None = None) -> Any:
        used.append(str(method))
        return real(method)

    monkeypatch.setattr(multiprocessing, "get_context", spy)
    return used


def test_forked_and_spawned_workers_give_the_one_worker_records(mini_db_path: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    one = run(_config(mini_db_path, tmp_path / "one"), progress=False)
    used = _methods(monkeypatch)
    forked = run(_config(mini_db_path, tmp_path / "forked", workers=2), progress=False)
    assert used == ["fork"]
    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(is_initialized=lambda: True))
    spawned = run(_config(mini_db_path, tmp_path / "spawned", workers=2), progress=False)
    assert used == ["fork", "spawn"]
    assert _stable(one) == _stable(forked) == _stable(spawned)


def test_runs_on_one_database_share_its_dataset(mini_db_path: Path, tmp_path: Path) -> None:
    first = episode.context_for(_config(mini_db_path, tmp_path / "a"))
    second = episode.context_for(_config(mini_db_path, tmp_path / "b", workers=2))
    assert first is not second and first.dataset is second.dataset
    assert first.config.out != second.config.out  # each run keeps its own configuration


def test_a_database_folder_whose_files_changed_is_opened_again(mini_db_path: Path, tmp_path: Path) -> None:
    import os
    import shutil

    db = Path(shutil.copytree(mini_db_path, tmp_path / "db"))
    first = episode.context_for(_config(db, tmp_path / "a")).dataset
    assert episode.context_for(_config(db, tmp_path / "b")).dataset is first
    stamp = (db / "queries.jsonl").stat().st_mtime_ns + 10**9
    os.utime(db / "queries.jsonl", ns=(stamp, stamp))
    assert episode.context_for(_config(db, tmp_path / "c")).dataset is not first
