"""GIVEN the records port and the tabs port (fake and DynamoDB) WHEN a batch's attempts write
their members' records THEN the counts and fire totals are exact once every write is counted
(on DynamoDB, once the count function has folded the table's stream), whatever settles the
batch's tab: the batch at its end, a retry of its task after a crash, the reconciler after the
batch ended — none adds anything twice. A tab the release before left open on a record is
still settled once, by the next write of that record or by the reconciler.
docs/protocol.md, "Counts and fire totals"."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import boto3
import pytest

from tests.contract.conftest import Stores
from tickwork.adapters.dynamodb_record import FORMAT_VERSION
from tickwork.adapters.dynamodb_records import DynamoDBRecords
from tickwork.domain.action import Action, Occurrence, Status
from tickwork.domain.fire import Outcome
from tickwork.domain.selection import Selection
from tickwork.domain.times import to_epoch_ms
from tickwork.ports import TabbedRecords

BATCH = "b-1-abc"


def _tab(stores: Stores, attempt: int = 0, members: int = 5) -> TabbedRecords:
    ids = [f"t:{n}" for n in range(members)]
    return stores.tabs.open(BATCH, attempt, ids, stores.clock.now())


def _complete(stores: Stores, records: object, action_id: str) -> Action:
    """Claim the action's fire, then record it fired and COMPLETED, as a batch task does."""
    action = stores.records.get(action_id)
    assert action is not None and action.execution_time is not None
    claimed = replace(action, status=Status.IN_PROGRESS, version=action.version + 1)
    records.save(claimed, action.version)  # type: ignore[attr-defined]
    now = stores.clock.now()
    fired = Occurrence(1, action.execution_time, now, 1, Outcome.FIRED, late_ms=0)
    expires = int((now + timedelta(days=10)).timestamp())
    done = replace(
        claimed,
        status=Status.COMPLETED,
        version=claimed.version + 1,
        ttl=expires,
        history=(fired,),
    )
    records.save(done, claimed.version, recorded=fired)  # type: ignore[attr-defined]
    return done


def _counts(stores: Stores) -> tuple[int, int]:
    """(waiting, completed): PENDING with IN_PROGRESS, and COMPLETED."""
    counts = stores.queries.count(Selection())
    return counts["PENDING"] + counts["IN_PROGRESS"], counts["COMPLETED"]


def _fired(stores: Stores) -> int:
    """The fire totals of the clock's minute: how many fires were counted."""
    minute = to_epoch_ms(stores.clock.now()) // 60_000
    return sum(
        sum(kinds.values()) for kinds in stores.tallies.read(None, False, minute, minute).values()
    )


def test_a_batchs_writes_are_counted_once_whatever_settles_its_tab(stores: Stores) -> None:
    for n in range(5):
        stores.add(f"t:{n}")
    tab = _tab(stores)

    for n in range(3):
        _complete(stores, tab, f"t:{n}")

    assert (_counts(stores), _fired(stores)) == ((2, 3), 3)
    assert tab.settle() == 0  # nothing carried: each write is counted as itself
    assert stores.tabs.settle(f"{BATCH}#0") == 0  # the reconciler, after the batch ended
    assert (_counts(stores), _fired(stores)) == ((2, 3), 3)


@pytest.mark.parametrize("attempt", [0, 1])
def test_a_retried_or_redriven_attempt_counts_each_write_once(stores: Stores, attempt: int) -> None:
    """A retry numbers its attempt on (1), a redrive from 0 again: either way the writes of
    the attempt that died and of the one after are each counted once, and no tab is left open
    for the reconciler."""
    for n in range(3):
        stores.add(f"t:{n}")
    crashed = _tab(stores, 0, 3)
    for n in range(2):
        _complete(stores, crashed, f"t:{n}")  # and the task died before settle

    assert stores.tabs.settle(f"{BATCH}#0") == 0  # the retry, first thing
    again = _tab(stores, attempt, 3)
    _complete(stores, again, "t:2")

    assert again.settle() == 0
    assert (_counts(stores), _fired(stores)) == ((0, 3), 3)
    assert stores.tabs.open_tabs(stores.clock.now() + timedelta(days=1)) == []


def test_the_next_write_of_a_member_after_its_batch_counts_only_its_own_change(
    stores: Stores,
) -> None:
    for n in range(2):
        stores.add(f"t:{n}")
    tab = _tab(stores, 0, 2)
    done = _complete(stores, tab, "t:0")

    # a write outside the batch (a retry by hand, a replace) before the batch ends
    again = replace(done, version=done.version + 1, status=Status.PENDING, ttl=None)
    stores.records.save(again, done.version)

    assert tab.settle() == 0
    assert (_counts(stores), _fired(stores)) == ((2, 0), 1)  # its fire counted, once


def test_a_purge_of_a_member_while_its_tab_is_open_counts_nothing_twice(stores: Stores) -> None:
    for n in range(2):
        stores.add(f"t:{n}")
    tab = _tab(stores, 0, 2)
    _complete(stores, tab, "t:0")

    stores.records.delete("t:0")

    assert tab.settle() == 0
    assert (_counts(stores), _fired(stores)) == ((1, 0), 1)


def test_a_write_with_no_change_to_the_counts_leaves_nothing_on_the_tab(stores: Stores) -> None:
    action = stores.add("t:0")
    tab = _tab(stores, 0, 1)

    tab.save(replace(action, status=Status.IN_PROGRESS, version=action.version + 1), 1)

    assert tab.settle() == 0
    assert stores.tabs.open_tabs(stores.clock.now() + timedelta(days=1)) == []  # never opened
    assert _counts(stores) == (1, 0)


def _legacy_tab(stores: Stores, action_id: str, carried: list[str]) -> Any:
    """The record as the release before left it in an open batch tab: ``uncounted`` changes
    under the tab, the tab item open, the counters not moved yet."""
    table = boto3.resource("dynamodb").Table(stores.records._name)  # type: ignore[attr-defined]
    table.put_item(
        Item={
            "id": f"#tab#{BATCH}#0",
            "tabShard": "tabs#0",
            "openedAt": to_epoch_ms(stores.clock.now()),
            "version": 0,
            "members": {action_id},
        }
    )
    table.update_item(
        Key={"id": action_id},
        UpdateExpression="SET uncounted = :u REMOVE tally",
        ExpressionAttributeValues={":u": {f"{BATCH}#0": carried}},
    )
    return table


@pytest.mark.parametrize("settled_by", ["the next write", "the reconciler"])
def test_a_tab_the_release_before_left_open_is_settled_once(
    stores: Stores, settled_by: str
) -> None:
    """Upgraded while a batch of the release before ran: its member's record carries the
    batch's changes under the open tab. The next write of that record settles them in its own
    transaction (and counts itself there, not through the fold), or the reconciler settles the
    tab: either way each change is added once."""
    if not isinstance(stores.records, DynamoDBRecords):
        pytest.skip("the fake keeps no item of the release before")
    stores.add("t:0")
    action = stores.records.get("t:0")
    assert action is not None
    minute = to_epoch_ms(stores.clock.now()) // 60_000
    _legacy_tab(stores, "t:0", [f"f/+#m{minute} onTime 1"])

    if settled_by == "the next write":
        # (by a function that had not read it: the record was written by the release before)
        fresh = DynamoDBRecords(stores.records._name)
        fresh.save(replace(action, version=action.version + 1), action.version)
        assert stores.tabs.settle(f"{BATCH}#0") == 0
    else:
        assert stores.tabs.open_tabs(stores.clock.now()) == [f"{BATCH}#0"]
        assert stores.tabs.settle(f"{BATCH}#0") == 1
        assert stores.tabs.settle(f"{BATCH}#0") == 0

    assert (_counts(stores), _fired(stores)) == ((1, 0), 1)
    assert stores.tabs.open_tabs(stores.clock.now() + timedelta(days=1)) == []


def test_a_write_tells_the_fold_its_version_and_its_fire(stores: Stores) -> None:
    """The record's ``tally`` (``<version>``, then the kind and minute of the fire it records)
    is what the fold counts the write by; the item carries no ``uncounted`` changes."""
    if not isinstance(stores.records, DynamoDBRecords):
        pytest.skip("the fake keeps no DynamoDB item")
    stores.add("t:0")
    done = _complete(stores, stores.records, "t:0")
    table = boto3.resource("dynamodb").Table(stores.records._name)
    item = table.get_item(Key={"id": "t:0"})["Item"]
    minute = to_epoch_ms(stores.clock.now()) // 60_000

    assert item["tally"] == f"{done.version} onTime {minute}"
    assert "uncounted" not in item and item["fmt"] == FORMAT_VERSION
