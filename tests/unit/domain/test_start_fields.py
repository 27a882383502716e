"""GIVEN each Schedule Start field defined once (``START_FIELDS``: name, type, limits, default,
description, example, flag, client argument) THEN every surface says what that definition
says, and a field added to one surface and not the others fails here:

- the Start model (the bus contract): the same fields in the same order, each with the
  definition's description, example, JSON type and default;
- the API's OpenAPI document: each request body's property described by the definition;
- the CLI: ``tickwork schedule`` has the field's flag with the definition's help and choices,
  and no flag that is not a field's (but --first, --wait, --json);
- the client: ``TickworkClient.schedule`` has the field's argument, its docstring the
  definition's text, and the argument lands in the published Start as the field;
- every example is a value the stack takes, and a bad value is refused with the field's fix.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tickwork.domain.catch_up import DEFAULT_THRESHOLD, DEFAULT_WINDOW
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.identifiers import DEFAULT_GROUP
from tickwork.domain.start_fields import START_FIELDS, StartField, field_named, render
from tickwork.domain.start_request import WHEN_FIELDS, StartDetail, parse_start_detail
from tickwork_cli.start_flags import FIRST_FLAG, start_detail

NOW = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
BUS = "fields-bus"
WHEN_ARGUMENT = {"at", "executionTime", "duration", "delay", "cron", "rate", "frequency",
                 "repeat", "scheduleExpression"}  # fmt: skip
COMMAND_ONLY = {FIRST_FLAG, "--wait", "--json"}
WALL_CLOCK_ONLY = {"dstRepeated", "dstMissing"}  # a cron's or a frequency's, not a rate's
PYTHON_TYPES = {"string": str, "integer": int, "boolean": bool, "object": dict}

by_name = pytest.mark.parametrize("spec", START_FIELDS, ids=lambda spec: spec.name)


def _a_start_with(spec: StartField) -> dict[str, Any]:
    """A Start that holds the field's example and whatever else it needs to be taken."""
    detail: dict[str, Any] = {"id": "fields:1", spec.name: spec.example}
    if spec.name == "repeat":
        detail["frequency"] = "DAILY"
    elif spec.name in WALL_CLOCK_ONLY:
        detail["cron"] = "30 1 * * *"
    elif spec.name not in WHEN_FIELDS:
        detail["rate"] = "rate(1 hour)"
    detail.update({name: field_named(name).example for name in _NEEDS.get(spec.name, ())})
    if spec.name == "catchUpWindow":
        detail["catchUp"] = "ALL"
    return detail


# A field that says something of another one is taken only beside it.
_NEEDS = {"onExcluded": ("calendar",), "windowMode": ("flexibleWindow",)}


def test_the_start_model_holds_exactly_the_defined_fields_in_their_order() -> None:
    names = [str(info.alias) for info in StartDetail.model_fields.values()]
    assert names == [spec.name for spec in START_FIELDS]


@by_name
def test_the_start_model_says_what_the_definition_says(spec: StartField) -> None:
    info = next(i for i in StartDetail.model_fields.values() if i.alias == spec.name)
    assert info.description == spec.text()
    assert info.examples == [spec.example]
    shown = StartDetail.model_json_schema(by_alias=True)["properties"][spec.name]
    types = {option.get("type") for option in shown.get("anyOf", [shown])} - {"null"}
    assert types == {spec.type}
    assert isinstance(spec.example, PYTHON_TYPES[spec.type])


def test_the_defaults_written_in_the_definitions_are_the_ones_the_code_applies() -> None:
    request = parse_start_detail({"id": "fields:1", "rate": "rate(1 hour)"}, NOW)
    assert field_named("action").default == request.action == "TICK"
    assert field_named("timezone").default == request.schedule.timezone
    assert field_named("group").default == request.group == DEFAULT_GROUP
    assert field_named("catchUp").default == str(request.catch_up.policy)
    seconds = {"60s": timedelta(seconds=60), "1d": timedelta(days=1)}
    assert seconds[str(field_named("misfireThreshold").default)] == DEFAULT_THRESHOLD
    assert seconds[str(field_named("catchUpWindow").default)] == DEFAULT_WINDOW
    assert request.catch_up.threshold == DEFAULT_THRESHOLD
    assert request.catch_up.window == DEFAULT_WINDOW


@by_name
def test_each_example_is_a_value_the_stack_takes(spec: StartField) -> None:
    request = parse_start_detail(_a_start_with(spec), NOW)
    assert request.detail[spec.name] == spec.example


@pytest.mark.parametrize("spec", [s for s in START_FIELDS if s.choices], ids=lambda spec: spec.name)
def test_a_value_outside_the_choices_is_refused_with_the_fields_fix(spec: StartField) -> None:
    detail = _a_start_with(spec) | {spec.name: "NOT_ONE_OF_THEM"}
    with pytest.raises(ValidationFailed) as refused:
        parse_start_detail(detail, NOW)
    problems = {p.field: p for p in refused.value.problems}
    assert spec.name in problems
    assert all(choice in problems[spec.name].fix for choice in spec.choices)


@by_name
def test_a_value_of_the_wrong_type_is_refused_naming_the_field_and_its_fix(
    spec: StartField,
) -> None:
    wrong: Any = 12 if spec.type != "integer" else "twelve"
    if spec.type == "string" and spec.name in ("id", "action"):
        wrong = ["a list"]
    with pytest.raises(ValidationFailed) as refused:
        parse_start_detail(_a_start_with(spec) | {spec.name: wrong}, NOW)
    problems = {p.field: p for p in refused.value.problems}
    assert spec.name in problems
    assert problems[spec.name].fix == spec.fix_for()


def test_a_text_names_other_fields_in_each_surfaces_own_spelling() -> None:
    text = "with {catchUp} ALL, after {misfireThreshold}, from {at}"
    assert render(text, "event") == "with catchUp ALL, after misfireThreshold, from at"
    assert render(text, "cli") == "with --catch-up ALL, after --misfire-threshold, from --at"
    assert render(text, "client") == "with catch_up= ALL, after misfire_threshold=, from at"
    for spec in START_FIELDS:  # every {name} a definition uses names a field
        for surface in ("event", "cli", "client"):
            assert "{" not in spec.text(surface)


# --- the API ------------------------------------------------------------------------------
def test_the_openapi_request_bodies_describe_each_field_as_defined() -> None:
    from tickwork.api.routes import app

    schemas = json.loads(app.get_openapi_json_schema())["components"]["schemas"]
    for body in ("CreateAction", "UpdateAction"):
        properties = schemas[body]["properties"]
        expected = [s.name for s in START_FIELDS if not (body == "UpdateAction" and s.name == "id")]
        assert list(properties) == expected
        for name in expected:
            spec = field_named(name)
            assert properties[name]["description"].startswith(spec.text()), (body, name)
            assert properties[name]["examples"] == [spec.example], (body, name)
    preview = schemas["PreviewRequest"]["properties"]
    # (the preview's id names the action whose instants in a flexible window to list)
    for name in set(preview) & {s.name for s in START_FIELDS} - {"id"}:
        assert preview[name]["description"] == field_named(name).text()


# --- the command line ---------------------------------------------------------------------
def _schedule_options() -> dict[str, Any]:
    from tickwork_cli.main import cli

    command = cli.commands["schedule"]  # type: ignore[attr-defined]
    return {flag: param for param in command.params for flag in param.opts}


def test_every_field_has_its_flag_or_says_which_flag_stands_for_it() -> None:
    options = _schedule_options()
    for spec in START_FIELDS:
        if spec.flag is None:
            assert spec.no_flag, f"{spec.name}: give it a flag, or say which flag sets it"
            assert spec.no_flag.split()[0].rstrip(",") in options, spec.no_flag
            continue
        option = options[spec.flag]
        assert option.help == spec.help(), spec.flag
        assert option.name == spec.attribute
        if spec.choices:
            assert tuple(option.type.choices) == spec.choices
    fields_flags = {spec.flag for spec in START_FIELDS if spec.flag}
    assert set(options) - fields_flags == COMMAND_ONLY


@pytest.mark.parametrize("spec", [s for s in START_FIELDS if s.flag], ids=lambda s: s.name)
def test_each_flag_puts_its_value_in_the_start_as_the_field(spec: StartField) -> None:
    given = json.dumps(spec.example) if spec.type == "object" else spec.example
    flags = {spec.attribute: given}
    if spec.name in WALL_CLOCK_ONLY:
        flags["cron"] = "30 1 * * *"
    elif spec.argument != "when":
        flags["rate"] = "rate(1 hour)"
    detail = start_detail(flags)
    assert detail[spec.name] == spec.example
    parse_start_detail(detail | _a_start_with(spec) | detail, NOW)


def test_a_flag_refusal_names_the_flag() -> None:
    with pytest.raises(ValidationFailed) as refused:
        start_detail({"rate": "rate(1 hour)", "cron": "0 9 * * *"})
    assert refused.value.problems[0].field == "--cron and --rate"  # the flags typed
    with pytest.raises(ValidationFailed) as refused:
        start_detail({"at": "2030-01-01T00:00:00Z"}, first="2030-01-01T00:00:00Z")
    assert refused.value.problems[0].field == FIRST_FLAG


# --- the client ---------------------------------------------------------------------------
@pytest.fixture
def events() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("events", region_name="us-east-1")
        client.create_event_bus(Name=BUS)
        yield client


def test_the_clients_schedule_takes_an_argument_for_every_field() -> None:
    from tickwork_client import TickworkClient

    parameters = set(inspect.signature(TickworkClient.schedule).parameters) - {"self"}
    arguments = {spec.argument for spec in START_FIELDS}
    assert None not in arguments, [s.name for s in START_FIELDS if s.argument is None]
    assert parameters == arguments
    assert {s.name for s in START_FIELDS if s.argument == "when"} == WHEN_ARGUMENT
    doc = " ".join(str(TickworkClient.schedule.__doc__).split())
    for spec in START_FIELDS:
        if spec.argument != "when":
            assert f"{spec.argument} [{spec.name}]: {spec.text('client')}" in doc, spec.name


@pytest.mark.parametrize(
    "spec", [s for s in START_FIELDS if s.argument != "when"], ids=lambda s: s.name
)
def test_each_client_argument_lands_in_the_start_as_the_field(
    spec: StartField, events: Any
) -> None:
    from tickwork_client import TickworkClient

    client = TickworkClient(events, BUS, clock=lambda: NOW)
    when = "30 1 * * *" if spec.name in WALL_CLOCK_ONLY else "rate(1 hour)"
    arguments: dict[str, Any] = {"action_id": "fields:1", "when": when}
    arguments[str(spec.argument)] = spec.example
    if spec.name == "catchUpWindow":
        arguments["catch_up"] = "ALL"
    for name in _NEEDS.get(spec.name, ()):
        needed = field_named(name)
        arguments[str(needed.argument)] = needed.example
    if spec.name == "action":  # an HTTP_REQUEST needs its data
        arguments["data"] = field_named("data").example
    published = client.schedule(**arguments)
    assert published.detail[spec.name] == spec.example


def test_a_client_refusal_names_the_argument_with_the_field_beside_it(events: Any) -> None:
    from tickwork_client import TickworkClient

    client = TickworkClient(events, BUS, clock=lambda: NOW)
    with pytest.raises(ValidationFailed) as refused:
        client.schedule("fields:1", "rate(1 hour)", misfire_threshold=timedelta(days=2))
    assert [p.field for p in refused.value.problems] == ["misfire_threshold (misfireThreshold)"]


# --- the README ---------------------------------------------------------------------------
def test_the_readmes_start_table_names_every_field() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    table = readme.split("| field | meaning |", 1)[1].split("\n\n", 1)[0]
    missing = [spec.name for spec in START_FIELDS if f"`{spec.name}`" not in table]
    assert not missing, f"README's Start table lacks {missing}"
