"""The generated tool schemas (OpenAI function format, LangChain StructuredTool) agree with the
argument models, and `invoke` turns any input into a result without raising."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field
from tiny_tables import tiny_tables, write_database

from utp_env.tools.database import Database
from utp_env.tools.lookup import LOOKUP_TOOLS, ToolResult, make_registry
from utp_env.tools.tool_schemas import provider_schema

NAMES = list(LOOKUP_TOOLS)
# The JSON-schema subset that OpenAI, Anthropic, Gemini and open-model servers all accept.
PORTABLE_KEYWORDS = {"type", "description", "properties", "required", "items", "enum", "default", "minimum",
                     "maximum", "minLength", "maxLength", "minItems", "maxItems", "pattern", "additionalProperties"}
VALID = {
    "search_flights": dict(origin="Pune", destination="Indore", date="2025-11-17", sort_by="price", limit=5),
    "search_trains": dict(origin="Pune", destination="Indore", date="2025-11-22"),
    "search_buses": dict(origin="Pune", destination="Mumbai", date="2025-11-22"),
    "cab_route": dict(origin="Pune", destination="Mumbai"),
    "distance": dict(origin="Pune", destination="Nagpur"),
    "list_cities": dict(state="Maharashtra"),
    "search_stays": dict(city="Pune", allows=["pets"], amenities=["Pool"], services=[], max_price_per_night=5000.0,
                         house_type="Family Friendly", min_rating=4.0, min_occupancy=2, sort_by="rating"),
    "search_attractions": dict(city="Pune", category="Museums", sort_by="entry_fee"),
    "search_restaurants": dict(city="Pune", cuisine="Asian", price_tier="$$$"),
    "search_events": dict(city="Pune", start_date="2025-11-01", end_date="2025-12-31", segment="Comedy"),
    "crowd_profile": dict(city="Pune", venue="Shaniwar Wada", venue_type="attraction"),
    "delay_stats": dict(mode="flight", origin="Pune", destination="Indore", number="6E-284"),
    "nearest_transit": dict(city="Pune", venue="Shaniwar Wada"),
}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Database:
    return Database.open(write_database(Path(tmp_path_factory.mktemp("tiny")), tiny_tables()))


def _nodes(schema: Any) -> typing.Iterator[tuple[str, Any]]:
    """Every (key, value) pair of a schema, recursively."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            yield key, value
            if key == "properties":
                for sub in value.values():
                    yield from _nodes(sub)
            else:
                yield from _nodes(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _nodes(item)


def _literal_values(annotation: Any) -> tuple[str, ...] | None:
    """The allowed values of a (possibly optional, annotated or list-of) Literal annotation."""
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    for arg in typing.get_args(annotation):
        found = _literal_values(arg)
        if found:
            return found
    return None


def test_every_tool_of_the_task_is_registered() -> None:
    assert set(NAMES) == set(VALID)


@pytest.mark.parametrize("name", NAMES)
def test_openai_schema_is_a_valid_object_schema(name: str) -> None:
    spec = LOOKUP_TOOLS[name]
    schema = spec.openai_schema()
    assert schema["type"] == "function" and schema["function"]["name"] == name
    assert "Example" in schema["function"]["description"] and len(schema["function"]["description"]) > 80
    params = schema["function"]["parameters"]
    jsonschema.Draft202012Validator.check_schema(params)
    assert params["type"] == "object" and params["additionalProperties"] is False
    keywords = {k for k, _ in _nodes(params)}  # schema keywords only: property names are not yielded
    assert not keywords & {"$ref", "$defs", "title"}, "refs must be inlined and titles dropped"
    assert keywords <= PORTABLE_KEYWORDS, f"keywords some providers reject: {keywords - PORTABLE_KEYWORDS}"
    fields = spec.args_model.model_fields
    assert list(params["properties"]) == list(fields)
    required = [n for n, f in fields.items() if f.is_required()]
    assert params["required"] == required and required
    for field_name, info in fields.items():
        prop = params["properties"][field_name]
        assert prop.get("description"), f"{name}.{field_name} needs a description"
        if not info.is_required():
            assert field_name not in params["required"]
            assert "anyOf" not in prop, "optional arguments are plain types, left out of required"
        origin = typing.get_origin(info.annotation)
        if origin is list:
            assert prop["type"] == "array" and "type" in prop["items"]
        enum = _literal_values(info.annotation)
        if enum:
            target = prop["items"] if origin is list else prop
            assert target["enum"] == list(enum)


def test_list_and_enum_arguments_exist() -> None:
    """Guard against the previous test passing vacuously."""
    stays = LOOKUP_TOOLS["search_stays"].openai_schema()["function"]["parameters"]["properties"]
    assert stays["allows"]["items"]["enum"] == ["smoking", "children", "pets"]
    assert stays["amenities"] == {"description": stays["amenities"]["description"], "items":
                                  {"maxLength": 80, "minLength": 1, "type": "string"}, "maxItems": 10,
                                  "type": "array"}
    assert LOOKUP_TOOLS["delay_stats"].openai_schema()["function"]["parameters"]["properties"]["mode"]["enum"] == [
        "flight", "train", "bus", "cab"]


@pytest.mark.parametrize("name", NAMES)
def test_valid_example_passes_schema_and_tool(name: str, db: Database) -> None:
    spec = LOOKUP_TOOLS[name]
    jsonschema.validate(VALID[name], spec.parameters_schema())
    result = spec.invoke(db, VALID[name])
    assert result.ok, result.error
    bad = dict(VALID[name], not_an_argument=1)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, spec.parameters_schema())
    assert not spec.invoke(db, bad).ok


@pytest.mark.parametrize("name", NAMES)
def test_langchain_tool_matches_invoke(name: str, db: Database) -> None:
    spec = LOOKUP_TOOLS[name]
    tool = spec.langchain_tool(db)
    assert tool.name == name and tool.description == spec.description
    assert list(tool.args) == list(spec.parameters_schema()["properties"])
    assert "db" not in tool.args
    assert tool.invoke(VALID[name]) == spec.invoke(db, VALID[name]).text
    missing = {k: v for k, v in VALID[name].items() if k != next(iter(spec.parameters_schema()["required"]))}
    text = tool.invoke(missing)
    assert text == spec.invoke(db, missing).text and text.startswith("Error:")


def test_provider_schema_inlines_nested_models() -> None:
    class Inner(BaseModel):
        hour: int = Field(description="Hour")

    class Outer(BaseModel):
        windows: list[Inner] = Field(description="Windows")
        first: Inner | None = None

    schema = provider_schema(Outer.model_json_schema())
    assert schema["properties"]["windows"]["items"] == {"properties": {"hour": {"description": "Hour",
                                                                                "type": "integer"}},
                                                        "required": ["hour"], "type": "object"}
    assert schema["properties"]["first"]["type"] == "object" and "default" not in schema["properties"]["first"]


class Note(BaseModel):
    text: str


def test_registry_for_another_context() -> None:
    episode_tools = make_registry("itinerary")

    @episode_tools.tool
    def add_note(episode: list[str], args: Note) -> ToolResult:
        """Append a note to the episode. Example: {"text": "hello"}"""
        episode.append(args.text)
        return ToolResult(ok=True, text=f"{len(episode)} notes")

    episode: list[str] = []
    assert episode_tools.invoke(episode, "add_note", '{"text": "hi"}').text == "1 notes" and episode == ["hi"]
    assert episode_tools["add_note"].langchain_tool(episode).invoke({"text": "yo"}) == "2 notes"
    assert "add_note" not in LOOKUP_TOOLS
    with pytest.raises(TypeError, match="docstring"):
        @episode_tools.tool
        def undocumented(episode: list[str], args: Note) -> ToolResult:
            return ToolResult(ok=True, text="")


# ---------------------------------------------------------------- fuzzing invoke

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=30),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                                max_size=4), max_leaves=12)
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _consistent(result: ToolResult) -> None:
    assert isinstance(result, ToolResult) and isinstance(result.text, str) and result.text
    assert result.ok == (result.error is None)
    if not result.ok:
        assert result.text.startswith("Error:") and result.rows == []


@FUZZ
@given(name=st.sampled_from(NAMES), raw=st.text(max_size=200))
def test_invoke_never_raises_on_strings(db: Database, name: str, raw: str) -> None:
    result = LOOKUP_TOOLS[name].invoke(db, raw)
    _consistent(result)
    assert not result.ok  # no required argument can be met by random text


@FUZZ
@given(name=st.sampled_from(NAMES), raw=st.dictionaries(st.text(max_size=12), JSON, max_size=5))
def test_invoke_never_raises_on_arbitrary_dicts(db: Database, name: str, raw: dict) -> None:
    spec = LOOKUP_TOOLS[name]
    result = spec.invoke(db, raw)
    _consistent(result)
    required = spec.parameters_schema()["required"]
    if not set(required) <= set(raw):
        assert not result.ok and "missing required argument" in result.error


@FUZZ
@given(data=st.data(), name=st.sampled_from(NAMES))
def test_invoke_never_raises_on_arbitrary_values(db: Database, data: st.DataObject, name: str) -> None:
    """Right argument names, any JSON values (often the right ones): a consistent result, no exception."""
    spec = LOOKUP_TOOLS[name]
    raw = {k: data.draw(st.sampled_from([v]) | JSON, label=k) for k, v in VALID[name].items()}
    result = spec.invoke(db, json.dumps(raw) if data.draw(st.booleans()) else raw)
    _consistent(result)
    if raw == VALID[name]:
        assert result.ok
