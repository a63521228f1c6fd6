"""Derived per-database indices that make every lookup filter and sort a few numpy operations.

Built once per `Database` on first use (one pass per table, like the Database's own key
indices) and cached; a tool call then only touches the rows of one city or city pair:
weekday bits of `run_days`, departure minutes, name ranks (for tie-breaking sorts), codes of
house types and price tiers, bit masks of forbidden house rules, attraction categories and
cuisines, and the normalised amenity/service sets of each stay.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from utp_env.tools.clock import parse_hhmm
from utp_env.tools.database import Database, Table, normalize
from utp_env.tools.schema import (
    ATTRACTION_CATEGORIES,
    CROWD_KINDS,
    CUISINES,
    HOUSE_RULE_FORBIDS,
    HOUSE_TYPES,
    PRICE_TIERS,
    SERVICE_TABLE,
    VENUE_TABLE,
)

NEEDS = tuple(HOUSE_RULE_FORBIDS)
CROWD_TABLES = tuple(VENUE_TABLE[kind] for kind in CROWD_KINDS)


def _runs(table: Table) -> np.ndarray:
    """bool[n, 7]: whether each service runs on Mon..Sun."""
    raw = "".join(table.columns["run_days"]).encode("ascii")
    return (np.frombuffer(raw, dtype=np.uint8).reshape(table.n, 7) == ord("1")) if table.n else np.zeros((0, 7), bool)


def _minutes(times: list[str]) -> np.ndarray:
    return np.array([parse_hhmm(t) for t in times], dtype=np.int32)


def _rank(values: list[str]) -> np.ndarray:
    """Rank of each value in sorted order, so (key, name) sorts become integer lexsorts."""
    order = sorted(range(len(values)), key=values.__getitem__)
    rank = np.empty(len(values), dtype=np.int64)
    rank[order] = np.arange(len(values))
    return rank


def _codes(values: list[str], choices: tuple[str, ...]) -> np.ndarray:
    code = {c: i for i, c in enumerate(choices)}
    return np.array([code.get(v, -1) for v in values], dtype=np.int16)


def _bits(lists: list[list[str]], choices: tuple[str, ...]) -> np.ndarray:
    bit = {normalize(c): 1 << i for i, c in enumerate(choices)}
    return np.array([sum({bit.get(normalize(v), 0) for v in vs}) for vs in lists], dtype=np.int64)


@dataclass
class LookupIndex:
    """The derived columns of one database (see the module docstring)."""

    runs: dict[str, np.ndarray]
    dep_min: dict[str, np.ndarray]
    name_rank: dict[str, np.ndarray]
    house_type: np.ndarray
    forbids: np.ndarray
    amenities: list[frozenset[str]]
    services: list[frozenset[str]]
    vocabulary: dict[str, dict[str, str]]
    categories: np.ndarray
    cuisines: np.ndarray
    price_tier: np.ndarray
    has_crowd: dict[str, np.ndarray]

    @classmethod
    def build(cls, db: Database) -> LookupIndex:
        t = db.tables
        services = tuple(SERVICE_TABLE.values())
        stays = t["accommodations"].columns
        forbid_rules = tuple(HOUSE_RULE_FORBIDS[n] for n in NEEDS)
        amen = [frozenset(normalize(a) for a in v) for v in stays["amenities"]]
        serv = [frozenset(normalize(s) for s in v) for v in stays["services"]]
        vocab = {col: {normalize(v): v for values in stays[col] for v in values} for col in ("amenities", "services")}
        return cls(
            runs={s: _runs(t[s]) for s in services},
            dep_min={s: _minutes(t[s].columns["dep_time"]) for s in services},
            name_rank={v: _rank(t[v].columns["name"]) for v in ("accommodations", *CROWD_TABLES)},
            house_type=_codes(stays["house_type"], HOUSE_TYPES),
            forbids=_bits(stays["house_rules"], forbid_rules),
            amenities=amen, services=serv, vocabulary=vocab,
            categories=_bits(t["attractions"].columns["categories"], tuple(ATTRACTION_CATEGORIES)),
            cuisines=_bits(t["restaurants"].columns["cuisines"], CUISINES),
            price_tier=_codes(t["restaurants"].columns["price_tier"], PRICE_TIERS),
            has_crowd=_has_crowd(db),
        )


def _has_crowd(db: Database) -> dict[str, np.ndarray]:
    """Per attraction and restaurant row: whether the crowd table holds its profile."""
    out = {}
    crowd = db.tables["crowd"].columns
    for kind in CROWD_KINDS:
        table = VENUE_TABLE[kind]
        flags = np.zeros(db.tables[table].n, dtype=bool)
        for city, venue_type, name in zip(crowd["city"], crowd["venue_type"], crowd["venue_name"], strict=True):
            i = db.venue(table, city, name) if venue_type == kind else None
            if i is not None:
                flags[i] = True
        out[table] = flags
    return out


def lookup_index(db: Database) -> LookupIndex:
    """The LookupIndex of `db`, built on first use and cached for the database's lifetime."""
    return db.derived(LookupIndex.build)
