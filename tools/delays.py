"""Expected transport delay E[D] per the paper's appendix B.3, one function per mode.

These are the only definitions of E[D]; the delay-statistics tool, TDAS and the Monte Carlo
delay models all call them. Rows without statistics fall back to the mode's median E[D] over
the whole database (docs/METRICS.md, TDAS), so unmeasured transport is no loophole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    from utp_env.tools.database import Database

Mode = Literal["flight", "train", "bus", "cab"]
TRAIN_HORIZON_WEIGHTS = {"avg_delay_1w": 1, "avg_delay_1m": 2, "avg_delay_3m": 3, "avg_delay_6m": 4,
                         "avg_delay_1y": 6}


def flight_expected_delay(otp_total: np.ndarray, late: np.ndarray, very_late: np.ndarray,
                          excessive: np.ndarray, cancelled: np.ndarray, diverted: np.ndarray,
                          mu: np.ndarray, sigma: np.ndarray, dmax: np.ndarray) -> np.ndarray:
    """E[D]_flight = (n_late/N)(mu + sigma) + (n_dis/N) Dmax (paper eq. 23), NaN where N is 0/missing."""
    n = np.asarray(otp_total, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        n_late = np.asarray(late, float) + np.asarray(very_late, float) + np.asarray(excessive, float)
        n_dis = np.asarray(cancelled, float) + np.asarray(diverted, float)
        out = n_late / n * (np.asarray(mu, float) + np.asarray(sigma, float)) + n_dis / n * np.asarray(dmax, float)
    return np.where(n > 0, out, np.nan)


def train_expected_delay(d1w: np.ndarray, d1m: np.ndarray, d3m: np.ndarray, d6m: np.ndarray,
                         d1y: np.ndarray) -> np.ndarray:
    """E[D]_train = (d1w + 2 d1m + 3 d3m + 4 d6m + 6 d1y) / 16 (paper eq. 24), NaN if any is missing."""
    return (np.asarray(d1w, float) + 2 * np.asarray(d1m, float) + 3 * np.asarray(d3m, float)
            + 4 * np.asarray(d6m, float) + 6 * np.asarray(d1y, float)) / 16.0


def road_expected_delay(historical_delay_min: np.ndarray) -> np.ndarray:
    """E[D]_road = the route's historical delay (paper eq. 25), for buses and cabs alike."""
    return np.asarray(historical_delay_min, float)


class DelayIndex:
    """E[D] of every flight, train and road route of one database, with the mode medians.

    Built once per database (vectorised over whole tables) and cached on it.
    """

    def __init__(self, db: Database) -> None:
        f = db.tables["flights"].columns
        self.flight = flight_expected_delay(f["otp_total"], f["otp_late"], f["otp_very_late"],
                                            f["otp_excessive"], f["otp_cancelled"], f["otp_diverted"],
                                            f["delay_avg_min"], f["delay_std_min"], f["delay_max_min"])
        t = db.tables["trains"].columns
        self.train = train_expected_delay(*(t[c] for c in TRAIN_HORIZON_WEIGHTS))
        self.road = road_expected_delay(db.tables["road_routes"].columns["historical_delay_min"])
        self.median: dict[str, float] = {
            "flight": _nanmedian(self.flight),
            "train": _nanmedian(self.train),
            "bus": _nanmedian(self.road),
            "cab": _nanmedian(self.road),
        }

    def of(self, mode: Mode, row: int | None) -> tuple[float, bool]:
        """E[D] of one row of the mode's table (road_routes for bus and cab).

        Returns (E[D], measured): `measured` is False when the row has no statistics and the
        mode's median stood in.
        """
        values = {"flight": self.flight, "train": self.train, "bus": self.road, "cab": self.road}[mode]
        if row is not None and not np.isnan(values[row]):
            return float(values[row]), True
        return self.median[mode], False


def _nanmedian(values: np.ndarray) -> float:
    finite = values[~np.isnan(values)]
    return float(np.median(finite)) if finite.size else 0.0


def delay_index(db: Database) -> DelayIndex:
    """The DelayIndex of `db`, built on first use."""
    return db.derived(DelayIndex)
