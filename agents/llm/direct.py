"""The direct sole-planning baseline (UTP-Bench section 5, appendix C.2; `uncertainty: false` is C.4).

`prompt: paper` (the default) gives the model C.2's heuristics, or C.4's plain instructions;
`prompt: metric_aware` is the ablation that states the metric ranges (see `prompts`).

Gather the reference information through the lookup tools, make ONE model call with the
instructions, a one-shot example and that information, and parse the JSON plan. If the reply
cannot be parsed, one repair call shows the model the parse error; if that also fails, the plan
is not delivered (AgentResult with plan None and the error). A model call that fails for good
(after the retries of `RetryingModel`) is recorded in the trace and ends the run with the reason
`agent_error` (plan None, the error and the trace so far, so the calls made are counted and billed), or
`infrastructure_error` when the model server could not answer (`models.failure_reason`: a resumed run
retries those episodes).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import Field

from utp_env.agents.base import AgentResult, Toolkit, Trace
from utp_env.agents.llm import prompts
from utp_env.agents.llm.models import (
    ChatAgent,
    LLMSettings,
    ModelSession,
    describe_failure,
    failure_reason,
    message_text,
    truncation,
)
from utp_env.agents.llm.reference_info import ReferenceLimits, gather_reference_info
from utp_env.config import UncertaintyConfig
from utp_env.itinerary import Plan
from utp_env.plan_format import PlanFormatError, lossy, parse_plan_repaired
from utp_env.query import Query

REPAIR = ("Your answer could not be read as a plan: {error}\nReply again with the complete corrected plan: one "
          "JSON array of day objects in exactly the format of the example, and nothing else.")
TRUNCATED = ("your answer was cut off at the token limit{limit}: the plan is incomplete. Write the complete plan more "
             "briefly")


class DirectSettings(LLMSettings):
    """Settings of DirectAgent (configs/agents/direct.yaml)."""

    uncertainty: bool = Field(default=True, description="Include the uncertainty instructions (C.2); false = C.4")
    prompt: prompts.PromptStyle = Field(
        default="paper", description="paper: C.2/C.4 content; metric_aware: states the BAS/TDAS ranges (ablation)")
    repair: bool = Field(default=True, description="One repair call when the reply does not parse")
    reference: ReferenceLimits = Field(default_factory=ReferenceLimits, description="What to gather")


def parse_reply(text: str, query: Query, toolkit: Toolkit) -> tuple[Plan, list[str]]:
    """The plan in a model reply, stamped with the query id, and what the parser repaired to read it.
    PlanFormatError when there is none, or when the parser could read it only by dropping part of the
    text (a plan the model did not write: the repair message says where the text breaks)."""
    plan, repairs = parse_plan_repaired(text, query=query, db=toolkit.db)
    dropped = lossy(repairs)
    if dropped is not None:
        raise PlanFormatError(f"the reply is not valid JSON at {dropped}")
    return plan.model_copy(update={"query_id": query.query_id}), [str(r) for r in repairs]



class DirectAgent(ChatAgent[DirectSettings]):
    """One model call over the gathered reference information (see the module docstring)."""

    name = "direct"
    Settings = DirectSettings

    def __init__(self, chat_model: Any | None = None, sleep: Callable[[float], None] = time.sleep,
                 uncertainty_config: UncertaintyConfig | None = None, **settings: Any) -> None:
        super().__init__(chat_model, sleep, uncertainty_config, **settings)
        if self.settings.prompt == "metric_aware":
            self.name = "direct_metric_aware" if self.settings.uncertainty else "direct_metric_aware_no_uncertainty"
        elif not self.settings.uncertainty:
            self.name = "direct_no_uncertainty"

    def messages(self, query: Query, reference_text: str) -> list[Any]:
        """System instructions, then the example, the gathered information and the query."""
        s = self.settings
        human = "\n\n".join([prompts.example_block(s.prompt, s.uncertainty),
                             "Reference information:\n" + reference_text, prompts.query_text(query),
                             "Travel plan (JSON):"])
        return [SystemMessage(prompts.instructions(query, self.config, s.uncertainty, s.prompt)),
                HumanMessage(human)]

    def run(self, query: Query, toolkit: Toolkit, seed: int | None = None) -> AgentResult:
        self.start_episode(toolkit)
        trace: Trace = toolkit.trace
        session = ModelSession(self.model, trace, self.settings.billed_price)
        info = gather_reference_info(query, toolkit, self.settings.reference)
        trace.note(f"gathered reference information for {', '.join(info.cities)}: {len(info.text)} characters, "
                   f"{len(info.errors)} tool errors")
        messages = self.messages(query, info.text)
        raw: str | None = None
        attempts = 2 if self.settings.repair else 1
        error = "no model call made"
        for attempt in range(attempts):
            try:
                reply = session.invoke("planner" if attempt == 0 else "repair", messages)
            except Exception as exc:
                return AgentResult(plan=None, raw_output=raw, trace=trace, termination_reason=failure_reason(exc),
                                   error=f"model call failed: {describe_failure(exc)}")
            raw = message_text(reply)
            limit = truncation(reply, self.settings.max_tokens)
            cut = None if limit is None else TRUNCATED.format(limit=limit)
            try:
                plan, repairs = parse_reply(raw, query, toolkit)
                if cut is not None:  # a plan that parses but stops early: its last days are missing
                    raise PlanFormatError(cut)
                return AgentResult(plan=plan, raw_output=raw, trace=trace, repairs=repairs)
            except PlanFormatError as exc:
                error = str(exc) if cut is None or cut in str(exc) else f"{cut}; {exc}"
                trace.note(f"reply {attempt + 1} did not parse{' (truncated)' if cut else ''}: {error}")
                messages = [*messages, AIMessage(raw), HumanMessage(REPAIR.format(error=error))]
        return AgentResult(plan=None, raw_output=raw, trace=trace,
                           error=f"plan not delivered: the reply did not parse after {attempts} attempt(s): {error}")
