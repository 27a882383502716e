"""GIVEN the queries port (fake and DynamoDB) WHEN actions are listed, paged and counted THEN
both answer alike: one status in fire order, names and attention in id order, cursors that
cover everything once, counts by status."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.contract.conftest import Stores
from tickwork.domain.action import Status
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.fire import Trigger
from tickwork.domain.selection import Selection
from tickwork.domain.steering import FailedFire, ManualFire, ManualFires


def _pages(stores: Stores, selection: Selection, size: int) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        actions, cursor = stores.queries.page(selection, size, cursor)
        pages.append([a.id for a in actions])
        if cursor is None:
            return pages


def test_one_status_in_fire_order_then_id_up_to_a_time(stores: Stores) -> None:
    for action_id, minutes in (("q:c", 30), ("q:a", 10), ("q:b", 10), ("q:d", 50)):
        stores.add(action_id, minutes=minutes)
    stores.add("q:paused", minutes=5, status=Status.PAUSED)

    pending = stores.queries.in_fire_order(Status.PENDING)
    due = stores.queries.in_fire_order(
        Status.PENDING, until=stores.clock.now() + timedelta(minutes=30)
    )

    assert [a.id for a in pending] == ["q:a", "q:b", "q:c", "q:d"]
    assert [a.id for a in stores.queries.in_fire_order(Status.PENDING, limit=2)] == ["q:a", "q:b"]
    assert [a.id for a in due] == ["q:a", "q:b", "q:c"]
    assert [a.id for a in stores.queries.in_fire_order(Status.PAUSED)] == ["q:paused"]


def test_pages_by_status_cover_everything_once_in_fire_order(stores: Stores) -> None:
    for n in range(11):
        stores.add(f"q:{n:02d}", minutes=10 + n % 4)

    pages = _pages(stores, Selection(Status.PENDING), 3)

    assert [len(p) for p in pages] == [3, 3, 3, 2]
    listed = [i for p in pages for i in p]
    expected = sorted((10 + n % 4, f"q:{n:02d}") for n in range(11))
    assert listed == [action_id for _, action_id in expected]


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        (Selection(), ["g:1", "g:2", "h:1", "h:2", "h:3"]),
        (Selection(group="two"), ["g:2", "h:2"]),
        (Selection(prefix="h:"), ["h:1", "h:2", "h:3"]),
        (Selection(Status.PAUSED, group="two"), ["h:2"]),
        (Selection(attention=True), ["g:1", "h:3"]),
    ],
    ids=["all", "group", "prefix", "status-in-group", "attention"],
)
def test_pages_by_name_or_attention_are_in_id_order(
    stores: Stores, selection: Selection, expected: list[str]
) -> None:
    failed = FailedFire(1, stores.clock.now(), "key", "boom")
    stores.add("h:3", minutes=1, unresolved=(failed,))
    stores.add("h:2", minutes=2, group="two", status=Status.PAUSED)
    stores.add("h:1", minutes=3)
    stores.add("g:2", minutes=4, group="two")
    stores.add("g:1", minutes=5, status=Status.FAILED)

    pages = _pages(stores, selection, 2)

    assert [i for p in pages for i in p] == expected
    assert all(len(p) <= 2 for p in pages)


def test_a_cursor_of_another_order_is_refused(stores: Stores) -> None:
    for n in range(3):
        stores.add(f"q:{n}")
    _, by_id = stores.queries.page(Selection(), 1)
    assert by_id is not None

    with pytest.raises(ValidationFailed) as refused:
        stores.queries.page(Selection(Status.PENDING), 1, by_id)
    assert [p.field for p in refused.value.problems] == ["cursor"]


def test_counts_by_status_of_all_a_group_a_prefix_and_attention(stores: Stores) -> None:
    failed = FailedFire(1, stores.clock.now(), "key", "boom")
    stores.add("c:1")
    stores.add("c:2", group="two")
    stores.add("c:3", group="two", status=Status.PAUSED, unresolved=(failed,))
    stores.add("d:1", status=Status.FAILED)

    everything = stores.queries.count(Selection())
    two = stores.queries.count(Selection(group="two"))
    prefix = stores.queries.count(Selection(prefix="c:"))
    attention = stores.queries.count(Selection(attention=True))

    assert (everything["PENDING"], everything["PAUSED"], everything["FAILED"]) == (2, 1, 1)
    assert everything["NEEDS_ATTENTION"] == 2 and set(Status) <= set(everything)
    assert (two["PENDING"], two["PAUSED"], two["FAILED"], two["NEEDS_ATTENTION"]) == (1, 1, 0, 1)
    assert (prefix["PENDING"], prefix["PAUSED"], prefix["NEEDS_ATTENTION"]) == (2, 1, 1)
    assert (attention["PAUSED"], attention["FAILED"], attention["NEEDS_ATTENTION"]) == (1, 1, 2)
    with pytest.raises(ValueError, match="by status already"):
        stores.queries.count(Selection(Status.PENDING))


def test_a_fire_in_flight_counts_as_in_progress(stores: Stores) -> None:
    stores.add("f:1", minutes=0, status=Status.IN_PROGRESS, claimed_by="exec")  # claimed: due
    stores.add("f:2")

    counts = stores.queries.count(Selection())

    assert (counts["IN_PROGRESS"], counts["PENDING"]) == (1, 1)


def test_actions_with_fires_asked_for_by_hand_in_id_order(stores: Stores) -> None:
    asked = ManualFire(1, Trigger.RUN_NOW, stores.clock.now())
    stores.add("m:2", manual=ManualFires((asked,), count=1))
    stores.add("m:3")
    stores.add("m:1", manual=ManualFires((asked,), count=1))

    assert [a.id for a in stores.queries.with_manual_fires()] == ["m:1", "m:2"]
    assert [a.id for a in stores.queries.with_manual_fires(limit=1)] == ["m:1"]


def test_a_page_by_status_among_many_of_another_keeps_a_cursor(
    stores: Stores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A claimed fire shares its index partitions with the waiting ones: a page that looks at
    as many entries as it may without filling up says where it stopped, and following the
    cursor finds what lies past it — never a last page while records remain."""
    import tickwork.adapters.dynamodb_queries as queries

    monkeypatch.setattr(queries, "_MOST_EXAMINED", 0)  # each read looks at 10 entries a row
    for n in range(25):
        stores.add(f"w:{n:02d}", minutes=0)
    stores.add("z:claimed", minutes=0, status=Status.IN_PROGRESS, claimed_by="exec")

    found, cursor = [], None
    for _ in range(30):
        page, cursor = stores.queries.page(Selection(Status.IN_PROGRESS), limit=1, cursor=cursor)
        found += [a.id for a in page]
        if cursor is None:
            break
    assert found == ["z:claimed"]
