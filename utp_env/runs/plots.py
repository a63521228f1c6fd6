"""The run's PNG plots: BAS/CATS/TDAS by horizon and risk profile, pass rates by level, and the
timeline of one plan with its simulated lateness. matplotlib (Agg) is imported lazily."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from utp_env.evaluation.aggregate import RISK_PROFILES, UNCERTAINTY
from utp_env.tools.atomic import write_with_atomic

METRICS_PNG = "metrics_by_horizon_risk.png"
LEVELS_PNG = "pass_rates_by_level.png"
TIMELINE_PNG = "timeline.png"
TIMELINE_ROLLOUTS = 2000


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_metrics(summary: Any, path: Path) -> Path:
    """Grouped bars: one panel per uncertainty metric, horizons on x, one bar per risk profile."""
    plt = _pyplot()
    groups = {k: g for k, g in summary.evaluation.groups.items() if k != "all"}
    fig, axes = plt.subplots(1, len(UNCERTAINTY), figsize=(4 * len(UNCERTAINTY), 3.4), sharey=True)
    width = 0.8 / len(RISK_PROFILES)
    for ax, metric in zip(axes, UNCERTAINTY, strict=True):
        for r, risk in enumerate(RISK_PROFILES):
            values = [g.uncertainty[metric][risk].mean for g in groups.values()]
            xs = [i + (r - 1) * width for i in range(len(groups))]
            ax.bar(xs, [v if v is not None else 0.0 for v in values], width, label=risk)
        ax.set_xticks(range(len(groups)), [f"{k}-day" for k in groups])
        ax.set_title(f"{metric.upper()} (higher is better)")
        ax.set_ylim(0, 1.05)
    axes[0].set_ylabel("mean score")
    axes[-1].legend(title="risk profile", fontsize=8)
    fig.suptitle(f"{summary.agent}: uncertainty metrics by horizon and risk profile")
    fig.tight_layout()
    write_with_atomic(path, lambda tmp: fig.savefig(tmp, dpi=110))
    plt.close(fig)
    return path


def plot_levels(records: list[dict[str, Any]], queries: dict[str, Any], agent: str, path: Path) -> Path:
    """Bars of the final pass rate (and delivery rate) for each query level."""
    plt = _pyplot()
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for record in records:
        level = queries[record["query_id"]].level
        totals[level][0] += 1
        totals[level][1] += record.get("report") is not None
        totals[level][2] += bool(record.get("final_pass"))
    levels = [lv for lv in ("easy", "medium", "hard") if lv in totals]
    fig, ax = plt.subplots(figsize=(5, 3.4))
    xs = range(len(levels))
    ax.bar([x - 0.2 for x in xs], [totals[lv][1] / totals[lv][0] for lv in levels], 0.4, label="delivered")
    ax.bar([x + 0.2 for x in xs], [totals[lv][2] / totals[lv][0] for lv in levels], 0.4, label="final pass")
    ax.set_xticks(list(xs), levels)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("rate")
    ax.set_title(f"{agent}: pass rates by level")
    ax.legend(fontsize=8)
    fig.tight_layout()
    write_with_atomic(path, lambda tmp: fig.savefig(tmp, dpi=110))
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


def write_plots(run_dir: Path, summary: Any, records: list[dict[str, Any]], ctx: Any) -> list[Path]:
    """All plots of a run; returns the files written."""
    written = [plot_metrics(summary, run_dir / METRICS_PNG),
               plot_levels(records, ctx.queries, summary.agent, run_dir / LEVELS_PNG)]
    timeline = plot_example_timeline(records, ctx, run_dir / TIMELINE_PNG)
    if timeline is not None:
        written.append(timeline)
    return written
