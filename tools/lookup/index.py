"""Derived per-database indices that make every lookup filter and sort a few numpy operations.

Built once per `Database` on first use (one pass per table, like the Database's own key
indices) and cached; a tool call then only touches the rows of one city or city pair:
weekday bits of `run_days`, departure minutes, name ranks (for tie-breaking sorts), codes of
house types and price tiers, bit masks of forbidden house rules, attraction categories and
cuisines, and the normalised amenity/service sets of each stay.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

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
    """Minutes of each clock time, each distinct time parsed once (a timetable repeats a few
    hundred times over 100k rows)."""
    minutes = {t: parse_hhmm(t) for t in dict.fromkeys(times)}
    return np.fromiter(map(minutes.__getitem__, times), dtype=np.int32, count=len(times))


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
        """The index of `db`: its arrays loaded from `.indices.npz` (built and stored there the first
        time, `Database.derived_arrays`), the stays' amenity and service sets computed."""
        arrays = db.derived_arrays("lookup", _arrays)
        stays = db.tables["accommodations"].columns
        amen, serv = _sets(stays["amenities"]), _sets(stays["services"])
        vocab = {col: _vocabulary(stays[col]) for col in ("amenities", "services")}
        services = tuple(SERVICE_TABLE.values())
        return cls(
            runs={s: arrays[f"runs/{s}"] for s in services},
            dep_min={s: arrays[f"dep_min/{s}"] for s in services},
            name_rank={v: arrays[f"name_rank/{v}"] for v in ("accommodations", *CROWD_TABLES)},
            house_type=arrays["house_type"], forbids=arrays["forbids"],
            amenities=amen, services=serv, vocabulary=vocab,
            categories=arrays["categories"], cuisines=arrays["cuisines"], price_tier=arrays["price_tier"],
            has_crowd={table: arrays[f"has_crowd/{table}"] for table in CROWD_TABLES},
        )


def _sets(lists: list[list[str]]) -> list[frozenset[str]]:
    """Each row's list as a set of normalized names (one set per distinct list, shared by its rows)."""
    memo: dict[tuple[str, ...], frozenset[str]] = {}
    out = []
    for values in lists:
        key = tuple(values)
        found = memo.get(key)
        if found is None:
            found = memo[key] = frozenset(normalize(v) for v in values)
        out.append(found)
    return out


def _vocabulary(lists: list[list[str]]) -> dict[str, str]:
    """Normalized name -> the spelling the table uses (its last occurrence), normalizing each
    distinct spelling once."""
    flat = list(chain.from_iterable(lists))
    norm = {v: normalize(v) for v in dict.fromkeys(flat)}
    vocabulary: dict[str, str] = {}
    for v in flat:
        vocabulary[norm[v]] = v
    return vocabulary


def _arrays(db: Database) -> dict[str, np.ndarray]:
    """The index's arrays, computed from the tables."""
    t = db.tables
    stays = t["accommodations"].columns
    forbid_rules = tuple(HOUSE_RULE_FORBIDS[n] for n in NEEDS)
    out: dict[str, np.ndarray] = {}
    for s in SERVICE_TABLE.values():
        out[f"runs/{s}"] = _runs(t[s])
        out[f"dep_min/{s}"] = _minutes(t[s].columns["dep_time"])
    for v in ("accommodations", *CROWD_TABLES):
        out[f"name_rank/{v}"] = _rank(t[v].columns["name"])
    for table, flags in _has_crowd(db).items():
        out[f"has_crowd/{table}"] = flags
    out.update(house_type=_codes(stays["house_type"], HOUSE_TYPES), forbids=_bits(stays["house_rules"], forbid_rules),
               categories=_bits(t["attractions"].columns["categories"], tuple(ATTRACTION_CATEGORIES)),
               cuisines=_bits(t["restaurants"].columns["cuisines"], CUISINES),
               price_tier=_codes(t["restaurants"].columns["price_tier"], PRICE_TIERS))
    return out


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
