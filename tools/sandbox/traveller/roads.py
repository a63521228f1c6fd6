"""Traveller figures of the roads tables (see `__init__.py`); each names its target's source."""

from __future__ import annotations

from utp_env.tools.database import Database
from utp_env.tools.sandbox.traveller import Figure


def figures(db: Database) -> list[Figure]:
    """The roads figures of `db`."""
    return []
