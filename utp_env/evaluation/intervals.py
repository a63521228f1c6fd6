"""95% intervals of Table 3's cells, over queries (docs/METRICS.md "Intervals").

Every cell of a Table 3 column is a ratio of two sums over its plans (`aggregate.plan_cells`). The
sampling unit is the query: the plans of one query's trials are not independent, so they are summed
into one (numerator, denominator) per query before anything is resampled.

- **Rates** (delivery, CPR and HCPR micro and macro, final pass, each check's rate, the extra
  checks; `aggregate.RATE_KEYS`): the Wilson score interval of the rate with n = the queries behind
  the cell (`wilson_interval`). For a yes/no per query (one trial) that is the textbook interval.
  Otherwise each query contributes a share in [0, 1] (its checks passed, or its trials passed),
  whose variance is at most p(1 - p), so the interval is conservative. Unlike a bootstrap it does
  not collapse to a point when every plan passes: 20 passes of 20 give [83.9, 100].
- **Metric means** (the TripCraft metrics, BAS/CATS/TDAS per risk profile): the percentile
  bootstrap over queries (`bootstrap_ratio`): `RESAMPLES` resamples of the column's queries with
  replacement, the cell's ratio in each, the 2.5th and 97.5th percentiles. The generator is seeded
  from `BOOTSTRAP_SEED` and the column's name with SHA-256, so the same records give the same bytes
  on every machine. A cell with fewer than two queries has no bootstrap interval (`[-]`); a cell
  whose plans all score the same has a zero-width one.

`n` is the number of plans behind a cell (those with a denominator), `queries` the queries.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from utp_env.tools.seeding import stable_int

if TYPE_CHECKING:
    import numpy as np

Z95 = 1.959963984540054
"""The 0.975 quantile of the standard normal: a two-sided 95% interval."""
RESAMPLES = 2000
"""Bootstrap resamples per column (the percentiles of 2,000 ratios move by well under 0.5 points)."""
BOOTSTRAP_SEED = 0
CHUNK = 250
"""Resamples drawn at a time: the weight matrix stays a few MB for any query count."""
METHOD = (f"95% intervals over queries: Wilson score for rates (n = queries), percentile bootstrap "
          f"({RESAMPLES:,} resamples, seed {BOOTSTRAP_SEED}) for metric means; n = plans behind the cell")
"""How the intervals are computed, in one line (under every table that shows them)."""


class CellInterval(BaseModel):
    """The 95% interval of one Table 3 cell, and what stands behind it."""

    model_config = ConfigDict(extra="forbid")

    low: float | None = Field(description="Lower end (None: no interval, e.g. a bootstrap of one query)")
    high: float | None = None
    n: int = Field(ge=0, description="Plans behind the cell (with a denominator)")
    queries: int = Field(ge=0, description="Queries behind the cell: the sampling unit")
    method: Literal["wilson", "bootstrap"]


def wilson_interval(rate: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion `rate` observed on `n` >= 1 units:
    (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    if n < 1:
        raise ValueError(f"the Wilson interval needs n >= 1, got {n}")
    p = min(1.0, max(0.0, rate))
    z2 = z * z
    centre = p + z2 / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    scale = 1 + z2 / n
    return max(0.0, (centre - half) / scale), min(1.0, (centre + half) / scale)


def resample_weights(n: int, resamples: int, seed: int) -> Iterable[np.ndarray]:
    """How often each of `n` units is drawn in each bootstrap resample, `CHUNK` resamples at a time:
    integer matrices of shape (chunk, n) whose rows sum to n (one multinomial draw per row)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    done = 0
    while done < resamples:
        size = min(CHUNK, resamples - done)
        yield rng.multinomial(n, np.full(n, 1.0 / n), size=size).astype(np.float64)
        done += size


def percentile_interval(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 2.5th and 97.5th percentiles of each column of `values` (resamples x cells), NaNs (a
    resample with a zero denominator) left out; NaN where a column has no value."""
    import numpy as np

    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column: NaN, said by the caller
            low, high = np.nanpercentile(values, [2.5, 97.5], axis=0)
    return low, high


def bootstrap_ratio(num: np.ndarray, den: np.ndarray, seed: int,
                    resamples: int = RESAMPLES) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap intervals of sum(num)/sum(den) per cell, resampling the rows (queries)
    of `num` and `den` (queries x cells) with replacement. NaN for a cell that has no value."""
    import numpy as np

    n = num.shape[0]
    ratios = []
    for weights in resample_weights(n, resamples, seed):
        with np.errstate(invalid="ignore", divide="ignore"):
            top, bottom = weights @ num, weights @ den
            ratios.append(np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan))
    return percentile_interval(np.vstack(ratios))


def column_seed(column: str, seed: int = BOOTSTRAP_SEED) -> int:
    """The bootstrap seed of one Table 3 column ('3', '5', '7', 'all'): stable across machines."""
    return stable_int("table3-bootstrap", seed, column) % (2**63)


def cell_intervals(cells: tuple[str, ...], rates: frozenset[str], num: np.ndarray, den: np.ndarray,
                   plans: np.ndarray, column: str) -> dict[str, CellInterval]:
    """The interval of every cell of one column with a value: `num`, `den` (queries x cells) the
    per-query sums of `aggregate.plan_cells`, `plans` (queries x cells) how many plans of each query
    have a denominator in the cell."""
    if num.shape[0] == 0:
        return {}
    low, high = bootstrap_ratio(num, den, column_seed(column))
    out: dict[str, CellInterval] = {}
    for i, key in enumerate(cells):
        has = den[:, i] > 0
        queries = int(has.sum())
        if not queries:
            continue
        n = int(plans[:, i].sum())
        if key in rates:
            lo, hi = wilson_interval(float(num[:, i].sum() / den[:, i].sum()), queries)
            out[key] = CellInterval(low=lo, high=hi, n=n, queries=queries, method="wilson")
        elif queries >= 2 and math.isfinite(low[i]) and math.isfinite(high[i]):
            out[key] = CellInterval(low=float(low[i]), high=float(high[i]), n=n, queries=queries, method="bootstrap")
        else:
            out[key] = CellInterval(low=None, high=None, n=n, queries=queries, method="bootstrap")
    return out
