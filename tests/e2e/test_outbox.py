"""GIVEN the local stack with templates and targets WHEN actions of every sending kind fire THEN
the outbox lists what each fire sent — SMS, push and e-mail as rendered, queue and topic
messages, events and webhooks — newest first, each with the fire that sent it, also through
the local API's /local/outbox route."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from tests.conftest import load_event
from tests.e2e.support import Stack, in_seconds
from tests.functional.target_support import Targets
from tickwork.domain.action import Status
from tickwork_local.receiver import Receiver

SENDING = ["sqs-message", "sns-message", "eventbridge-event", "notification-email"]


def _detail(name: str, action_id: str | None = None) -> dict[str, Any]:
    detail = dict(load_event(f"start/{name}")["detail"])
    for when in ("delay", "executionTime", "repeat", "frequency", "executionRemainder"):
        detail.pop(when, None)
    return {**detail, "id": action_id or detail.get("id", name), "at": in_seconds(2)}


def test_every_kind_a_fire_sends_is_in_the_outbox_with_its_fire(
    stack: Stack, receiver: Receiver
) -> None:
    targets = Targets(stack.local)
    targets.queue("orders-due")
    targets.subscribed_queue(targets.topic("order-news"), "news-reader")
    targets.bus("partners")
    targets.bus_rule_queue("partners", "partner-feed")
    stack.local.client("ses").create_template(
        Template={
            "TemplateName": "ORDER_READY",
            "SubjectPart": "Ready for {{name}}",
            "TextPart": "{{name}}, your order is ready",
        }
    )
    ssm = stack.local.client("ssm")
    for name, text in {
        "USER_LATE_PAYMENT_NOTIFICATION": "Hi {{name}}, your payment is late",
        "ORDER_READY": "{{name}}, it is ready",
    }.items():
        ssm.put_parameter(Name=f"/tickwork/templates/{name}", Value=text, Type="String")

    details = [_detail(name) for name in SENDING]
    details.append(_detail("notification-daily", "outbox:sms"))  # the seed's SMS example
    details.append(_detail("notification-push", "outbox:push"))
    details.append(
        {
            "id": "outbox:webhook",
            "at": in_seconds(2),
            "action": "HTTP_REQUEST",
            "data": {"url": receiver.url, "body": {"order": 7}},
        }
    )
    for detail in details:
        stack.start(detail)
    for detail in details:
        stack.wait_record(detail["id"], lambda a: a.status == Status.COMPLETED, timeout=30)

    messages = stack.local.outbox.messages()
    by_kind = {m["kind"]: m for m in messages}
    assert sorted(by_kind) == ["email", "event", "push", "queue", "sms", "topic", "webhook"]
    assert [m["at"] for m in messages] == sorted((m["at"] for m in messages), reverse=True)
    sms = by_kind["sms"]
    assert (sms["to"], sms["body"]) == ("+60123456789", "Hi Joojo, your payment is late")
    assert sms["fire"]["id"] == "outbox:sms" and sms["fire"]["occurrence"] == 1
    assert by_kind["push"]["body"] == "Ada, it is ready"
    email = by_kind["email"]
    assert (email["to"], email["subject"]) == ("ada@example.com", "Ready for Ada")
    assert email["body"] == "Ada, your order is ready"
    assert by_kind["queue"]["to"].endswith("/orders-due")
    assert by_kind["topic"]["to"].endswith(":order-news")
    assert by_kind["event"]["to"].endswith("event-bus/partners")
    webhook = by_kind["webhook"]
    assert (webhook["to"], webhook["status"]) == (receiver.url, 200)
    assert json.loads(webhook["body"]) == {"order": 7}
    for message in messages:  # each names its fire, and its key is the tick's
        (tick,) = stack.ticks_for(message["fire"]["id"], count=1, timeout=5)
        assert message["fire"]["idempotencyKey"] == tick["idempotencyKey"]

    # the local API serves the same, for the dashboard, behind the API's token
    with stack.local.serving_api() as url:
        request = urllib.request.Request(
            f"{url}/local/outbox?kind=sms",
            headers={"Authorization": f"Bearer {stack.local.api_token}"},
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=10) as response:
            served = json.loads(response.read())
    assert [m["fire"]["id"] for m in served["messages"]] == ["outbox:sms"]
