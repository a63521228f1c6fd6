"""Read and write query sets as JSONL (one `Query` per line), with errors naming line and field."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from utp_env.query import Query

QUERIES_FILE = "queries.jsonl"
"""The query set's file in a database directory (the benchmark's validation and test queries)."""


def dumps_queries(queries: Iterable[Query]) -> str:
    """JSONL text of the queries: sorted keys, no extra whitespace, so equal queries give equal bytes."""
    return "".join(json.dumps(q.model_dump(mode="json"), sort_keys=True, ensure_ascii=False) + "\n"
                   for q in queries)


def write_queries(path: str | Path, queries: Iterable[Query]) -> Path:
    """Write `queries` to `path` as JSONL (UTF-8, `\\n` line ends); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dumps_queries(queries).encode("utf-8"))
    return path


def loads_queries(text: str, source: str = "<string>") -> list[Query]:
    """Parse JSONL text into queries; ValueError naming `source`, the 1-based line and the field."""
    out: list[Query] = []
    seen: dict[str, int] = {}  # query_id -> line
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source}: line {lineno}: invalid JSON ({exc.msg} at column {exc.colno})") from exc
        if not isinstance(data, dict):
            raise ValueError(f"{source}: line {lineno}: expected a JSON object, got {type(data).__name__}")
        try:
            query = Query.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "(query)"
            raise ValueError(f"{source}: line {lineno}: field {field!r}: {err['msg']}") from exc
        if query.query_id in seen:
            raise ValueError(f"{source}: line {lineno}: duplicate query_id {query.query_id!r} "
                             f"(first on line {seen[query.query_id]})")
        seen[query.query_id] = lineno
        out.append(query)
    return out


def read_queries(path: str | Path) -> list[Query]:
    """Queries from a JSONL file; errors name the file, line and field."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"query file {str(path)!r} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 at byte {exc.start}") from exc
    return loads_queries(text, str(path))
