"""GIVEN the records port and the tabs port (fake and DynamoDB) WHEN a batch's writes carry
their counter and fire-total changes on its tab THEN the counts and totals are exact once the
tab is settled — once, by whoever settles it: the batch at its end, a retry of its task after
a crash, the reconciler after the batch ended, or the next write of a member's record.
docs/protocol.md, "Counts and fire totals"."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import timedelta

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


def test_a_batchs_changes_are_added_once_when_its_tab_is_settled(stores: Stores) -> None:
    for n in range(5):
        stores.add(f"t:{n}")
    tab = _tab(stores)

    for n in range(3):
        _complete(stores, tab, f"t:{n}")

    assert (_counts(stores), _fired(stores)) == ((5, 0), 0)  # carried, not added yet
    assert tab.settle() == 3
    assert (_counts(stores), _fired(stores)) == ((2, 3), 3)
    assert tab.settle() == 0  # settled: nothing left on it
    assert (_counts(stores), _fired(stores)) == ((2, 3), 3)


def test_a_retry_settles_first_the_tab_of_the_attempt_that_crashed(stores: Stores) -> None:
    for n in range(3):
        stores.add(f"t:{n}")
    crashed = _tab(stores, 0, 3)
    for n in range(2):
        _complete(stores, crashed, f"t:{n}")  # and the task died before settle

    assert stores.tabs.settle(f"{BATCH}#0") == 2  # the retry, first thing
    retry = _tab(stores, 1, 3)
    _complete(stores, retry, "t:2")

    assert retry.settle() == 1
    assert (_counts(stores), _fired(stores)) == ((0, 3), 3)


@pytest.mark.parametrize("earlier_settled", [True, False])
def test_a_redriven_attempt_never_writes_on_the_tab_of_an_earlier_run(
    stores: Stores, earlier_settled: bool
) -> None:
    """A redrive of a failed batch runs its task again from attempt 0: the tab of that name
    (settled by the reconciler, or still open) is settled first, and the new run's changes
    ride on a tab of their own, added once."""
    for n in range(3):
        stores.add(f"t:{n}")
    first = _tab(stores, 0, 3)
    _complete(stores, first, "t:0")  # and the batch failed past its retries
    if earlier_settled:
        assert stores.tabs.settle(f"{BATCH}#0") == 1  # the reconciler, after it ended

    redriven = _tab(stores, 0, 3)
    for n in (1, 2):
        _complete(stores, redriven, f"t:{n}")

    assert redriven.settle() == 2
    assert (_counts(stores), _fired(stores)) == ((0, 3), 3)
    assert stores.tabs.open_tabs(stores.clock.now() + timedelta(days=1)) == []


def test_a_tab_settled_already_adds_nothing_twice(stores: Stores) -> None:
    for n in range(2):
        stores.add(f"t:{n}")
    first = _tab(stores, 0, 2)
    for n in range(2):
        _complete(stores, first, f"t:{n}")
    assert first.settle() == 2  # and the task died before it returned

    assert stores.tabs.settle(f"{BATCH}#0") == 0

    assert (_counts(stores), _fired(stores)) == ((0, 2), 2)


def test_an_open_tab_is_found_and_settled_from_its_members_records(stores: Stores) -> None:
    for n in range(3):
        stores.add(f"t:{n}")
    tab = _tab(stores, 0, 3)
    for n in range(3):
        _complete(stores, tab, f"t:{n}")  # and the batch failed past its retries

    later = stores.clock.now() + timedelta(minutes=1)
    assert stores.tabs.open_tabs(stores.clock.now() - timedelta(seconds=1)) == []  # not yet open
    assert stores.tabs.open_tabs(stores.clock.now()) == [f"{BATCH}#0"]
    assert stores.tabs.settle(f"{BATCH}#0") == 3

    assert stores.tabs.open_tabs(later) == []
    assert (_counts(stores), _fired(stores)) == ((0, 3), 3)


def test_the_next_write_of_a_member_settles_its_changes_while_the_tab_is_open(
    stores: Stores,
) -> None:
    for n in range(2):
        stores.add(f"t:{n}")
    tab = _tab(stores, 0, 2)
    done = _complete(stores, tab, "t:0")

    # a write outside the batch (a retry by hand, a replace) before the batch settles its tab
    again = replace(done, version=done.version + 1, status=Status.PENDING, ttl=None)
    stores.records.save(again, done.version)

    assert (_counts(stores), _fired(stores)) == ((2, 0), 1)  # its fire counted, once
    assert tab.settle() == 0  # settled by that write: the batch adds nothing for it
    assert (_counts(stores), _fired(stores)) == ((2, 0), 1)


def test_a_write_after_the_tab_is_settled_drops_what_the_record_carried(stores: Stores) -> None:
    stores.add("t:0")
    tab = _tab(stores, 0, 1)
    done = _complete(stores, tab, "t:0")
    assert tab.settle() == 1

    stores.records.save(replace(done, version=done.version + 1), done.version)

    assert (_counts(stores), _fired(stores)) == ((0, 1), 1)


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


def test_the_changes_ride_on_the_record_compactly_and_an_older_form_is_dropped(
    stores: Stores,
) -> None:
    """The record carries ``uncounted`` (the tab, then ``"<item> <field> <n>"`` with the
    item's prefix shortened, a change to all and to the record's group alike written once
    with the scope ``+``); a record a batch wrote before tabs had an item (``countsDue``) is
    read as settled, as it was then: its next write drops it."""
    if not isinstance(stores.records, DynamoDBRecords):
        pytest.skip("the fake keeps no DynamoDB item")
    stores.add("t:0")
    tab = _tab(stores, 0, 1)
    done = _complete(stores, tab, "t:0")
    table = boto3.resource("dynamodb").Table(stores.records._name)
    item = table.get_item(Key={"id": "t:0"})["Item"]
    [carried] = item["uncounted"].values()
    assert any(c.startswith("c/+#") and " COMPLETED 1" in c for c in carried)
    assert any(c.startswith("f/+#m") and " onTime 1" in c for c in carried)
    assert not any(c.startswith(("c/*", "c/g:", "f/*", "f/g:")) for c in carried), carried
    assert item["fmt"] == FORMAT_VERSION
    assert tab.settle() == 1
    table.update_item(
        Key={"id": "t:0"},
        UpdateExpression="REMOVE uncounted SET countsDue = :old",
        ExpressionAttributeValues={":old": ["b-0-old", "*#0#1 PENDING -1"]},
    )

    stores.records.save(replace(done, version=done.version + 1), done.version)

    assert "countsDue" not in table.get_item(Key={"id": "t:0"})["Item"]
    assert _counts(stores) == (0, 1)


def _follow_on(stores: Stores, members: list[str]) -> TabbedRecords:
    """The tab of a later batch (a follow-on) whose members carry the first batch's changes."""
    return stores.tabs.open("b-2-next", 0, members, stores.clock.now())


def _again(stores: Stores, records: object, action_id: str) -> None:
    """A later write of the member that moves what it counts as (COMPLETED -> PENDING)."""
    done = stores.records.get(action_id)
    assert done is not None
    again = replace(done, version=done.version + 1, status=Status.PENDING, ttl=None)
    records.save(again, done.version)  # type: ignore[attr-defined]


def test_a_tab_read_open_that_settles_meanwhile_still_counts_each_change_once(
    stores: Stores,
) -> None:
    # A later batch reads the first batch's tab open (once), the first batch settles, and the
    # later batch's next write still carries the first one's changes on: nothing is added
    # twice, nothing lost.
    ids = ["t:0", "t:1"]
    for action_id in ids:
        stores.add(action_id)
    first = _tab(stores, 0, 2)
    for action_id in ids:
        _complete(stores, first, action_id)
    later = _follow_on(stores, ids)

    _again(stores, later, "t:0")  # the first tab read: open
    assert first.settle() == 2
    assert (_counts(stores), _fired(stores)) == ((0, 2), 2)
    _again(stores, later, "t:1")  # the first tab, as read before: carried on
    assert later.settle() == 2
    assert (_counts(stores), _fired(stores)) == ((2, 0), 2)

    for action_id in ids:  # the next writes drop what the settled tabs left on the records
        current = stores.records.get(action_id)
        assert current is not None
        stores.records.save(replace(current, version=current.version + 1), current.version)
    assert stores.tabs.settle(f"{BATCH}#0") == 0 and stores.tabs.settle("b-2-next#0") == 0
    assert (_counts(stores), _fired(stores)) == ((2, 0), 2)


def test_a_batchs_task_reads_another_tab_its_members_carry_once(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not isinstance(stores.records, DynamoDBRecords):
        pytest.skip("the fake reads no item")
    from tickwork.adapters.dynamodb_count_tab import DynamoDBTabbedRecords

    ids = [f"t:{n}" for n in range(5)]
    for action_id in ids:
        stores.add(action_id)
    first = _tab(stores, 0, 5)
    for action_id in ids:
        _complete(stores, first, action_id)
    reads: list[str] = []
    read = DynamoDBTabbedRecords._tab_state

    def counted(self: DynamoDBTabbedRecords, tab: str) -> object:
        reads.append(tab)
        return read(self, tab)

    monkeypatch.setattr(DynamoDBTabbedRecords, "_tab_state", counted)
    later = _follow_on(stores, ids)
    with ThreadPoolExecutor(max_workers=5) as pool:
        list(pool.map(lambda i: _again(stores, later, i), ids))

    assert reads == [f"{BATCH}#0"]
    assert first.settle() == 5 and later.settle() == 5
    assert (_counts(stores), _fired(stores)) == ((5, 0), 5)
