"""A traveller figure: a value measured on the database beside its real-world target and the source of
that target. Its own module so that the area modules (`rail.py`, `air.py`, ...) and the package that
runs them (`__init__.py`) import it without importing each other."""

from __future__ import annotations

from utp_env.tools.sandbox.calibration import Check


class Figure(Check):
    """A traveller figure: a `Check` with the public source of its target."""

    source: str
