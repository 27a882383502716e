"""GIVEN the publisher client on moto's EventBridge (a rule copies every event on the bus to an
SQS queue, so what was published can be read back) WHEN a service schedules and steers
THEN a bad request raises at the call site naming the field and its fix and nothing is
published; a good one is published as the stack reads it, signed when the client holds the
key, and the client returns its event id, action id and next fire times."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.events import DetailType
from tickwork.domain.start_request import parse_start_detail
from tickwork.integrity.signed_events import check_event_signature
from tickwork_client import BusRefused, TickworkClient, at, cron, every, rate

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
BUS = "tickwork-test-bus"
KEY = b"start-signing-key"


class Bus:
    """A bus whose every event lands in a queue, read back in order."""

    def __init__(self) -> None:
        self.events = boto3.client("events", region_name="us-east-1")
        sqs = boto3.client("sqs", region_name="us-east-1")
        self.events.create_event_bus(Name=BUS)
        self.queue = sqs.create_queue(QueueName="seen")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=self.queue, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        self.events.put_rule(
            Name="all", EventBusName=BUS, EventPattern=json.dumps({"source": [{"prefix": ""}]})
        )
        self.events.put_targets(Rule="all", EventBusName=BUS, Targets=[{"Id": "q", "Arn": arn}])
        self._sqs = sqs

    def seen(self) -> list[dict[str, Any]]:
        messages = self._sqs.receive_message(QueueUrl=self.queue, MaxNumberOfMessages=10).get(
            "Messages", []
        )
        return [json.loads(m["Body"]) for m in messages]


@pytest.fixture
def bus() -> Iterator[Bus]:  # tests/conftest.py keeps real credentials and endpoints away
    with mock_aws():
        yield Bus()


def _client(bus: Bus, **options: Any) -> TickworkClient:
    return TickworkClient(bus.events, BUS, clock=lambda: NOW, **options)


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        ({"when": cron("61 * * * *")}, "cron"),
        ({"when": "next tuesday"}, "expression"),
        ({"when": NOW - timedelta(hours=1)}, "at"),
        ({"when": timedelta(seconds=1.5)}, "when"),
        ({"when": rate("5 minutes"), "timezone": "Mars/Olympus"}, "timezone"),
        ({"when": rate("5 minutes"), "action": "SEND_FAX"}, "action"),
        ({"when": rate("5 minutes"), "action": "SQS_MESSAGE", "data": {}}, "data.queueArn"),
        ({"when": rate("5 minutes"), "group": "no spaces allowed"}, "group"),
        ({"when": rate("5 minutes"), "data": {"blob": "x" * 200_000}}, "data"),
        ({}, "when"),
        ({"when": rate("5 minutes", count=3), "times": 4}, "times"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_a_bad_request_raises_naming_the_field_and_publishes_nothing(
    bus: Bus, request_: dict[str, Any], field: str
) -> None:
    client = _client(bus)

    with pytest.raises(ValidationFailed) as refused:
        client.schedule("orders:42", **request_)

    assert field in {problem.field for problem in refused.value.problems}
    assert all(problem.fix for problem in refused.value.problems)
    assert bus.seen() == []
    # and the same client publishes a good one (so the queue does see what is sent)
    client.schedule("orders:42", rate("5 minutes"))
    assert [e["detail"]["id"] for e in bus.seen()] == ["orders:42"]


def test_schedule_publishes_the_start_and_returns_what_it_sent(bus: Bus) -> None:
    client = _client(bus)

    sent = client.schedule(
        "orders:42:reminder",
        cron("0 9 * * MON-FRI"),
        timezone="Asia/Kuala_Lumpur",
        action="TICK",
        data={"order": 42},
        group="reminders",
        times=3,
    )

    (event,) = bus.seen()
    assert event["id"] == sent.event_id and event["detail-type"] == "Schedule Start"
    assert event["source"] == "tickwork.client"
    assert event["detail"] == {
        "id": "orders:42:reminder",
        "cron": "0 9 * * MON-FRI",
        "timezone": "Asia/Kuala_Lumpur",
        "action": "TICK",
        "data": {"order": 42},
        "group": "reminders",
        "executionRemainder": 3,
    }
    assert sent.action_id == "orders:42:reminder"
    # 09:00 in Kuala Lumpur is 01:00 UTC; 2026-03-07 is a Saturday: Monday to Wednesday
    assert sent.next_fires == [
        datetime(2026, 3, 9, 1, 0, tzinfo=UTC),
        datetime(2026, 3, 10, 1, 0, tzinfo=UTC),
        datetime(2026, 3, 11, 1, 0, tzinfo=UTC),
    ]


def test_an_action_without_an_id_is_named_for_its_event(bus: Bus) -> None:
    sent = _client(bus).schedule(when=timedelta(minutes=5))

    assert sent.action_id == f"evt-{sent.event_id}"
    assert sent.next_fires == [NOW + timedelta(minutes=5)]
    assert bus.seen()[0]["detail"] == {"delay": "300s", "action": "TICK"}


@pytest.mark.parametrize(
    ("when", "fields"),
    [
        (datetime(2026, 3, 8, 9, 30, tzinfo=UTC), {"at": "2026-03-08T09:30:00.000Z"}),
        (at("at(2026-03-08T09:30:00)"), {"at": "at(2026-03-08T09:30:00)"}),
        (timedelta(minutes=90), {"delay": "5400s"}),
        (cron("cron(0 9 ? * MON-FRI *)"), {"cron": "cron(0 9 ? * MON-FRI *)"}),
        (rate(timedelta(hours=2)), {"rate": "rate(2 hours)"}),
        (rate(timedelta(seconds=90)), {"rate": "rate(90 seconds)"}),
        (rate("1 day"), {"rate": "rate(1 day)"}),
        (
            every("daily", first=datetime(2026, 3, 8, 8, tzinfo=UTC)),
            {"frequency": "DAILY", "at": "2026-03-08T08:00:00.000Z"},
        ),
        ("rate(10 minutes)", {"rate": "rate(10 minutes)"}),
        (every("WEEKLY", count=4), {"frequency": "WEEKLY", "executionRemainder": 4}),
        (cron("0 * * * *", count=2), {"cron": "0 * * * *", "executionRemainder": 2}),
        (rate("2 hours", count=3), {"rate": "rate(2 hours)", "executionRemainder": 3}),
        ("30 * * * *", {"cron": "30 * * * *"}),
    ],
)
def test_each_typed_when_becomes_the_start_field_the_stack_reads(
    bus: Bus, when: Any, fields: dict[str, Any]
) -> None:
    sent = _client(bus).schedule("w:1", when)

    detail = bus.seen()[0]["detail"]
    assert {k: v for k, v in detail.items() if k not in ("id", "action")} == fields
    # as the stack schedules the same detail, received now
    assert sent.next_fires == parse_start_detail(detail, NOW).schedule.upcoming(NOW, 5)


def test_a_signed_client_signs_every_inbound_event_with_the_stack_key(bus: Bus) -> None:
    client = _client(bus, signing_key=KEY)

    client.schedule("s:1", timedelta(minutes=5))
    client.pause("s:1", note="holiday")
    client.resume("s:1")
    client.run_now("s:1", request_id="r-1")
    client.cancel("s:1")

    events = bus.seen()
    assert [e["detail-type"] for e in events] == [
        DetailType.START,
        DetailType.PAUSE,
        DetailType.RESUME,
        DetailType.RUN_NOW,
        DetailType.STOP,
    ]
    # Signed at the client's now (its clock: a virtual-time local stack's, when it is one)
    checked = [check_event_signature(e["detail-type"], e["detail"], KEY, NOW) for e in events]
    assert [c.detail for c in checked] == [
        {"id": "s:1", "delay": "300s", "action": "TICK"},
        {"id": "s:1", "note": "holiday"},
        {"id": "s:1"},
        {"id": "s:1", "requestId": "r-1"},
        {"id": "s:1"},
    ]


def test_steering_refuses_a_bad_id_or_note_and_group_changes_need_the_api(bus: Bus) -> None:
    client = _client(bus)

    with pytest.raises(ValidationFailed) as bad_id:
        client.cancel("no spaces")
    with pytest.raises(ValidationFailed) as long_note:
        client.pause("p:1", note="x" * 501)
    with pytest.raises(ValidationFailed) as no_api:
        client.pause_group("reminders")

    assert bad_id.value.problems[0].field == "id"
    assert long_note.value.problems[0].field == "note"
    assert no_api.value.problems[0].field == "api"
    assert bus.seen() == []


def test_the_client_imports_none_of_the_stacks_runtime() -> None:
    """A team's service imports the client with the stack's models, not its Lambda runtime,
    its AWS adapters, the local stack or the CLI."""
    code = (
        "import sys, tickwork_client\n"
        "bad = ('aws_lambda_powertools', 'moto', 'tickwork.adapters', 'tickwork.steering', "
        "'tickwork.fire', 'tickwork.api', 'tickwork_local', 'tickwork_cli', 'click')\n"
        "inside = tuple(b + '.' for b in bad)\n"
        "print(sorted(m for m in sys.modules if m in bad or m.startswith(inside)))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert loaded.strip() == "[]"


def test_a_naive_datetime_needs_its_zone_and_is_read_in_it(bus: Bus) -> None:
    """A datetime without tzinfo would silently be UTC on the stack: the client asks which
    zone it is in, and with timezone= the stack reads it there."""
    client = _client(bus)
    with pytest.raises(ValidationFailed) as refused:
        client.schedule("z:1", datetime(2026, 3, 8, 9, 30))
    assert (
        refused.value.problems[0].field == "when" and "timezone=" in refused.value.problems[0].fix
    )
    with pytest.raises(ValidationFailed):
        client.schedule("z:1", every("DAILY", first=datetime(2026, 3, 8, 9, 30)))
    assert bus.seen() == []

    sent = client.schedule("z:1", datetime(2026, 3, 8, 9, 30), timezone="Asia/Kuala_Lumpur")

    assert sent.next_fires == [datetime(2026, 3, 8, 1, 30, tzinfo=UTC)]  # 09:30 at UTC+8


@pytest.mark.parametrize("bound", ["start", "end"])
def test_a_naive_bound_needs_its_zone_as_a_naive_when_does(bus: Bus, bound: str) -> None:
    client = _client(bus)
    naive = datetime(2027, 3, 8, 9, 30)

    with pytest.raises(ValidationFailed) as refused:
        client.schedule("z:2", rate("1 hour"), **{bound: naive})

    assert refused.value.problems[0].field == bound and "timezone=" in refused.value.problems[0].fix
    assert bus.seen() == []
    sent = client.schedule("z:2", rate("1 hour"), timezone="Asia/Kuala_Lumpur", **{bound: naive})
    assert sent.detail[f"{bound}Time"] == "2027-03-08T09:30:00"  # read in that zone


def _nested(depth: int) -> dict:
    """An object ``depth`` levels of ``{"k": ...}`` deep."""
    inner: dict = {}
    for _ in range(depth):
        inner = {"k": inner}
    return inner


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"amount": 1e200}, "data.amount"),
        ({"amount": 1e-200}, "data.amount"),
        ({"items": [12345678901234567890123456789012345678901]}, "data.items.0"),
        ({"note": "half a pair \ud800"}, "data.note"),
        (_nested(25), "data" + ".k" * 25),
        (_nested(900), "data" + ".k" * 25),
    ],
    ids=["1e200", "1e-200", "41-digits", "lone-surrogate", "25-deep", "900-deep"],
)
def test_values_no_store_can_hold_are_refused_by_field_before_sending(
    bus: Bus, data: dict, field: str
) -> None:
    """JSON takes them; DynamoDB does not: accepted, they would end as a dead-lettered Start."""
    client = _client(bus)

    with pytest.raises(ValidationFailed) as refused:
        client.schedule("n:1", rate("1 hour"), data=data)

    assert [p.field for p in refused.value.problems] == [field]
    assert bus.seen() == []


def test_data_that_is_not_json_is_named_before_anything_is_sent(bus: Bus) -> None:
    client = _client(bus, signing_key=KEY)
    with pytest.raises(ValidationFailed) as refused:
        client.schedule("j:1", rate("1 hour"), data={"order": {"due": NOW}})
    assert refused.value.problems[0].field == "data.order.due"
    assert bus.seen() == []


def test_arguments_are_named_as_the_call_names_them(bus: Bus) -> None:
    client = _client(bus)
    with pytest.raises(ValidationFailed) as refused:
        client.schedule("a:1", rate("1 hour"), catch_up="SOMETIMES", times=0)
    fields = {problem.field for problem in refused.value.problems}
    assert fields == {"catch_up (catchUp)", "times (executionRemainder)"}
    with pytest.raises(ValidationFailed) as bad_id:
        client.schedule("bad id", rate("1 hour"))
    assert bad_id.value.problems[0].field == "action_id (id)"
    with pytest.raises(ValidationFailed) as long_request:
        client.run_now("a:1", request_id="r" * 1000)
    assert long_request.value.problems[0].field == "requestId"
    assert bus.seen() == []


def test_the_stacks_own_action_types_are_checked_with_their_models(bus: Bus) -> None:
    from pydantic import BaseModel, ConfigDict

    class FaxData(BaseModel):
        model_config = ConfigDict(extra="forbid")
        number: str

    client = _client(bus, action_models={"SEND_FAX": FaxData})
    with pytest.raises(ValidationFailed) as refused:
        client.schedule("f:1", rate("1 hour"), action="SEND_FAX", data={"numbr": "1"})
    assert {p.field for p in refused.value.problems} >= {"data.number"}

    client.schedule("f:1", rate("1 hour"), action="SEND_FAX", data={"number": "1"})
    assert bus.seen()[0]["detail"]["action"] == "SEND_FAX"


class _Throttled:
    """EventBridge answering a call with a failed entry, as it does when throttled (moto has no
    such failure): then as the bus it wraps."""

    def __init__(self, events: Any, failures: int, code: str = "ThrottlingException") -> None:
        self._events, self._failures, self._code = events, failures, code
        self.calls = 0

    def put_events(self, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        self.calls += 1
        if self.calls <= self._failures:
            failed = {"ErrorCode": self._code, "ErrorMessage": "Rate exceeded"}
            return {"FailedEntryCount": 1, "Entries": [failed]}
        return dict(self._events.put_events(Entries=Entries))


def test_a_throttled_entry_is_put_again_and_a_refused_one_raises(bus: Bus) -> None:
    throttled = _Throttled(bus.events, failures=2)
    client = TickworkClient(throttled, BUS, clock=lambda: NOW, sleep=lambda _: None)
    sent = client.schedule("t:1", rate("1 hour"))
    assert throttled.calls == 3 and [e["id"] for e in bus.seen()] == [sent.event_id]

    refused = _Throttled(bus.events, failures=1, code="AccessDeniedException")
    client = TickworkClient(refused, BUS, clock=lambda: NOW, sleep=lambda _: None)
    with pytest.raises(BusRefused, match="AccessDeniedException"):
        client.schedule("t:2", rate("1 hour"))
    assert refused.calls == 1


def test_waiting_for_a_status_that_is_not_one_is_refused(bus: Bus) -> None:
    client = _client(bus)
    with pytest.raises(ValidationFailed) as refused:
        client.wait("w:1", "PAUSD")
    assert refused.value.problems[0].field == "until"
