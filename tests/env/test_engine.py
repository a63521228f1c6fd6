"""The episode engine (utp_env/env/engine.py): what every front door does with a call without an episode,
a call for another episode, a call after the end, and the final reward.

Refused calls change nothing (the env's step count stays); the final answer is kept and repeated;
tokens never repeat; a start that needs the train split is refused at once by a served engine and
builds nothing. A Hypothesis test drives random sequences of starts, calls (with right, wrong and no
tokens) and ends, and checks those rules after every operation.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serve_script import query_ids

from utp_env.env.config import open_database, reference_plan
from utp_env.env.core import UTPEnv
from utp_env.env.engine import EpisodeEngine, Refusal
from utp_env.plan_format import format_plan
from utp_env.serve.session import TRAIN_REFUSAL, SessionFactory
from utp_env.train_split import TRAIN_QUERIES_FILE


@pytest.fixture(scope="module")
def qid(mini_db_path: Path) -> str:
    return query_ids(mini_db_path, 1)[0]


@pytest.fixture
def engine(mini_db_path: Path) -> EpisodeEngine:
    return EpisodeEngine(UTPEnv(db_path=mini_db_path))


def test_a_call_without_an_episode_is_refused_and_starts_none(engine: EpisodeEngine) -> None:
    answer = engine.call("view_plan", {})
    assert answer.refused is Refusal.NO_EPISODE and not answer.ok and not answer.done
    assert answer.text.startswith("Error: no episode is running in this session; call reset")
    assert engine.env.episode is None and engine.token is None  # nothing was started behind the caller
    with pytest.raises(RuntimeError, match="no episode was started"):
        engine.finish("text", "stopped")
    with pytest.raises(RuntimeError, match="no episode is running"):
        engine.end()


def test_a_call_for_another_episode_is_refused_and_changes_nothing(engine: EpisodeEngine, qid: str) -> None:
    engine.start(seed=1, query_id=qid)
    first = engine.token
    answer = engine.call("view_plan", {}, episode="someone-else")
    assert answer.refused is Refusal.WRONG_EPISODE and "'someone-else'" in answer.text and first in answer.text
    assert engine.env.episode is not None and engine.env.episode.steps == 0
    assert engine.call("view_plan", {}, episode=first).refused is None and engine.env.episode.steps == 1
    engine.start(seed=1, query_id=qid)  # the same seed and query: the same env episode id, another token
    assert engine.token != first and engine.started()["episode"] == engine.token
    assert engine.call("view_plan", {}, episode=first).refused is Refusal.WRONG_EPISODE


def test_the_final_answer_is_kept_and_repeated(engine: EpisodeEngine, mini_db_path: Path, qid: str) -> None:
    engine.start(seed=2, query_id=qid)
    plan = reference_plan(open_database(mini_db_path), qid)
    assert plan is not None
    final = engine.call("submit_plan", {"plan": json.dumps(format_plan(plan))})
    assert final.done and final.reward > 0 and engine.final is final
    again = engine.call("view_plan", {})
    assert again.refused is Refusal.ENDED and again.done and again.reward == final.reward
    assert again.text.startswith("Error: the episode has ended (submitted)")
    assert again.info["termination_reason"] == "submitted"  # a retry gets the evaluation back
    assert engine.end() is final and engine.finish("whatever", "stopped") is final


def test_finish_submits_a_last_reply_holding_a_plan(engine: EpisodeEngine, mini_db_path: Path, qid: str) -> None:
    plan = reference_plan(open_database(mini_db_path), qid)
    assert plan is not None
    engine.start(seed=3, query_id=qid)
    answer = engine.finish(json.dumps(format_plan(plan)), "stopped")
    assert answer.info["termination_reason"] == "submitted" and answer.reward > 0
    engine.start(seed=3, query_id=qid)
    cut = engine.finish("no plan here", "the agent stopped")
    assert cut.info["termination_reason"] == "step_limit" and cut.info["message"] == "the agent stopped"


def test_a_failed_start_leaves_no_episode(engine: EpisodeEngine, qid: str) -> None:
    engine.start(seed=0, query_id=qid)
    with pytest.raises(ValueError, match=r"reset: unknown argument\(s\) \['bogus'\]"):
        engine.start(bogus=1)
    assert engine.call("view_plan", {}).refused is Refusal.NO_EPISODE
    with pytest.raises(ValueError, match="no query with query_id 'nope'"):
        engine.start(query_id="nope")
    assert engine.call("view_plan", {}).refused is Refusal.NO_EPISODE and engine.query_id is None


def test_a_served_start_on_the_train_split_is_refused_at_once(mini_db_path: Path, tmp_path: Path) -> None:
    """No train split: a served session refuses it with the command that builds it, and builds nothing."""
    db = tmp_path / "db"
    shutil.copytree(mini_db_path, db)
    factory = SessionFactory(db_path=db, served=True)
    engine = factory.new()
    for options in ({"split": "train"}, {"query_id": "utp-train-00001"}):
        with pytest.raises(ValueError) as refused:
            engine.start(seed=0, **options)
        assert str(refused.value) == f"reset: {TRAIN_REFUSAL}" and "utp-env serve --split train" in str(refused.value)
        assert engine.call("view_plan", {}).refused is Refusal.NO_EPISODE
    assert not (db / TRAIN_QUERIES_FILE).exists()


def test_a_server_with_the_train_split_loads_it_before_serving(mini_db_path: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """`--split train`: `preload` builds the missing split (a small one here) before anything is served."""
    import utp_env.train_split

    monkeypatch.setattr(utp_env.train_split, "TRAIN_SIZE", 3)
    db = tmp_path / "db"
    shutil.copytree(mini_db_path, db)
    factory = SessionFactory(db_path=db, split="train", served=True)
    factory.preload()
    assert (db / TRAIN_QUERIES_FILE).exists() and factory.train_loaded
    engine = factory.new()
    engine.start(seed=0)
    assert engine.query_id is not None and engine.query_id.startswith("utp-train-")


operation = st.one_of(
    st.tuples(st.just("start"), st.integers(0, 3)),
    st.tuples(st.just("call"), st.sampled_from(["right", "wrong", "none"])),
    st.tuples(st.just("end"), st.just(0)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(operation, max_size=12))
def test_refused_calls_change_nothing_and_the_reward_is_kept(mini_db_path: Path, ops: list[tuple[str, object]]
                                                            ) -> None:
    engine = EpisodeEngine(UTPEnv(db_path=mini_db_path))
    qids = query_ids(mini_db_path, 2)
    tokens: set[str] = set()
    for kind, arg in ops:
        ep = engine.env.episode
        steps = None if ep is None else ep.steps
        final = engine.final
        if kind == "start":
            engine.start(seed=int(arg), query_id=qids[int(arg) % 2])  # type: ignore[call-overload]
            assert engine.token is not None and engine.token not in tokens
            tokens.add(engine.token)
            continue
        if kind == "end":
            if engine.token is None:
                with pytest.raises(RuntimeError):
                    engine.end()
            else:
                answer = engine.end()
                assert answer.done and (final is None or answer is final)
            continue
        named = {"right": engine.token, "wrong": "not-a-token", "none": None}[str(arg)]
        answer = engine.call("view_plan", {}, episode=named)
        if engine.token is None:
            assert answer.refused is Refusal.NO_EPISODE
        elif arg == "wrong":
            assert answer.refused is Refusal.WRONG_EPISODE
        elif final is not None:
            assert answer.refused is Refusal.ENDED and answer.reward == final.reward
        else:
            assert answer.refused is None and answer.episode == engine.token
        ep = engine.env.episode
        if answer.refused is not None:
            assert (None if ep is None else ep.steps) == steps and engine.final is final


def test_the_calls_that_evaluate_are_known(mini_db_path: Path, qid: str) -> None:
    """What a server runs off its event loop: the evaluating tools, and any call that reaches the step limit."""
    engine = EpisodeEngine(UTPEnv(db_path=mini_db_path, config={"step_limit": 3}))
    engine.start(seed=0, query_id=qid)
    assert {n for n in ("submit", "submit_plan", "check_plan", "view_plan", "search_stays") if engine.evaluates(n)} \
        == {"submit", "submit_plan", "check_plan"}
    engine.call("view_plan", {})
    engine.call("view_plan", {})
    assert engine.evaluates("view_plan")  # the third call ends the episode at the step limit
    assert engine.call("view_plan", {}).info["termination_reason"] == "step_limit"
