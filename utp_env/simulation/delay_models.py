"""Per-mode delay samplers of the Monte Carlo simulation (docs/SIMULATION.md).

Every random quantity of a rollout (a leg's delay, a visit's overrun) is one *delay element*
described by the same five numbers, so one vectorised function samples them all:

    D = Dmax                               with probability p_dis   (disruption)
    D = min(LogNormal(log_mu, log_sd), cap) with probability p_late  (lateness)
    D = 0                                  otherwise

- flight: p_dis = n_dis/N, p_late = n_late/N, the log-normal moment-matched to mean mu and s.d.
  sigma of late flights (sigma missing: log-s.d. `flight_lognormal_sigma_default`), cap = Dmax;
  a flight without statistics uses the pooled flight distribution (`pooled_flight_stats`).
- train: p_late = 1, mean E[D] (utp_env.tools.delays; unmeasured -> mode median), log-s.d.
  `train_lognormal_sigma`, no cap.
- bus/cab: p_late = 1, mean the road route's historical delay (unmeasured -> median), log-s.d.
  `road_lognormal_sigma`, no cap.
- visit overrun: p_late = 1, mean `overrun_fraction_by_tier[tier]` x base duration, log-s.d.
  `overrun_lognormal_sigma`, no cap.

An element whose mean is 0 never delays (p_late is set to 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from utp_env.tools.database import Database


@dataclass(frozen=True)
class DelayModel:
    """One delay element. Sampling and the analytic moments below are its only definitions."""

    label: str
    p_dis: float
    p_late: float
    dmax: float
    log_mu: float
    log_sd: float
    cap: float = math.inf

    def mean(self) -> float:
        """Analytic E[D]: p_dis Dmax + p_late E[min(LogNormal, cap)]."""
        return self.p_dis * self.dmax + self.p_late * capped_lognormal_mean(self.log_mu, self.log_sd, self.cap)

    def exceedance(self, x: float) -> float:
        """Analytic P(D > x) for x >= 0 (used to check missed-connection probabilities)."""
        p = self.p_dis if self.dmax > x else 0.0
        if self.p_late > 0 and self.cap > x:
            p += self.p_late * (1.0 - _phi((math.log(x) - self.log_mu) / self.log_sd)) if x > 0 else self.p_late
        return p


@dataclass(frozen=True)
class DelayArrays:
    """The parameters of k delay elements as arrays of shape (k,), the sampler's input."""

    p_dis: np.ndarray
    p_late: np.ndarray
    dmax: np.ndarray
    log_mu: np.ndarray
    log_sd: np.ndarray
    cap: np.ndarray

    @classmethod
    def of(cls, models: list[DelayModel]) -> DelayArrays:
        def col(name: str) -> np.ndarray:
            return np.array([getattr(m, name) for m in models], dtype=float)

        return cls(col("p_dis"), col("p_late"), col("dmax"), col("log_mu"), col("log_sd"), col("cap"))

    @property
    def k(self) -> int:
        return int(self.p_dis.shape[0])


def _phi(x: float) -> float:
    """Standard normal CDF."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def lognormal_from_mean(mean: float, log_sd: float) -> float:
    """log_mu of the log-normal with the given mean and log-s.d.: ln(mean) - log_sd^2 / 2."""
    return math.log(mean) - 0.5 * log_sd * log_sd


def lognormal_from_moments(mean: float, sd: float) -> tuple[float, float]:
    """(log_mu, log_sd) of the log-normal with the given mean and s.d. (moment matching)."""
    log_var = math.log1p((sd / mean) ** 2)
    return math.log(mean) - 0.5 * log_var, math.sqrt(log_var)


def capped_lognormal_mean(log_mu: float, log_sd: float, cap: float) -> float:
    """E[min(X, cap)] for X ~ LogNormal(log_mu, log_sd)."""
    full = math.exp(log_mu + 0.5 * log_sd * log_sd)
    if math.isinf(cap):
        return full
    if cap <= 0:
        return 0.0
    z = (math.log(cap) - log_mu) / log_sd
    return full * _phi(z - log_sd) + cap * (1.0 - _phi(z))


def sample(params: DelayArrays, rng: np.random.Generator, n: int) -> np.ndarray:
    """Delays of shape (n, k): the only sampler, and all of a batch's randomness.

    Draws only what the elements need, in a fixed order: first standard normals for the
    elements with p_late > 0 (n per element, element by element), then uniforms for the mixture
    elements (p_dis > 0 or 0 < p_late < 1). Elements that never delay cost nothing.
    """
    late = np.flatnonzero(params.p_late > 0)
    mix = np.flatnonzero((params.p_dis > 0) | ((params.p_late > 0) & (params.p_late < 1)))
    z = rng.standard_normal((late.size, n))
    u = rng.random((mix.size, n))
    # element-major (k, n) rows are contiguous; the (n, k) result is its transpose (a view)
    out = np.zeros((params.k, n))
    if late.size:
        out[late] = np.minimum(np.exp(params.log_mu[late, None] + params.log_sd[late, None] * z),
                               params.cap[late, None])
    if mix.size:
        p_dis, p_late = params.p_dis[mix, None], params.p_late[mix, None]
        out[mix] = np.where(u < p_dis, params.dmax[mix, None], np.where(u < p_dis + p_late, out[mix], 0.0))
    return out.T


def lateness_model(label: str, mean: float, log_sd: float) -> DelayModel:
    """A pure log-normal element (train, road, overrun) with the given mean; never delays if mean <= 0."""
    if not mean > 0:
        return DelayModel(label, 0.0, 0.0, 0.0, 0.0, log_sd)
    return DelayModel(label, 0.0, 1.0, 0.0, lognormal_from_mean(mean, log_sd), log_sd)


# ------------------------------------------------------------------------------- flights


@dataclass(frozen=True)
class FlightStats:
    """On-time statistics of one flight (or the pooled ones): probabilities, mu, sigma, Dmax."""

    p_dis: float
    p_late: float
    mu: float
    sigma: float | None
    dmax: float




def pooled_flight_stats(db: Database) -> FlightStats:
    """Pooled flight statistics over every flight with data (N > 0).

    p_dis = sum n_dis / sum N and p_late = sum n_late / sum N; mu and sigma are the mean and the
    s.d. of the mixture of the flights' late-delay distributions weighted by n_late
    (sigma^2 = sum w (sigma_i^2 + mu_i^2) / sum w - mu^2); Dmax is the median of the flights' Dmax
    (the maximum of maxima would make every unmeasured disruption an outlier).
    """
    return db.derived(_pool_flight_stats)


def _pool_flight_stats(db: Database) -> FlightStats:
    c = db.tables["flights"].columns
    n = np.nan_to_num(np.asarray(c["otp_total"], float))
    has = n > 0
    n_late = sum(np.nan_to_num(np.asarray(c[k], float)) for k in ("otp_late", "otp_very_late", "otp_excessive"))
    n_dis = sum(np.nan_to_num(np.asarray(c[k], float)) for k in ("otp_cancelled", "otp_diverted"))
    mu = np.asarray(c["delay_avg_min"], float)
    sd = np.asarray(c["delay_std_min"], float)
    dmax = np.asarray(c["delay_max_min"], float)
    total = n[has].sum()
    if total <= 0:
        stats = FlightStats(0.0, 0.0, 0.0, None, 0.0)
    else:
        w_ok = has & ~np.isnan(mu) & (n_late > 0)
        w = n_late[w_ok]
        mu_pool = float(np.average(mu[w_ok], weights=w)) if w.sum() > 0 else 0.0
        sd_ok = np.where(np.isnan(sd[w_ok]), 0.0, sd[w_ok])
        var = float(np.average(sd_ok ** 2 + mu[w_ok] ** 2, weights=w)) - mu_pool ** 2 if w.sum() > 0 else 0.0
        dm = dmax[has & ~np.isnan(dmax)]
        stats = FlightStats(float(n_dis[has].sum() / total), float(n_late[has].sum() / total), mu_pool,
                            math.sqrt(max(var, 0.0)) or None, float(np.median(dm)) if dm.size else 0.0)
    return stats


def flight_stats(db: Database, row: int | None) -> tuple[FlightStats, bool]:
    """(statistics, measured) of flight `row`; the pooled statistics when it has none.

    Missing mu or Dmax of a measured flight are taken from the pool; a missing sigma stays None
    (the sampler then uses the default log-s.d.).
    """
    pool = pooled_flight_stats(db)
    if row is None:
        return pool, False
    t = db.tables["flights"]
    n = t.value("otp_total", row)
    if not n:
        return pool, False

    def count(*names: str) -> float:
        return float(sum(t.value(k, row) or 0 for k in names))

    mu = t.value("delay_avg_min", row)
    dmax = t.value("delay_max_min", row)
    return FlightStats(count("otp_cancelled", "otp_diverted") / n,
                       count("otp_late", "otp_very_late", "otp_excessive") / n,
                       pool.mu if mu is None else float(mu), t.value("delay_std_min", row),
                       pool.dmax if dmax is None else float(dmax)), True


def flight_model(label: str, stats: FlightStats, sigma_default: float) -> DelayModel:
    """The flight delay element: disruption with Dmax, else capped moment-matched log-normal lateness."""
    if stats.mu > 0 and stats.sigma:
        log_mu, log_sd = lognormal_from_moments(stats.mu, stats.sigma)
    elif stats.mu > 0:
        log_mu, log_sd = lognormal_from_mean(stats.mu, sigma_default), sigma_default
    else:
        return DelayModel(label, stats.p_dis, 0.0, stats.dmax, 0.0, sigma_default, stats.dmax)
    return DelayModel(label, stats.p_dis, stats.p_late, stats.dmax, log_mu, log_sd, stats.dmax)
