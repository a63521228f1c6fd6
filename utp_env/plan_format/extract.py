"""Find the day objects in what a planner returned: JSON text (fenced, with prose around, JSONL)
or already-decoded objects. Only `json` is used, never `eval`.

Every tolerance is reported as a `Repair` (utp_env/plan_format/repairs.py) in the list the caller
passes: reading the JSON inside a fence, ignoring prose around it, removing trailing commas, and
reading separate fragments out of text that is not valid JSON. The last one is *lossy*: whatever
failed to decode (a day with a missing colon, an unquoted key, a day cut off at the end) is dropped,
so the repair says where the text breaks and what it would need.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from utp_env.plan_format.errors import PlanFormatError, shorten
from utp_env.plan_format.repairs import Repair, broken_json, cut_off, json_problem
from utp_env.tools.json_depth import MAX_JSON_DEPTH, depth_message, exceeds_depth

MAX_CANDIDATES = 200  # JSON starts tried in free text before giving up (bounds the work)
_FENCE_RE = re.compile(r"```[ \t]*(?:jsonl?|javascript|js)?[ \t]*\r?\n?(.*?)```", re.IGNORECASE | re.DOTALL)
_TRAILING_COMMA_RE = re.compile(r",(\s*[\]}])")
_DAY_KEYS = frozenset({"days", "day", "current_city", "currentcity", "current city"})


def day_objects(data: Any, repairs: list[Repair] | None = None) -> list[dict[str, Any]]:
    """The list of day dicts held by `data`; PlanFormatError if there is none. The repairs made to read
    JSON text are appended to `repairs` when given."""
    if isinstance(data, bytes | bytearray):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PlanFormatError(f"plan bytes are not UTF-8 (byte {exc.start})") from None
    if isinstance(data, str):
        # Every object or list decoded from the text opens with a `{` or `[` of it, so a text with at
        # most MAX_JSON_DEPTH of them cannot decode to anything deeper: the walk is skipped.
        shallow = data.count("{") + data.count("[") <= MAX_JSON_DEPTH
        data = _decode_text(data, [] if repairs is None else repairs)
        if shallow:
            return _days_of(data)
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
                decoded = _decode_text(inner, [])
                _check_depth(decoded)
                return _days_of(decoded, depth + 1)
        if _DAY_KEYS & set(keys):
            return [value]
        raise PlanFormatError("no plan found: expected a list of day objects, {\"plan\": [...]} or a day "
                              f"object; got an object with keys {shorten(', '.join(map(str, value)))}")
    raise PlanFormatError(f"no plan found: expected a list of day objects, got {type(value).__name__}",
                          snippet=repr(value))


def _decode_text(text: str, repairs: list[Repair]) -> Any:
    """Decode the plan JSON in `text`, tolerating fences, prose around it, JSONL and trailing commas;
    each tolerance used is appended to `repairs`."""
    stripped = text.strip()
    if not stripped:
        raise PlanFormatError("no plan found: the text is empty")
    # Lazily: the fences are looked for, and trailing commas removed, only when the text before fails.
    fenced = (m.group(1).strip() for m in _FENCE_RE.finditer(text))
    for i, candidate in enumerate(itertools.chain([stripped], fenced)):
        value = _loads(candidate)
        if value is _FAIL:
            value = _loads(_TRAILING_COMMA_RE.sub(r"\1", candidate))
            if value is not _FAIL:
                repairs.append(Repair("trailing_comma", "removed a trailing comma before a closing bracket"))
        if value is not _FAIL:
            if i > 0:
                repairs.append(Repair("fence", "read the JSON inside a ``` fence and ignored the text around it"))
            return value
    values, failures = _scan(stripped)
    if not values:
        if failures:
            raise PlanFormatError(f"no complete JSON value: {json_problem(stripped, failures[0][1])}",
                                  snippet=stripped)
        raise PlanFormatError("no JSON object or array found", snippet=stripped)
    lost = [f for f in failures if _structured(stripped, f[0], values) or cut_off(stripped, f[1])]
    if lost:
        repairs.append(broken_json(stripped, lost[0], kept=len(values)))
    else:
        repairs.append(Repair("prose", "ignored text around the JSON"))
    planish = [v for v, _ in values if isinstance(v, list) or (isinstance(v, dict) and not _is_day(v))]
    days = [v for v, _ in values if isinstance(v, dict) and _is_day(v)]
    if days and (len(days) > 1 or not planish):
        return days  # JSONL or day objects with prose between them
    return planish[0] if planish else values[0][0]


def _structured(text: str, pos: int, values: list[tuple[Any, int]]) -> bool:
    """Whether the text from a start that failed to decode (`pos`) up to the next decoded value (or the
    end) holds JSON structure (a string or a key: `"` or `:`), i.e. is a broken part of the plan rather
    than a brace in the prose around it."""
    following = [start for _, start in values if start > pos]
    end = min(following) if following else len(text)
    return '"' in text[pos:end] or ":" in text[pos:end]


_FAIL = object()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise PlanFormatError(depth_message("the plan")) from None
    except ValueError:
        return _FAIL


def _scan(text: str) -> tuple[list[tuple[Any, int]], list[tuple[int, json.JSONDecodeError]]]:
    """Every JSON value that starts at a `{` or `[` in `text`, left to right, non-overlapping, with the
    position it starts at; and (start, decoding error) of every start that failed (each lies outside
    the values found: the scan resumes after a value's end)."""
    decoder = json.JSONDecoder()
    values: list[tuple[Any, int]] = []
    failures: list[tuple[int, json.JSONDecodeError]] = []
    pos, tries = 0, 0
    while tries < MAX_CANDIDATES:
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            break
        start, tries = min(starts), tries + 1
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            failures.append((start, exc))
            pos = start + 1
            continue
        except (ValueError, RecursionError):
            pos = start + 1
            continue
        values.append((value, start))
        pos = end
    return values, failures


def _is_day(value: dict[str, Any]) -> bool:
    return bool(_DAY_KEYS & {str(k).strip().casefold() for k in value})
