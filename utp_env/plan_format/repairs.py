"""What the plan parser repaired to read a plan, and what a broken plan would need.

The parser (`parse_plan_repaired`, utp_env/plan_format/parse.py) reads what LLMs write: JSON inside a
``` fence, prose around it, trailing commas, and, when the text is not valid JSON, the complete JSON
values it can find in it. Each of these is a `Repair`. The last kind is *lossy*: the part of the text
that does not decode (a day with a missing colon, an unquoted key, a last day cut off) is dropped with
whatever days and legs it held. `utp-env evaluate` and `utp-env simulate` refuse a plan read with a
lossy repair unless `--lenient` is given; the env's answer to `submit_plan` and the run record say
what was repaired (docs/PLAN_FORMAT.md "Repairs").
"""

from __future__ import annotations

import json
from dataclasses import dataclass

TAIL = 3
"""Characters from the end of the text within which a decoding error means the text was cut off."""


@dataclass(frozen=True)
class Repair:
    """One repair the parser made: its kind, a one-line description, and whether content was dropped."""

    kind: str
    """fence | prose | trailing_comma | broken_json"""
    message: str
    lossy: bool = False
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        return self.message


def _fix(msg: str, at_end: bool) -> tuple[str, str]:
    """(what is wrong, what the text needs) for a `json` decoding error message."""
    if at_end:
        return ("the text ends inside a JSON value: it was cut off (truncated, e.g. at the model's max_tokens)",
                "send the complete plan (raise max_tokens, or ask for a shorter plan)")
    if msg.startswith("Expecting ':' delimiter"):
        return "a key is not followed by ':'", "insert ':' between the key and its value"
    if msg.startswith("Expecting ',' delimiter"):
        return "two values are not separated by ','", "insert ',' between them"
    if msg.startswith("Expecting property name enclosed in double quotes"):
        return "a key is not in double quotes", "write the key in double quotes, e.g. \"current_city\""
    if msg.startswith("Unterminated string"):
        return "a string is not closed", "close the string with a double quote"
    if msg.startswith("Invalid control character"):
        return "a string holds a raw line break or tab", "write it as \\n or \\t"
    if msg.startswith("Invalid \\escape"):
        return "a backslash escape is not JSON", "double the backslash"
    if msg.startswith("Expecting value"):
        return "a value is missing or not JSON (text values need double quotes)", "write the value as JSON"
    return msg.split(":")[0].lower(), "fix the JSON there"


def cut_off(text: str, exc: json.JSONDecodeError) -> bool:
    """Whether a decoding error of `text` is at its end: the text stops inside a JSON value (truncated)."""
    return exc.pos >= len(text.rstrip()) - TAIL


def json_problem(text: str, exc: json.JSONDecodeError) -> str:
    """`line L column C: what is wrong; what it needs` for a decoding error of `text`."""
    what, fix = _fix(exc.msg, cut_off(text, exc))
    return f"line {exc.lineno} column {exc.colno}: {what}; {fix}"


def broken_json(text: str, failure: tuple[int, json.JSONDecodeError], kept: int = 0) -> Repair:
    """The lossy repair of reading `kept` complete JSON values out of `text`, where the value starting at
    `failure[0]` failed with `failure[1]`: where it breaks, why, and what it needs."""
    start, exc = failure
    begins = text.count("\n", 0, start) + 1
    message = (f"{json_problem(text, exc)}. Only the {kept} complete JSON value(s) around it were read: the part "
               f"that starts on line {begins} (with the days or legs it holds) was dropped")
    return Repair("broken_json", message, lossy=True, line=exc.lineno, column=exc.colno)


def lossy(repairs: list[Repair]) -> Repair | None:
    """The first repair that dropped content, or None."""
    return next((r for r in repairs if r.lossy), None)


class LossyPlanError(ValueError):
    """A plan was read only by dropping part of its text, and the caller refuses such plans."""


def refuse_lossy(repairs: list[Repair], where: str, flag: str = "--lenient") -> None:
    """A one-line `LossyPlanError` naming `where` (the file, its line) and the repair when a repair of
    `repairs` dropped content; `flag` is how the user accepts such plans."""
    first = lossy(repairs)
    if first is not None:
        raise LossyPlanError(f"{where}: the plan is not valid JSON at {first.message}; refused, since its numbers "
                             f"would be those of a plan you did not write: fix the text, or pass {flag} to score "
                             "what could be read")
