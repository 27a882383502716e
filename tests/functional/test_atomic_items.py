"""GIVEN the local stack's guard on the emulator's DynamoDB WHEN eight threads race the same
conditional write THEN exactly one wins each time, as DynamoDB guarantees (moto alone lets
several win), and the guard keeps the journal's view of the arguments intact."""

from __future__ import annotations

import inspect
import sys
import threading
from collections.abc import Iterator

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws
from moto.dynamodb.models import DynamoDBBackend

from tickwork_local.atomic_items import atomic_items

RACERS = 8
KEYS = 30


@pytest.fixture
def table() -> Iterator[str]:
    with mock_aws():
        boto3.client("dynamodb", region_name="us-east-1").create_table(
            TableName="race",
            KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield "race"


def _race(table: str, key: str, clients: list[object]) -> list[int]:
    winners: list[int] = []
    barrier = threading.Barrier(len(clients))

    def put(n: int, client: object) -> None:
        barrier.wait()
        try:
            client.put_item(  # type: ignore[attr-defined]
                TableName=table,
                Item={"k": {"S": key}, "holder": {"S": str(n)}},
                ConditionExpression="attribute_not_exists(k)",
            )
            winners.append(n)
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ConditionalCheckFailedException"

    threads = [threading.Thread(target=put, args=pair) for pair in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return winners


def test_one_conditional_put_wins_per_key_under_a_race(table: str) -> None:
    clients = [boto3.client("dynamodb", region_name="us-east-1") for _ in range(RACERS)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: the race shows at once
    try:
        with atomic_items():
            results = {f"key-{n}": _race(table, f"key-{n}", clients) for n in range(KEYS)}
    finally:
        sys.setswitchinterval(interval)
    assert {key: len(winners) for key, winners in results.items()} == dict.fromkeys(results, 1)


def test_the_guard_is_removed_on_exit_and_keeps_signatures() -> None:
    original = DynamoDBBackend.put_item
    with atomic_items():
        guarded = DynamoDBBackend.put_item
        assert guarded is not original
        # The journal binds the backend's arguments by name through the guard.
        assert inspect.signature(guarded) == inspect.signature(original)
        with atomic_items():  # nested stacks share the outer guard
            assert DynamoDBBackend.put_item is guarded
    assert DynamoDBBackend.put_item is original
