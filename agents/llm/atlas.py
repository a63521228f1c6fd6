"""ATLAS-style multi-agent planning (Choi et al., ICLR 2026), over our lookup tools.

Roles, each one LLM call per turn and each recorded in the trace:

1. search agent: the model (with the lookup tools bound) chooses tool calls; each round's calls
   run through the toolkit and their results are answered as ToolMessages; a round without tool
   calls ends the search. At most L search rounds per episode in total.
2. constraint manager: extracts the explicit constraints of the query (made concrete with what was
   found) and the implicit commonsense ones listed in its prompt.
3. planner: writes the plan in the paper's JSON day format from the constraints and the gathered
   information (with the same instructions and one-shot example as the direct baseline).
4. checker: `checker: llm` asks the model for a verdict (pass / fail / unsatisfiable + feedback);
   `checker: symbolic` uses the environment's evaluator and turns every failed commonsense or
   hard check into feedback (an entity missing from the database counts as unsatisfiable with the
   information gathered, since the planner could not find a valid one).
5. on fail the planner revises with the feedback, at most K times; on unsatisfiable the search
   advisor proposes new searches and the search agent runs them (counted against L), then the
   constraints are re-extracted and planning resumes.

The last plan that parsed is returned even if the checker never passed it (ATLAS delivers its
final plan); no parsable plan at all is a delivery failure. A model call that fails for good ends
the run: with the last parsed plan delivered (and the error recorded) if there is one, else with
the reason `agent_error` (plan None, the error and the trace so far). A search-agent tool call whose arguments
are not JSON (LangChain's `invalid_tool_calls`) is answered with a tool message saying so and
recorded in the trace as a failed tool call.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import Field

from utp_env.agents.base import AgentResult, Toolkit, Trace, TraceStep
from utp_env.agents.llm import prompts
from utp_env.agents.llm.direct import TRUNCATED, parse_reply
from utp_env.agents.llm.models import (
    ChatAgent,
    LLMSettings,
    ModelSession,
    describe_failure,
    failure_reason,
    history_reply,
    invalid_call_id,
    message_text,
    truncation,
)
from utp_env.config import UncertaintyConfig
from utp_env.itinerary import Plan
from utp_env.plan_format import PlanFormatError, plan_to_json
from utp_env.query import Query

Verdict = Literal["pass", "fail", "unsatisfiable"]
VERDICTS: dict[str, Verdict] = {v: v for v in get_args(Verdict)}


class AtlasSettings(LLMSettings):
    """Settings of AtlasAgent (configs/agents/atlas.yaml)."""

    K: int = Field(default=3, ge=0, le=20, description="Most plan revisions after checker feedback")
    L: int = Field(default=6, ge=1, le=50, description="Most search rounds in total (advisor rounds included)")
    checker: Literal["llm", "symbolic"] = Field(default="llm", description="Who checks the plan")
    uncertainty: bool = Field(default=False, description="Planner gets the uncertainty instructions (off as in "
                              "UTP-Bench section 5.2; configs/agents/atlas_uncertainty.yaml turns them on)")
    prompt: prompts.PromptStyle = Field(default="paper", description="Planner instruction style, as in direct")
    max_calls_per_round: int = Field(default=16, ge=1, le=64, description="Tool calls executed per search round")
    max_info_chars: int = Field(default=60_000, ge=1000, description="Cap on the gathered text given to the roles")


@dataclass
class CheckOutcome:
    verdict: Verdict
    feedback: str


@dataclass
class Episode:
    """The working state of one ATLAS run."""

    query: Query
    toolkit: Toolkit
    session: ModelSession
    search_messages: list[Any] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    rounds: int = 0
    last_plan: Plan | None = None  # the last plan that parsed, the reply it came from, the parser's repairs
    last_raw: str | None = None
    last_repairs: list[str] = field(default_factory=list)

    def information(self, cap: int) -> str:
        text = "\n\n".join(self.findings)
        return text if len(text) <= cap else text[:cap] + f"\n… [{len(text) - cap} characters cut]"


def parse_verdict(text: str) -> CheckOutcome:
    """The checker's verdict from its reply: the JSON object if present, else keywords in the text."""
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        try:
            data = json.loads(text[start:end + 1])
        except json.JSONDecodeError:
            data = None
        verdict = VERDICTS.get(str(data.get("verdict", "")).lower()) if isinstance(data, dict) else None
        if verdict is not None:
            return CheckOutcome(verdict, str(data.get("feedback", "")))
    low = text.lower()
    if "unsatisfiable" in low:
        return CheckOutcome("unsatisfiable", text)
    if '"pass"' in low or low.strip().startswith("pass"):
        return CheckOutcome("pass", text)
    return CheckOutcome("fail", text or "the checker gave no verdict")


def symbolic_check(plan: Plan, query: Query, toolkit: Toolkit) -> CheckOutcome:
    """The evaluator's commonsense and hard checks as a verdict with one feedback line per failure."""
    from utp_env.evaluation import evaluate

    report = evaluate(plan, query, toolkit.db)
    failed = [(f"{group} check {name}", check.reason or "failed")
              for group, checks in (("commonsense", report.commonsense), ("hard", report.hard))
              for name, check in checks.items() if check.passed is False]
    if not failed:
        return CheckOutcome("pass", "all applicable commonsense and hard checks pass")
    feedback = "\n".join(f"- {what}: {why}" for what, why in failed)
    missing = report.commonsense.get("within_sandbox")
    verdict: Verdict = "unsatisfiable" if missing is not None and missing.passed is False else "fail"
    return CheckOutcome(verdict, feedback)


class AtlasAgent(ChatAgent[AtlasSettings]):
    """Search agent, constraint manager, planner, checker and search advisor (see the module docstring)."""

    name = "atlas"
    Settings = AtlasSettings

    def __init__(self, chat_model: Any | None = None, sleep: Callable[[float], None] = time.sleep,
                 uncertainty_config: UncertaintyConfig | None = None, **settings: Any) -> None:
        super().__init__(chat_model, sleep, uncertainty_config, **settings)
        if self.settings.uncertainty:
            self.name = "atlas_uncertainty"

    # ------------------------------------------------------------ roles

    def search(self, ep: Episode, advice: str | None = None) -> None:
        """Search rounds until the model stops calling tools or the L budget is spent."""
        s = self.settings
        if not ep.search_messages:
            ep.search_messages = [SystemMessage(prompts.SEARCH_AGENT), HumanMessage(prompts.query_text(ep.query))]
        if advice is not None:
            ep.search_messages.append(HumanMessage(prompts.SEARCH_ADVICE.format(advice=advice)))
        bound = self.model.bind_tools(ep.toolkit.schemas())
        while ep.rounds < s.L:
            ep.rounds += 1
            reply = ep.session.invoke("search_agent", ep.search_messages, model=bound)
            ep.search_messages.append(history_reply(reply))
            calls = list(getattr(reply, "tool_calls", None) or [])
            invalid = list(getattr(reply, "invalid_tool_calls", None) or [])
            if not calls and not invalid:
                return
            for i, bad in enumerate(invalid):
                name = bad.get("name") or ""
                text = (f"Error: the arguments of this call of {name or 'a tool'} are not a JSON object "
                        f"({bad.get('error') or 'they do not parse'}): {str(bad.get('args'))[:200]!r}. "
                        "Call the tool again with its arguments as one JSON object.")
                ep.toolkit.trace.add(TraceStep(kind="tool_call", name=name, result=text[:200], ok=False,
                                               args={"invalid_arguments": str(bad.get("args"))}))
                ep.search_messages.append(ToolMessage(content=text, tool_call_id=invalid_call_id(bad, i)))
            for i, call in enumerate(calls):
                if i >= s.max_calls_per_round:
                    text = f"not executed: at most {s.max_calls_per_round} tool calls per round"
                else:
                    result = ep.toolkit.call(call.get("name", ""), call.get("args") or {})
                    text = result.text
                    ep.findings.append(f"### {call.get('name')}({json.dumps(call.get('args') or {})})\n{text}")
                ep.search_messages.append(ToolMessage(content=text, tool_call_id=call.get("id") or f"call_{i}"))
        ep.toolkit.trace.note(f"search budget L={s.L} spent")

    def constraints(self, ep: Episode) -> str:
        reply = ep.session.invoke("constraint_manager", [
            SystemMessage(prompts.constraint_manager_text(self.config)),
            HumanMessage(prompts.query_text(ep.query) + "\n\nGathered information:\n"
                         + ep.information(self.settings.max_info_chars))])
        return message_text(reply)

    def plan_messages(self, ep: Episode, constraints: str) -> list[Any]:
        s = self.settings
        human = "\n\n".join([prompts.example_block(s.prompt, s.uncertainty), "Reference information:\n"
                             + ep.information(self.settings.max_info_chars),
                             prompts.PLANNER_EXTRA.format(constraints=constraints),
                             prompts.query_text(ep.query), "Travel plan (JSON):"])
        return [SystemMessage(prompts.instructions(ep.query, self.config, s.uncertainty, s.prompt)),
                HumanMessage(human)]

    def check(self, ep: Episode, plan: Plan, constraints: str) -> CheckOutcome:
        if self.settings.checker == "symbolic":
            outcome = symbolic_check(plan, ep.query, ep.toolkit)
        else:
            reply = ep.session.invoke("checker", [
                SystemMessage(prompts.checker_text(self.config)),
                HumanMessage(f"{prompts.query_text(ep.query)}\n\nConstraints:\n{constraints}\n\nGathered information:\n"
                             f"{ep.information(self.settings.max_info_chars)}\n\nCandidate plan:\n"
                             f"{plan_to_json(plan, indent=None)}")])
            outcome = parse_verdict(message_text(reply))
        ep.toolkit.trace.note(f"checker ({self.settings.checker}): {outcome.verdict}: {outcome.feedback[:150]}")
        return outcome

    def advise(self, ep: Episode, feedback: str) -> str:
        reply = ep.session.invoke("search_advisor", [
            SystemMessage(prompts.SEARCH_ADVISOR.format(feedback=feedback)),
            HumanMessage(prompts.query_text(ep.query) + "\n\nGathered so far:\n"
                         + ep.information(self.settings.max_info_chars // 4))])
        return message_text(reply)

    # ------------------------------------------------------------ the loop

    def run(self, query: Query, toolkit: Toolkit, seed: int | None = None) -> AgentResult:
        self.start_episode(toolkit)
        trace: Trace = toolkit.trace
        ep = Episode(query, toolkit, ModelSession(self.model, trace, self.settings.billed_price))
        try:
            return self._loop(ep, trace)
        except Exception as exc:  # a model error ends the run; the last parsed plan (if any) is kept
            error = f"model call failed: {describe_failure(exc)}"
            reason = failure_reason(exc)
            if ep.last_plan is None:
                return AgentResult(plan=None, raw_output=ep.last_raw, trace=trace, error=error,
                                   termination_reason=reason)
            return AgentResult(plan=ep.last_plan, raw_output=ep.last_raw, trace=trace, error=error,
                               repairs=ep.last_repairs,
                               termination_reason=reason if reason == "infrastructure_error" else None)

    def _loop(self, ep: Episode, trace: Trace) -> AgentResult:
        s = self.settings
        self.search(ep)
        constraints = self.constraints(ep)
        messages = self.plan_messages(ep, constraints)
        last_error, raw = "no plan written", ""
        for attempt in range(s.K + 1):
            reply = ep.session.invoke("planner" if attempt == 0 else "planner_revision", messages)
            raw = message_text(reply)
            limit = truncation(reply, s.max_tokens)
            cut = None if limit is None else TRUNCATED.format(limit=limit)
            try:
                plan, repairs = parse_reply(raw, ep.query, ep.toolkit)
                if cut is not None:
                    raise PlanFormatError(cut)
            except PlanFormatError as exc:
                last_error = f"the plan could not be read: {exc}"
                outcome = CheckOutcome("fail", last_error + ". Follow the JSON format of the example exactly.")
                trace.note(f"planner output {attempt + 1} did not parse: {exc}")
            else:
                ep.last_plan, ep.last_raw, ep.last_repairs = plan, raw, repairs
                outcome = self.check(ep, plan, constraints)
                if outcome.verdict == "pass":
                    return AgentResult(plan=plan, raw_output=raw, trace=trace, repairs=repairs)
            if attempt == s.K:
                break
            if outcome.verdict == "unsatisfiable" and ep.rounds < s.L:
                advice = self.advise(ep, outcome.feedback)
                self.search(ep, advice)
                constraints = self.constraints(ep)
                messages = self.plan_messages(ep, constraints)
            messages = [*messages, AIMessage(raw), HumanMessage(prompts.REVISE.format(feedback=outcome.feedback))]
        if ep.last_plan is None:
            return AgentResult(plan=None, raw_output=raw, trace=trace,
                               error=f"plan not delivered after {s.K + 1} planner attempt(s): {last_error}")
        trace.note(f"revision budget K={s.K} spent; delivering the last plan the checker did not pass")
        return AgentResult(plan=ep.last_plan, raw_output=ep.last_raw, trace=trace, repairs=ep.last_repairs)
