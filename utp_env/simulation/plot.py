"""PNG timeline of a plan with its simulated lateness (matplotlib, Agg backend, imported lazily).

One row per day; items are bars from planned start to planned end (legs in a second colour), each
labelled with its venue or leg, shortened to fit (above the bar when the bar is too narrow). Under
each bar a red strip spans the step's simulated start lateness from p50 to p95, and a red whisker
runs from the planned end to the p95 end, with the minutes written beside it when they reach
`LATE_LABEL_MIN`. The x axis spans the plan's hours (past 24:00 = the next morning) and the legend
sits under the axes, so it covers no bar. tests/runs/test_report_plots.py reads the labels back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from utp_env.simulation.compile import CAB, LEG, CompiledPlan
from utp_env.simulation.robustness import RobustnessReport
from utp_env.tools.clock import MINUTES_PER_DAY

COLOURS = {"item": "#7aa6d6", "leg": "#e0a458", "band": "#c0392b"}
LATE_LABEL_MIN = 15.0  # p95 end lateness (minutes) from which the whisker gets its number
WIDTH_IN = 13.0
DPI = 110


def short_label(compiled: CompiledPlan, j: int) -> str:
    """A short name of step j: the venue without its city (`Sai Thali`), or the leg as
    `Train 14183 → Srinagar`."""
    name = compiled.names[j] or compiled.labels[j]
    if compiled.kind[j] in (LEG, CAB):
        label = compiled.labels[j].split(": ", 1)[-1]
        destination = label.rsplit("->", 1)[-1].rsplit(" ", 1)[0] if "->" in label else ""
        return f"{name} → {destination}" if destination else name
    return name.split(",", 1)[0]


def _fit(text: str, chars: int) -> str:
    """`text` cut to `chars` characters with an ellipsis ('' when fewer than 4 fit)."""
    if chars < 4:
        return ""
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def timeline_figure(compiled: CompiledPlan, report: RobustnessReport, title: str | None = None) -> Any:
    """The timeline as a matplotlib Figure (the caller saves and closes it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    days = max(compiled.day_index, default=0) + 1
    spans = []
    for j, step in enumerate(report.steps):
        offset = compiled.day_index[j] * MINUTES_PER_DAY
        start = (compiled.start[j] - offset) / 60.0
        end = (compiled.end[j] - offset) / 60.0
        spans.append((j, step, start, end))
    lo = min((s for _, _, s, _ in spans), default=0.0)
    hi = max((max(e + st.end_lateness.p95 / 60.0, s + st.start_lateness.p95 / 60.0) for _, st, s, e in spans),
             default=24.0)
    x0, x1 = max(0, int(lo) - 1), min(48, int(hi) + 2)
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 0.95 * days + 1.9))
    chars_per_hour = (WIDTH_IN * DPI * 0.85 / max(x1 - x0, 1)) / 5.6  # ~5.6 px per character at size 7
    above_end: dict[int, float] = {}
    late_end: dict[int, float] = {}
    for j, step, start, end in spans:
        y = compiled.day_index[j] + 1
        is_leg = compiled.kind[j] in (LEG, CAB)
        width = max(end - start, 0.05)
        ax.barh(y, width, left=start, height=0.5, color=COLOURS["leg" if is_leg else "item"],
                edgecolor="black", linewidth=0.4)
        label = short_label(compiled, j)
        inside = _fit(label, int(width * chars_per_hour))
        if inside:
            ax.text(start + 0.05, y, inside, va="center", ha="left", fontsize=7, clip_on=True)
        elif start >= above_end.get(y, -1.0):  # too narrow: above the bar, unless it would overlap
            text = _fit(label, 18)
            ax.text(start, y - 0.29, text, va="bottom", ha="left", fontsize=6, color="#333", clip_on=True)
            above_end[y] = start + len(text) / chars_per_hour * 6 / 7 + 0.1
        p50, p95 = step.start_lateness.p50 / 60.0, step.start_lateness.p95 / 60.0
        if p95 > 0:
            ax.barh(y + 0.33, max(p95 - p50, 0.04), left=start + p50, height=0.13, color=COLOURS["band"])
        late = step.end_lateness.p95
        if late > 0:
            ax.plot([end, end + late / 60.0], [y, y], color=COLOURS["band"], lw=1.6, solid_capstyle="butt")
            ax.plot([end + late / 60.0] * 2, [y - 0.2, y + 0.2], color=COLOURS["band"], lw=1.6)
            if late >= LATE_LABEL_MIN and end + late / 60.0 >= late_end.get(y, -1.0):
                late_end[y] = end + late / 60.0 + 9 * 6 / 7 / chars_per_hour  # no second number over this one
                ax.text(end + late / 60.0 + 0.05, y + 0.2, f"+{late:.0f} min", fontsize=6, color=COLOURS["band"],
                        va="top", clip_on=True)
    ax.set_yticks(range(1, days + 1), [f"day {d}" for d in range(1, days + 1)])
    _clock_axes(ax, days, x0, x1)
    summary = f"hold rate {report.hold_rate:.1%} over {report.n} rollouts"
    ax.set_title(f"{title}: {summary}" if title else f"Simulated lateness: {summary}")
    fig.legend(handles=[Patch(color=COLOURS["item"], label="item (planned start to end)"),
                        Patch(color=COLOURS["leg"], label="transport leg (scheduled dep. to planned arr.)"),
                        Patch(color=COLOURS["band"], label="start lateness p50–p95 (strip under the bar)"),
                        Line2D([0], [0], color=COLOURS["band"], lw=1.6, label="end lateness p95 (whisker)")],
               loc="lower center", ncol=4, fontsize=7, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout(rect=(0, 0.35 / (0.95 * days + 1.9), 1, 1))  # the legend's strip under the axes
    return fig


def plot_timeline(compiled: CompiledPlan, report: RobustnessReport, path: str | Path,
                  title: str | None = None) -> Path:
    """Write the timeline PNG to `path` and return it."""
    import matplotlib.pyplot as plt

    path = Path(path)
    fig = timeline_figure(compiled, report, title)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight", format="png")
    plt.close(fig)
    return path


REALISED_COLOURS = {"done": "#4c9a5b", "late": "#e0a458", "lost": "#b0b0b0", "missed": "#c0392b",
                    "cancelled": "#7d3c98"}


def realised_timeline_figure(planned: CompiledPlan, steps: list[dict[str, Any]], disruptions: list[dict[str, Any]],
                             title: str | None = None) -> Any:
    """Planned vs realised for one closed-loop episode (docs/REPLAN.md), as a matplotlib Figure.

    One row per day with two lanes: above, the submitted plan (`planned`, outlined bars from
    planned start to end, legs hatched); below, what happened (`steps`: the realised trip's executed
    steps with absolute `actual_start`/`actual_end` minutes, `day_index` and `status` done, late,
    lost, missed or cancelled; a leg that arrived after its planned arrival counts as late), coloured by
    status, legs hatched as in the planned lane, a lost item drawn as a grey bar at its planned slot. Each
    disruption (`disruptions`: `day`, `minute`, `index`, `kind`) is a red marker with its number
    and kind. Labels are shortened to fit the bars; the legend sits under the axes.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    days = max([*planned.day_index, *(int(s["day_index"]) for s in steps)], default=0) + 1
    spans: list[float] = []
    for j in range(planned.n_steps):
        off = planned.day_index[j] * MINUTES_PER_DAY
        spans += [(planned.start[j] - off) / 60.0, (planned.end[j] - off) / 60.0]
    for s in steps:
        off = int(s["day_index"]) * MINUTES_PER_DAY
        spans += [(float(s["actual_start"]) - off) / 60.0, (float(s["actual_end"]) - off) / 60.0]
    x0 = max(0, int(min(spans, default=6.0)) - 1)
    x1 = min(72, int(max(spans, default=24.0)) + 2)
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 1.25 * days + 1.9))
    chars_per_hour = (WIDTH_IN * DPI * 0.85 / max(x1 - x0, 1)) / 5.6
    lane = 0.3  # planned lane above the day's line, realised below

    def bar(y: float, start: float, end: float, label: str, **style: Any) -> None:
        width = max(end - start, 0.05)
        ax.barh(y, width, left=start, height=0.26, **style)
        text = _fit(label, int(width * chars_per_hour))
        if text:
            ax.text(start + 0.04, y, text, va="center", ha="left", fontsize=6, clip_on=True)

    for j in range(planned.n_steps):
        off = planned.day_index[j] * MINUTES_PER_DAY
        is_leg = planned.kind[j] in (LEG, CAB)
        bar(planned.day_index[j] + 1 - lane / 2, (planned.start[j] - off) / 60.0, (planned.end[j] - off) / 60.0,
            short_label(planned, j), facecolor="white", edgecolor=COLOURS["leg" if is_leg else "item"],
            linewidth=1.0, hatch="///" if is_leg else None)
    for s in steps:
        off = int(s["day_index"]) * MINUTES_PER_DAY
        status = str(s.get("status", "done"))
        if s.get("element") == "leg" and status == "done" and float(s["actual_end"]) > float(s["planned_end"]) + 0.5:
            status = "late"  # a leg that arrived after its planned arrival
        y = int(s["day_index"]) + 1 + lane / 2
        name = str(s.get("name", "")).split(",", 1)[0]
        if status == "lost":
            bar(y, (float(s["planned_start"]) - off) / 60.0, (float(s["planned_end"]) - off) / 60.0,
                f"lost: {name}", facecolor=REALISED_COLOURS["lost"], edgecolor="black", linewidth=0.3, alpha=0.7)
            continue
        # legs hatched as in the planned lane, so that a late item right after a late leg (same
        # colour, no gap) reads as two bars, not one long journey
        is_leg = s.get("element") == "leg"
        bar(y, (float(s["actual_start"]) - off) / 60.0, (float(s["actual_end"]) - off) / 60.0, name,
            facecolor=REALISED_COLOURS.get(status, REALISED_COLOURS["done"]), edgecolor="black",
            linewidth=0.8 if is_leg else 0.4, hatch="///" if is_leg else None)
    for d in disruptions:
        x, y = int(d["minute"]) / 60.0, int(d["day"])
        ax.plot([x, x], [y - 0.45, y + 0.45], color=COLOURS["band"], lw=1.2)
        ax.text(x + 0.05, y - 0.47, f"#{d['index']} {str(d['kind']).replace('_', ' ')}", fontsize=6,
                color=COLOURS["band"], va="bottom", ha="left", clip_on=True)
    ax.set_yticks(range(1, days + 1), [f"day {d}\nplanned / realised" for d in range(1, days + 1)], fontsize=7)
    _clock_axes(ax, days, x0, x1)
    ax.set_title(title or "Planned vs realised")
    fig.legend(handles=[Patch(facecolor="white", edgecolor=COLOURS["item"], label="planned item"),
                        Patch(facecolor="white", edgecolor=COLOURS["leg"], hatch="///", label="planned leg"),
                        *(Patch(color=c, label=f"realised: {k}") for k, c in REALISED_COLOURS.items()),
                        Patch(facecolor="white", edgecolor="black", hatch="///", label="realised leg (hatched)"),
                        Line2D([0], [0], color=COLOURS["band"], lw=1.2, label="disruption (pause)")],
               loc="lower center", ncol=8, fontsize=7, frameon=False)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout(rect=(0, 0.35 / (1.25 * days + 1.9), 1, 1))
    return fig


def _clock_axes(ax: Any, days: int, x0: int, x1: int) -> None:
    """The time axis (hours x0..x1 of the day, ticks every hour or two) and the day rows of a timeline."""
    ax.set_ylim(days + 0.6, 0.35)
    ax.set_xlim(x0, x1)
    step_h = 1 if x1 - x0 <= 14 else 2
    ticks = list(range(x0 + (x0 % step_h), x1 + 1, step_h))
    ax.set_xticks(ticks, [f"{h % 24:02d}:00" for h in ticks], fontsize=7)
    ax.set_xlabel("clock time on the day (past 24:00 = next morning)")
