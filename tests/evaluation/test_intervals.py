"""Table 3's intervals (utp_env/evaluation/intervals.py) against hand computations on fixed records."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reports import report
from tiny_world import make_query

from utp_env.evaluation.aggregate import SummaryAccumulator, format_cell, summarize
from utp_env.evaluation.intervals import bootstrap_ratio, wilson_interval
from utp_env.query import Query


def query(i: int, days: int = 3, risk: str = "tolerant") -> Query:
    base = make_query(days=days, risk=risk, dest="Vadodara" if days == 3 else "Gujarat")
    return base.model_copy(update={"query_id": f"q{i:03d}"})


def test_wilson_by_hand() -> None:
    """17 of 20: p = 0.85, z = 1.96; centre 0.85 + z²/40, half z·sqrt(p(1-p)/20 + z²/1600), over 1 + z²/20."""
    low, high = wilson_interval(17 / 20, 20)
    assert (round(low, 4), round(high, 4)) == (0.6396, 0.9476)
    assert wilson_interval(1.0, 20) == pytest.approx((0.8389, 1.0), abs=1e-4)   # 20 of 20: not a point
    assert wilson_interval(0.0, 1) == pytest.approx((0.0, 0.7935), abs=1e-4)
    with pytest.raises(ValueError, match="n >= 1"):
        wilson_interval(0.5, 0)


def test_a_summary_cell_carries_the_hand_computed_interval_and_its_n() -> None:
    """20 queries, 17 delivered: the delivery rate's interval is Wilson's for 17/20, n = 20; the BAS mean of two
    tolerant plans scoring 0 and 1 has the bootstrap interval [0, 1] (a quarter of the resamples draw the
    first plan twice, a quarter the second: the 2.5th and 97.5th percentiles are 0 and 1)."""
    pairs: list = []
    for i in range(20):
        delivered = i < 17
        bas = {0: 0.0, 1: 1.0}.get(i)
        metrics = {} if bas is None else {"bas": bas}
        pairs.append((query(i, risk="tolerant" if i < 2 else "averse"), report(**metrics) if delivered else None))
    summary = summarize(pairs)
    cell = summary.intervals["all"]["delivery_rate"]
    assert cell.method == "wilson" and (cell.n, cell.queries) == (20, 20)
    assert (round(cell.low, 4), round(cell.high, 4)) == (0.6396, 0.9476)
    bas = summary.intervals["all"]["uncertainty.bas.tolerant"]
    assert bas.method == "bootstrap" and bas.n == 2 and (bas.low, bas.high) == (0.0, 1.0)
    assert summary.groups["all"].uncertainty["bas"]["tolerant"].mean == 0.5
    # the table shows it: value [low, high] n
    assert "85.00 [64.0, 94.8] n=20" in summary.to_text()
    assert "85.00 [" not in summary.to_text(ci=False) and "| 85.00 |" in summary.to_markdown(ci=False)


def test_bootstrap_percentiles_by_enumeration() -> None:
    """Three queries with values 0.2, 0.5, 0.8: the smallest resample mean (0.2, all three draws the first)
    has probability 1/27 > 2.5%, so the interval is exactly [0.2, 0.8]; a constant column has a point."""
    num = np.array([[0.2, 1.0], [0.5, 1.0], [0.8, 1.0]])
    den = np.ones((3, 2))
    low, high = bootstrap_ratio(num, den, seed=0)
    assert low[0] == pytest.approx(0.2) and high[0] == pytest.approx(0.8)
    assert low[1] == high[1] == 1.0


def test_the_query_is_the_unit_trials_of_a_query_resample_together() -> None:
    """Two trials of each query with the same outcome: the rates and the Wilson intervals are those of one
    trial (n counts queries), while the cell's n counts both plans."""
    once, twice = SummaryAccumulator(), SummaryAccumulator()
    for i in range(10):
        plan = report() if i < 7 else None
        once.add(query(i), plan)
        for _ in range(2):
            twice.add(query(i), plan)
    a, b = once.summary().intervals["all"]["final_pass_rate"], twice.summary().intervals["all"]["final_pass_rate"]
    assert (a.low, a.high, a.queries) == (b.low, b.high, b.queries) == (a.low, a.high, 10)
    assert (a.n, b.n) == (10, 20)


def test_intervals_do_not_depend_on_the_order_of_the_records() -> None:
    pairs = [(query(i, days=3 if i % 2 else 5, risk=("tolerant", "averse")[i % 2]),
              report(bas=(i % 7) / 7, temporal_meal=(i % 5) / 5)) for i in range(30)]
    forward, backward = summarize(pairs), summarize(list(reversed(pairs)))
    assert forward.intervals == backward.intervals  # (the means' last bits follow the summation order)
    assert set(forward.intervals) == {"3", "5", "all"}


def test_a_cell_with_nothing_to_count_is_na_never_a_pass() -> None:
    summary = summarize([(query(0), report())])
    assert "n/a" in dict(summary.rows())["Extra: services run that day at the stated time %"]
    assert format_cell(None, "pct", None, ci=True) == "n/a"


def test_a_single_query_has_no_bootstrap_interval_and_says_so() -> None:
    summary = summarize([(query(0), report(bas=0.4))])
    cell = summary.intervals["all"]["uncertainty.bas.tolerant"]
    assert cell.low is None and cell.n == 1
    assert dict(summary.rows())["BAS Risk_tol % \u2191"][-1] == "40.00 [-] n=1"


def test_every_interval_holds_its_value() -> None:
    rng = np.random.default_rng(3)
    pairs = [(query(i, days=(3, 5, 7)[i % 3], risk=("tolerant", "optimized", "averse")[i % 3]),
              None if rng.random() < 0.2 else report(bas=float(rng.random()), cats=float(rng.random()),
                                                     cs_fail=("meal_gaps",) if rng.random() < 0.3 else ()))
             for i in range(60)]
    summary = summarize(pairs)
    for column, cells in summary.intervals.items():
        for key, cell in cells.items():
            value = summary.value(column, key)
            assert value is not None and cell.low is not None and cell.high is not None
            assert cell.low - 1e-12 <= value <= cell.high + 1e-12 and cell.low >= 0 and cell.high <= 1
            assert not math.isnan(cell.low)
