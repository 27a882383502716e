"""GIVEN the EventBridge adapter against a bus (moto) WHEN a batch's events are published
together THEN they go out 10 to a PutEvents call, every one reaches the bus's subscribers, and
the entries the bus refuses are raised by name once every chunk was tried."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from tickwork.adapters.eventbridge import EventBridgePublisher, EventNotAccepted
from tickwork.domain.announcements import Stopped


@pytest.fixture
def bus() -> Iterator[dict[str, Any]]:
    with mock_aws():
        events = boto3.client("events", region_name="us-east-1")
        sqs = boto3.client("sqs", region_name="us-east-1")
        events.create_event_bus(Name="tickwork-test")
        url = sqs.create_queue(QueueName="subscriber")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
        events.put_rule(
            Name="all", EventBusName="tickwork-test", EventPattern='{"source": ["tickwork"]}'
        )
        events.put_targets(
            Rule="all",
            EventBusName="tickwork-test",
            Targets=[{"Id": "q", "Arn": arn["QueueArn"]}],
        )
        calls: list[int] = []
        events.meta.events.register(
            "before-parameter-build.events.PutEvents",
            lambda params, **_: calls.append(len(params["Entries"])),
        )
        yield {"events": events, "sqs": sqs, "url": url, "calls": calls}


def _received(bus: dict[str, Any]) -> list[str]:
    ids: list[str] = []
    while True:
        got = bus["sqs"].receive_message(QueueUrl=bus["url"], MaxNumberOfMessages=10)
        if not got.get("Messages"):
            return ids
        ids += [json.loads(m["Body"])["detail"]["id"] for m in got["Messages"]]


def test_a_batch_of_events_goes_out_ten_to_a_call(bus) -> None:
    publisher = EventBridgePublisher("tickwork-test", "tickwork", client=bus["events"])

    publisher.publish_all([Stopped(f"a{n}", 1) for n in range(25)])

    assert bus["calls"] == [10, 10, 5]
    assert sorted(_received(bus)) == sorted(f"a{n}" for n in range(25))


def test_entries_the_bus_refuses_are_raised_by_name_once_every_chunk_was_tried() -> None:
    # moto accepts every entry: AWS's answer to a partly refused call is given by botocore's
    # Stubber, in the shape PutEvents documents (FailedEntryCount, ErrorCode per entry).
    client = boto3.client("events", region_name="us-east-1")
    publisher = EventBridgePublisher("tickwork-test", "tickwork", client=client)
    ok, throttled = {"EventId": "e"}, {"ErrorCode": "ThrottlingException", "ErrorMessage": "slow"}
    with Stubber(client) as stub:
        stub.add_response("put_events", {"FailedEntryCount": 1, "Entries": [ok] * 9 + [throttled]})
        stub.add_response("put_events", {"FailedEntryCount": 0, "Entries": [ok] * 2})
        with pytest.raises(EventNotAccepted, match="Schedule Stopped: ThrottlingException"):
            publisher.publish_all([Stopped(f"a{n}", 1) for n in range(12)])
        stub.assert_no_pending_responses()  # the second chunk went out all the same
