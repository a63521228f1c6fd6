"""The tiny model's level demonstrations (utp_env/rl/level_demos.py): played through the env, every call is
accepted, and every value a call writes is a constant of the schedule or one the model sees where the
demonstration reads it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from utp_env.env.config import level_pool
from utp_env.env.core import UTPEnv, reference_plan
from utp_env.rl.level_demos import DAY_SCHEDULE, tiny_calls

QUERIES = 24


def _first_row(answer: str) -> str:
    """The first cell of a venue search's first row (below its heading and column line)."""
    return answer.splitlines()[2].split(" | ")[0]


def test_level_two_demonstrations_follow_the_schedule_and_copy_the_answer_just_before(mini_db_path: Path) -> None:
    env = UTPEnv(db_path=mini_db_path, level=2, split="train")
    rewards = []
    for query in level_pool(env.db, "train", env.level, QUERIES):
        task_text, _ = env.reset(seed=0, options={"query_id": query.query_id})
        facts = json.loads(re.search(r"Plan this day: (\{.*?\})", task_text).group(1))  # type: ignore[union-attr]
        calls = tiny_calls(env._level_task(query), env.db, reference_plan(env.db, query.query_id))
        assert calls[-1] == ("submit", {})
        steps = iter(DAY_SCHEDULE)
        last_answer, step = "", None
        for name, args in calls:
            if name.startswith("search_"):
                step = next(steps)
                table, search, *_ = step
                assert (name, args) == (f"search_{table}", {"city": facts["city"], "limit": 1, **search})
            elif name == "add_item":
                assert step is not None
                table, _, meal, start, end = step
                assert args["day"] == facts["day"] and args["name"] == _first_row(last_answer)
                assert (args["start"], args["end"], args.get("meal")) == (start, end, meal)
            observation, reward, terminated, _, info = env.step({"tool": name, "args": args})
            assert all(c["ok"] for c in info.get("calls") or []), observation
            last_answer = observation
        assert terminated and next(steps, None) is None  # every step of the schedule was taken
        rewards.append(reward)
    assert min(rewards) > 0  # every demonstrated day earns part of the level's reward
