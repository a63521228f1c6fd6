"""The run's progress bar: episodes done, final pass rate and mean BAS/CATS/TDAS so far."""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm

SCORES = ("bas", "cats", "tdas")


class RunProgress:
    """A tqdm bar on stderr whose postfix shows the running pass rate and mean scores."""

    def __init__(self, total: int, done: list[dict[str, Any]], enabled: bool = True) -> None:
        self.bar = tqdm(total=total, initial=len(done), desc="episodes", unit="ep", file=sys.stderr,
                        disable=not enabled, dynamic_ncols=True)
        self.n = 0
        self.passed = 0
        self.sums = dict.fromkeys(SCORES, 0.0)
        self.counts = dict.fromkeys(SCORES, 0)
        for record in done:
            self._add(record)

    def _add(self, record: dict[str, Any]) -> None:
        self.n += 1
        self.passed += bool(record.get("final_pass"))
        metrics = record.get("metrics") or {}
        for key in SCORES:
            value = metrics.get(key)
            if value is not None:
                self.sums[key] += value
                self.counts[key] += 1

    def update(self, record: dict[str, Any]) -> None:
        self._add(record)
        postfix = {"pass": f"{self.passed / self.n:.0%}"}
        for key in SCORES:
            if self.counts[key]:
                postfix[key.upper()] = f"{self.sums[key] / self.counts[key]:.2f}"
        self.bar.set_postfix(postfix, refresh=False)
        self.bar.update(1)

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.close()
