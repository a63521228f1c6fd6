"""The traveller figures of a database: what someone who knows India checks first.

Each figure is a value measured on the database with a real-world target and the source of that
target (`Figure.source`, listed in docs/DATA.md "Traveller figures"). One module per area computes
its figures (`rail.py`, `air.py`, `roads.py`, `venues.py`); `traveller(db)` runs them all in that
order. A figure about named cities is left out when the database lacks them (the mini profile), so
a small profile prints fewer figures. The query set's figures (top destinations, plans that see a
city's top sights, meal and visit lengths) are computed in the core, `utp_env/queries/traveller.py`,
because they read the query set and its reference plans. `utp-env data stats` prints both.
"""

from __future__ import annotations

from utp_env.tools.database import Database
from utp_env.tools.sandbox.traveller.figure import Figure

__all__ = ["Figure", "traveller"]


def traveller(db: Database) -> list[Figure]:
    """Every traveller figure of `db` with its target, source and pass/fail."""
    from utp_env.tools.sandbox.traveller import air, rail, roads, venues

    return [*rail.figures(db), *air.figures(db), *roads.figures(db), *venues.figures(db)]
