"""Find the day objects in what a planner returned: JSON text (fenced, with prose around, JSONL)
or already-decoded objects. Only `json` is used, never `eval`.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from utp_env.plan_format.errors import PlanFormatError, shorten
from utp_env.tools.json_depth import depth_message, exceeds_depth

MAX_CANDIDATES = 200  # JSON starts tried in free text before giving up (bounds the work)
_FENCE_RE = re.compile(r"```[ \t]*(?:jsonl?|javascript|js)?[ \t]*\r?\n?(.*?)```", re.IGNORECASE | re.DOTALL)
_TRAILING_COMMA_RE = re.compile(r",(\s*[\]}])")
_DAY_KEYS = frozenset({"days", "day", "current_city", "currentcity", "current city"})


def day_objects(data: Any) -> list[dict[str, Any]]:
    """The list of day dicts held by `data`; PlanFormatError if there is none."""
    if isinstance(data, bytes | bytearray):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PlanFormatError(f"plan bytes are not UTF-8 (byte {exc.start})") from None
    if isinstance(data, str):
        data = _decode_text(data)
    _check_depth(data)
    return _days_of(data)


def _check_depth(value: Any) -> None:
    """Plans are shallow: deeper than `MAX_JSON_DEPTH` is refused before anything recurses into it."""
    if exceeds_depth(value):
        raise PlanFormatError(depth_message("the plan"))


def _days_of(value: Any, depth: int = 0) -> list[dict[str, Any]]:
    if depth > 3:
        raise PlanFormatError("plan nested too deeply")
    if isinstance(value, list):
        if not value:
            raise PlanFormatError("the plan has no days (empty list)")
        bad = next((i for i, v in enumerate(value) if not isinstance(v, dict)), None)
        if bad is not None:
            raise PlanFormatError(f"plan entry {bad + 1} is a {type(value[bad]).__name__}, "
                                  "expected a day object {{\"days\": ..., \"current_city\": ...}}",
                                  snippet=repr(value[bad]))
        return value
    if isinstance(value, dict):
        keys = {str(k).strip().casefold(): k for k in value}
        for wrapper in ("plan", "travel_plan", "itinerary", "days"):
            inner = value.get(keys.get(wrapper, wrapper))
            if isinstance(inner, list | dict) and (wrapper != "days" or isinstance(inner, list)):
                return _days_of(inner, depth + 1)
            if wrapper != "days" and isinstance(inner, str):
                decoded = _decode_text(inner)
                _check_depth(decoded)
                return _days_of(decoded, depth + 1)
        if _DAY_KEYS & set(keys):
            return [value]
        raise PlanFormatError("no plan found: expected a list of day objects, {\"plan\": [...]} or a day "
                              f"object; got an object with keys {shorten(', '.join(map(str, value)))}")
    raise PlanFormatError(f"no plan found: expected a list of day objects, got {type(value).__name__}",
                          snippet=repr(value))


def _decode_text(text: str) -> Any:
    """Decode the plan JSON in `text`, tolerating fences, prose around it, JSONL and trailing commas."""
    stripped = text.strip()
    if not stripped:
        raise PlanFormatError("no plan found: the text is empty")
    # Lazily: the fences are looked for, and trailing commas removed, only when the text before fails.
    for candidate in itertools.chain([stripped], (m.group(1).strip() for m in _FENCE_RE.finditer(text))):
        value = _loads(candidate)
        if value is _FAIL:
            value = _loads(_TRAILING_COMMA_RE.sub(r"\1", candidate))
        if value is not _FAIL:
            return value
    values = _scan(stripped)
    if not values:
        raise PlanFormatError("no JSON object or array found", snippet=stripped)
    planish = [v for v in values if isinstance(v, list) or (isinstance(v, dict) and not _is_day(v))]
    days = [v for v in values if isinstance(v, dict) and _is_day(v)]
    if days and (len(days) > 1 or not planish):
        return days  # JSONL or day objects with prose between them
    return planish[0] if planish else values[0]


_FAIL = object()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise PlanFormatError(depth_message("the plan")) from None
    except ValueError:
        return _FAIL


def _scan(text: str) -> list[Any]:
    """Every JSON value that starts at a `{` or `[` in `text`, left to right, non-overlapping."""
    decoder, values, pos, tries = json.JSONDecoder(), [], 0, 0
    while tries < MAX_CANDIDATES:
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            break
        start, tries = min(starts), tries + 1
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            pos = start + 1
            continue
        values.append(value)
        pos = end
    return values


def _is_day(value: dict[str, Any]) -> bool:
    return bool(_DAY_KEYS & {str(k).strip().casefold() for k in value})
