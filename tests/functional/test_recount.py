"""GIVEN a table whose counter items are missing (a stack upgraded from before the counters) or
wrong WHEN `tickwork recount`'s rebuild runs THEN the counts match the records again, a second
run finds nothing off, and a counter that a write moved during the recount is left alone."""

from __future__ import annotations

from tickwork.adapters.dynamodb_counts import COUNTER_KEYS, COUNTER_PREFIX, FOLDED
from tickwork.adapters.dynamodb_recount import _replace, recount
from tickwork.domain.action import Status
from tickwork.domain.selection import Selection
from tickwork.steering.pause import pause_action
from tickwork.steering.start import StartCommand, start_action
from tickwork.steering.stop import cancel_action


def _actions(stack) -> None:
    deps = stack.deps
    for n in range(6):
        start_action(StartCommand({"id": f"u:{n}", "delay": f"{5 + n}m", "group": "g1"}), deps)
    start_action(StartCommand({"id": "u:far", "delay": "30d", "group": "g2"}), deps)
    cancel_action("u:0", deps)
    pause_action("u:1", "holiday", deps)
    stack.wait_counted()  # the writes folded into the counters


def _counter_items(table) -> list[dict]:
    items, kwargs = [], {}
    while True:
        page = table.scan(**kwargs)
        items += [i for i in page["Items"] if str(i["id"]).startswith(COUNTER_PREFIX)]
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def test_missing_and_wrong_counters_are_rebuilt_from_the_records(stack) -> None:
    _actions(stack)
    queries, table = stack.queries, stack.records._table
    right = {g: queries.count(Selection(group=g)) for g in (None, "g1", "g2")}
    assert right[None][Status.PENDING] == 5 and right["g1"][Status.PAUSED] == 1
    # an upgraded stack: no counter items at all, but one that is wrong
    counters = _counter_items(table)
    for item in counters[1:]:
        table.delete_item(Key={"id": item["id"]})
    table.put_item(Item={"id": counters[0]["id"], "PENDING": 40, "FAILED": 3})
    assert queries.count(Selection()) != right[None]

    lines: list[str] = []
    checked = recount(table, progress=lines.append, dry_run=True)
    assert checked.counters_fixed and queries.count(Selection()) != right[None]  # dry run
    done = recount(table, progress=lines.append)

    assert done.actions == 7
    assert sorted(done.counters_fixed) == sorted(checked.counters_fixed)
    assert {g: queries.count(Selection(group=g)) for g in right} == right
    assert recount(table).counters_fixed == []
    assert lines and lines[-1].startswith("read ")


def test_a_counter_a_write_moved_meanwhile_is_left_alone(stack) -> None:
    _actions(stack)
    table = stack.records._table
    counter = _counter_items(table)[0]
    seen = {k: int(v) for k, v in counter.items() if k not in COUNTER_KEYS}
    kept = {FOLDED: counter[FOLDED]} if FOLDED in counter else {}  # the last fold's fence
    stale = {**seen, "PENDING": seen.get("PENDING", 0) - 1}  # what a recount read before a write
    assert not _replace(table, str(counter["id"]), stale, {"PENDING": 99})
    assert table.get_item(Key={"id": counter["id"]})["Item"] == counter
    assert _replace(table, str(counter["id"]), seen, {"PENDING": 99}, kept.get(FOLDED))
    assert table.get_item(Key={"id": counter["id"]})["Item"] == {
        "id": counter["id"],
        "PENDING": 99,
        **kept,
    }


def test_a_recount_before_the_lag_passed_folds_the_waiting_writes_first_and_counts_once(
    table_name: str,
) -> None:
    """A write waiting for its fold (CountLagSeconds) is in the records: the recount folds it
    before its scan, so the fold the lag would have made later adds nothing again."""
    import time
    from datetime import UTC, datetime, timedelta

    import boto3

    from tests.unit.fakes import FakeClock
    from tickwork.adapters.dynamodb_queries import DynamoDBQueries
    from tickwork.adapters.dynamodb_records import DynamoDBRecords
    from tickwork.adapters.dynamodb_stream_counts import DynamoDBStreamCounts
    from tickwork.domain.action import Action, Limits
    from tickwork.domain.start_request import parse_start_detail

    clock = FakeClock(datetime(2026, 12, 5, 12, 0, tzinfo=UTC))
    records, counts = DynamoDBRecords(table_name), DynamoDBStreamCounts(table_name)
    queries = DynamoDBQueries(table_name, clock=clock)
    for n in range(2):
        detail = {"id": f"w:{n}", "at": (clock.now() + timedelta(minutes=10)).isoformat()}
        request = parse_start_detail(detail, clock.now())
        due = request.schedule.first_fire_time(clock.now())
        assert due is not None
        records.create(Action.scheduled(f"w:{n}", request, due, clock.now(), "h", None, Limits()))
    assert counts.fold(lag=300).waiting == 2  # the scheduled run leaves them for later
    table = boto3.resource("dynamodb").Table(table_name)

    assert recount(table, dry_run=True).folded_first == 2  # seen waiting, not folded
    done = recount(table)

    assert done.folded_first == 2 and done.writes_during == 0
    assert queries.count(Selection()).get(Status.PENDING, 0) == 2
    counts.fold(lag=300, now=time.time() + 301)  # the run after the lag: nothing left
    assert queries.count(Selection()).get(Status.PENDING, 0) == 2
