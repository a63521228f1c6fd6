"""The `utp-env` command line.

Each command group lives in its own module of this package exposing `register(subparsers)`
(`data.py`, `simulate.py`, `run.py`, `show.py`, `compare.py`, `report.py`, `evaluate.py`, `submit.py`,
`serve.py`, `levels.py`). The CLI is one of the places allowed to import agents (`utp_env.agents`, lazily, by the
commands that need them); see tests/package/test_layering.py. Every option has a help text (tests/cli/test_cli.py
walks the parser tree), and a mistyped option names the closest one under the usage of the command it was given to.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import re
import sys
from collections.abc import Sequence
from typing import NoReturn

COMMAND_MODULES = ("data", "simulate", "run", "show", "compare", "report", "evaluate", "submit", "serve", "levels")

DESCRIPTION = """\
utp-env: a Gymnasium environment and benchmark for uncertainty-aware travel planning in India
(after UTP-Bench). Run a planning agent on the benchmark's queries and score its plans for
feasibility and robustness to transport delays and crowds; score plans you made elsewhere; replay
a plan under sampled delays; build and check the sandbox database the queries are drawn from."""

EPILOG = """\
examples:
  utp-env run --profile mini --limit 3     the reference planner on 3 queries of the small sandbox
  utp-env run --agent direct --workers 4   an LLM baseline (needs pip install 'utp-env[llm]'
                                           and OPENAI_API_KEY)
  utp-env show runs/reference-full-validation-seed0
  utp-env evaluate --plans plans.jsonl     score your own plans (paper JSON format)
  utp-env simulate --plan plan.json        Monte Carlo robustness of one plan
  utp-env data build --profile mini        build the small sandbox database

The first command that needs the sandbox builds it (about a minute for `full`) into a cache
folder (set UTP_ENV_CACHE to choose it). Run `utp-env COMMAND --help` for a command's options."""

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


class CliParser(argparse.ArgumentParser):
    """An ArgumentParser that reports a mistyped option under its own command's usage, with the
    closest option it knows (`utp-env run: unknown option --agnet; did you mean --agent?`)."""

    _given: list[str]

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None,
    ) -> tuple[argparse.Namespace, list[str]]:
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        # An unknown option also makes a required one look missing: name the unknown one first.
        unknown = unknown_arguments(self, own_arguments(self, getattr(self, "_given", [])))
        self.print_usage(sys.stderr)
        if unknown:
            self.exit(2, f"{self.prog}: {unknown_message(self, unknown)}\n")
        self.exit(2, f"{self.prog}: error: {with_choice_hint(message)}\n")


def with_choice_hint(message: str) -> str:
    """argparse's "invalid choice: 'rnu' (choose from 'data', 'run', ...)" with "; did you mean 'run'?"."""
    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not found:
        return message
    close = difflib.get_close_matches(found[1], re.findall(r"'([^']*)'", found[2]), n=1, cutoff=0.5)
    return f"{message}; did you mean {close[0]!r}?" if close else message


def own_arguments(parser: argparse.ArgumentParser, given: Sequence[str]) -> list[str]:
    """The strings of `given` that `parser` itself reads: all of them, or for a parser with
    commands, those before the command name."""
    names = {name for a in parser._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices}
    for i, text in enumerate(given):
        if text in names:
            return list(given[:i])
    return list(given)


def _known_option(parser: argparse.ArgumentParser, text: str) -> bool:
    """Whether argparse would take `text` as one of `parser`'s options (exact, `--opt=value`, or
    an unambiguous prefix, as argparse's abbreviations allow)."""
    name = text.split("=", 1)[0]
    options = parser._option_string_actions
    if name in options:
        return True
    if parser.allow_abbrev and name.startswith("--"):
        return len([o for o in options if o.startswith(name)]) == 1
    return len(name) > 2 and not name.startswith("--") and name[:2] in options  # a short option glued to its value


def unknown_arguments(parser: argparse.ArgumentParser, given: Sequence[str]) -> list[str]:
    """The strings of `given` that look like options but are not options of `parser`."""
    out = []
    for text in given:
        if text == "--":
            break
        looks_like_option = text.startswith("-") and text != "-" and not _NEGATIVE_NUMBER.match(text)
        if looks_like_option and not _known_option(parser, text):
            out.append(text)
    return out


def unknown_message(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    """`unknown option --agnet; did you mean --agent?` for the first option-like string of
    `extras`, or `unexpected argument 'x'` when there is none."""
    options = [text for text in extras if text.startswith("-") and not _NEGATIVE_NUMBER.match(text)]
    if not options:
        return f"unexpected argument{'s' if len(extras) > 1 else ''} {' '.join(repr(e) for e in extras)}"
    name = options[0].split("=", 1)[0]
    known = sorted({o for o in parser._option_string_actions if o.startswith("--")})
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
    hint = f"did you mean {close[0]}?" if close else f"see `{parser.prog} --help` for the options"
    return f"unknown option {name}; {hint}"


def positive_int(text: str) -> int:
    """An argparse type: a positive integer (`--limit 0` is refused by the flag, naming it)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def add_layout_options(parser: argparse.ArgumentParser) -> None:
    """`--no-ci` and `--format {ci,paper}`: Table 3 with each cell's 95% interval and n (the
    default), or the paper's plain layout. Read back with `with_intervals`."""
    parser.add_argument("--format", dest="table_format", choices=["ci", "paper"], default=None,
                        help="ci: each Table 3 cell with its 95%% interval and n (default); paper: the paper's "
                        "plain layout, values only")
    parser.add_argument("--no-ci", dest="no_ci", action="store_true", help="the same as --format paper")


def with_intervals(args: argparse.Namespace) -> bool:
    """Whether the table is printed with intervals (`add_layout_options`); ValueError for `--format ci`
    with `--no-ci`, which ask for both layouts."""
    table_format = getattr(args, "table_format", None)
    if getattr(args, "no_ci", False):
        if table_format == "ci":
            raise ValueError("--format ci and --no-ci ask for both layouts; give one of them")
        return False
    return table_format != "paper"


def build_parser() -> CliParser:
    parser = CliParser(prog="utp-env", description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}",
                        help="print the installed version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                title="commands", parser_class=CliParser)
    for name in COMMAND_MODULES:
        importlib.import_module(f"utp_env.cli.{name}").register(sub)
    return parser


def chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The deepest (sub)command parser that `args` went through, e.g. `utp-env data validate`."""
    while True:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs else None
        if name is None:
            return parser
        parser = subs[0].choices[name]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("utp-env")
    except PackageNotFoundError:  # run from a source tree that is not installed
        from utp_env import __version__

        return __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `utp-env` console script; returns the process exit code."""
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        own = unknown_arguments(parser, own_arguments(parser, parser._given))
        command = parser if own else chosen_parser(parser, args)
        command.print_usage(sys.stderr)
        print(f"{command.prog}: {unknown_message(command, extras)}", file=sys.stderr)
        return 2
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, LookupError, FileNotFoundError) as exc:
        # Boundary errors (bad files, bad names, bad options) are the user's to fix: say what and where.
        print(f"utp-env {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        # A file that cannot be written or read (read-only folder, full disk): one line naming it
        # (utp_env.tools.atomic.FileWriteError says which file and what to do).
        print(f"utp-env {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
