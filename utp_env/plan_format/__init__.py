"""The paper's JSON day format <-> the canonical itinerary (docs/PLAN_FORMAT.md).

`parse_plan` reads what planners and LLMs write and raises only `PlanFormatError` (a ValueError
that names the day, the field and the snippet); `format_plan` / `plan_to_json` write the format
back. For plans in canonical form, `parse_plan(format_plan(plan)) == plan`.
"""

from utp_env.plan_format.errors import PlanFormatError
from utp_env.plan_format.parse import parse_plan, parse_plan_repaired
from utp_env.plan_format.repairs import LossyPlanError, Repair, lossy, refuse_lossy
from utp_env.plan_format.write import format_day, format_plan, plan_to_json

__all__ = ["LossyPlanError", "PlanFormatError", "Repair", "format_day", "format_plan", "lossy", "parse_plan",
           "parse_plan_repaired", "plan_to_json", "refuse_lossy"]
