"""GIVEN many actions in the real table (moto) WHEN paged by status THEN every action comes
exactly once, in next-fire order, across the index's shards; a forged cursor is refused."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from tickwork.domain.action import Status
from tickwork.domain.errors import ActionConflict, ValidationFailed
from tickwork.domain.selection import Selection
from tickwork.domain.times import iso
from tickwork.steering.pause import pause_action
from tickwork.steering.start import StartCommand, start_action
from tickwork.steering.stop import cancel_action


@pytest.fixture
def many(stack):
    deps = stack.deps
    for n in range(23):
        start_action(StartCommand({"id": f"p:{n:02d}", "delay": f"{10 + n % 7}m"}, f"ev-{n}"), deps)
    return deps


def test_pages_by_status_cover_everything_once_in_fire_order(stack, many) -> None:
    seen, cursor, pages = [], None, 0
    while True:
        actions, cursor = stack.queries.page(Selection(Status.PENDING), 5, cursor)
        seen += actions
        pages += 1
        if cursor is None:
            break
    assert pages == 5
    assert sorted(a.id for a in seen) == [f"p:{n:02d}" for n in range(23)]
    order = [(a.execution_time, a.id) for a in seen]
    assert order == sorted(order)


def test_equal_fire_times_are_not_skipped_or_repeated(stack, many) -> None:
    same = datetime.now(UTC) + timedelta(hours=1)
    for n in range(23):
        action = stack.records.get(f"p:{n:02d}")
        stack.records.save(
            replace(action, execution_time=same, version=action.version + 1), action.version
        )
    seen, cursor = [], None
    while True:
        actions, cursor = stack.queries.page(Selection(Status.PENDING), 4, cursor)
        seen += [a.id for a in actions]
        if cursor is None:
            break
    assert seen == [f"p:{n:02d}" for n in range(23)]


def test_all_pages_cover_everything_once(stack, many) -> None:
    seen, cursor = [], None
    while True:
        actions, cursor = stack.queries.page(Selection(), 7, cursor)
        seen += [a.id for a in actions]
        if cursor is None:
            break
    assert sorted(seen) == [f"p:{n:02d}" for n in range(23)]


@pytest.mark.parametrize(
    "cursor", ["not-base64!", "bm90IGpzb24=", "eyJ4IjogMX0="], ids=["garbage", "not-json", "no-id"]
)
def test_a_forged_cursor_is_refused_by_name(stack, cursor) -> None:
    with pytest.raises(ValidationFailed) as refused:
        stack.queries.page(Selection(Status.PENDING), 5, cursor)
    assert refused.value.problems[0].field == "cursor"


def test_parked_fires_come_due_in_launch_order_from_the_time_buckets(stack) -> None:
    # GIVEN fires parked over the next nine hours (LaunchAheadSeconds: 15 minutes)
    deps, now = stack.deps, datetime.now(UTC)
    hours = [7, 2, 9, 4]
    for n, h in enumerate(hours):
        start_action(StartCommand({"id": f"k:{n}", "at": iso(now + timedelta(hours=h))}), deps)
    assert all(stack.record(f"k:{n}").launch_at is not None for n in range(4))

    # WHEN the pump asks, now and then hours later (the watermark moves in between)
    assert stack.parked.due(now) == []
    due_by_five = stack.parked.due(now + timedelta(hours=5))
    unlaunched_again = stack.parked.due(now + timedelta(hours=10))

    # THEN each asks for exactly the fires due by then, earliest first; one not launched
    # comes again (the watermark stays behind it)
    assert due_by_five == ["k:1", "k:3"]
    assert unlaunched_again == ["k:1", "k:3", "k:0", "k:2"]
    assert stack.parked.due(now + timedelta(hours=10), limit=2) == ["k:1", "k:3"]


def test_runs_left_out_move_the_watermark_forward_only(stack) -> None:
    # GIVEN a fire parked to launch in two hours, and the pump's watermark now
    deps, now = stack.deps, datetime.now(UTC)
    start_action(StartCommand({"id": "w:1", "at": iso(now + timedelta(hours=2))}), deps)
    assert stack.parked.due(now) == []
    table = deps.settings.table_name

    def watermark() -> int:
        item = boto3.resource("dynamodb").Table(table).get_item(Key={"id": "#pump"})["Item"]
        return int(item["parkedFrom"])

    at_first = watermark()
    # WHEN runs that would have found nothing are left out up to an hour on, then "up to" a
    # moment before that (a later question never moves it back)
    stack.parked.nothing_due_until(now + timedelta(hours=1))
    moved = watermark()
    stack.parked.nothing_due_until(now - timedelta(hours=3))

    # THEN it moved forward once and stayed; the fire is still found when due
    assert moved > at_first and watermark() == moved
    assert stack.parked.due(now + timedelta(hours=3)) == ["w:1"]


def test_a_launched_or_cancelled_fire_leaves_the_parked_index(stack) -> None:
    deps, now = stack.deps, datetime.now(UTC)
    for n in range(2):
        start_action(StartCommand({"id": f"q:{n}", "at": iso(now + timedelta(hours=1))}), deps)
    parked = stack.record("q:0")
    stack.records.save(parked.launched(now, "arn:launched"), parked.version)
    cancel_action("q:1", deps)

    assert stack.parked.due(now + timedelta(hours=2)) == []


def test_counts_come_from_counter_items_and_match_the_records(stack) -> None:
    # GIVEN actions of two groups, near and far (parked), paused, cancelled, one purged
    deps = stack.deps
    for n in range(5):
        start_action(
            StartCommand({"id": f"c:a:{n}", "delay": f"{5 + 20 * n}m", "group": "a"}), deps
        )
    for n in range(2):
        start_action(StartCommand({"id": f"c:b:{n}", "rate": "rate(1 hour)", "group": "b"}), deps)
    cancel_action("c:a:0", deps)
    cancel_action("c:a:1", deps)
    pause_action("c:b:0", "holiday", deps)
    stack.records.delete("c:a:1")  # a purge takes it off its counters too
    stack.wait_counted()  # the writes folded from the stream (CountSchedule)

    # WHEN they are counted, all and by group, with every DynamoDB call watched
    calls: list[tuple[str, str]] = []

    def watch(params, model, **_) -> None:
        shard = params.get("ExpressionAttributeValues", {}).get(":shard", {})
        calls.append((model.name, str(shard.get("S") if isinstance(shard, dict) else shard)))

    client = stack.queries._table.meta.client
    client.meta.events.register("before-parameter-build.dynamodb", watch)
    try:
        counted = {g: stack.queries.count(Selection(group=g)) for g in (None, "a", "b")}
    finally:
        client.meta.events.unregister("before-parameter-build.dynamodb", watch)

    # THEN each count is what the records say, read from a bounded set of items: no scan, and
    # no query but for the fires in flight — among those due by now in the PENDING shards
    # (where a claim leaves them), and the IN_PROGRESS shards of claims written before
    records = [a for a in all_records(stack) if a.id.startswith("c:")]
    for group, counts in counted.items():
        chosen = [a for a in records if group is None or a.group == group]
        expected = {str(s): sum(a.status == s for a in chosen) for s in Status}
        assert {k: v for k, v in counts.items() if k in expected} == expected, group
    assert counted[None]["PENDING"] == 4 and counted[None]["CANCELLED"] == 1
    assert counted["b"]["PAUSED"] == 1
    assert {name for name, _ in calls} == {"BatchGetItem", "Query"}
    queried = {shard.split("#")[0] for name, shard in calls if name == "Query"}
    assert queried == {"PENDING", "IN_PROGRESS"}


def all_records(stack) -> list:
    found, cursor = [], None
    while True:
        actions, cursor = stack.queries.page(Selection(), 100, cursor)
        found += actions
        if cursor is None:
            return found


def test_a_refused_write_moves_no_counter(stack) -> None:
    # GIVEN an action counted PENDING
    deps = stack.deps
    start_action(StartCommand({"id": "r:1", "delay": "10m"}), deps)
    action = stack.record("r:1")
    before = stack.queries.count(Selection())

    # WHEN a write fenced on a stale version would cancel it (its transaction is refused)
    cancelled = action.cancelled(action.updated_at, deps.limits, "stale")
    with pytest.raises(ActionConflict):
        stack.records.save(cancelled, expected_version=action.version - 1)

    # THEN neither the record nor a counter moved (the counters' ADDs were rolled back)
    assert stack.record("r:1").status == Status.PENDING
    assert stack.queries.count(Selection()) == before


def test_a_page_reads_about_its_own_size_not_the_table(stack) -> None:
    # GIVEN 240 actions of one group, every one PENDING
    deps = stack.deps
    for n in range(240):
        start_action(StartCommand({"id": f"s:{n:03d}", "delay": f"{10 + n}m", "group": "g"}), deps)
    read: list[int] = []

    def count(http_response, parsed, model, **_) -> None:
        if model.name == "Query":
            read.append(len(parsed.get("Items", [])))

    client = stack.queries._table.meta.client
    client.meta.events.register("after-call.dynamodb.Query", count)
    try:
        for selection in (Selection(), Selection(group="g"), Selection(Status.PENDING)):
            # WHEN a page of 10 is read, all, by group and by status
            read.clear()
            first, cursor = stack.queries.page(selection, 10)
            second, _ = stack.queries.page(selection, 10, cursor)

            # THEN the pages are right, and their reads hold a few entries per shard, far fewer
            # than the 240 a shard-by-shard page of limit + 1 (or an unlimited query) would read
            assert len(first) == len(second) == 10
            assert not {a.id for a in first} & {a.id for a in second}
            assert read and sum(read) <= 2 * 16 * 4 + 16, (selection, read)
    finally:
        client.meta.events.unregister("after-call.dynamodb.Query", count)


def test_a_record_of_a_format_this_code_does_not_read_stops_no_page(stack, many) -> None:
    """One item stored in a newer format (or altered by hand) is refused by name where it is
    read alone, and left out of a page or a pass over many: the others are read as ever."""
    from tickwork.domain.errors import RecordFormatUnknown

    table = boto3.resource("dynamodb").Table(stack.deps.settings.table_name)
    table.update_item(
        Key={"id": "p:03"}, UpdateExpression="SET fmt = :f", ExpressionAttributeValues={":f": 99}
    )

    with pytest.raises(RecordFormatUnknown, match="'p:03' is stored in format 99"):
        stack.records.get("p:03")
    seen, cursor = [], None
    while True:
        actions, cursor = stack.queries.page(Selection(Status.PENDING), 5, cursor)
        seen += [a.id for a in actions]
        if cursor is None:
            break
    assert sorted(seen) == [f"p:{n:02d}" for n in range(23) if n != 3]
    waiting = stack.queries.in_fire_order(Status.PENDING, 100)
    assert "p:03" not in {a.id for a in waiting} and len(waiting) == 22
