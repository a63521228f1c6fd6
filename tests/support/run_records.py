"""The smallest valid episode record (utp_env/runs/records.py), for tests of the run store."""

from __future__ import annotations

from typing import Any


def minimal_record(query_id: str, trial: int = 0, **fields: Any) -> dict[str, Any]:
    """A valid record of an episode that delivered nothing (no plan, no report, reward 0)."""
    return {"query_id": query_id, "trial": trial, "seed": 0, "db_hash": "test-db",
            "termination_reason": "not_delivered", "plan": None, "report": None, "final_pass": False,
            "metrics": None, "reward": 0.0, "error": "no plan", **fields}
