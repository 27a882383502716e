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
from tickwork_cli.main import cli
from tickwork_local.template import ACCOUNT

REGION = "us-east-1"


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


def test_a_push_goes_to_the_push_topic_with_the_user_to_filter_on(
    stack: Stack, templates: None
) -> None:
    targets = Targets(stack.local)
    queue = targets.subscribed_queue(stack.local.outputs["PushTopicArn"], "mobile-backend")
    data = _seed(notificationType="PUSH", userId="user-7", mobile=None)

    request, result = fire(stack, "SEND_NOTIFICATION", data)

    (delivered,) = targets.received(queue)
    envelope = json.loads(delivered["Body"])
    assert envelope["MessageId"] == result["messageId"]
    assert envelope["Message"] == "Dear Joojo, your payment is late."
    attributes = {k: v["Value"] for k, v in envelope["MessageAttributes"].items()}
    assert attributes["userId"] == "user-7"
    assert attributes["templateType"] == "USER_LATE_PAYMENT_NOTIFICATION"
    assert attributes["tickwork-idempotency-key"] == request.idempotency_key


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
