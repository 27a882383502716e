"""GIVEN the records port (fake and DynamoDB) WHEN a batch's writes leave their counter changes
on a tab THEN the counts are exact once the tab's changes are added — once, across a crash
before adding them, a crash after, and a record written again meanwhile."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import boto3
import pytest

from tests.contract.conftest import Stores
from tickwork.adapters.dynamodb_records import DynamoDBRecords
from tickwork.domain.action import Action, Status
from tickwork.domain.selection import Selection


def _complete(stores: Stores, records: object, action_id: str) -> Action:
    """Claim the action's fire, then record it COMPLETED, as a batch task does."""
    action = stores.records.get(action_id)
    assert action is not None
    claimed = replace(action, status=Status.IN_PROGRESS, version=action.version + 1)
    records.save(claimed, action.version)  # type: ignore[attr-defined]
    expires = int((stores.clock.now() + timedelta(days=10)).timestamp())
    done = replace(claimed, status=Status.COMPLETED, version=claimed.version + 1, ttl=expires)
    records.save(done, claimed.version)  # type: ignore[attr-defined]
    return done


def _counts(stores: Stores) -> tuple[int, int]:
    """(waiting, completed): PENDING with IN_PROGRESS, and COMPLETED."""
    counts = stores.queries.count(Selection())
    return counts["PENDING"] + counts["IN_PROGRESS"], counts["COMPLETED"]


def test_the_changes_of_a_batch_are_counted_once_when_the_tab_adds_them(stores: Stores) -> None:
    for n in range(5):
        stores.add(f"t:{n}")
    tab = stores.records.counting_later("b-1-abc", 0)

    for n in range(3):
        _complete(stores, tab, f"t:{n}")

    assert tab.add_counts() == 3
    assert _counts(stores) == (2, 3)
    assert tab.add_counts() == 0  # nothing left on it
    assert _counts(stores) == (2, 3)


def test_a_retry_after_a_crash_before_adding_takes_up_the_changes_left(stores: Stores) -> None:
    for n in range(3):
        stores.add(f"t:{n}")
    crashed = stores.records.counting_later("b-1-abc", 0)
    for n in range(2):
        _complete(stores, crashed, f"t:{n}")  # and the task died before add_counts

    retry = stores.records.counting_later("b-1-abc", 1)
    for n in range(2):
        retry.recover(f"t:{n}")
    _complete(stores, retry, "t:2")

    assert retry.add_counts() == 3
    assert _counts(stores) == (0, 3)


def test_a_retry_after_a_crash_after_adding_counts_nothing_twice(stores: Stores) -> None:
    for n in range(2):
        stores.add(f"t:{n}")
    first = stores.records.counting_later("b-1-abc", 0)
    for n in range(2):
        _complete(stores, first, f"t:{n}")
    assert first.add_counts() == 2  # and the task died before it returned

    retry = stores.records.counting_later("b-1-abc", 1)
    for n in range(2):
        retry.recover(f"t:{n}")

    assert retry.add_counts() == 0
    assert _counts(stores) == (0, 2)


def test_another_tab_never_takes_up_a_change_it_did_not_make(stores: Stores) -> None:
    stores.add("t:0")
    mine = stores.records.counting_later("b-1-abc", 0)
    _complete(stores, mine, "t:0")

    other = stores.records.counting_later("b-2-def", 1)
    other.recover("t:0")

    assert other.add_counts() == 0
    assert mine.add_counts() == 1
    assert _counts(stores) == (0, 1)


def test_a_write_with_no_change_to_the_counts_leaves_nothing_on_the_tab(stores: Stores) -> None:
    action = stores.add("t:0")
    tab = stores.records.counting_later("b-1-abc", 0)

    tab.save(replace(action, status=Status.IN_PROGRESS, version=action.version + 1), 1)

    assert tab.add_counts() == 0
    assert _counts(stores) == (1, 0)


def test_the_tab_rides_on_the_record_compactly_and_an_older_form_still_reads(
    stores: Stores,
) -> None:
    """The record carries ``countsDue`` as a list (the tab, then ``"<counter> <field> <n>"``);
    a record a batch wrote before, with the map form, is taken up by a retry all the same."""
    if not isinstance(stores.records, DynamoDBRecords):
        pytest.skip("the fake keeps no DynamoDB item")
    stores.add("t:0")
    crashed = stores.records.counting_later("b-1-abc", 0)
    _complete(stores, crashed, "t:0")  # and the task died before add_counts
    table = boto3.resource("dynamodb").Table(stores.records._name)
    due = table.get_item(Key={"id": "t:0"})["Item"]["countsDue"]
    assert due[0] == "b-1-abc" and all(" COMPLETED " in a or " PENDING " in a for a in due[1:])
    adds: dict[str, dict[str, int]] = {}
    for text in due[1:]:
        counter, name, value = text.rsplit(" ", 2)
        adds.setdefault("#count#" + counter, {})[name] = int(value)
    table.update_item(
        Key={"id": "t:0"},
        UpdateExpression="SET countsDue = :old",
        ExpressionAttributeValues={":old": {"tab": "b-1-abc", "attempt": 0, "adds": adds}},
    )

    retry = stores.records.counting_later("b-1-abc", 1)
    retry.recover("t:0")

    assert retry.add_counts() == 1
    assert _counts(stores) == (0, 1)
