"""The one error the plan parser raises."""

from __future__ import annotations

SNIPPET_CHARS = 80


class PlanFormatError(ValueError):
    """Input that cannot be read as a plan in the paper's JSON day format.

    The message says where (day number, field, the offending snippet) and why; the same facts are
    kept as attributes so that callers (the env, the run loop) can report them structurally.
    """

    def __init__(self, why: str, *, day: int | str | None = None, field: str | None = None,
                 snippet: str | None = None) -> None:
        self.why = why
        self.day = day
        self.field = field
        self.snippet = None if snippet is None else shorten(snippet)
        where = []
        if day is not None:
            where.append(f"day {day}")
        if field is not None:
            where.append(f"field {field!r}")
        text = ", ".join(where)
        message = f"{text}: {why}" if text else why
        if self.snippet is not None:
            message += f" (in {self.snippet!r})"
        super().__init__(message)


def shorten(text: str, limit: int = SNIPPET_CHARS) -> str:
    """`text` cut to `limit` characters with an ellipsis, for error messages."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."
