"""GIVEN the deployed stack's SEND_NOTIFICATION (NotificationDelivery "aws") WHEN a fire runs
THEN an e-mail goes through an SES template named by templateType, an SMS through SNS to the
phone number and a push to the stack's push topic — read back from what the emulator's SES and
SNS recorded — and a missing template or text is a final failure that says what to create."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from typing import Any

import pytest
from moto.ses.models import ses_backends
from moto.sns.models import sns_backends

from tests.conftest import load_event
from tests.e2e.support import Stack
from tests.functional.target_support import Targets, fire
from tickwork import bootstrap
from tickwork.domain.errors import PermanentFulfillmentError
from tickwork.domain.times import parse_iso, to_epoch_ms
from tickwork_cli.main import cli
from tickwork_local.template import ACCOUNT

REGION = "us-east-1"
SCHEDULED = "2026-11-23T09:00:00.000Z"  # occurrence 3's time (target_support.fire)


@pytest.fixture
def templates(stack: Stack) -> Iterator[None]:
    """What an operator creates once: an SES template and an SSM text per templateType."""
    stack.local.client("ses").create_template(
        Template={
            "TemplateName": "USER_LATE_PAYMENT_NOTIFICATION",
            "SubjectPart": "{{subject}}",
            "TextPart": "Dear {{name}}, your payment is late.",
        }
    )
    stack.local.client("ssm").put_parameter(
        Name="/tickwork/templates/USER_LATE_PAYMENT_NOTIFICATION",
        Value="Dear {{name}}, your payment is late.",
        Type="String",
    )
    yield


def _seed(**changes: Any) -> dict[str, Any]:
    """The seed's data shape, as events/start/notification-daily.json carries it."""
    data = dict(load_event("start/notification-daily")["detail"]["data"])
    return {**data, **changes}


def test_an_sms_is_published_to_the_phone_number_with_the_rendered_text(
    stack: Stack, templates: None
) -> None:
    _, result = fire(stack, "SEND_NOTIFICATION", _seed())

    sent = sns_backends[ACCOUNT][REGION].sms_messages
    assert sent == {result["messageId"]: ("+60123456789", "Dear Joojo, your payment is late.")}
    assert result["notificationType"] == "SMS"


def test_an_email_is_sent_through_the_ses_template_named_by_template_type(
    stack: Stack, templates: None
) -> None:
    data = _seed(notificationType="EMAIL", email="joojo@example.com", mobile=None)

    _, result = fire(stack, "SEND_NOTIFICATION", data)

    (message,) = ses_backends[ACCOUNT][REGION].sent_messages
    assert message.id == result["messageId"]
    assert message.source == "tickwork@example.com"  # the stack's EmailFromAddress
    assert message.template == "USER_LATE_PAYMENT_NOTIFICATION"
    assert message.destinations == {"ToAddresses": ["joojo@example.com"]}
    assert json.loads(message.template_data)["name"] == "Joojo"


@pytest.mark.parametrize("attempt", [1, 2])
def test_a_push_goes_to_the_push_topic_with_the_user_to_filter_on_and_its_fire(
    stack: Stack, templates: None, attempt: int
) -> None:
    """Its message attributes say which fire it is and which attempt, as an SNS_MESSAGE's."""
    targets = Targets(stack.local)
    queue = targets.subscribed_queue(stack.local.outputs["PushTopicArn"], "mobile-backend")
    data = _seed(notificationType="PUSH", userId="user-7", mobile=None)

    request, result = fire(stack, "SEND_NOTIFICATION", data, attempt=attempt)

    (delivered,) = targets.received(queue)
    envelope = json.loads(delivered["Body"])
    assert envelope["MessageId"] == result["messageId"]
    assert envelope["Message"] == "Dear Joojo, your payment is late."
    attributes = {k: v["Value"] for k, v in envelope["MessageAttributes"].items()}
    assert attributes == {
        "userId": "user-7",
        "templateType": "USER_LATE_PAYMENT_NOTIFICATION",
        "tickwork-idempotency-key": request.idempotency_key,
        "tickwork-action-id": "order:7",
        "tickwork-occurrence": "3",
        "tickwork-fire": json.dumps(
            {"scheduledTime": SCHEDULED, "attempt": attempt, "trigger": "SCHEDULED"},
            separators=(",", ":"),
        ),
    }
    (kept,) = stack.local.outbox.messages("push")
    assert kept["attributes"] == attributes and kept["fire"]["attempt"] == attempt


def test_an_email_is_tagged_with_its_fire_and_attempt(stack: Stack, templates: None) -> None:
    """SES message tags (what a configuration set's events report) say which fire and attempt.
    The emulator's SES keeps no tags: they are read from the outbox, which keeps a call as it
    was sent once the service took it, and held to SES's rule for a tag here."""
    data = _seed(notificationType="EMAIL", email="joojo@example.com", mobile=None)

    request, result = fire(stack, "SEND_NOTIFICATION", data, attempt=2)

    (message,) = ses_backends[ACCOUNT][REGION].sent_messages
    (kept,) = stack.local.outbox.messages("email")
    assert kept["messageId"] == message.id == result["messageId"]
    assert kept["tags"] == {
        "idempotency-key": request.idempotency_key,
        "occurrence": "3",
        "scheduled-time-ms": str(to_epoch_ms(parse_iso(SCHEDULED))),
        "attempt": "2",
        "trigger": "SCHEDULED",
    }
    ses_tag = re.compile(r"[A-Za-z0-9_-]{1,256}")  # a tag's name and value, as SES takes them
    assert all(ses_tag.fullmatch(part) for tag in kept["tags"].items() for part in tag)


def test_an_sms_is_its_text_alone_its_fire_kept_in_the_outbox(
    stack: Stack, templates: None
) -> None:
    """A text carries nothing but what it says; the outbox keeps which fire sent it."""
    request, result = fire(stack, "SEND_NOTIFICATION", _seed(), attempt=2)

    sent = sns_backends[ACCOUNT][REGION].sms_messages
    assert sent == {result["messageId"]: ("+60123456789", "Dear Joojo, your payment is late.")}
    (kept,) = stack.local.outbox.messages("sms")
    assert kept["fire"] == {
        "id": "order:7",
        "action": "SEND_NOTIFICATION",
        "occurrence": 3,
        "scheduledTime": SCHEDULED,
        "attempt": 2,
        "trigger": "SCHEDULED",
        "idempotencyKey": request.idempotency_key,
    }


def test_an_email_template_that_does_not_exist_fails_finally_saying_the_command_to_create_it(
    stack: Stack,
) -> None:
    data = _seed(notificationType="EMAIL", email="joojo@example.com", mobile=None)
    with pytest.raises(PermanentFulfillmentError) as failure:
        fire(stack, "SEND_NOTIFICATION", data)
    assert "SES template USER_LATE_PAYMENT_NOTIFICATION" in str(failure.value)
    # the local stack is reached without --stack: the command names none
    assert "`tickwork templates put email USER_LATE_PAYMENT_NOTIFICATION --subject " in str(
        failure.value
    )
    assert "--stack" not in str(failure.value)
    assert ses_backends[ACCOUNT][REGION].sent_messages == []


def test_a_text_that_does_not_exist_fails_finally_naming_the_parameter_to_create(
    stack: Stack,
) -> None:
    with pytest.raises(PermanentFulfillmentError) as failure:
        fire(stack, "SEND_NOTIFICATION", _seed())
    assert "/tickwork/templates/USER_LATE_PAYMENT_NOTIFICATION" in str(failure.value)
    assert (
        '`tickwork templates put sms USER_LATE_PAYMENT_NOTIFICATION --text "Hello {{name}}, ..."`'
        in str(failure.value)
    )
    assert sns_backends[ACCOUNT][REGION].sms_messages == {}


def test_on_a_deployed_stack_the_command_a_missing_text_names_targets_that_stack(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command parses as the CLI reads it: --stack before the command (a group option)."""
    monkeypatch.setenv("STACK_NAME", "tickwork-prod")  # as template.yaml gives the function
    bootstrap.from_environment.cache_clear()
    try:
        with pytest.raises(PermanentFulfillmentError) as failure:
            fire(stack, "SEND_NOTIFICATION", _seed())
    finally:
        monkeypatch.undo()
        bootstrap.from_environment.cache_clear()

    command = re.search(r"`(tickwork [^`]+)`", str(failure.value))
    assert command, str(failure.value)
    words = shlex.split(command[1])
    with cli.make_context("tickwork", words[1:], resilient_parsing=True) as context:
        assert context.params["stack"] == "tickwork-prod"
        group = cli.get_command(context, "templates")
        assert group is not None and context.protected_args + context.args == [
            "templates", "put", "sms", "USER_LATE_PAYMENT_NOTIFICATION",
            "--text", "Hello {{name}}, ...",
        ]  # fmt: skip
