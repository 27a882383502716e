"""GIVEN the HTTP API served from the template-built stack WHEN schemathesis generates requests
from its own OpenAPI spec THEN no response is a 5xx and every response matches the spec."""

from __future__ import annotations

import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.e2e.support import Stack

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
EXAMPLES_PER_OPERATION = 30


def test_api_never_fails_and_matches_its_spec(stack: Stack) -> None:
    with stack.local.serving_api() as url:
        auth = {"Authorization": f"Bearer {stack.local.api_token}"}
        schema = schemathesis.openapi.from_url(
            f"{url}/openapi.json", headers=auth
        )  # base URL: where it was loaded
        operations = [result.ok() for result in schema.get_all_operations()]
        assert len(operations) >= 9, [o.label for o in operations]
        for operation in operations:

            @given(case=operation.as_strategy())
            @settings(
                max_examples=EXAMPLES_PER_OPERATION,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def conforms(case: schemathesis.Case) -> None:
                case.call_and_validate(checks=CHECKS, headers=auth)

            conforms()


def test_the_local_api_refuses_a_call_without_its_token(stack: Stack) -> None:
    """GIVEN the local API WHEN it is called without the token, or with another THEN 401 naming
    the Authorization header and the fix, and the function never runs; the dashboard's page
    itself (no data) still loads."""
    with stack.local.serving_api() as url:
        before = len(stack.invocations("ApiFunction"))
        for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": "x"}):
            response = requests.get(f"{url}/actions", headers=headers, timeout=5)
            assert response.status_code == 401
            (problem,) = response.json()["problems"]
            assert problem["field"] == "Authorization" and "Bearer" in problem["fix"]
        assert len(stack.invocations("ApiFunction")) == before
        assert requests.get(f"{url}/", timeout=5).status_code == 200
        good = {"Authorization": f"Bearer {stack.local.api_token}"}
        assert requests.get(f"{url}/actions", headers=good, timeout=5).status_code == 200


def test_the_document_shows_each_action_types_data_schema() -> None:
    """GIVEN the OpenAPI document THEN every built-in action type's data schema is a component,
    with its fields, and a create's or an update's data is any one of them."""
    import json

    from tickwork.api.routes import app
    from tickwork.fulfillment.defaults import builtin_data_models

    document = json.loads(app.get_openapi_json_schema())
    schemas = document["components"]["schemas"]
    models = builtin_data_models()
    assert set(models) >= {
        "TICK", "SEND_NOTIFICATION", "HTTP_REQUEST", "EVENTBRIDGE_EVENT", "SQS_MESSAGE",
        "SNS_MESSAGE", "LAMBDA_INVOKE", "STEP_FUNCTIONS_EXECUTION",
    }  # fmt: skip
    for action_type, model in models.items():
        shown = schemas[model.__name__]
        assert shown["description"].startswith(f"The data of a {action_type} action")
        assert set(shown.get("properties", {})) == {
            str(f.alias or name) for name, f in model.model_fields.items()
        }
    assert schemas["SqsMessageData"]["required"] == ["queueArn", "messageBody"]
    for request in ("CreateAction", "UpdateAction"):
        data = schemas[request]["properties"]["data"]
        assert [r["$ref"].rsplit("/", 1)[-1] for r in data["anyOf"]] == [
            m.__name__ for m in models.values()
        ]
        assert "SQS_MESSAGE → SqsMessageData" in data["description"]
    assert "TargetRolePath" in schemas["CreateAction"]["properties"]["roleArn"]["description"]
