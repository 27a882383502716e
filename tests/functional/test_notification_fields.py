"""GIVEN notification templates with the team's own {{placeholders}} (amount, due date, link),
stored where the deployed stack reads them (SSM texts, SES templates, in the emulator) WHEN
actions are created and fired THEN the team's fields fill them; a Start whose data lacks a
placeholder of an existing template is rejected naming the field; a fire whose template has
changed since is failed for good naming the missing field — and nothing is ever sent with a
blank."""

from __future__ import annotations

import json
from typing import Any

import pytest
from moto.ses.models import ses_backends
from moto.sns.models import sns_backends

from tests.conftest import load_event
from tests.e2e.support import Stack
from tests.functional.target_support import fire
from tickwork.domain.errors import PermanentFulfillmentError, ValidationFailed
from tickwork.fire.start_record import check_start
from tickwork_local.template import ACCOUNT

REGION = "us-east-1"
OVERDUE = (
    "Hi {{name}}, {{ amount }} was due on {{dueDate}}. Pay at {{link}} (reminder {{reminder}})"
)


def _own_fields() -> dict[str, Any]:
    return dict(load_event("start/notification-own-fields")["detail"]["data"])


def _put_text(stack: Stack, name: str, text: str) -> None:
    stack.local.client("ssm").put_parameter(
        Name=f"/tickwork/templates/{name}", Value=text, Type="String", Overwrite=True
    )


def _sms_sent() -> list[str]:
    return [text for _, text in sns_backends[ACCOUNT][REGION].sms_messages.values()]


def test_an_sms_carries_the_teams_own_fields(stack: Stack, invoke, event) -> None:
    _put_text(stack, "INVOICE_OVERDUE", OVERDUE)
    result, error = invoke("StartFunction", event("start/notification-own-fields"))
    assert error is None and result["outcome"] == "created", result

    fire(stack, "SEND_NOTIFICATION", _own_fields())

    assert _sms_sent() == [
        "Hi Joojo, RM 120.50 was due on 1 December. Pay at https://pay.example.com/i/1042 "
        "(reminder 2)"
    ]


def test_a_start_lacking_a_placeholder_of_its_template_is_rejected_naming_the_field(
    stack: Stack, invoke, event
) -> None:
    _put_text(stack, "INVOICE_OVERDUE", OVERDUE)
    envelope = event("start/notification-own-fields")
    del envelope["detail"]["data"]["dueDate"], envelope["detail"]["data"]["link"]

    result, error = invoke("StartFunction", envelope)

    assert error is None and result["outcome"] == "rejected", result
    by_field = {p["field"]: p for p in result["problems"]}
    assert set(by_field) == {"data.dueDate", "data.link"}
    assert "INVOICE_OVERDUE" in by_field["data.dueDate"]["problem"]
    assert "add data.dueDate" in by_field["data.dueDate"]["fix"]
    assert stack.records.get("invoice:1042:overdue") is None  # nothing written
    rejected = stack.lifecycle.wait_for(lambda evs: len(evs) >= 1, timeout=5)
    assert [e["detail-type"] for e in rejected] == ["Schedule Rejected"]
    assert "data.dueDate" in json.dumps(rejected[0]["detail"])


def test_a_start_whose_template_is_not_put_yet_is_taken(stack: Stack, invoke, event) -> None:
    """The template may be put after the action: the fire is where it must exist."""
    result, error = invoke("StartFunction", event("start/notification-own-fields"))
    assert error is None and result["outcome"] == "created", result


def test_the_api_refuses_the_same_start_with_a_400_naming_the_field(stack: Stack, invoke) -> None:
    _put_text(stack, "INVOICE_OVERDUE", OVERDUE)
    request = load_event("api/create-action")
    data = {k: v for k, v in _own_fields().items() if k != "amount"}
    body = {"id": "invoice:7", "delay": "1h", "action": "SEND_NOTIFICATION", "data": data}
    request = {**request, "body": json.dumps(body)}

    answer, error = invoke("ApiFunction", request)

    assert error is None and answer["statusCode"] == 400, answer
    assert "data.amount" in answer["body"]
    assert stack.records.get("invoice:7") is None


def test_a_fire_whose_text_changed_since_is_failed_for_good_and_sends_nothing(
    stack: Stack,
) -> None:
    _put_text(stack, "INVOICE_OVERDUE", "Hi {{name}}, {{amount}} is late.")
    data = {k: v for k, v in _own_fields().items() if k not in ("dueDate", "link")}
    # the template changes after the action was created: it now wants a field the data lacks
    _put_text(stack, "INVOICE_OVERDUE", "Hi {{name}}, {{amount}} is late. Pay at {{link}}")

    with pytest.raises(PermanentFulfillmentError) as failure:
        fire(stack, "SEND_NOTIFICATION", data)

    assert "{{link}}" in str(failure.value) and "data.link" in str(failure.value)
    assert "nothing was sent" in str(failure.value)
    assert _sms_sent() == []


def test_an_email_template_with_a_field_the_data_lacks_is_refused_and_never_sent(
    stack: Stack,
) -> None:
    stack.local.client("ses").create_template(
        Template={
            "TemplateName": "RECEIPT",
            "SubjectPart": "Receipt {{orderNumber}}",
            "TextPart": "Hello {{name}}, you paid {{amount}}.",
        }
    )
    data = {
        "notificationType": "EMAIL",
        "templateType": "RECEIPT",
        "email": "ada@example.com",
        "name": "Ada",
        "amount": 12.5,
    }
    detail = {"id": "receipt:1", "delay": "1h", "action": "SEND_NOTIFICATION", "data": data}
    with pytest.raises(ValidationFailed) as refused:
        check_start(detail, None, stack.deps.clock.now(), stack.deps)
    assert [p.field for p in refused.value.problems] == ["data.orderNumber"]

    with pytest.raises(PermanentFulfillmentError, match=r"\{\{orderNumber\}\}"):
        fire(stack, "SEND_NOTIFICATION", data)
    assert ses_backends[ACCOUNT][REGION].sent_messages == []

    _, sent = fire(stack, "SEND_NOTIFICATION", {**data, "orderNumber": "A-1042"})
    (message,) = ses_backends[ACCOUNT][REGION].sent_messages
    filled = json.loads(message.template_data)
    assert (filled["orderNumber"], filled["amount"]) == ("A-1042", "12.5")
    assert sent["messageId"] == message.id


def test_a_start_delivered_again_after_its_template_changed_is_not_refused(
    stack: Stack, invoke, event
) -> None:
    _put_text(stack, "INVOICE_OVERDUE", OVERDUE)
    envelope = event("start/notification-own-fields")
    first, _ = invoke("StartFunction", envelope)
    assert first["outcome"] == "created", first
    _put_text(stack, "INVOICE_OVERDUE", OVERDUE + " {{newField}}")

    again, error = invoke("StartFunction", envelope)  # EventBridge delivers it again

    assert error is None and again["outcome"] == "unchanged", again


def test_an_ses_handlebars_template_sends_when_its_plain_fields_are_given(stack: Stack) -> None:
    stack.local.client("ses").create_template(
        Template={
            "TemplateName": "RECEIPT_HB",
            "SubjectPart": "Receipt {{orderNumber}}",
            "TextPart": "{{#if late}}Late. {{/if}}Paid {{amount}}.",
            "HtmlPart": "<style>@media print{.a{color:red}}</style><p>{{amount}}</p>",
        }
    )
    data = {
        "notificationType": "EMAIL",
        "templateType": "RECEIPT_HB",
        "email": "ada@example.com",
        "orderNumber": "A-7",
        "amount": "RM 5",
    }
    _, sent = fire(stack, "SEND_NOTIFICATION", data)
    (message,) = ses_backends[ACCOUNT][REGION].sent_messages
    assert message.id == sent["messageId"]


def test_an_empty_or_blank_value_fills_nothing_and_is_refused_as_missing(stack: Stack) -> None:
    _put_text(stack, "INVOICE_OVERDUE", "Hi {{name}}, {{amount}} is late.")
    data = {**_own_fields(), "amount": "  "}
    detail = {"id": "blank:1", "delay": "1h", "action": "SEND_NOTIFICATION", "data": data}
    with pytest.raises(ValidationFailed) as refused:
        check_start(detail, None, stack.deps.clock.now(), stack.deps)
    assert [p.field for p in refused.value.problems] == ["data.amount"]
    with pytest.raises(PermanentFulfillmentError, match=r"\{\{amount\}\}"):
        fire(stack, "SEND_NOTIFICATION", data)
    assert _sms_sent() == []


def test_an_email_fire_reads_the_template_as_ses_will_render_it(stack: Stack) -> None:
    """A field added to the e-mail since the action was created fails the fire, whatever a
    cache of the template says (SES renders the template as it stands)."""
    ses = stack.local.client("ses")
    template = {"TemplateName": "NEWS", "SubjectPart": "News", "TextPart": "Hi {{~name~}}"}
    ses.create_template(Template=template)
    data = {"notificationType": "EMAIL", "templateType": "NEWS", "email": "a@example.com"}
    with pytest.raises(PermanentFulfillmentError, match=r"\{\{name\}\}"):
        fire(stack, "SEND_NOTIFICATION", data)  # whitespace control hides no field
    fire(stack, "SEND_NOTIFICATION", {**data, "name": "Ada"})
    ses.update_template(Template={**template, "TextPart": "Hi {{name}}, code {{& code}}"})
    with pytest.raises(PermanentFulfillmentError, match=r"\{\{code\}\}"):
        fire(stack, "SEND_NOTIFICATION", {**data, "name": "Ada"})
    assert len(ses_backends[ACCOUNT][REGION].sent_messages) == 1
