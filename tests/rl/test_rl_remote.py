"""TRL's environment class on a `utp-env serve` server (utp_env/rl/remote.py) against its in-process twin.

The same row and the same tool calls give the same answers and the same `get_reward`, whether the
rollout submits or is cut (then ended on the server as at the step limit). Server on 127.0.0.1.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from serve_process import openenv_server
from serve_script import query_ids

from utp_env.rl.env import rl_env_class
from utp_env.rl.remote import remote_env_class


def test_a_remote_rollout_is_its_in_process_twin(mini_db_path: Path) -> None:
    qids = query_ids(mini_db_path, 2)
    local_class = rl_env_class(db_path=mini_db_path)
    with openenv_server("--db", str(mini_db_path)) as url:
        remote_class = remote_env_class(url)
        for qid, finish in ((qids[0], True), (qids[1], False)):
            local, remote = local_class(), remote_class()
            row = {"query_id": qid, "seed": 3, "prompt": "ignored"}
            assert remote.reset(**row) == local.reset(**row)
            for env in (local, remote):
                env.answers = [env.view_plan(), env.view_plan(format="yaml"),  # type: ignore[attr-defined]
                               env.search_stays(city="Atlantis"), env.view_plan(format="json")]
                if finish:
                    env.answers.append(env.submit())  # type: ignore[attr-defined]
            assert remote.answers == local.answers  # type: ignore[attr-defined]
            assert remote.get_reward() == local.get_reward()
            assert remote.final_info["termination_reason"] == ("submitted" if finish else "step_limit")
            assert remote_class.episodes[-1].tools == local_class.episodes[-1].tools
            remote._close()


def test_the_remote_class_offers_trl_the_same_tools() -> None:
    from utp_env.env.adapters import tool_method_names

    assert tool_method_names(remote_env_class("http://127.0.0.1:1", tools=["add_leg", "submit"])) == \
        tool_method_names(rl_env_class(tools=["add_leg", "submit"]))


def test_a_bad_server_url_is_one_line() -> None:
    with pytest.raises(ValueError, match=r"^--server: 'localhost:8000' is not a URL"):
        remote_env_class("localhost:8000")
