"""GIVEN the emulated endpoint served on a loopback port WHEN an outside caller schedules an
action through that port THEN it fires once, and the port and the stack's own in-process calls
see the same emulated AWS."""

from __future__ import annotations

import json

import boto3

from tests.e2e.support import FAST, Stack, assert_never_early, in_seconds
from tickwork.domain.action import Status
from tickwork_local.server import LOCAL_CREDENTIALS, serving
from tickwork_local.stack import LocalStack


def test_stack_served_on_a_port_fires_once() -> None:
    with serving() as url, LocalStack.from_repo(parameters=FAST).running() as local:
        stack = Stack(local)
        # The stack's own calls skip the socket ...
        assert local.client("events").meta.endpoint_url != url
        # ... while a caller outside goes through it, as the CLI and the AWS CLI do.
        outside = {
            "endpoint_url": url,
            "region_name": local.region,
            "aws_access_key_id": LOCAL_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "aws_secret_access_key": LOCAL_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        }
        answer = boto3.client("events", **outside).put_events(
            Entries=[
                {
                    "EventBusName": local.bus,
                    "Source": "app.orders",
                    "DetailType": "Schedule Start",
                    "Detail": json.dumps({"id": "served:1", "at": in_seconds(2)}),
                }
            ]
        )
        assert answer["FailedEntryCount"] == 0

        stack.wait_record("served:1", lambda a: a.status == Status.COMPLETED)
        ticks = stack.ticks_for("served:1", count=1, timeout=2)
        assert len(ticks) == 1
        assert_never_early(ticks)
        item = boto3.client("dynamodb", **outside).get_item(
            TableName=local.outputs["ActionsTableName"], Key={"id": {"S": "served:1"}}
        )
        assert item["Item"]["status"]["S"] == "COMPLETED"
