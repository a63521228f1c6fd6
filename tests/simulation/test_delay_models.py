"""Delay samplers: sampled moments match the analytic ones; every mode is right-skewed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from delay_tables import FLIGHT_STATS, tiny_rows, write_db
from hypothesis import given, settings
from hypothesis import strategies as st

from utp_env.config import SimulationParams
from utp_env.simulation.delay_models import (
    DelayArrays,
    DelayModel,
    capped_lognormal_mean,
    flight_model,
    flight_stats,
    lateness_model,
    lognormal_from_moments,
    pooled_flight_stats,
    sample,
)
from utp_env.tools.database import Database

SIM = SimulationParams()
N = 200_000


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Database:
    return write_db(tmp_path_factory.mktemp("delaydb"), tiny_rows())


def _models(db: Database) -> list[DelayModel]:
    measured, _ = flight_stats(db, 0)
    no_sigma, _ = flight_stats(db, 3)
    pooled, is_measured = flight_stats(db, 1)
    assert not is_measured
    train_mean = (40 + 2 * 44 + 3 * 36 + 4 * 48 + 6 * 40) / 16
    return [flight_model("flight", measured, SIM.flight_lognormal_sigma_default),
            flight_model("flight no sigma", no_sigma, SIM.flight_lognormal_sigma_default),
            flight_model("flight pooled", pooled, SIM.flight_lognormal_sigma_default),
            lateness_model("train", train_mean, SIM.train_lognormal_sigma),
            lateness_model("road", 50.0, SIM.road_lognormal_sigma),
            lateness_model("overrun H", 0.30 * 180, SIM.overrun_lognormal_sigma)]


def _draws(models: list[DelayModel], seed: int = 0) -> np.ndarray:
    return sample(DelayArrays.of(models), np.random.default_rng(seed), N)


def test_sampled_means_match_analytic_and_are_right_skewed(db: Database) -> None:
    models = _models(db)
    draws = _draws(models)
    for j, model in enumerate(models):
        mean = draws[:, j].mean()
        assert mean == pytest.approx(model.mean(), rel=0.02), model.label
        assert mean > np.median(draws[:, j]), model.label


def test_flight_model_parameters_by_hand(db: Database) -> None:
    stats, measured = flight_stats(db, 0)
    assert measured
    assert (stats.p_dis, stats.p_late, stats.mu, stats.sigma, stats.dmax) == (10 / 200, 40 / 200, 40.0, 30.0, 300.0)
    model = flight_model("f", stats, 0.8)
    # moment matching: exp(mu + s^2/2) = 40 and the variance is 30^2
    s2 = model.log_sd ** 2
    assert math.exp(model.log_mu + s2 / 2) == pytest.approx(40.0)
    assert math.sqrt((math.exp(s2) - 1) * math.exp(2 * model.log_mu + s2)) == pytest.approx(30.0)
    # without sigma the default log-s.d. is used, with the mean still mu
    no_sigma = flight_model("f", flight_stats(db, 3)[0], 0.8)
    assert no_sigma.log_sd == 0.8 and math.exp(no_sigma.log_mu + 0.32) == pytest.approx(60.0)


def test_pooled_flight_statistics_by_hand(db: Database) -> None:
    """Rows 0 and 2 (N = 200: 40 late, 10 disrupted; mu 40, sigma 30, Dmax 300) and row 3 (N = 100:
    20 late, 5 disrupted - the same rates; mu 60, no sigma, Dmax 200)."""
    pool = pooled_flight_stats(db)
    late = FLIGHT_STATS["otp_late"] + FLIGHT_STATS["otp_very_late"] + FLIGHT_STATS["otp_excessive"]
    dis = FLIGHT_STATS["otp_cancelled"] + FLIGHT_STATS["otp_diverted"]
    assert pool.p_late == pytest.approx(2.5 * late / 500) and pool.p_dis == pytest.approx(2.5 * dis / 500)
    mu = (40 * 40 + 40 * 40 + 20 * 60) / 100  # weights n_late = 40, 40, 20
    assert pool.mu == pytest.approx(mu)
    second = (2 * 40 * (30 ** 2 + 40 ** 2) + 20 * (0 + 60 ** 2)) / 100  # the missing sigma counts as 0
    assert pool.sigma == pytest.approx(math.sqrt(second - mu ** 2))
    assert pool.dmax == 300.0  # median of (300, 300, 200)


def test_lateness_cap_and_disruption(db: Database) -> None:
    model = flight_model("f", flight_stats(db, 0)[0], 0.8)
    draws = _draws([model], seed=1)[:, 0]
    assert draws.max() <= 300.0
    assert np.mean(draws == 300.0) == pytest.approx(model.p_dis + model.p_late * (1 - _cdf(model, 300)), abs=0.003)
    assert np.mean(draws == 0.0) == pytest.approx(1 - model.p_dis - model.p_late, abs=0.005)


def _cdf(model: DelayModel, x: float) -> float:
    return 0.5 * (1 + math.erf((math.log(x) - model.log_mu) / model.log_sd / math.sqrt(2)))


def test_zero_mean_never_delays() -> None:
    model = lateness_model("cab", 0.0, 0.6)
    assert model.mean() == 0.0
    assert not _draws([model]).any()


@settings(max_examples=25, deadline=None)
@given(mean=st.floats(1.0, 500.0), sd=st.floats(0.5, 500.0), cap=st.floats(1.0, 2000.0))
def test_capped_mean_by_numeric_integration(mean: float, sd: float, cap: float) -> None:
    """E[min(X, c)] = integral_0^c P(X > x) dx, checked by the trapezoid rule on a log-spaced grid."""
    log_mu, log_sd = lognormal_from_moments(mean, sd)
    model = DelayModel("x", 0.0, 1.0, 0.0, log_mu, log_sd, cap)
    xs = np.concatenate([[0.0], np.geomspace(1e-6, cap * (1 - 1e-12), 4001)])  # P(D > cap) = 0 past the end
    survival = np.array([model.exceedance(float(x)) for x in xs])
    integral = float(np.sum((survival[1:] + survival[:-1]) / 2 * np.diff(xs)))
    assert capped_lognormal_mean(log_mu, log_sd, cap) == pytest.approx(integral, rel=1e-3, abs=1e-3)
