"""GIVEN the HTTP API served from the template-built stack WHEN schemathesis generates requests
from its own OpenAPI spec THEN no response is a 5xx and every response matches the spec."""

from __future__ import annotations

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
        schema = schemathesis.openapi.from_url(
            f"{url}/openapi.json"
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
                case.call_and_validate(checks=CHECKS)

            conforms()
