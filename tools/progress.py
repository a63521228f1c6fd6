"""Progress on long waits: a tqdm bar on stderr when stderr is a terminal, never `\\r` spam in a file.

Every long wait of the project (building the sandbox, the reference plans, a run's episodes)
makes its bar here, so the rule is written once: on a terminal a live bar; when stderr is a file
or a pipe, one line saying what is being done, and nothing more from the bar.
"""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm


def progress_bar(total: int | None, desc: str, unit: str, enabled: bool = True, **kwargs: Any) -> tqdm[Any]:
    """A tqdm bar for `total` units of work, or a disabled one (with a one-line notice when
    `enabled` but stderr is not a terminal). Use it like any tqdm bar (`update`, `set_postfix`)."""
    live = enabled and sys.stderr.isatty()
    if enabled and not live:
        size = f"{total:,} × {unit}" if total is not None else unit
        print(f"utp-env: {desc} ({size})…", file=sys.stderr, flush=True)
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, disable=not live, dynamic_ncols=True, **kwargs)
