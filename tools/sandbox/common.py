"""Shared helpers of the sandbox generator: per-stage random generators, geodesy, time formats.

Every stage draws from its own `numpy.random.Generator` seeded from `utp_env.tools.seeding.stable_int(seed, stage)`,
so that changing one table never reshuffles the others and the same seed gives the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from utp_env.tools.seeding import stable_int

EARTH_RADIUS_KM = 6371.0088
# A generated table: column name -> values, a list or a numpy array (tools/sandbox/writer.py writes both).
Columns = dict[str, Any]


def stage_rng(seed: int, stage: str) -> np.random.Generator:
    """The generator of one build stage, derived from the seed with a stable hash."""
    return np.random.default_rng(stable_int(seed, stage))


def _elementwise(function: Callable[..., float], arity: int = 1) -> Callable[..., np.ndarray]:
    """`function` (one of Python's `math`) applied to every element of its arguments (arrays or numbers,
    broadcast), as float64.

    numpy chooses its own code for sin, cos, arcsin, exp, log and `**` (an exponent other than 2 or 0.5)
    by the CPU it runs on (AVX-512 machines take other SIMD code than AVX2 ones), and the two differ in
    the last bit: a distance or a crowd curve would then round differently and the same seed build other
    bytes on another machine (tests/data/test_sandbox_determinism.py). Python's `math` calls the C library,
    whose answer does not depend on numpy's choice (the C library picks its own code by the CPU too, but
    every x86-64 machine since 2013 has the FMA it picks); the build computes these functions with it."""
    vectorised = np.frompyfunc(function, arity, 1)

    def apply(*values: Any) -> np.ndarray:
        return np.asarray(vectorised(*(np.asarray(v, dtype=np.float64) for v in values)), dtype=np.float64)

    apply.__name__ = apply.__qualname__ = function.__name__
    apply.__doc__ = f"`math.{function.__name__}` of every element, as float64 (`_elementwise`)."
    return apply


sin, cos, arcsin, exp, log = (_elementwise(f) for f in (math.sin, math.cos, math.asin, math.exp, math.log))
power = _elementwise(math.pow, arity=2)  # base, exponent


def haversine_km(lat1: np.ndarray | float, lon1: np.ndarray | float, lat2: np.ndarray | float,
                 lon2: np.ndarray | float) -> np.ndarray:
    """Great-circle distance in km between points given in degrees (broadcasts); the same bytes on any
    CPU (`_elementwise`)."""
    p1, p2 = np.radians(lat1), np.radians(lat2)
    dp, dl = p2 - p1, np.radians(np.asarray(lon2) - np.asarray(lon1))
    a = sin(dp / 2) ** 2 + cos(p1) * cos(p2) * sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * arcsin(np.sqrt(np.clip(a, 0.0, 1.0)))


def distance_matrix_km(lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
    """Great-circle distances between all pairs of points, shape (n, n)."""
    return haversine_km(lat[:, None], lon[:, None], lat[None, :], lon[None, :])


def lognormal_with_mean(rng: np.random.Generator, mean: float, sigma: float, size: int) -> np.ndarray:
    """Log-normal draws (right-skewed: mean above median) whose expected value is `mean`."""
    mu = math.log(mean) - sigma**2 / 2
    return rng.lognormal(mu, sigma, size)


def rescale_to_mean(values: np.ndarray, target: float, weights: np.ndarray | None = None) -> np.ndarray:
    """Scale positive values so that their (weighted) mean equals `target` exactly (calibration)."""
    finite = ~np.isnan(values)
    w = np.ones_like(values) if weights is None else np.asarray(weights, float)
    current = np.sum(values[finite] * w[finite]) / max(np.sum(w[finite]), 1e-12)
    return values * (target / current) if current > 0 else values


def apportion(total: int, weights: np.ndarray, minimum: int = 0) -> np.ndarray:
    """Split `total` into integer shares proportional to `weights` with a floor of `minimum` each.

    Largest-remainder rounding, deterministic, sums exactly to `total` (when total allows).
    """
    n = len(weights)
    base = np.full(n, minimum, dtype=np.int64)
    rest = total - base.sum()
    if rest < 0:
        raise ValueError(f"cannot give {minimum} each to {n} items from a total of {total}")
    w = np.asarray(weights, float)
    share = w / w.sum() * rest
    floor = np.floor(share).astype(np.int64)
    left = int(rest - floor.sum())
    order = np.argsort(-(share - floor), kind="stable")
    floor[order[:left]] += 1
    return base + floor


def run_days(rng: np.random.Generator, size: int, daily_share: float) -> list[str]:
    """Operating-day strings (Mon..Sun as 1/0): daily for `daily_share`, else 3-6 random days."""
    out = []
    daily = rng.random(size) < daily_share
    days = rng.random((size, 7))
    k = rng.integers(3, 7, size)
    for i in range(size):
        if daily[i]:
            out.append("1111111")
        else:
            chosen = np.argsort(days[i])[: k[i]]
            out.append("".join("1" if d in chosen else "0" for d in range(7)))
    return out


def mst_edges(dist: np.ndarray) -> list[tuple[int, int]]:
    """Edges (i < j) of the minimum spanning tree of the complete graph with distance matrix `dist`.

    Prim's algorithm on the dense matrix (O(n^2) in numpy, much faster than a graph library on the
    n^2 / 2 edges); the tree is unique when the distances are distinct. Infinite distances are no
    edge: a node reachable only through them starts a tree of its own (a spanning forest).
    """
    n = len(dist)
    if n < 2:
        return []
    in_tree = np.zeros(n, dtype=bool)
    in_tree[0] = True
    best = np.array(dist[0], dtype=float)
    parent = np.zeros(n, dtype=np.int64)
    edges = []
    for _ in range(n - 1):
        cand = np.where(in_tree, np.inf, best)
        v = int(np.argmin(cand))
        if np.isinf(cand[v]):  # the rest is cut off from this tree: the next node starts a new one
            v = int(np.flatnonzero(~in_tree)[0])
            in_tree[v] = True
            closer = (dist[v] < best) & ~in_tree
            best = np.where(closer, dist[v], best)
            parent[closer] = v
            continue
        u = int(parent[v])
        edges.append((min(u, v), max(u, v)))
        in_tree[v] = True
        closer = (dist[v] < best) & ~in_tree
        best = np.where(closer, dist[v], best)
        parent[closer] = v
    return sorted(edges)
