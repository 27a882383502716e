"""The registry: finding a fulfillment by action type and validating action data."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from tests.unit.fulfillment.registry_support import builtin_registry
from tickwork.domain.errors import InvalidActionData, UnknownActionType
from tickwork.fulfillment import (
    FulfillmentData,
    FulfillmentRegistry,
    FulfillmentRequest,
    HttpRequestData,
    NotificationData,
    TickData,
)

SEED_NOTIFICATION = {
    "mobile": "60123456789",
    "subject": "Test",
    "name": "Joojo",
    "templateType": "USER_LATE_PAYMENT_NOTIFICATION",
    "notificationType": "SMS",
}


class _ReminderData(FulfillmentData):
    minutes_before: int


class _ReminderFulfillment:
    action_type: ClassVar[str] = "REMINDER"
    data_model: ClassVar[type[BaseModel]] = _ReminderData

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        return {"reminded": request.action_id}


@pytest.mark.parametrize(
    ("action_type", "data_model"),
    [
        pytest.param("TICK", TickData, id="tick"),
        pytest.param("SEND_NOTIFICATION", NotificationData, id="notification"),
        pytest.param("HTTP_REQUEST", HttpRequestData, id="http-request"),
    ],
)
def test_get_returns_the_built_in_fulfillment(action_type: str, data_model: type) -> None:
    # GIVEN the default registry
    registry = builtin_registry()
    # WHEN a built-in type is looked up
    fulfillment = registry.get(action_type)
    # THEN it is the fulfillment for that type, with its data model
    assert fulfillment.action_type == action_type
    assert fulfillment.data_model is data_model


BUILT_IN = [
    "EVENTBRIDGE_EVENT",
    "HTTP_REQUEST",
    "LAMBDA_INVOKE",
    "SEND_NOTIFICATION",
    "SNS_MESSAGE",
    "SQS_MESSAGE",
    "STEP_FUNCTIONS_EXECUTION",
    "TICK",
]


def test_get_of_an_unknown_type_names_the_known_types() -> None:
    # GIVEN the default registry
    registry = builtin_registry()
    # WHEN an unregistered type is looked up
    with pytest.raises(UnknownActionType) as caught:
        registry.get("SEND_FAX")
    # THEN the error points at the action field and lists every known type
    (problem,) = caught.value.problems
    assert problem.field == "action"
    assert "'SEND_FAX'" in problem.problem
    assert "HTTP_REQUEST, LAMBDA_INVOKE, SEND_NOTIFICATION" in problem.fix
    assert caught.value.action_type == "SEND_FAX"


def test_types_are_sorted() -> None:
    # GIVEN the default registry WHEN its types are listed THEN they are sorted
    assert builtin_registry().types() == BUILT_IN


def test_a_new_type_is_one_register_call() -> None:
    # GIVEN the default registry and a fulfillment of a new type
    registry = builtin_registry()
    # WHEN it is registered
    registry.register(_ReminderFulfillment())
    # THEN it is found, validates its data and is listed
    assert registry.validate("REMINDER", {"minutes_before": 5}) == _ReminderData(minutes_before=5)
    assert "REMINDER" in registry.types()
    assert "REMINDER" in registry.json_schemas()


def test_registering_a_type_twice_is_refused() -> None:
    # GIVEN a registry holding a type
    registry = FulfillmentRegistry()
    registry.register(_ReminderFulfillment())
    # WHEN the same type is registered again THEN it is refused
    with pytest.raises(ValueError, match="'REMINDER' is already registered"):
        registry.register(_ReminderFulfillment())


def test_validate_of_an_unknown_type_raises_unknown_action_type() -> None:
    # GIVEN the default registry WHEN data for an unknown type is validated THEN it is refused
    with pytest.raises(UnknownActionType):
        builtin_registry().validate("SEND_FAX", {})


def test_validate_returns_the_data_model_instance() -> None:
    # GIVEN the default registry
    # WHEN the seed notification data is validated
    data = builtin_registry().validate("SEND_NOTIFICATION", SEED_NOTIFICATION)
    # THEN it is a parsed NotificationData
    assert isinstance(data, NotificationData)
    assert data.model_dump(by_alias=True, exclude_none=True) == SEED_NOTIFICATION


@pytest.mark.parametrize(
    ("action_type", "data", "field", "in_problem", "in_fix"),
    [
        pytest.param(
            "SEND_NOTIFICATION",
            {k: v for k, v in SEED_NOTIFICATION.items() if k != "mobile"},
            "data.mobile",
            "required when notificationType is SMS",
            "add data.mobile",
            id="sms-without-mobile",
        ),
        pytest.param(
            "HTTP_REQUEST",
            {"url": "https://example.test/hook", "colour": "red"},
            "data.colour",
            "not a known field",
            "allowed fields: url, method",
            id="unknown-field",
        ),
        pytest.param(
            "SEND_NOTIFICATION",
            {**SEED_NOTIFICATION, "amount": {"value": 12}},
            "data.amount",
            "must be a string, number or boolean, got an object",
            "flatten an object",
            id="own-field-not-a-scalar",
        ),
        pytest.param(
            "SEND_NOTIFICATION",
            {**SEED_NOTIFICATION, "template_type": "X"},
            "data.template_type",
            "spelling of a known field",
            "write it templateType",
            id="own-field-shadowing-a-known-one",
        ),
        pytest.param(
            "SEND_NOTIFICATION",
            {**SEED_NOTIFICATION, "link": "{{name}}"},
            "data.link",
            "holds {{ or }}",
            "without template syntax",
            id="a-value-with-template-syntax",
        ),
        pytest.param(
            "SEND_NOTIFICATION",
            {**SEED_NOTIFICATION, "amount": float("inf")},
            "data.amount",
            "not a number",
            "finite",
            id="an-infinite-amount",
        ),
        pytest.param(
            "SEND_NOTIFICATION",
            {**SEED_NOTIFICATION, "due-date": "2026-12-01"},
            "data.due-date",
            "not a name a template can use",
            "letters, digits and _",
            id="own-field-not-a-placeholder-name",
        ),
        pytest.param(
            "SEND_NOTIFICATION",
            {**SEED_NOTIFICATION, "notificationType": "FAX"},
            "data.notificationType",
            "got 'FAX'",
            "'SMS', 'EMAIL' or 'PUSH'",
            id="bad-notification-type",
        ),
        pytest.param(
            "HTTP_REQUEST",
            {"url": "https://example.test/hook", "timeout_seconds": 31},
            "data.timeout_seconds",
            "got 31",
            "less than or equal to 30",
            id="timeout-too-long",
        ),
        pytest.param(
            "HTTP_REQUEST",
            {"url": "https://example.test/hook", "headers": {"X-Trace": 7}},
            "data.headers.X-Trace",
            "got 7",
            "valid string",
            id="nested-path",
        ),
        pytest.param(
            "HTTP_REQUEST",
            {},
            "data.url",
            "is required",
            "add data.url",
            id="missing-field",
        ),
        pytest.param(
            "TICK",
            ["not", "an", "object"],
            "data",
            "must be a JSON object",
            "as a JSON object",
            id="not-an-object",
        ),
    ],
)
def test_validate_names_the_field_and_the_fix(
    action_type: str, data: Any, field: str, in_problem: str, in_fix: str
) -> None:
    # GIVEN the default registry
    registry = builtin_registry()
    # WHEN invalid data is validated
    with pytest.raises(InvalidActionData) as caught:
        registry.validate(action_type, data)
    # THEN one problem names the field, says what is wrong and how to fix it
    by_field = {p.field: p for p in caught.value.problems}
    assert field in by_field, caught.value.problems
    assert in_problem in by_field[field].problem
    assert in_fix in by_field[field].fix


def test_json_schemas_cover_every_type_and_forbid_unknown_fields() -> None:
    # GIVEN the default registry WHEN its schemas are read
    schemas = builtin_registry().json_schemas()
    # THEN there is one per type; typed data refuses unknown fields, TICK passes anything;
    # a notification takes the team's own fields as scalars named as placeholders are
    assert sorted(schemas) == BUILT_IN
    assert schemas["SEND_NOTIFICATION"]["additionalProperties"] == {
        "anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]
    }
    assert (
        schemas["SEND_NOTIFICATION"]["propertyNames"]["pattern"] == "^[A-Za-z_][A-Za-z0-9_]{0,63}$"
    )
    assert schemas["HTTP_REQUEST"]["additionalProperties"] is False
    assert schemas["TICK"].get("additionalProperties", True) is not False
    assert "notificationType" in schemas["SEND_NOTIFICATION"]["properties"]


def test_request_refuses_a_naive_scheduled_time() -> None:
    # GIVEN a naive datetime WHEN a request is built with it THEN it is refused
    with pytest.raises(ValueError, match="timezone-aware"):
        FulfillmentRequest("a", "TICK", 1, datetime(2025, 1, 15, 8, 0), TickData(), "key-1")


def test_request_keeps_scheduled_time_in_utc() -> None:
    # GIVEN a time in UTC+8
    local = datetime(2025, 1, 15, 16, 0, tzinfo=timezone(timedelta(hours=8)))
    # WHEN a request is built with it
    request = FulfillmentRequest("a", "TICK", 3, local, TickData(), "key-3")
    # THEN it holds the same instant in UTC
    assert request.scheduled_time == datetime(2025, 1, 15, 8, 0, tzinfo=UTC)
    assert request.scheduled_time.tzinfo is UTC
