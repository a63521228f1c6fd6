"""PNG timeline of a plan with its simulated lateness (matplotlib, Agg backend, imported lazily).

One row per day; items are bars from planned start to planned end (legs in a second colour);
over each bar a band shows where the step actually starts between the p50 and p95 of its
simulated start lateness, and a tick marks the p95 end.
"""

from __future__ import annotations

from pathlib import Path

from utp_env.simulation.compile import CAB, LEG, CompiledPlan
from utp_env.simulation.report import RobustnessReport
from utp_env.tools.clock import MINUTES_PER_DAY

COLOURS = {"item": "#7aa6d6", "leg": "#e0a458", "band": "#c0392b"}


def plot_timeline(compiled: CompiledPlan, report: RobustnessReport, path: str | Path,
                  title: str | None = None) -> Path:
    """Write the timeline PNG to `path` and return it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    path = Path(path)
    days = max(compiled.day_index, default=0) + 1
    fig, ax = plt.subplots(figsize=(12, 0.8 * days + 1.6))
    for j, step in enumerate(report.steps):
        offset = compiled.day_index[j] * MINUTES_PER_DAY
        start = (compiled.start[j] - offset) / 60.0
        end = (compiled.end[j] - offset) / 60.0
        y = compiled.day_index[j] + 1
        is_leg = compiled.kind[j] in (LEG, CAB)
        ax.barh(y, max(end - start, 0.05), left=start, height=0.5, color=COLOURS["leg" if is_leg else "item"],
                edgecolor="black", linewidth=0.4)
        lo, hi = step.start_lateness.p50 / 60.0, step.start_lateness.p95 / 60.0
        if hi > 0:
            ax.barh(y + 0.3, max(hi - lo, 0.03), left=start + lo, height=0.12, color=COLOURS["band"], alpha=0.8)
        if step.end_lateness.p95 > 0:
            ax.plot([end + step.end_lateness.p95 / 60.0] * 2, [y - 0.25, y + 0.25], color=COLOURS["band"], lw=1)
    ax.set_yticks(range(1, days + 1), [f"day {d}" for d in range(1, days + 1)])
    ax.invert_yaxis()
    ax.set_xlim(0, 32)
    ax.set_xticks(range(0, 33, 2), [f"{h % 24:02d}:00" for h in range(0, 33, 2)], fontsize=7)
    ax.set_xlabel("clock time on the day (past 24:00 = next morning)")
    ax.set_title(title or f"Simulated lateness over {report.n} rollouts: hold rate {report.hold_rate:.1%}")
    ax.legend(handles=[Patch(color=COLOURS["item"], label="item (planned)"),
                       Patch(color=COLOURS["leg"], label="transport leg (scheduled dep. to planned arr.)"),
                       Patch(color=COLOURS["band"], label="start lateness p50-p95 / end p95")],
              loc="lower right", fontsize=7)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
