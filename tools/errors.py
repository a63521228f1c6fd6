"""Errors raised by the data layer, each naming the place that is wrong and how to fix it."""

from __future__ import annotations

from pydantic import ValidationError


class DataError(ValueError):
    """A database file does not match the schema.

    Carries the file, the 1-based data row (the header is row 0) and the column, so that the
    message points at the exact cell to fix.
    """

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None,
                 column: str | None = None, hint: str | None = None) -> None:
        self.file, self.row, self.column, self.hint = file, row, column, hint
        where = ", ".join(
            part for part in (
                file and f"file {file}",
                row is not None and f"row {row}",
                column and f"column {column!r}",
            ) if part
        )
        text = f"{where}: {message}" if where else message
        if hint:
            text += f" ({hint})"
        super().__init__(text)


class UnknownNameError(LookupError):
    """A city, venue or service name is not in the database; carries close suggestions."""

    def __init__(self, kind: str, name: str, suggestions: list[str]) -> None:
        self.kind, self.name, self.suggestions = kind, name, suggestions
        text = f"unknown {kind} {name!r}"
        if suggestions:
            text += "; did you mean " + ", ".join(repr(s) for s in suggestions) + "?"
        super().__init__(text)


def first_validation_error(exc: ValidationError) -> str:
    """The first error of a pydantic `ValidationError` on one line: `field.path: message`."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where + ': ' if where else ''}{first['msg']}"
