"""The `utp-env` command line as a user meets it: --version, help written for users, a help text for
every option, and a mistyped option or command answered under the right usage with the closest
name. (What each command does is tested with its subject: test_runs.py, test_sandbox.py, ...)"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

import utp_env
from utp_env.cli import build_parser, main


def cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `utp-env ARGV`, whether it returns or exits."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """`parser` and every (sub)command parser under it."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from parsers(sub)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["--version"], capsys)
    assert code == 0 and out.strip() == f"utp-env {utp_env.__version__}"


def test_top_level_help_says_what_the_tool_does_and_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["--help"], capsys)
    assert code == 0
    assert "composition root" not in out and "travel planning" in out and "examples:" in out
    for command in ("run", "show", "evaluate", "simulate", "data"):
        assert f"\n    {command} " in out, command


def test_every_command_and_option_has_help() -> None:
    missing = []
    for parser in parsers(build_parser()):
        if not parser.description:
            missing.append(f"{parser.prog}: no description")
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                helped = {a.dest for a in action._choices_actions if a.help}
                missing += [f"{parser.prog} {name}: no help line" for name in action.choices if name not in helped]
            elif not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{parser.prog} {'/'.join(action.option_strings) or action.dest}: no help")
    assert not missing, "\n".join(missing)


def test_the_parser_tree_is_walked() -> None:  # guards the test above against walking nothing
    progs = {p.prog for p in parsers(build_parser())}
    assert {"utp-env", "utp-env run", "utp-env data validate", "utp-env data build", "utp-env evaluate"} <= progs


@pytest.mark.parametrize(("argv", "usage", "message"), [
    (["run", "--agnet", "x"], "usage: utp-env run ", "utp-env run: unknown option --agnet; did you mean --agent?"),
    (["run", "--limti=3"], "usage: utp-env run ", "utp-env run: unknown option --limti; did you mean --limit?"),
    (["run", "--seed", "1", "--wokers", "2"], "usage: utp-env run ",
     "utp-env run: unknown option --wokers; did you mean --workers?"),
    # a required option looks missing too: the unknown one is named
    (["simulate", "--paln", "p.json"], "usage: utp-env simulate ",
     "utp-env simulate: unknown option --paln; did you mean --plan?"),
    (["evaluate", "--plnas", "p.jsonl"], "usage: utp-env evaluate ",
     "utp-env evaluate: unknown option --plnas; did you mean --plans?"),
    (["show", "runs/a", "--markdwn"], "usage: utp-env show ",
     "utp-env show: unknown option --markdwn; did you mean --markdown?"),
    (["data", "build", "--profiel", "mini"], "usage: utp-env data build ",
     "utp-env data build: unknown option --profiel; did you mean --profile?"),
    (["data", "validate", "--zzzz", "dir"], "usage: utp-env data validate ",
     "utp-env data validate: unknown option --zzzz; see `utp-env data validate --help` for the options"),
    (["data", "validate", "a", "b"], "usage: utp-env data validate ", "utp-env data validate: unexpected argument 'b'"),
    (["--versoin"], "usage: utp-env ", "utp-env: unknown option --versoin; did you mean --version?"),
    (["--versoin", "run"], "usage: utp-env ", "utp-env: unknown option --versoin; did you mean --version?"),
    (["rnu"], "usage: utp-env ", "invalid choice: 'rnu' (choose from 'data', 'simulate', 'run', 'show', 'compare', "
     "'report', 'evaluate', 'submit', 'serve', 'levels'); did you mean 'run'?"),
    (["data", "valdate", "x"], "usage: utp-env data ", "did you mean 'validate'?"),
    (["run", "--split", "valdation"], "usage: utp-env run ", "did you mean 'validation'?"),
])
def test_a_mistyped_name_gets_its_commands_usage_and_the_closest_name(
        argv: list[str], usage: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(argv, capsys)
    assert code == 2 and out == ""
    assert err.startswith(usage), err
    assert message in err, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].endswith(message.split("; ")[-1])  # the message is the last line


def test_abbreviations_and_negative_numbers_are_still_options_or_values() -> None:
    args, extras = build_parser().parse_known_args(["run", "--lim", "3", "--seed", "-1", "--quiet"])
    assert extras == [] and args.limit == 3 and args.seed == -1 and args.quiet


@pytest.mark.parametrize("argv, message", [
    (["evaluate", "--plans", "p.jsonl", "--format", "ci", "--no-ci"],
     "--format ci and --no-ci ask for both layouts; give one of them"),
    (["run", "--limit", "1", "--format", "ci", "--no-ci"], "--format ci and --no-ci ask for both layouts"),
    (["run", "--limit", "1", "--ray-address", "1.2.3.4"],
     "--ray-address '1.2.3.4' is only read with --backend ray, and the backend is 'local': add --backend ray"),
])
def test_options_that_contradict_each_other_are_refused_before_any_work(
        argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: object,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Silently ignoring one of two options would print another table or run elsewhere than asked."""
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]
    code, out, err = cli(argv, capsys)
    assert code == 2 and out == "" and "Traceback" not in err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "runs").exists()  # type: ignore[operator]
