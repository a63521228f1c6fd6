"""A scripted episode played in-process and through the servers (tests/serve/test_serve_*.py, benchmarks/serve.py).

`scripted_calls` mixes lookups, bad calls (unknown argument, unknown tool, unknown city) and a whole
plan (the query's reference plan) so that the transcript covers answers, errors and a scored end;
`in_process` plays it on the env directly: what a served episode must reproduce exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from utp_env.env.config import open_database, query_pool, reference_plan
from utp_env.plan_format.write import format_plan
from utp_env.serve.session import env_class

CONTINUES = 12  # continue_trip calls at most after submitting in the closed loop (it pauses at most a few times)


def query_ids(db_path: Path, n: int) -> list[str]:
    """The first `n` query ids of the database's query set that have a reference plan."""
    db = open_database(db_path)
    out = [q.query_id for q in query_pool(db) if reference_plan(db, q.query_id) is not None]
    return out[:n]


def scripted_calls(db_path: Path, query_id: str, replan: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls of the scripted episode for `query_id`; the closed loop's adds `continue_trip`s."""
    db = open_database(db_path)
    query = next(q for q in query_pool(db) if q.query_id == query_id)
    ref = reference_plan(db, query_id)
    assert ref is not None
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search_stays", {"city": query.org, "limit": 2}),
        ("view_plan", {"bogus": 1}),
        ("no_such_tool", {}),
        ("search_attractions", {"city": "Atlantis"}),
        ("view_plan", {}),
        ("submit_plan", {"plan": json.dumps(format_plan(ref))}),
    ]
    if replan:
        calls += [("continue_trip", {})] * CONTINUES
    return calls


def in_process(db_path: Path, query_id: str, seed: int, calls: list[tuple[str, dict[str, Any]]],
               env: str = "UTP-v0") -> tuple[list[str], float, dict[str, Any]]:
    """Play `calls` on the env in this process: (observations from the task text on, reward, final info)."""
    cls = env_class(env)
    e = cls(db_path=db_path)
    observation, _ = e.reset(seed=seed, options={"query_id": query_id})
    transcript = [observation]
    reward, info = 0.0, {}
    for name, args in calls:
        observation, reward, terminated, truncated, info = e.step({"tool": name, "args": args})
        transcript.append(observation)
        if terminated or truncated:
            break
    else:
        raise AssertionError("the scripted episode did not end")
    return transcript, float(reward), info
