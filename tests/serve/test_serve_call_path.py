"""The path of one served call (utp_env/serve/): where it runs, how its answer is written, what is read
before serving, and the collector's thresholds of a serving process.

- A start or call that evaluates a plan (submit, a closed-loop start from a plan, any call of an env
  that shapes its reward) runs on the factory's threads; any other start or call, and building a
  session, on the event loop's own thread.
- The answer's metadata is encoded once (`ToolAnswer.structured_json`): it reads back as
  `structured()` without the keys left out, and the observation frame reads back as OpenEnv's
  `serialize_observation` shape (the metadata inside the observation and beside it), whatever the text.
- A served factory reads every reference plan before serving, so a broken line is a one-line error
  at start naming the file and line, not a failed start of that query later.
- `serve_socket` runs its app with the garbage collector at `GC_THRESHOLDS`.
- benchmarks/serve.py's bound on N workers against one: 2s/(s + c) for two workers on two cores.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import json
import shutil
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from serve_script import query_ids

from utp_env.env.config import open_database, query_pool, reference_plan
from utp_env.env.engine import Refusal, ToolAnswer
from utp_env.plan_format import format_plan
from utp_env.serve import listen
from utp_env.serve.openenv_server import _observation
from utp_env.serve.session import SessionFactory

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(scope="module")
def qid(mini_db_path: Path) -> str:
    return query_ids(mini_db_path, 1)[0]


def recording_threads(engine: Any) -> list[tuple[str, int]]:
    """Wrap `engine.start` and `engine.call` to record (what, thread id) of each run."""
    seen: list[tuple[str, int]] = []
    start, call = engine.start, engine.call

    def recorded_start(*args: Any, **kwargs: Any) -> Any:
        seen.append(("start", threading.get_ident()))
        return start(*args, **kwargs)

    def recorded_call(name: str, *args: Any, **kwargs: Any) -> Any:
        seen.append((name, threading.get_ident()))
        return call(name, *args, **kwargs)

    engine.start, engine.call = recorded_start, recorded_call
    return seen


def test_only_work_that_evaluates_a_plan_leaves_the_event_loop(mini_db_path: Path, qid: str) -> None:
    plan = reference_plan(open_database(mini_db_path), qid)
    assert plan is not None
    text = json.dumps(format_plan(plan))

    async def play(factory: SessionFactory, calls: list[tuple[str, dict[str, Any]]], **start: Any
                   ) -> tuple[int, list[tuple[str, int]]]:
        loop_thread = threading.get_ident()
        engine = factory.new()
        seen = recording_threads(engine)
        await factory.start(engine, 3, query_id=qid, **start)
        for name, args in calls:
            await factory.call(engine, name, args, engine.token)
        factory.shutdown()
        return loop_thread, seen

    def where(factory: SessionFactory, calls: list[tuple[str, dict[str, Any]]], **start: Any) -> list[str]:
        loop_thread, seen = asyncio.run(play(factory, calls, **start))
        return [f"{what} {'loop' if ident == loop_thread else 'thread'}" for what, ident in seen]

    city = next(q.org for q in query_pool(open_database(mini_db_path)) if q.query_id == qid)
    lookups = [("search_stays", {"city": city, "limit": 2}), ("view_plan", {})]
    assert where(SessionFactory(db_path=mini_db_path, served=True), [*lookups, ("submit_plan", {"plan": text})]) == [
        "start loop", "search_stays loop", "view_plan loop", "submit_plan thread"]
    assert where(SessionFactory(env="UTP-Replan-v0", db_path=mini_db_path, served=True), lookups, plan=text) == [
        "start thread", "search_stays loop", "view_plan loop"]
    assert where(SessionFactory(db_path=mini_db_path, config={"shaping": True}, served=True), lookups) == [
        "start thread", "search_stays thread", "view_plan thread"]


class _Opaque:
    def __str__(self) -> str:
        return "opaque object"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)
info_values = json_values | st.sampled_from([np.float32(0.25), np.int64(7), np.bool_(True), _Opaque(), (1, "a")])


@given(info=st.dictionaries(st.sampled_from(["steps", "report", "metrics", "plan", "tools", "calls", "done",
                                             "episode", "final_pass", "x"]), info_values, max_size=6),
       done=st.booleans(), refused=st.sampled_from([None, *Refusal]),
       leave_out=st.sampled_from([(), ("done", "reward"), ("report",)]))
def test_the_metadata_encoded_once_reads_as_the_structured_answer(info: dict[str, Any], done: bool,
                                                                  refused: Refusal | None,
                                                                  leave_out: tuple[str, ...]) -> None:
    answer = ToolAnswer("text", ok=True, done=done, reward=0.5, info=info, episode="e-1", refused=refused)
    expected = {k: v for k, v in answer.structured().items() if k not in leave_out}
    assert json.loads(answer.structured_json(leave_out)) == expected


@given(text=st.text(), ok=st.booleans(), done=st.booleans(),
       reward=st.none() | st.floats(allow_nan=False, allow_infinity=False),
       metadata=st.dictionaries(st.text(max_size=8), json_values, max_size=4))
def test_the_observation_frame_is_openenv_s_shape(text: str, ok: bool, done: bool, reward: float | None,
                                                  metadata: dict[str, Any]) -> None:
    frame = json.loads(_observation(text, ok, done, reward, json.dumps(metadata)))
    assert frame == {"type": "observation", "data": {"observation": {"text": text, "ok": ok, "metadata": metadata},
                                                     "reward": reward, "done": done, "metadata": metadata}}


def test_a_served_factory_reads_every_reference_plan_before_serving(mini_db_path: Path, tmp_path: Path) -> None:
    broken = tmp_path / "db"
    shutil.copytree(mini_db_path, broken)
    path = broken / "reference_plans.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[-1])
    record["plan"] = "no plan here"
    lines[-1] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = json.loads((broken / "manifest.json").read_text(encoding="utf-8"))
    manifest.pop("content_hash", None)  # an intended edit (tools/database.py: remove the hash)
    (broken / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    SessionFactory(db_path=broken).preload()  # in-process: plans are read when an episode asks for one
    with pytest.raises(ValueError) as error:
        SessionFactory(db_path=broken, served=True).preload()
    assert str(error.value).startswith(f"reference_plans.jsonl line {len(lines)}: ") and "\n" not in str(error.value)


def test_a_serving_process_runs_the_collector_at_its_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, ...]] = []

    class Server:
        def run(self, sockets: list[Any]) -> None:
            seen.append(gc.get_threshold())

    before = gc.get_threshold()
    monkeypatch.setattr(listen, "http_server", lambda app, limits: Server())
    try:
        listen.serve_socket(object(), object(), listen.ConnectionLimits())  # type: ignore[arg-type]
    finally:
        gc.set_threshold(*before)
    assert seen == [listen.GC_THRESHOLDS]


def test_the_benchmark_s_bound_on_workers_against_one() -> None:
    spec = importlib.util.spec_from_file_location("serve_benchmark", BENCHMARKS / "serve.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    s, c = 1.5, 0.5
    assert bench.scaling_bound(2, 2, s, c) == pytest.approx(2 * s / (s + c))
    assert bench.scaling_bound(2, 2, 0.5, 1.5) == pytest.approx(1.0)  # clients heavier than the server
    assert bench.scaling_bound(4, 2, s, c) == pytest.approx(2 * s / (s + c))  # more workers than cores
    assert bench.scaling_bound(2, 8, s, c) == pytest.approx(2.0)  # cores to spare: one core per worker
