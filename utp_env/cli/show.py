"""`utp-env show RUN_DIR [OTHER_RUN_DIR]`: print a run's summary, or two runs side by side
(`--markdown` for either as a markdown table). `utp-env report` (utp_env/cli/report.py) writes the
same tables into an HTML page to browse the episodes."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from utp_env.runs.summary import RunSummary


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `show` command."""
    p = sub.add_parser("show", help="print a run's summary, or compare two runs side by side",
                       description="Print the summary table of a run folder made by `utp-env run`, or the "
                       "'all' column of two runs side by side with their difference.")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="one run folder, or two to compare")
    p.add_argument("--markdown", action="store_true", help="print markdown instead of a text table")
    p.set_defaults(handler=handle)


def compare(left: RunSummary, right: RunSummary) -> str:
    """The 'all' column of two runs' Table 3 side by side, with their difference where numeric."""
    from utp_env.runs.report_html import compare_rows

    rows = compare_rows(left, right)
    width = max(len(label) for label, *_ in rows)
    head_l, head_r = left.agent[:18], right.agent[:18]
    lines = [left.evaluation.caption(), f"{'':{width}}  {head_l:>18}  {head_r:>18}  {'diff':>8}"]
    lines += [f"{label:{width}}  {a:>18}  {b:>18}  {diff:>8}" for label, a, b, diff in rows]
    return "\n".join(lines)


def compare_markdown(left: RunSummary, right: RunSummary) -> str:
    """`compare` as a GitHub markdown table under the aggregation caption."""
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [left.evaluation.caption(), "",
             f"| Metric (all) | {cell(left.agent)} | {cell(right.agent)} | diff |", "|---|---:|---:|---:|"]
    from utp_env.runs.report_html import compare_rows

    lines += [f"| {cell(label)} | {a} | {b} | {diff} |" for label, a, b, diff in compare_rows(left, right)]
    return "\n".join(lines)


def handle(args: argparse.Namespace) -> int:
    from utp_env.runs.summary import load_summary, render_markdown, render_text

    if len(args.runs) > 2:
        raise ValueError("show takes one run folder, or two to compare")
    summaries = [load_summary(path) for path in args.runs]
    if len(summaries) == 1:
        print(render_markdown(summaries[0]) if args.markdown else render_text(summaries[0]))
    else:
        print(compare_markdown(*summaries) if args.markdown else compare(*summaries))
    return 0
