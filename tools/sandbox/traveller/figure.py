"""A traveller figure: a value measured on the database beside its real-world target and the source of
that target. Its own module so that the area modules (`rail.py`, `air.py`, ...) and the package that
runs them (`__init__.py`) import it without importing each other."""

from __future__ import annotations

from utp_env.tools.sandbox.calibration import Check


class Figure(Check):
    """A traveller figure: a `Check` with the public source of its target, and for a figure the
    vendored data cannot meet, the reason (`shortfall`: a known shortfall, printed as such rather
    than as a failure)."""

    source: str
    shortfall: str | None = None

    @property
    def result(self) -> str:
        """"pass", "short" (missed for the known reason in `shortfall`) or "FAIL"."""
        return "pass" if self.passed else ("short" if self.shortfall else "FAIL")
