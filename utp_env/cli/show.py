"""`utp-env show RUN_DIR [OTHER_RUN_DIR]`: print a run's summary, or two runs side by side
(`--markdown` for either as a markdown table). Two runs made on the same episodes (same seed,
split, horizons, limit, trials and database) are also compared episode by episode: the mean paired
difference B - A of each score with its 95% confidence interval (`utp_env/runs/paired.py`; for
closed-loop runs the realised score, items kept, rebookings, lateness and extra cost first).
`--paired` makes a mismatch an error instead of a note. `utp-env report` (utp_env/cli/report.py)
writes the same tables into an HTML page to browse the episodes."""

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
    from utp_env.cli import add_layout_options

    add_layout_options(p)
    p.add_argument("--paired", action="store_true",
                   help="with two runs: require that they hold the same episodes with the same seeds on the "
                   "same database, and fail otherwise (by default a mismatch only skips the paired differences)")
    p.set_defaults(handler=handle)


def compare(left: RunSummary, right: RunSummary, names: tuple[str, str] | None = None, ci: bool = True) -> str:
    """The 'all' column of two runs' Table 3 side by side (`ci`: each cell with its interval and n),
    with their difference where numeric."""
    from utp_env.runs.report_html import compare_rows

    rows = compare_rows(left, right, ci)
    width = max(len(label) for label, *_ in rows)
    name_l, name_r = names or (left.agent, right.agent)
    wl, wr = max(18, len(name_l)), max(18, len(name_r))  # whole names: a column is as wide as its head
    lines = [left.evaluation.caption(ci), f"{'':{width}}  {name_l:>{wl}}  {name_r:>{wr}}  {'diff':>8}"]
    lines += [f"{label:{width}}  {a:>{wl}}  {b:>{wr}}  {diff:>8}" for label, a, b, diff in rows]
    return "\n".join(lines)


def compare_markdown(left: RunSummary, right: RunSummary, names: tuple[str, str] | None = None,
                     ci: bool = True) -> str:
    """`compare` as a GitHub markdown table under the aggregation caption."""
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    name_l, name_r = names or (left.agent, right.agent)
    lines = [left.evaluation.caption(ci), "",
             f"| Metric (all) | {cell(name_l)} | {cell(name_r)} | diff |", "|---|---:|---:|---:|"]
    from utp_env.runs.report_html import compare_rows

    lines += [f"| {cell(label)} | {a} | {b} | {diff} |" for label, a, b, diff in compare_rows(left, right, ci)]
    return "\n".join(lines)


def compare_hint(left_dir: str, right_dir: str, names: tuple[str, str]) -> str:
    """The line under two runs side by side: `utp-env compare` when it can test them, else why it cannot."""
    from utp_env.runs.compare import ComparisonError, check_comparable
    from utp_env.runs.records import read_run_config

    try:
        check_comparable(read_run_config(left_dir), read_run_config(right_dir), names)
    except (ComparisonError, ValueError) as exc:  # (a run's config.json it cannot read: ValueError)
        return f"`utp-env compare` cannot test these two runs row by row: {exc}"
    return (f"Is a difference real? `utp-env compare {left_dir} {right_dir}` tests every Table 3 row, "
            "paired by query and trial (difference, 95% interval, p-value, Holm-corrected).")


def paired_section(left: RunSummary, right: RunSummary, left_dir: str, right_dir: str, markdown: bool = False,
                   required: bool = False) -> str:
    """The paired differences of two runs (`utp_env.runs.paired`), or when their episodes do not
    match a one-line note saying why (a `PairingError` instead when `required`)."""
    from utp_env.runs.paired import PairingError, pair_records, paired_table, records_by_episode, render_paired
    from utp_env.runs.report_html import cross_env_note
    from utp_env.runs.summary import run_names

    names = run_names(left, right, left_dir, right_dir)
    try:
        pairs = pair_records(records_by_episode(left_dir), records_by_episode(right_dir), names=names)
    except PairingError as exc:
        if required:
            raise PairingError(f"cannot compare {left_dir} and {right_dir} episode by episode: {exc}") from None
        return f"(no paired differences: {exc})"
    replan = left.env == right.env == "replan"
    note = cross_env_note(left, right)
    table = render_paired(paired_table(pairs, replan=replan), names, markdown=markdown)
    return table if note is None else f"{note}\n{table}"


def handle(args: argparse.Namespace) -> int:
    from utp_env.runs.summary import check_run_folders, load_summary, render_markdown, render_text, run_names

    if len(args.runs) > 2:
        raise ValueError("show takes one run folder, or two to compare")
    if args.paired and len(args.runs) != 2:
        raise ValueError("--paired compares two run folders; give two")
    check_run_folders(args.runs)
    from utp_env.cli import with_intervals

    ci = with_intervals(args)
    summaries = [load_summary(path) for path in args.runs]
    if len(summaries) == 1:
        print(render_markdown(summaries[0], ci) if args.markdown else render_text(summaries[0], ci))
    else:
        paired = paired_section(summaries[0], summaries[1], args.runs[0], args.runs[1], markdown=args.markdown,
                                required=args.paired)
        names = run_names(summaries[0], summaries[1], args.runs[0], args.runs[1])
        left, right = summaries
        print(compare_markdown(left, right, names=names, ci=ci) if args.markdown
              else compare(left, right, names=names, ci=ci))
        print()
        print(paired)
        print()
        print(compare_hint(args.runs[0], args.runs[1], names))
    return 0
