"""Synthetic run records and queries for the paired comparisons (`utp-env compare`, the noise floor)."""

from __future__ import annotations

from typing import Any

from reports import report
from tiny_world import make_query

from utp_env.query import Query

N = 40

def queries() -> dict[str, Query]:
    out = {}
    for i in range(N):
        q = make_query(risk=("tolerant", "optimized", "averse")[i % 3])
        out[f"q{i:03d}"] = q.model_copy(update={"query_id": f"q{i:03d}"})
    return out

def record(qid: str, passed: bool, bas: float, reward: float, trial: int = 0) -> dict[str, Any]:
    rep = report(cs_fail=() if passed else ("meal_gaps",), bas=bas).model_copy(update={"query_id": qid})
    return {"query_id": qid, "trial": trial, "seed": trial, "plan": {"days": [{"day": 1}]},
            "report": rep.model_dump(mode="json"), "reward": reward}
