"""What `parse_plan` and `evaluate` answer for every reference plan of a database and for a fixed set
of deliberately broken variants of them, recorded so that a speed change can be shown to change
nothing ("speed only, no semantic change").

Each case is a plan text in the paper's JSON day format with its query. Its outcome is the JSON of
the parsed `Plan` (or the `PlanFormatError` message) and the JSON of the `EvaluationReport`
(scored with the query's unbroken reference plan as the ordering reference), hashed with SHA-256
per case. `tests/support/data/plan_outputs/<profile>.json` holds the hashes recorded before the parser
and the evaluator were made faster; `tests/evaluation/test_plan_outputs.py` recomputes them.

Record again (only when the database or the intended semantics change, never to make a speed
change pass):

    python tests/support/plan_outputs.py --profile mini --write     # the test session's mini sandbox
    python tests/support/plan_outputs.py --profile full --write     # the embedded full sandbox
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from utp_env.dataset import REFERENCES_FILE, Dataset
from utp_env.evaluation import evaluate
from utp_env.plan_format import PlanFormatError, parse_plan
from utp_env.query import Query

RECORDS = Path(__file__).parent / "data" / "plan_outputs"
MINI_QUERIES = 60  # as tests/conftest.py builds the mini sandbox
BROKEN_PER_MUTATION = 25  # the first N reference plans (by query id) get each mutation

Days = list[dict[str, Any]]


def _times_reversed(days: Days) -> Days:
    for day in days:
        poi = day.get("point_of_interest_list", "")
        m = re.search(r"from (\d\d:\d\d) to (\d\d:\d\d)", poi)
        if m:
            day["point_of_interest_list"] = poi.replace(m.group(0), f"from {m.group(2)} to {m.group(1)}", 1)
            break
    return days


def _clock_words(days: Days) -> Days:
    """Times written the other ways the grammar reads: 9:05 (no leading zero), Devanagari and
    Arabic-Indic digits, padded with spaces."""
    digits = ("0123456789", "\u0966\u0967\u0968\u0969\u096a\u096b\u096c\u096d\u096e\u096f",
              "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669")

    def other(m: re.Match[str]) -> str:
        hour, minute = int(m.group(1)), m.group(2)
        style = (hour + int(minute)) % 3
        if style == 0:
            return f"{hour}:{minute}"
        return f"{hour:02d}:{minute}".translate(str.maketrans("0123456789", digits[style]))
    for day in days:
        for key in ("point_of_interest_list", "transportation"):
            if isinstance(day.get(key), str):
                day[key] = re.sub(r"\b(\d\d):(\d\d)\b", other, day[key])
    return days


def _spoken_clock(days: Days) -> Days:
    """Times as LLMs sometimes write them (9:30 AM, 21.15): refused with a located error."""
    def spoken(m: re.Match[str]) -> str:
        hour, minute = int(m.group(1)), m.group(2)
        return f"{(hour - 1) % 12 + 1}:{minute} {'AM' if hour < 12 else 'PM'}" if hour % 2 else f"{hour}.{minute}"
    days[0]["point_of_interest_list"] = re.sub(r"\b(\d\d):(\d\d)\b", spoken, days[0].get("point_of_interest_list", ""))
    return days


def _bad_clock(days: Days) -> Days:
    days[-1]["point_of_interest_list"] = re.sub(r"\b\d\d:\d\d\b", "25:61", days[-1].get("point_of_interest_list", ""),
                                                count=1)
    return days


def _unknown_venues(days: Days) -> Days:
    for day in days:
        for key in ("attraction", "lunch", "accommodation"):
            value = day.get(key)
            if isinstance(value, str) and value.strip() not in ("-", ""):
                day[key] = "Nowhere " + value
                day["point_of_interest_list"] = day.get("point_of_interest_list", "").replace(value.split(";")[0],
                                                                                              "Nowhere " + value)
    return days


def _unknown_service(days: Days) -> Days:
    for day in days:
        day["transportation"] = re.sub(r"(BUS|FL|TR|[A-Z]{1,3})[- ]?\d{3,6}", "ZZ99999", day.get("transportation", ""))
    return days


def _no_stays(days: Days) -> Days:
    for day in days:
        day["accommodation"] = "-"
    return days


def _no_poi(days: Days) -> Days:
    for day in days:
        day.pop("point_of_interest_list", None)
    return days


def _swapped_meals(days: Days) -> Days:
    for day in days:
        day["breakfast"], day["dinner"] = day.get("dinner", "-"), day.get("breakfast", "-")
    return days


def _names_reformatted(days: Days) -> Days:
    """Case, spacing and punctuation changes normalize must absorb; city suffixes dropped."""
    for day in days:
        for key in ("breakfast", "lunch", "dinner", "attraction", "accommodation"):
            value = day.get(key)
            if isinstance(value, str):
                day[key] = re.sub(r",\s*[^,;]+(;|$)", r"\1", value).upper().replace(" ", "  ")
        poi = day.get("point_of_interest_list")
        if isinstance(poi, str):
            day["point_of_interest_list"] = poi.lower().replace("; ", " ;  ")
    return days


def _repeated_day(days: Days) -> Days:
    return [*days, dict(days[-1])]


def _wrong_city(days: Days) -> Days:
    days[0]["current_city"] = "from Atlantis to " + str(days[0].get("current_city", "")).split(" to ")[-1]
    return days


def _no_day_numbers(days: Days) -> Days:
    for day in days:
        day.pop("days", None)
    return days


def _day_strings(days: Days) -> Days:
    for day in days:
        day["days"] = f"Day {day.get('days')}"
    return days


def _empty(days: Days) -> Days:
    return []


MUTATIONS: dict[str, Callable[[Days], Days]] = {
    "times_reversed": _times_reversed, "clock_words": _clock_words, "spoken_clock": _spoken_clock,
    "bad_clock": _bad_clock,
    "unknown_venues": _unknown_venues, "unknown_service": _unknown_service, "no_stays": _no_stays,
    "no_poi": _no_poi, "swapped_meals": _swapped_meals, "names_reformatted": _names_reformatted,
    "repeated_day": _repeated_day, "wrong_city": _wrong_city, "no_day_numbers": _no_day_numbers,
    "day_strings": _day_strings, "empty": _empty,
}


def cases(dataset: Dataset) -> Iterator[tuple[str, str, Query, str]]:
    """(label, plan text, query, reference text) for every reference plan of the dataset as stored,
    then each mutation of the first BROKEN_PER_MUTATION of them."""
    stored: dict[str, str] = {}
    for line in (Path(dataset.db.path) / REFERENCES_FILE).read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            stored[record["query_id"]] = json.dumps(record["plan"], ensure_ascii=False)
    by_id = {q.query_id: q for q in dataset.queries}
    ids = sorted(stored)
    for qid in ids:
        yield qid, stored[qid], by_id[qid], stored[qid]
    for name, mutate in MUTATIONS.items():
        for qid in ids[:BROKEN_PER_MUTATION]:
            broken = json.dumps(mutate(json.loads(stored[qid])), ensure_ascii=False)
            yield f"{qid}/{name}", broken, by_id[qid], stored[qid]


def outcome(text: str, query: Query, dataset: Dataset, reference_text: str) -> str:
    """The JSON of what parse_plan and evaluate answer for one plan text."""
    db = dataset.db
    try:
        plan = parse_plan(text, query=query, db=db)
    except PlanFormatError as exc:
        return json.dumps({"parse_error": str(exc)})
    reference = parse_plan(reference_text, query=query, db=db)
    report = evaluate(plan, query, db, reference=reference)
    return json.dumps({"plan": json.loads(plan.model_dump_json()), "report": json.loads(report.model_dump_json())},
                      sort_keys=True)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def record(dataset: Dataset) -> dict[str, Any]:
    """The hashes of every case's outcome, with the database they were made on."""
    outputs = {label: digest(outcome(text, query, dataset, ref)) for label, text, query, ref in cases(dataset)}
    return {"db_hash": dataset.db.content_hash, "cases": len(outputs), "outputs": outputs}


def mini_dataset(where: Path) -> Dataset:
    """The test session's mini sandbox (tests/conftest.py: seed 0, 60 queries), built in `where`."""
    from utp_env.dataset import build_query_set, dataset_of
    from utp_env.tools.database import Database
    from utp_env.tools.sandbox import build_sandbox

    build_sandbox("mini", 0, where)
    build_query_set(where, n=MINI_QUERIES, seed=0, progress=False)
    return dataset_of(Database.open(where))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", choices=("mini", "full"), default="mini")
    parser.add_argument("--write", action="store_true", help="write the record (else compare with it)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.profile == "mini":
            dataset = mini_dataset(Path(tmp))
        else:
            from utp_env.dataset import open_dataset

            dataset = open_dataset(profile="full", progress=False)
        now = record(dataset)
    path = RECORDS / f"{args.profile}.json"
    if args.write:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {path}: {now['cases']} cases")
        return 0
    saved = json.loads(path.read_text(encoding="utf-8"))
    differ = [k for k in saved["outputs"] if saved["outputs"][k] != now["outputs"].get(k)]
    print(f"{len(differ)} of {saved['cases']} cases differ" + (f", e.g. {differ[:5]}" if differ else ""))
    return 1 if differ or saved["db_hash"] != now["db_hash"] else 0


if __name__ == "__main__":
    sys.exit(main())
