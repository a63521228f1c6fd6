"""The run's PNG plots: BAS/CATS/TDAS by horizon and risk profile, pass rates by level, the
timeline of one plan with its simulated lateness (utp_env/simulation/plot.py), and for a
closed-loop run (`--env replan`) the planned vs realised timeline of one episode. Every bar carries
its value, legends sit outside the axes, and the `*_figure` functions return the matplotlib figure
so that tests/runs/test_report_plots.py can read the labels back. matplotlib (Agg) is imported lazily."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from utp_env.evaluation.aggregate import RISK_PROFILES, UNCERTAINTY
from utp_env.tools.atomic import write_with_atomic

METRICS_PNG = "metrics_by_horizon_risk.png"
LEVELS_PNG = "pass_rates_by_level.png"
TIMELINE_PNG = "timeline.png"
REALISED_PNG = "realised_timeline.png"
TIMELINE_ROLLOUTS = 2000
RISK_COLOURS = ("#4c72b0", "#dd8452", "#55a868")  # tolerant, optimized, averse


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _bar_labels(ax: Any, bars: Any, values: list[float | None], fmt: str = "{:.2f}") -> None:
    """Each bar's value above it (`n/a` where there is none, for an empty bar is not a zero)."""
    for bar, value in zip(bars, values, strict=True):
        text = "n/a" if value is None else fmt.format(value)
        ax.text(bar.get_x() + bar.get_width() / 2, (value or 0.0) + 0.015, text, ha="center", va="bottom",
                fontsize=6, rotation=90 if bar.get_width() < 0.3 else 0, color="#333" if value is not None else "#999")


def metrics_figure(summary: Any) -> Any:
    """Grouped bars: one panel per uncertainty metric, horizons on x, one bar per risk profile,
    each bar with its value; the legend under the panels, where it covers no bar."""
    plt = _pyplot()
    groups = {k: g for k, g in summary.evaluation.groups.items() if k != "all"}
    fig, axes = plt.subplots(1, len(UNCERTAINTY), figsize=(4.2 * len(UNCERTAINTY), 3.8), sharey=True)
    width = 0.8 / len(RISK_PROFILES)
    for ax, metric in zip(axes, UNCERTAINTY, strict=True):
        for r, risk in enumerate(RISK_PROFILES):
            values = [g.uncertainty[metric][risk].mean for g in groups.values()]
            xs = [i + (r - 1) * width for i in range(len(groups))]
            bars = ax.bar(xs, [v if v is not None else 0.0 for v in values], width,
                          label=risk if metric == UNCERTAINTY[0] else None, color=RISK_COLOURS[r])
            _bar_labels(ax, bars, values)
        ax.set_xticks(range(len(groups)), [f"{k}-day" for k in groups])
        ax.set_title(f"{metric.upper()} (higher is better)")
        ax.set_ylim(0, 1.18)
        ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    axes[0].set_ylabel("mean score over delivered plans")
    fig.legend(title="risk profile", loc="lower center", ncol=len(RISK_PROFILES), fontsize=8, frameon=False)
    fig.suptitle(f"{summary.agent}: uncertainty metrics by horizon and risk profile")
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


def plot_metrics(summary: Any, path: Path) -> Path:
    """Write `metrics_figure(summary)` as a PNG to `path`."""
    plt = _pyplot()
    fig = metrics_figure(summary)
    write_with_atomic(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
    plt.close(fig)
    return path


def levels_figure(records: list[dict[str, Any]], queries: dict[str, Any], agent: str) -> Any:
    """Bars of the delivery and final pass rate for each query level, with their values and the
    number of episodes under each level; the legend under the axes."""
    plt = _pyplot()
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for record in records:
        level = queries[record["query_id"]].level
        totals[level][0] += 1
        totals[level][1] += record.get("report") is not None
        totals[level][2] += bool(record.get("final_pass"))
    levels = [lv for lv in ("easy", "medium", "hard") if lv in totals]
    fig, ax = plt.subplots(figsize=(5.2, 3.9))
    xs = range(len(levels))
    delivered = [totals[lv][1] / totals[lv][0] for lv in levels]
    passed = [totals[lv][2] / totals[lv][0] for lv in levels]
    _bar_labels(ax, ax.bar([x - 0.2 for x in xs], delivered, 0.4, label="delivered"), list(delivered), "{:.0%}")
    _bar_labels(ax, ax.bar([x + 0.2 for x in xs], passed, 0.4, label="final pass"), list(passed), "{:.0%}")
    ax.set_xticks(list(xs), [f"{lv}\n({totals[lv][0]} episodes)" for lv in levels])
    ax.set_ylim(0, 1.15)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("share of episodes")
    ax.set_title(f"{agent}: pass rates by level")
    fig.legend(loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig


def plot_levels(records: list[dict[str, Any]], queries: dict[str, Any], agent: str, path: Path) -> Path:
    """Write `levels_figure` as a PNG to `path`."""
    plt = _pyplot()
    fig = levels_figure(records, queries, agent)
    write_with_atomic(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
    plt.close(fig)
    return path


def plot_example_timeline(records: list[dict[str, Any]], ctx: Any, path: Path) -> Path | None:
    """The timeline of the first delivered plan with the longest horizon, replayed by Monte Carlo."""
    from utp_env.itinerary import Plan
    from utp_env.plan_format import parse_plan
    from utp_env.simulation import compile_for, simulate
    from utp_env.simulation.plot import plot_timeline

    delivered = [r for r in records if r.get("plan")]
    if not delivered:
        return None
    record = max(delivered, key=lambda r: ctx.queries[r["query_id"]].days)
    query = ctx.queries[record["query_id"]]
    db = ctx.dataset.db
    raw = record["plan"]
    # `Plan` JSON since the episode-outcome record; run folders written before hold the paper's day format
    plan = Plan.model_validate(raw) if isinstance(raw, dict) else parse_plan(raw, query=query, db=db)
    report = simulate(plan, query, db, n=TIMELINE_ROLLOUTS, seed=record["seed"])
    compiled, _ = compile_for(plan, query, db)
    title = f"{query.query_id} ({query.days} days, {query.risk_profile})"
    write_with_atomic(path, lambda tmp: plot_timeline(compiled, report, tmp, title=title))
    return path


def replan_example(records: list[dict[str, Any]], queries: dict[str, Any]) -> dict[str, Any] | None:
    """The closed-loop episode to draw: the most disruptions, then the longest trip, then the first
    in episode order; None when no record lived a trip."""
    lived = [r for r in records if (r.get("replan") or {}).get("realised") is not None and r.get("plan")]
    if not lived:
        return None
    return max(lived, key=lambda r: (r["replan"].get("disruptions") or 0, queries[r["query_id"]].days))


def plot_realised_timeline(records: list[dict[str, Any]], ctx: Any, path: Path) -> Path | None:
    """Planned vs realised (`utp_env.simulation.plot.realised_timeline_figure`) of `replan_example`."""
    from utp_env.itinerary import Plan
    from utp_env.simulation import compile_for
    from utp_env.simulation.plot import realised_timeline_figure

    record = replan_example(records, ctx.queries)
    if record is None:
        return None
    query = ctx.queries[record["query_id"]]
    block = record["replan"]
    compiled, _ = compile_for(Plan.model_validate(record["plan"]), query, ctx.dataset.db)
    realised = block["realised"]
    title = (f"{query.query_id} ({query.days} days, {query.risk_profile}), seed {record['seed']}: realised score "
             f"{block['realised_score']:.3f}, {block.get('disruptions') or 0} disruption(s), "
             f"{block.get('rebookings') or 0} rebooking(s)")
    plt = _pyplot()
    fig = realised_timeline_figure(compiled, list(realised.get("steps") or []), list(block.get("reports") or []),
                                   title=title)
    write_with_atomic(path, lambda tmp: fig.savefig(tmp, dpi=110, bbox_inches="tight", format="png"))
    plt.close(fig)
    return path


def write_plots(run_dir: Path, summary: Any, records: list[dict[str, Any]], ctx: Any,
                progress: bool = False) -> list[Path]:
    """All plots of a run; returns the files written. With `progress`, a one-line notice on
    stderr first (the plots take a few seconds: matplotlib, and the timeline's rollouts)."""
    if progress:
        print(f"utp-env: writing the plots to {run_dir} (the timeline replays one plan {TIMELINE_ROLLOUTS:,}×)…",
              file=sys.stderr, flush=True)
    written = [plot_metrics(summary, run_dir / METRICS_PNG),
               plot_levels(records, ctx.queries, summary.agent, run_dir / LEVELS_PNG)]
    timeline = plot_example_timeline(records, ctx, run_dir / TIMELINE_PNG)
    if timeline is not None:
        written.append(timeline)
    if getattr(summary, "env", "plan") == "replan":
        realised = plot_realised_timeline(records, ctx, run_dir / REALISED_PNG)
        if realised is not None:
            written.append(realised)
    return written
