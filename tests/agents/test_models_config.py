"""Model configuration: clear errors for missing packages and keys, retries with backoff, usage and cost."""

from __future__ import annotations

import builtins
import json
import sys
import types

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage

from utp_env.agents.llm import models
from utp_env.agents.llm.models import (
    ModelConfigError,
    ModelSpec,
    Price,
    RetryingModel,
    Usage,
    add_optional,
    as_spec,
    backoff_delays,
    cost_of,
    is_transient,
    make_chat_model,
    usage_of,
)


def _hide_modules(monkeypatch: pytest.MonkeyPatch, *prefixes: str) -> None:
    """Make importing any module under `prefixes` fail, as if the package were not installed."""
    real_import = builtins.__import__
    for name in list(sys.modules):
        if name.split(".")[0] in prefixes:
            monkeypatch.delitem(sys.modules, name)

    def fake_import(name, *args, **kwargs):
        if name.split(".")[0] in prefixes:
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    real_import_module = models.importlib.import_module

    def fake_import_module(name, *args, **kwargs):
        if name.split(".")[0] in prefixes:
            raise ImportError(f"No module named {name!r}")
        return real_import_module(name, *args, **kwargs)

    monkeypatch.setattr(models.importlib, "import_module", fake_import_module)


def test_missing_provider_package_names_the_pip_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    _hide_modules(monkeypatch, "langchain", "langchain_openai")
    with pytest.raises(ModelConfigError, match=r"pip install langchain-openai"):
        make_chat_model("openai:gpt-4o-mini")
    with pytest.raises(ModelConfigError, match=r"pip install langchain-openai"):
        make_chat_model({"model": "qwen3-14b", "base_url": "http://localhost:8000/v1"})


def test_missing_key_names_the_env_var(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        make_chat_model("openai:gpt-4o-mini")
    # the package is checked first (test below); with it present, the missing key is named
    monkeypatch.setitem(sys.modules, "langchain_anthropic", types.ModuleType("langchain_anthropic"))
    with pytest.raises(ModelConfigError, match="ANTHROPIC_API_KEY"):
        make_chat_model("anthropic:claude-3-5-haiku-latest")
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="MY_KEY"):
        make_chat_model({"model": "m", "base_url": "http://localhost:1/v1", "api_key_env": "MY_KEY"})


def test_provider_package_used_directly_without_langchain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `langchain`, `openai:` builds langchain_openai.ChatOpenAI with the spec's settings."""
    made = {}

    class ChatOpenAI:
        def __init__(self, **kwargs):
            made.update(kwargs)

    fake_pkg = types.ModuleType("langchain_openai")
    fake_pkg.ChatOpenAI = ChatOpenAI
    _hide_modules(monkeypatch, "langchain")
    monkeypatch.setitem(sys.modules, "langchain_openai", fake_pkg)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = make_chat_model(ModelSpec(model="openai:gpt-4o-mini", temperature=0.3, max_tokens=99, timeout=7))
    assert isinstance(model, ChatOpenAI)
    assert made == {"model": "gpt-4o-mini", "temperature": 0.3, "timeout": 7.0, "max_retries": 0, "max_tokens": 99}
    made.clear()
    make_chat_model({"model": "qwen3", "base_url": "http://localhost:8000/v1"})
    assert made["base_url"] == "http://localhost:8000/v1" and made["model"] == "qwen3"


def test_spec_needs_a_provider_or_base_url() -> None:
    with pytest.raises(ValueError, match="provider prefix"):
        as_spec("gpt-4o-mini")
    with pytest.raises(ValueError, match="temperatur"):
        ModelSpec(model="openai:x", temperatur=0.1)
    assert as_spec({"model": "m", "base_url": "http://x/v1"}).provider == "openai"


class Flaky:
    """Fails `failures` times with the given exception, then answers."""

    def __init__(self, failures: int, exc: Exception) -> None:
        self.failures, self.exc, self.calls = failures, exc, 0

    def invoke(self, messages, **kwargs):
        self.calls += 1
        if self.calls <= self.failures:
            raise self.exc
        return AIMessage(content="ok")


def test_retry_with_exponential_backoff_on_transient_errors() -> None:
    slept: list[float] = []
    flaky = Flaky(3, TimeoutError("read timed out"))
    model = RetryingModel(flaky, retries=4, backoff_initial=0.5, backoff_max=1.5, sleep=slept.append)
    assert model.invoke("hi").content == "ok"
    assert flaky.calls == 4
    assert slept == [0.5, 1.0, 1.5]  # 0.5, 1.0, 2.0 capped at 1.5


def test_retry_gives_up_after_the_budget_and_skips_permanent_errors() -> None:
    slept: list[float] = []
    flaky = Flaky(10, ConnectionError("refused"))
    with pytest.raises(ConnectionError):
        RetryingModel(flaky, retries=2, backoff_initial=1, sleep=slept.append).invoke("hi")
    assert flaky.calls == 3 and slept == [1, 2]
    permanent = Flaky(1, ValueError("bad request"))
    with pytest.raises(ValueError):
        RetryingModel(permanent, retries=5, sleep=slept.append).invoke("hi")
    assert permanent.calls == 1


def test_transient_classification() -> None:
    class RateLimitError(Exception):
        pass

    class HTTPError(Exception):
        def __init__(self, status: int) -> None:
            self.status_code = status

    assert is_transient(RateLimitError()) and is_transient(HTTPError(503)) and is_transient(TimeoutError())
    assert not is_transient(HTTPError(401)) and not is_transient(RuntimeError("boom"))
    assert backoff_delays(4, 1.0, 5.0) == [1.0, 2.0, 4.0, 5.0]


def test_retrying_model_wraps_a_langchain_fake() -> None:
    model = RetryingModel(FakeListChatModel(responses=["a", "b"]), sleep=lambda s: None)
    assert [model.invoke("x").content, model.invoke("y").content] == ["a", "b"]


def test_usage_none_when_unknown_and_cost_from_price() -> None:
    assert usage_of(AIMessage(content="x")) == Usage(None, None)
    msg = AIMessage(content="x", usage_metadata={"input_tokens": 1000, "output_tokens": 200, "total_tokens": 1200})
    usage = usage_of(msg)
    assert usage == Usage(1000, 200)
    price = Price(input_per_mtok=0.15, output_per_mtok=0.60)
    # 1000 * 0.15e-6 + 200 * 0.60e-6 = 0.00015 + 0.00012
    assert cost_of(usage, price) == pytest.approx(0.00027)
    assert cost_of(usage, None) is None
    assert cost_of(Usage(None, None), price) is None
    assert add_optional(None, None) is None and add_optional(None, 3) == 3 and add_optional(2, 3) == 5


def test_transient_by_type_along_the_mro() -> None:
    """langchain-openai 1.x raises subclasses of openai's errors (OpenAIConnectionError, ...), and
    APITimeoutError carries no status code: all are retried; 4xx errors are not."""
    openai = pytest.importorskip("openai")
    httpx = pytest.importorskip("httpx")
    lc_openai = pytest.importorskip("langchain_openai.chat_models.base")
    request = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")

    def status(cls, code: int):
        return cls("boom", response=httpx.Response(code, request=request), body=None)

    assert is_transient(openai.APITimeoutError(request=request))
    assert is_transient(openai.APIConnectionError(request=request))
    assert is_transient(lc_openai.OpenAIConnectionError(request=request))
    assert is_transient(type("OpenAITimeoutError", (openai.APITimeoutError,), {})(request=request))
    assert is_transient(status(lc_openai.OpenAIRateLimitError, 429))
    assert is_transient(status(lc_openai.OpenAIAPIError, 500))
    assert is_transient(httpx.ReadTimeout("slow")) and is_transient(httpx.RemoteProtocolError("cut"))
    assert not is_transient(status(lc_openai.OpenAIAuthenticationError, 401))
    assert not is_transient(status(openai.BadRequestError, 400))


def test_missing_extra_is_reported_before_a_missing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("MY_KEY", raising=False)
    _hide_modules(monkeypatch, "langchain", "langchain_openai")
    with pytest.raises(ModelConfigError, match=r"pip install langchain-openai"):
        make_chat_model("openai:gpt-4o-mini")
    with pytest.raises(ModelConfigError, match=r"pip install langchain-openai"):
        make_chat_model({"model": "m", "base_url": "http://localhost:1/v1", "api_key_env": "MY_KEY"})


def test_a_price_bills_only_the_model_it_names() -> None:
    price = {"model": "openai:gpt-4o-mini", "input_per_mtok": 0.15, "output_per_mtok": 0.6}
    own = ModelSpec(model="openai:gpt-4o-mini", price=price)
    assert own.billed_price == own.price and own.price_note() is None
    local = ModelSpec(model="qwen2.5-0.5b", base_url="http://127.0.0.1:1/v1", price=price)
    assert local.billed_price is None
    assert "cost unknown: the configured price is for openai:gpt-4o-mini, the model is qwen2.5-0.5b" in \
        (local.price_note() or "")
    anyone = ModelSpec(model="qwen2.5-0.5b", base_url="http://127.0.0.1:1/v1",
                       price={"input_per_mtok": 1, "output_per_mtok": 2})
    assert anyone.billed_price == anyone.price  # a price without a model bills any model


def test_connection_refused_is_not_transient_and_names_the_url() -> None:
    from utp_env.agents.llm.models import connection_refused, describe_failure

    httpx = pytest.importorskip("httpx")
    openai = pytest.importorskip("openai")
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except ConnectionRefusedError as inner:
            raise openai.APIConnectionError(request=request) from inner
    except openai.APIConnectionError as exc:
        refused = exc
    assert connection_refused(refused) and not is_transient(refused)
    assert "connection refused at http://127.0.0.1:9/v1/chat/completions" in describe_failure(refused)
    other = openai.APIConnectionError(request=request)  # reset, DNS, ...: still retried, URL named
    assert is_transient(other) and describe_failure(other).endswith("(http://127.0.0.1:9/v1/chat/completions)")
    assert is_transient(json.JSONDecodeError("Expecting value", "{\"id\": ", 7))  # a 200 cut short
