"""Worlds: a sandbox built from another seed is another world with its own query set; the
env takes `world` (the embedded sandbox's seed) or the world's directory as `db_path`."""

from __future__ import annotations

from pathlib import Path

import pytest

import utp_env.env.config as env_config
from utp_env.dataset import build_query_set, dataset_of
from utp_env.env.core import UTPEnv
from utp_env.queries.generate import trip_key
from utp_env.rl.demos import demonstrations, replay
from utp_env.tools.database import Database
from utp_env.tools.sandbox import build_sandbox


@pytest.mark.parametrize("world", [-1, 1.5, "1", True])
def test_a_bad_world_is_one_clear_error(world: object) -> None:
    with pytest.raises(ValueError, match="world must be a non-negative int"):
        env_config.open_database(None, "mini", world)  # type: ignore[arg-type]


def test_world_and_db_path_together_are_refused(mini_db_path: Path) -> None:
    with pytest.raises(ValueError, match="world=2 names an embedded sandbox"):
        UTPEnv(db_path=mini_db_path, world=2)


def test_world_is_the_embedded_sandbox_seed(monkeypatch: pytest.MonkeyPatch, mini_db_path: Path) -> None:
    seen: list[tuple[object, str, int]] = []

    def fake_open_dataset(path: object, profile: str = "full", seed: int = 0, progress: bool = True) -> object:
        seen.append((path, profile, seed))
        return dataset_of(Database.open(mini_db_path))

    monkeypatch.setattr(env_config, "open_dataset", fake_open_dataset)
    env_config._open.cache_clear()
    try:
        env = UTPEnv(profile="mini", world=3)
        assert seen == [(None, "mini", 3)] and env._init_args["world"] == 3
    finally:
        env_config._open.cache_clear()


@pytest.mark.slow
def test_a_second_world_has_its_own_services_and_queries(mini_db_path: Path, tmp_path: Path) -> None:
    world_b = tmp_path / "world1"
    build_sandbox("mini", 1, world_b)
    build_query_set(world_b, n=30, seed=1, progress=False)
    a, b = Database.open(mini_db_path), Database.open(world_b)
    assert sorted(a.cities) == sorted(b.cities) and a.content_hash != b.content_hash
    # The railway is the real timetable in every world; its delays, and the flights drawn on the
    # real air routes, are the world's own.
    trains = [set(db.tables["trains"].columns["train_number"]) for db in (a, b)]
    assert trains[0] == trains[1]
    delays = [list(db.tables["trains"].columns["avg_delay_1m"]) for db in (a, b)]
    assert delays[0] != delays[1]
    flights = [set(db.tables["flights"].columns["flight_number"]) for db in (a, b)]
    assert flights[0] != flights[1]
    qa, qb = dataset_of(a).queries, dataset_of(b).queries
    assert {trip_key(q) for q in qa} != {trip_key(q) for q in qb}
    records = list(demonstrations("validation", db_path=world_b))  # an episode in world B replays there
    assert records and all(replay(r, db_path=world_b).observations_match for r in records)


@pytest.mark.slow
def test_a_run_in_world_b(mini_db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`utp-env run --world 1` opens the embedded sandbox of seed 1 (here a small world B built in
    the test) and its queries, plan and closed-loop runs alike; the run folder says the world."""
    import json

    import utp_env.tools.sandbox.cache as sandbox_cache
    from utp_env.cli import main

    world_b = tmp_path / "world1"
    build_sandbox("mini", 1, world_b)
    build_query_set(world_b, n=30, seed=1, progress=False)
    asked: list[tuple[str, int]] = []

    def fake_ensure(profile: str, seed: int = 0, quiet: bool = False) -> Path:
        asked.append((profile, seed))
        return world_b

    monkeypatch.setattr(sandbox_cache, "ensure_sandbox", fake_ensure)
    b = Database.open(world_b)
    ids = {q.query_id for q in dataset_of(b).split("validation")}
    for env in ("plan", "replan"):
        out = tmp_path / f"run-{env}"
        assert main(["run", "--profile", "mini", "--world", "1", "--env", env, "--limit", "3", "--rollouts", "0",
                     "--out", str(out), "--quiet"]) == 0
        rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
        assert len(rows) == 3 and {r["query_id"] for r in rows} <= ids and all(r["reward"] > 0 for r in rows)
        assert json.loads((out / "config.json").read_text())["config"]["world"] == 1
    assert set(asked) == {("mini", 1)}


def test_run_refuses_world_with_db_and_a_negative_world(mini_db_path: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from utp_env.cli import main
    from utp_env.runs.config import RunConfig

    assert main(["run", "--world", "2", "--db", str(mini_db_path), "--out", str(tmp_path / "r")]) == 2
    assert "world 2 names an embedded sandbox, and db" in capsys.readouterr().err
    assert main(["run", "--world", "-1", "--profile", "mini", "--out", str(tmp_path / "r")]) == 2
    assert "world" in capsys.readouterr().err
    assert RunConfig(profile="mini", world=3).default_run_name() == "reference-mini-world3-validation-seed0"
    assert "world" not in RunConfig().identity()  # folders made before worlds resume as before
