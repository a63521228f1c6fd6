"""Chat-model configuration for the LLM baselines: build, retry, and account for usage and cost.

`ModelSpec` is the validated model section of an agent config (`model: openai:gpt-4o-mini` or a
`base_url` of an OpenAI-compatible server such as vLLM, Ollama or llama.cpp). `make_chat_model`
turns it into a LangChain chat model, with a clear error when the provider package or the API key
is missing. `RetryingModel` wraps any chat model (real or fake) with retries and exponential
backoff on transient failures; the sleep function is injectable so tests never sleep.
`usage_of` and `cost_of` read `AIMessage.usage_metadata`: unknown usage stays `None`, never 0.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

# provider prefix of "provider:model" -> (pip package, module, chat class, API-key env var or None)
PROVIDERS: dict[str, tuple[str, str, str, str | None]] = {
    "openai": ("langchain-openai", "langchain_openai", "ChatOpenAI", "OPENAI_API_KEY"),
    "azure_openai": ("langchain-openai", "langchain_openai", "AzureChatOpenAI", "AZURE_OPENAI_API_KEY"),
    "anthropic": ("langchain-anthropic", "langchain_anthropic", "ChatAnthropic", "ANTHROPIC_API_KEY"),
    "google_genai": ("langchain-google-genai", "langchain_google_genai", "ChatGoogleGenerativeAI",
                     "GOOGLE_API_KEY"),
    "mistralai": ("langchain-mistralai", "langchain_mistralai", "ChatMistralAI", "MISTRAL_API_KEY"),
    "groq": ("langchain-groq", "langchain_groq", "ChatGroq", "GROQ_API_KEY"),
    "together": ("langchain-together", "langchain_together", "ChatTogether", "TOGETHER_API_KEY"),
    "fireworks": ("langchain-fireworks", "langchain_fireworks", "ChatFireworks", "FIREWORKS_API_KEY"),
    "deepseek": ("langchain-deepseek", "langchain_deepseek", "ChatDeepSeek", "DEEPSEEK_API_KEY"),
    "ollama": ("langchain-ollama", "langchain_ollama", "ChatOllama", None),
    "huggingface": ("langchain-huggingface", "langchain_huggingface", "ChatHuggingFace", None),
}
# HTTP statuses and exception class names that mean "try again later", not "your request is wrong"
# (a refused connection excepted: `connection_refused`).
# A name matches anywhere in the exception's MRO, so subclasses count: langchain-openai 1.x raises
# OpenAIConnectionError / OpenAIRateLimitError / OpenAIAPIError, subclasses of openai's
# APIConnectionError (APITimeoutError is one too), RateLimitError and InternalServerError.
TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
TRANSIENT_NAMES = frozenset({
    "RateLimitError", "APIConnectionError", "APITimeoutError", "InternalServerError",  # openai, anthropic
    "ModelConnectionError", "ModelTimeoutError", "ModelRateLimitError",  # langchain_core.exceptions
    "ServiceUnavailableError", "OverloadedError",
    "TimeoutException", "NetworkError", "RemoteProtocolError",  # httpx (ConnectError, ReadTimeout, ... subclass these)
    "Timeout", "ConnectionError",  # requests
    "JSONDecodeError",  # a 200 whose body is cut short: the openai client parses it unguarded
})


class ModelConfigError(ValueError):
    """The model cannot be built as configured (missing package, missing key, bad spec)."""


class Price(BaseModel):
    """USD per million tokens; used for `cost_usd` in traces.

    `model` names the model the price is for (as the spec's `model` is written, e.g.
    `openai:gpt-4o-mini`): a config's price then bills only that model, and `--set model=...`
    of another model leaves the cost unknown (None) instead of billing it at the wrong price.
    Without `model` the price applies to whatever model the spec names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(default=None, description="The model this price is for; None: any model")
    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class ModelSpec(BaseModel):
    """Which chat model to call and how (timeouts, retries, sampling, price).

    Either `model` is `provider:model` (e.g. `openai:gpt-4o-mini`, `anthropic:claude-3-5-haiku-latest`)
    or `base_url` points at an OpenAI-compatible server and `model` is the served model name.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1, description="'provider:model', or the model name served at base_url")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    api_key_env: str | None = Field(default=None, description="Env var holding the API key (default: the provider's)")
    temperature: float = Field(default=0.0, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    timeout: float = Field(default=120.0, gt=0, description="Seconds per request")
    retries: int = Field(default=3, ge=0, le=20, description="Extra attempts after a transient failure")
    backoff_initial: float = Field(default=1.0, ge=0, description="Seconds before the first retry")
    backoff_max: float = Field(default=30.0, ge=0, description="Cap on one wait")
    price: Price | None = Field(default=None, description="Optional price; cost is None without it")

    @model_validator(mode="after")
    def _provider_known(self) -> ModelSpec:
        if self.base_url is None and ":" not in self.model:
            raise ValueError(f"model {self.model!r} needs a provider prefix such as 'openai:{self.model}', "
                             "or set base_url for an OpenAI-compatible server")
        return self

    @property
    def billed_price(self) -> Price | None:
        """The price that applies to this spec's model: `price` unless it names another model."""
        if self.price is None or self.price.model in (None, self.model):
            return self.price
        return None

    def price_note(self) -> str | None:
        """Why the cost is unknown though a price is configured (None when it is not the case)."""
        if self.price is not None and self.billed_price is None:
            return (f"cost unknown: the configured price is for {self.price.model}, the model is {self.model} "
                    f"(set price={{model: {self.model}, input_per_mtok: ..., output_per_mtok: ...}} to bill it)")
        return None

    @property
    def provider(self) -> str:
        return "openai" if self.base_url is not None else self.model.split(":", 1)[0]

    @property
    def model_name(self) -> str:
        return self.model if self.base_url is not None else self.model.split(":", 1)[1]


def as_spec(model: str | dict[str, Any] | ModelSpec) -> ModelSpec:
    """A ModelSpec from a 'provider:model' string, a mapping, or a spec."""
    if isinstance(model, ModelSpec):
        return model
    if isinstance(model, str):
        return ModelSpec(model=model)
    return ModelSpec.model_validate(model)


def _import(module: str, package: str, what: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ModelConfigError(f"{what} needs the package {package!r}: pip install {package} "
                               "(or pip install 'utp-env[llm]')") from None


def _api_key(spec: ModelSpec, default_env: str | None, required: bool) -> str | None:
    env = spec.api_key_env or default_env
    if env is None:
        return None
    key = os.environ.get(env)
    if not key and required:
        raise ModelConfigError(f"model {spec.model!r} needs an API key in the environment variable {env}: "
                               f"export {env}=... (or set api_key_env to the variable that holds it)")
    return key or None


def make_chat_model(model: str | dict[str, Any] | ModelSpec) -> Any:
    """Build the LangChain chat model of a spec (not yet wrapped in retries; see `RetryingModel`).

    `base_url` -> `langchain_openai.ChatOpenAI(base_url=...)` (a key is optional: local servers
    rarely need one). `scripted:reference` -> the offline scripted model (agents/llm/scripted.py: no
    network, no key). `provider:model` -> `langchain.chat_models.init_chat_model` when `langchain`
    is installed, else the provider's own package directly. Raises ModelConfigError naming the
    package to install or the env var to set.
    """
    spec = as_spec(model)
    if spec.base_url is None and spec.provider == "scripted":  # offline: agents/llm/scripted.py
        from utp_env.agents.llm.scripted import scripted_model

        try:
            return scripted_model(spec.model)
        except ValueError as exc:
            raise ModelConfigError(str(exc)) from None
    common: dict[str, Any] = {"temperature": spec.temperature, "timeout": spec.timeout, "max_retries": 0}
    if spec.max_tokens is not None:
        common["max_tokens"] = spec.max_tokens
    if spec.base_url is not None:
        module = _import("langchain_openai", "langchain-openai", f"base_url model {spec.model!r}")
        key = _api_key(spec, spec.api_key_env, required=spec.api_key_env is not None)
        return module.ChatOpenAI(model=spec.model, base_url=spec.base_url, api_key=key or "not-needed", **common)
    provider = spec.provider
    package, module_name, cls_name, key_env = PROVIDERS.get(provider, (f"langchain-{provider}", "", "", None))
    # a missing package is reported before a missing key: installing comes first
    if module_name:
        _import(module_name, package, f"provider {provider!r}")
    _api_key(spec, key_env, required=key_env is not None)
    try:
        chat_models = importlib.import_module("langchain.chat_models")
    except ImportError:
        chat_models = None
    if chat_models is not None:
        try:
            return chat_models.init_chat_model(spec.model, **common)
        except ImportError as exc:  # a provider outside PROVIDERS: init_chat_model names its package
            raise ModelConfigError(f"provider {provider!r}: {exc}") from None
    if not module_name:
        raise ModelConfigError(f"provider {provider!r} needs the package 'langchain' (pip install langchain "
                               f"{package}); known providers without it: {', '.join(sorted(PROVIDERS))}")
    module = _import(module_name, package, f"provider {provider!r}")
    return getattr(module, cls_name)(model=spec.model_name, **common)


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from or during, innermost last (cycles cut)."""
    chain: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and all(cur is not seen for seen in chain):
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    return chain


def connection_refused(exc: BaseException) -> bool:
    """Whether a model call failed because nothing listens at the address (a dead or mistyped
    `base_url`): `ConnectionRefusedError` anywhere in the exception's chain (openai wraps httpx's
    ConnectError, which wraps it). Not retried: a server that is not running stays so for the
    seconds a backoff waits, and every episode would wait the whole ladder."""
    return any(isinstance(e, ConnectionRefusedError) for e in _causes(exc))


def request_url(exc: BaseException) -> str | None:
    """The URL of the request a model call failed on, when its error carries one (openai's
    APIError and httpx's RequestError have a `request`)."""
    for e in _causes(exc):
        try:
            url = getattr(getattr(e, "request", None), "url", None)
        except RuntimeError:  # httpx: an error raised without its request
            url = None
        if url is not None:
            return str(url)
    return None


def describe_failure(exc: BaseException) -> str:
    """One line for a model call that failed for good: `Type: message`, then the URL it was sent to
    (so "Connection error." names the server) and, when nothing listens there, that the
    connection was refused and what to check."""
    text = f"{type(exc).__name__}: {exc}"
    url = request_url(exc)
    if connection_refused(exc):
        return f"{text} (connection refused at {url or 'the server'}: is the server running, and is base_url right?)"
    return f"{text} ({url})" if url and url not in text else text


def is_transient(exc: BaseException) -> bool:
    """Whether an exception from a model call is worth retrying (timeouts, connection errors, rate
    limits, 5xx, a truncated body). Decided by type, along the MRO, so provider subclasses count;
    then by the HTTP status an API error carries. A refused connection is not transient
    (`connection_refused`)."""
    if connection_refused(exc):
        return False
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    if any(cls.__name__ in TRANSIENT_NAMES for cls in type(exc).__mro__):
        return True
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    return isinstance(status, int) and status in TRANSIENT_STATUS


def failure_reason(exc: BaseException) -> str:
    """How an episode whose model call failed for good ends: `infrastructure_error` when the model server
    could not answer (nothing listening, timeouts, 5xx, rate limits after the retries: `is_transient` or
    `connection_refused`), which `utp-env run` retries when the run is resumed; else `agent_error` (a bad
    request, a refused key, the agent's own code)."""
    return "infrastructure_error" if connection_refused(exc) or is_transient(exc) else "agent_error"


def backoff_delays(retries: int, initial: float, maximum: float) -> list[float]:
    """Exponential backoff: initial, 2·initial, 4·initial, ... capped at `maximum` (no jitter: reproducible)."""
    return [min(maximum, initial * 2**i) for i in range(retries)]


class RetryingModel:
    """A chat model whose `invoke` retries transient failures with exponential backoff.

    Non-transient errors (bad request, auth, a scripted test failure) propagate at once.
    `bind_tools` returns a RetryingModel around the bound model, so tool-calling keeps the retries.
    """

    def __init__(self, model: Any, retries: int = 3, backoff_initial: float = 1.0, backoff_max: float = 30.0,
                 sleep: Callable[[float], None] = time.sleep,
                 retry_if: Callable[[BaseException], bool] = is_transient) -> None:
        self.model = model
        self.delays = backoff_delays(retries, backoff_initial, backoff_max)
        self.sleep = sleep
        self.retry_if = retry_if
        self.attempts = 0  # total invoke attempts, for diagnostics

    @classmethod
    def from_spec(cls, spec: ModelSpec, model: Any | None = None,
                  sleep: Callable[[float], None] = time.sleep) -> RetryingModel:
        """Wrap `model` (default: `make_chat_model(spec)`) with the spec's retry settings."""
        return cls(model if model is not None else make_chat_model(spec), spec.retries, spec.backoff_initial,
                   spec.backoff_max, sleep)

    def invoke(self, messages: Any, **kwargs: Any) -> Any:
        for wait in [*self.delays, None]:
            self.attempts += 1
            try:
                return self.model.invoke(messages, **kwargs)
            except Exception as exc:
                if wait is None or not self.retry_if(exc):
                    raise
                self.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RetryingModel:
        """The model with `tools` bound, keeping the retries; ModelConfigError if it cannot call tools."""
        try:
            inner = self.model.bind_tools(tools, **kwargs)
        except NotImplementedError:
            raise ModelConfigError(f"the chat model {type(self.model).__name__} does not support tool calling "
                                   "(bind_tools); the atlas and tool_calling agents need one. Use a tool-calling "
                                   "model, or the direct agent") from None
        bound = RetryingModel(inner, sleep=self.sleep, retry_if=self.retry_if)
        bound.delays = self.delays
        return bound


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one model call; a field is None when the model did not report it."""

    input_tokens: int | None
    output_tokens: int | None


def usage_of(message: Any) -> Usage:
    """Token usage from `AIMessage.usage_metadata`; both None when the model reports nothing."""
    meta = getattr(message, "usage_metadata", None)
    if not meta:
        return Usage(None, None)
    get = meta.get if isinstance(meta, dict) else lambda k: getattr(meta, k, None)
    inp, out = get("input_tokens"), get("output_tokens")
    return Usage(int(inp) if inp is not None else None, int(out) if out is not None else None)


def cost_of(usage: Usage, price: Price | None) -> float | None:
    """USD cost of one call, None when the price or either token count is unknown."""
    if price is None or usage.input_tokens is None or usage.output_tokens is None:
        return None
    return (usage.input_tokens * price.input_per_mtok + usage.output_tokens * price.output_per_mtok) / 1e6


def add_optional(total: float | None, value: float | None) -> float | None:
    """Sum that stays None until some value is known (unknown + known = known part)."""
    if value is None:
        return total
    return value if total is None else total + value


# ---------------------------------------------------------------- agent-side: settings and traced calls


class LLMSettings(ModelSpec):
    """The model settings every LLM agent accepts (a ModelSpec); agents extend it with their own."""

    def model_spec(self) -> ModelSpec:
        return ModelSpec(**{name: getattr(self, name) for name in ModelSpec.model_fields})


def message_text(message: Any) -> str:
    """The text of a model reply: string content, or the text blocks of list content; reasoning
    blocks (`<think>...</think>`) are dropped so the parser sees the answer only."""
    content = getattr(message, "content", message)
    if isinstance(content, list):
        content = "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content
                          if isinstance(b, str) or (isinstance(b, dict) and b.get("type", "text") == "text"))
    text = str(content or "")
    while "<think>" in text and "</think>" in text:
        start, end = text.index("<think>"), text.index("</think>") + len("</think>")
        text = text[:start] + text[end:]
    return text.strip()


def truncation(reply: Any, max_tokens: int | None) -> str | None:
    """When a model reply was cut off at the token limit (`finish_reason` 'length', Anthropic's
    `stop_reason` 'max_tokens'): ' (finish_reason length, max_tokens N)' to name it in a message or a
    record; None for a reply that ended on its own."""
    metadata = getattr(reply, "response_metadata", None) or {}
    if metadata.get("finish_reason") != "length" and metadata.get("stop_reason") != "max_tokens":
        return None
    return " (finish_reason length" + ("" if max_tokens is None else f", max_tokens {max_tokens}") + ")"


def invalid_call_id(call: dict[str, Any], i: int) -> str:
    """The id of the i-th invalid tool call of a reply (its own, else one made up), under which it
    is answered and sent back in the history."""
    return str(call.get("id") or f"invalid_call_{i}")


def history_reply(reply: Any) -> Any:
    """A model reply as it goes back into the conversation: a tool call whose arguments were not JSON
    (LangChain's `invalid_tool_calls`) is sent back with `{}` as its arguments (its tool message says
    what was wrong and quotes them), so a server that re-parses the history, as vLLM does, does not
    refuse every later request over the model's broken JSON. Other replies are returned as they are."""
    invalid = list(getattr(reply, "invalid_tool_calls", None) or [])
    if not invalid:
        return reply
    fixed: list[dict[str, Any]] = [
        {"name": bad.get("name") or "unknown_tool", "args": {}, "id": invalid_call_id(bad, i), "type": "tool_call"}
        for i, bad in enumerate(invalid)]
    extra = {k: v for k, v in (reply.additional_kwargs or {}).items() if k != "tool_calls"}
    return reply.model_copy(update={"tool_calls": [*(reply.tool_calls or []), *fixed], "invalid_tool_calls": [],
                                    "additional_kwargs": extra})


class ModelSession:
    """Calls one chat model on behalf of an agent and records each call in the agent's trace.

    Every call adds a `model_call` step (the role name, message count, a summary of the reply,
    duration, ok) and sums tokens and cost into the trace: a sum stays None until some call
    reports usage. A failing call is recorded (ok False) and its exception re-raised.
    """

    def __init__(self, model: Any, trace: Any, price: Price | None = None) -> None:
        self.model, self.trace, self.price = model, trace, price

    def invoke(self, role: str, messages: Sequence[Any], model: Any | None = None) -> Any:
        from utp_env.agents.base import SUMMARY_CHARS, TraceStep

        started = time.perf_counter()
        try:
            reply = (model or self.model).invoke(list(messages))
        except Exception as exc:
            self.trace.add(TraceStep(kind="model_call", name=role, args={"messages": len(messages)},
                                     result=f"{type(exc).__name__}: {exc}"[:SUMMARY_CHARS], ok=False,
                                     duration_s=time.perf_counter() - started))
            raise
        usage = usage_of(reply)
        calls = [c.get("name") for c in getattr(reply, "tool_calls", None) or []]
        text = message_text(reply)
        summary = (f"tool calls: {', '.join(map(str, calls))}; " if calls else "") + text
        if truncation(reply, None) is not None:  # named in the record's trace (by_name) too
            role = f"{role} (cut at the token limit)"
        self.trace.add(TraceStep(kind="model_call", name=role,
                                 args={"messages": len(messages), "input_tokens": usage.input_tokens,
                                       "output_tokens": usage.output_tokens},
                                 result=summary[:SUMMARY_CHARS], duration_s=time.perf_counter() - started))
        self.trace.input_tokens = add_optional(self.trace.input_tokens, usage.input_tokens)
        self.trace.output_tokens = add_optional(self.trace.output_tokens, usage.output_tokens)
        self.trace.cost_usd = add_optional(self.trace.cost_usd, cost_of(usage, self.price))
        return reply


def build_model(settings: LLMSettings, chat_model: Any | None = None,
                sleep: Callable[[float], None] = time.sleep) -> RetryingModel:
    """The retrying chat model of an agent: `chat_model` if given (tests, custom models), else built
    from the settings (raising ModelConfigError when a package or key is missing)."""
    return RetryingModel.from_spec(settings.model_spec(), chat_model, sleep)


SettingsT = TypeVar("SettingsT", bound=LLMSettings)


class ChatAgent(Generic[SettingsT]):
    """What every LLM agent shares: validated settings (`Settings`, a subclass of LLMSettings), the
    retrying chat model they describe (or an injected one, e.g. a fake in tests) and the
    uncertainty parameters its prompts quote. An agent names its settings class twice, as the
    type parameter and as `Settings`: `class DirectAgent(ChatAgent[DirectSettings])`."""

    name = "chat"
    Settings: type[SettingsT]

    def __init__(self, chat_model: Any | None = None, sleep: Callable[[float], None] = time.sleep,
                 uncertainty_config: Any | None = None, **settings: Any) -> None:
        from utp_env.config import load_uncertainty

        self.settings = self.Settings.model_validate(settings)
        self.model = build_model(self.settings, chat_model, sleep)
        note = self.settings.price_note()
        if note:  # one line where the agent is built (the run's records carry cost_usd None)
            print(f"utp-env: note: agent {self.name}: {note}", file=sys.stderr)
        self.config = uncertainty_config or load_uncertainty()

    def start_episode(self, toolkit: Any) -> None:
        """Tell a model that answers from the benchmark's own data (the scripted model,
        agents/llm/scripted.py) which database this episode is on; other models ignore it."""
        inner = getattr(self.model, "model", None)
        use = getattr(inner, "use_database", None)
        if callable(use):
            use(toolkit.db)
