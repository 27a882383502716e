"""GIVEN the local stack requiring signed events, its API served WHEN the README's client example
runs as it stands THEN it schedules, pauses, resumes, fires by hand, pauses by group and
cancels through the client alone, every event signed, and reads each change back."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.support import Stack
from tickwork.domain.action import Status
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.fire import Trigger
from tickwork_client import BearerSigner, StackApi, TickworkClient, at

README = Path(__file__).resolve().parents[2] / "README.md"


def _example() -> str:
    text = README.read_text()
    found = re.search(
        r"<!-- client-example -->\n```python\n(.*?)```\n<!-- /client-example -->", text, re.S
    )
    assert found, "the README's client example is missing its markers"
    return found.group(1)


def _secret(stack: Stack) -> str:
    client = stack.local.client("secretsmanager")
    return str(
        client.get_secret_value(SecretId=stack.local.outputs["StartSigningKeyArn"])["SecretString"]
    )


@pytest.mark.real_time  # its waits are on wall-clock seconds still
def test_the_readme_example_steers_an_action_through_the_client_alone(
    make_stack: Callable[..., Stack], monkeypatch: pytest.MonkeyPatch
) -> None:
    stack = make_stack(RequireSignedStarts="true")
    with stack.local.serving_api() as url:
        for name, value in {
            "TICKWORK_BUS": stack.local.outputs["EventBusName"],
            "TICKWORK_SIGNING_KEY": _secret(stack),
            "TICKWORK_API_URL": url,
            "TICKWORK_API_TOKEN": str(stack.local.api_token),
            "AWS_DEFAULT_REGION": stack.local.region,
        }.items():
            monkeypatch.setenv(name, value)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(_example(), "README.md#client-example", "exec"), {})
        # and waiting for a status an ended action will never reach says so at once
        reader = TickworkClient(
            stack.local.client("events"),
            stack.local.outputs["EventBusName"],
            api=StackApi(url, BearerSigner(str(stack.local.api_token))),
        )
        with pytest.raises(TimeoutError, match="ended CANCELLED, never PENDING"):
            reader.wait("reminder:42", "PENDING", timeout=60)

    # (the functions running in process print their metrics as JSON lines beside it)
    lines = [line for line in printed.getvalue().splitlines() if not line.startswith("{")]
    assert lines[0].startswith("published ") and "first fires:" in lines[0]
    assert lines[1] == "fired by hand: RUN_NOW FIRED"
    assert lines[2] == "finally: CANCELLED"
    action = stack.record("reminder:42")
    assert action.status == Status.CANCELLED
    assert [h.trigger for h in action.history] == [Trigger.RUN_NOW]
    # every event was signed: the stack requires it, and rejected none
    events = stack.lifecycle.drain()
    assert [e for e in events if e["detail-type"] == "Schedule Rejected"] == []


def test_an_unsigned_client_is_refused_by_a_stack_that_requires_signatures(
    make_stack: Callable[..., Stack],
) -> None:
    """The signature is what lets the signed client's events in: the same Start unsigned is
    rejected by the stack, and a bad one never leaves the client."""
    stack = make_stack(RequireSignedStarts="true")
    with stack.local.serving_api() as url:
        api = StackApi(url, BearerSigner(str(stack.local.api_token)))
        unsigned = TickworkClient(
            stack.local.client("events"), stack.local.outputs["EventBusName"], api=api
        )
        with pytest.raises(ValidationFailed):
            unsigned.schedule("client:bad", at("2020-01-01T00:00:00Z"))
        unsigned.schedule("client:unsigned", "rate(1 hour)")

    events = stack.lifecycle.wait_for(
        lambda evs: any(e["detail-type"] == "Schedule Rejected" for e in evs), 15
    )
    (rejected,) = [e["detail"] for e in events if e["detail-type"] == "Schedule Rejected"]
    assert rejected["id"] == "client:unsigned" and rejected["signature"] == "unsigned"
    assert stack.records.get("client:unsigned") is None
    assert stack.records.get("client:bad") is None
