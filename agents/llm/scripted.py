"""A scripted chat model: the LLM agents end to end with no network and no key (`model: scripted:reference`).

`utp-env run --agent tool_calling --set model=scripted:reference --profile mini --limit 3` (or `direct`,
`atlas`) runs the whole LLM pipeline offline: the agent's prompts, tool calls, parsing, the run folder.
The model answers from the dataset's reference plan of the query the conversation is about (found by
its query id or its text), the way a competent model would, in as few turns as the agent allows:

- with tools bound: first a look at the plan (`view_plan` for the env's tools, `list_cities` for the
  lookup tools), then the reference plan with `submit_plan` (the env's tools) or a line saying the
  search is done (the lookup tools);
- without tools: the reference plan as JSON text (the direct agent and ATLAS's planner), and the
  short answers ATLAS's checker, constraint manager and search advisor expect.

Every reply carries a token count (words and punctuation), so usage and cost are known offline. It
is a harness for trying pipelines, not a baseline: its plans are the reference planner's.
The decision is `utp_env.scripted.scripted_reply` (shared with the Inspect model and the tests'
scripted server); this module wraps it as a LangChain chat model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

from utp_env.scripted import ENDING, SCRIPTS, count_tokens, reference_plan_for, scripted_reply


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return str(content or "")


class ScriptedChatModel(BaseChatModel):
    """`scripted:reference` (module docstring). The agent gives it its database (`use_database`) when an
    episode starts; until then it opens the embedded sandbox of `sandbox_profile`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: str = Field(default="reference", description="What it plays (SCRIPTS)")
    sandbox_profile: str = Field(default="full", description="Sandbox whose reference plans it plays when no "
                                                             "database was given")
    tool_names: list[str] = Field(default_factory=list)
    _db: Any = PrivateAttr(default=None)

    @property
    def _llm_type(self) -> str:
        return "utp-scripted"

    def use_database(self, db: Any) -> None:
        """Play the reference plans of this database (the agent's toolkit's)."""
        self._db = db

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        names = [t["function"]["name"] if isinstance(t, dict) and "function" in t else
                 (t.get("name") if isinstance(t, dict) else getattr(t, "name", str(t))) for t in tools]
        bound = self.model_copy(update={"tool_names": names})
        bound._db = self._db
        return bound

    def plan_for(self, conversation: str) -> str | None:
        """The reference plan (JSON text) of the query the conversation is about, or None."""
        from utp_env.dataset import dataset_of, open_dataset

        dataset = dataset_of(self._db) if self._db is not None else open_dataset(None, profile=self.sandbox_profile)
        return reference_plan_for(dataset, conversation)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        system = _text(messages[0]) if messages and messages[0].type == "system" else ""
        conversation = "\n".join(_text(m) for m in messages)
        answered = any(isinstance(m, ToolMessage) for m in messages)
        last_tool = bool(messages) and isinstance(messages[-1], ToolMessage)
        submitted = any(c.get("name") in ENDING for m in messages if isinstance(m, AIMessage)
                        for c in m.tool_calls or [])
        reply = scripted_reply(system, conversation, self.tool_names, answered, last_tool, self.plan_for, submitted)
        calls = [{"name": name, "args": json.loads(args), "id": f"call_{len(messages)}_{i}", "type": "tool_call"}
                 for i, (name, args) in enumerate(reply.tool_calls)]
        out_tokens = count_tokens(reply.content) + sum(count_tokens(a) for _, a in reply.tool_calls)
        inp = count_tokens(conversation)
        message = AIMessage(content=reply.content, tool_calls=calls, response_metadata={"finish_reason": "stop"},
                            usage_metadata={"input_tokens": inp, "output_tokens": out_tokens,
                                            "total_tokens": inp + out_tokens})
        return ChatResult(generations=[ChatGeneration(message=message)])


def scripted_model(spec_model: str) -> ScriptedChatModel:
    """The model of a `scripted:NAME` spec; ValueError naming the scripts for another NAME."""
    name = spec_model.split(":", 1)[1] if ":" in spec_model else spec_model
    script, _, profile = name.partition("@")
    if script not in SCRIPTS:
        raise ValueError(f"model {spec_model!r}: unknown script {script!r}; scripted models: "
                         + ", ".join(f"scripted:{s}" for s in SCRIPTS))
    return ScriptedChatModel(script=script, sandbox_profile=profile or "full")
