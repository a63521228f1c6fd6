"""A plan given to `reset` (`options["plan"]`, in the envs that start from one: `RESETS_FROM_PLAN`).

It may come as a `Plan`, as the canonical Plan JSON (a dict, or its text: `info["plan"]`,
`Plan.model_dump_json()`), or in the paper's JSON day format (docs/PLAN_FORMAT.md). Every way it
can be wrong is a one-line `ValueError` naming `options['plan']`.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from utp_env.itinerary import Plan
from utp_env.query import Query
from utp_env.tools.database import Database
from utp_env.tools.errors import first_validation_error
from utp_env.tools.json_depth import JSONDepthError, loads_bounded


def decoded_plan_json(given: Any) -> Any:
    """`given` decoded when it is a JSON object as text (`Plan.model_dump_json()`, a JSON file's
    text); otherwise `given` as it is (a list as text is left to `parse_plan`). Text nested deeper
    than `MAX_JSON_DEPTH` is a `ValueError` naming the option."""
    if isinstance(given, str | bytes) and given.lstrip()[:1] in ("{", b"{"):
        try:
            return loads_bounded(given, "reset: options['plan']")
        except JSONDepthError:
            raise
        except ValueError:
            return given
    return given


def plan_query_id(decoded: Any) -> str | None:
    """The query id a given plan names (as `decoded_plan_json` left it), or None."""
    named = decoded.query_id if isinstance(decoded, Plan) else decoded.get("query_id") if isinstance(
        decoded, dict) else None
    return named if isinstance(named, str) and named else None


def read_given_plan(given: Any, query: Query, db: Database) -> Plan:
    """The plan of reset's options['plan'], given as a Plan or as `decoded_plan_json` left it."""
    from utp_env.plan_format import PlanFormatError, parse_plan
    from utp_env.simulation.realise import copy_plan  # here: UTP-v0, which takes no plan, never loads the realiser

    try:
        if isinstance(given, Plan):
            return copy_plan(given)  # validated again on the way: a Plan built in code meets the caps too
        if isinstance(given, dict) and isinstance(given.get("days"), list) and all(
                isinstance(d, dict) and "cities" in d for d in given["days"]):
            return Plan.model_validate(given)  # the canonical Plan JSON (info["plan"], Plan.model_dump)
        return parse_plan(given, query=query, db=db)
    except ValidationError as exc:
        raise ValueError(f"reset: options['plan'] is not a valid Plan ({first_validation_error(exc)}); give a "
                         "Plan, its JSON, or a plan in the paper's JSON day format (docs/PLAN_FORMAT.md)") from None
    except (PlanFormatError, ValueError) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ValueError(f"reset: options['plan'] could not be read ({first}); give a Plan, its JSON, or a "
                         "plan in the paper's JSON day format (docs/PLAN_FORMAT.md)") from None
