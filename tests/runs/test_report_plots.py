"""The run's PNG plots name what they show (utp_env/runs/plots.py, utp_env/simulation/plot.py):
timeline bars carry their venue or leg, every metric bar its value, and no legend lies over the
axes' data. The figures are read back through matplotlib (texts, extents), not by pixels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from utp_env.dataset import dataset_of
from utp_env.runs.plots import levels_figure, metrics_figure
from utp_env.runs.summary import summarize_run
from utp_env.simulation import compile_for, simulate
from utp_env.simulation.plot import plot_timeline, short_label, timeline_figure
from utp_env.tools.database import Database

pytest.importorskip("matplotlib")


def _texts(fig: Any) -> list[str]:
    return [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text") and callable(a.get_text))
            if t.get_text()]


def _legends_clear_of_axes(fig: Any) -> None:
    """Every legend lies outside every axes (so it covers no bar)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legends
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(renderer)), "a legend overlaps a plot"


def _inside_figure(fig: Any) -> None:
    """Every text drawn lies inside the figure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = fig.bbox
    for text in fig.findobj(lambda a: hasattr(a, "get_window_extent") and hasattr(a, "get_text")):
        if text.get_text() and text.get_visible():
            box = text.get_window_extent(renderer)
            assert box.x0 >= frame.x0 - 1 and box.x1 <= frame.x1 + 1, text.get_text()


@pytest.fixture(scope="module")
def seven_day(mini_db: Database) -> tuple[Any, Any, Any, Any]:
    """A 7-day query of the mini sandbox, its reference plan compiled, and 200 rollouts of it."""
    dataset = dataset_of(mini_db)
    query = next(q for q in dataset.queries if q.days == 7 and q.query_id in dataset.references)
    plan = dataset.references[query.query_id]
    report = simulate(plan, query, mini_db, n=200, seed=3)
    compiled, _ = compile_for(plan, query, mini_db)
    return query, plan, compiled, report


def test_timeline_bars_name_their_venue_or_leg(seven_day: tuple[Any, Any, Any, Any], tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    query, _, compiled, report = seven_day
    fig = timeline_figure(compiled, report, title=query.query_id)
    texts = _texts(fig)
    labels = [short_label(compiled, j) for j in range(len(report.steps))]
    assert any(label.startswith(("Train", "Bus", "Flight", "Cab", "Taxi")) for label in labels)
    named = [label for label in labels if any(t.rstrip("…") and label.startswith(t.rstrip("…")) for t in texts)]
    assert len(named) >= 0.8 * len(labels), sorted(set(labels) - set(named))
    assert all("," not in label for label in labels if not label.startswith(("Train", "Bus", "Flight")))
    assert any(t.startswith("day 7") for t in texts)
    assert f"hold rate {report.hold_rate:.1%}" in fig.axes[0].get_title()
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    for bar in ax.patches:  # every bar and lateness band inside the x range
        assert lo <= bar.get_x() and bar.get_x() + bar.get_width() <= hi
    _legends_clear_of_axes(fig)
    _inside_figure(fig)
    plt.close(fig)
    path = plot_timeline(compiled, report, tmp_path / "timeline.png", title=query.query_id)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_timeline_shows_lateness_numbers(seven_day: tuple[Any, Any, Any, Any]) -> None:
    import matplotlib.pyplot as plt

    _, _, compiled, report = seven_day
    fig = timeline_figure(compiled, report)
    late = [s.end_lateness.p95 for s in report.steps if s.end_lateness.p95 >= 15]
    numbers = [t for t in _texts(fig) if t.startswith("+") and t.endswith(" min")]
    assert bool(numbers) == bool(late)
    assert {"start lateness p50–p95 (strip under the bar)", "end lateness p95 (whisker)"} <= set(_texts(fig))
    plt.close(fig)


def test_metric_and_level_bars_carry_their_values(mini_db: Database) -> None:
    import matplotlib.pyplot as plt

    from utp_env.evaluation import evaluate

    dataset = dataset_of(mini_db)
    queries = {q.query_id: q for q in dataset.queries}
    records = []
    for query in dataset.queries[:9]:
        plan = dataset.references.get(query.query_id)
        report = evaluate(plan, query, mini_db) if plan is not None else None
        records.append({"query_id": query.query_id, "trial": 0,
                        "report": None if report is None else report.model_dump(mode="json"),
                        "final_pass": report is not None and report.final_pass,
                        "termination_reason": "submitted" if report is not None else "not_delivered"})
    summary = summarize_run(records, queries, "reference", "all", 1)
    fig = metrics_figure(summary)
    texts = _texts(fig)
    assert {"BAS (higher is better)", "CATS (higher is better)", "TDAS (higher is better)"} <= set(texts)
    assert {"tolerant", "optimized", "averse"} <= set(texts)
    groups = [k for k in summary.evaluation.groups if k != "all"]
    values = [t for t in texts if t == "n/a" or t.replace(".", "", 1).isdigit()]
    assert len(values) >= 3 * 3 * len(groups)  # one per bar (and the y tick labels)
    _legends_clear_of_axes(fig)
    _inside_figure(fig)
    plt.close(fig)
    fig = levels_figure(records, queries, "reference")
    texts = _texts(fig)
    assert {"delivered", "final pass"} <= set(texts)
    assert any("episodes)" in t for t in texts) and any(t.endswith("%") for t in texts)
    _legends_clear_of_axes(fig)
    plt.close(fig)
