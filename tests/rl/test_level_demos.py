"""The tiny model's level demonstrations (utp_env/rl/level_demos.py): played through the env, every call is
accepted, and every value a call writes is one the model can see where the demonstration says it reads it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from utp_env.env.config import level_pool
from utp_env.env.core import UTPEnv, reference_plan
from utp_env.rl.level_demos import MEAL_SLOTS, VISIT_SLOT, tiny_calls

QUERIES = 24


def _rows(answer: str) -> list[str]:
    """The first cell of each row of a venue search's answer (below its heading and column line)."""
    lines = answer.splitlines()[2:]
    return [line.split(" | ")[0] for line in lines if " | " in line]


def test_level_two_demonstrations_copy_rows_in_order_at_the_fixed_times(mini_db_path: Path) -> None:
    env = UTPEnv(db_path=mini_db_path, level=2, split="train")
    rewards = []
    for query in level_pool(env.db, "train", env.level, QUERIES):
        task_text, _ = env.reset(seed=0, options={"query_id": query.query_id})
        task = env._level_task(query)
        facts = json.loads(re.search(r"Plan this day: (\{.*?\})", task_text).group(1))  # type: ignore[union-attr]
        calls = tiny_calls(task, env.db, reference_plan(env.db, query.query_id))
        assert calls[-1] == ("submit", {})
        rows: list[str] = []
        meals = 0
        for name, args in calls:
            if name.startswith("search_"):
                assert args["city"] == facts["city"]  # copied from the task text's JSON
            if name == "add_item":
                assert args["day"] == facts["day"]
                if args["kind"] == "restaurant":
                    meal, start, end = MEAL_SLOTS[meals]
                    assert (args["meal"], args["start"], args["end"], args["name"]) == (meal, start, end, rows[meals])
                    meals += 1
                else:
                    assert (args["start"], args["end"], args["name"]) == (*VISIT_SLOT, rows[0])
            observation, reward, terminated, _, info = env.step({"tool": name, "args": args})
            assert all(c["ok"] for c in info.get("calls") or []), observation
            if name.startswith("search_"):
                rows = _rows(observation)
        assert terminated and meals == len(MEAL_SLOTS)
        rewards.append(reward)
    assert min(rewards) > 0  # every demonstrated day earns part of the level's reward
