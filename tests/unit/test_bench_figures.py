"""GIVEN the benchmark's arithmetic WHEN fed known inputs THEN percentiles are observed values
(nearest rank), billed transitions count each state entered plus each task retry, and dollars
follow the price table."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from benchkit import prices
from benchkit.cost import Usage, _billed_transitions
from benchkit.stats import median, percentile


def test_percentiles_are_nearest_rank_observations() -> None:
    values = [5, 1, 4, 2, 3]
    assert median(values) == 3
    assert percentile(values, 99) == 5
    assert percentile(list(range(1, 101)), 95) == 95


def test_a_retry_is_a_billed_transition() -> None:
    happy = [
        {"type": "ExecutionStarted"},
        {"type": "WaitStateEntered"},
        {"type": "TaskStateEntered"},
        {"type": "TaskScheduled"},
        {"type": "TaskStateEntered"},
        {"type": "TaskScheduled"},
        {"type": "ExecutionSucceeded"},
    ]
    retried = [*happy[:4], {"type": "TaskFailed"}, {"type": "TaskScheduled"}, *happy[4:]]
    assert _billed_transitions(happy) == 3
    assert _billed_transitions(retried) == 4


def test_dollars_follow_the_price_table() -> None:
    usage = Usage("x", actions=1, fires=2, transitions=6, invocations=Counter(a=4), events=2)
    dollars = usage.dollars()
    assert dollars["Step Functions"] == 3 * prices.STEP_FUNCTIONS_STANDARD_PER_TRANSITION * 1e6
    assert dollars["EventBridge"] == 1 * prices.EVENTBRIDGE_PER_CUSTOM_EVENT * 1e6
    assert dollars["Lambda"] == 2 * prices.LAMBDA_PER_REQUEST * 1e6


def test_item_sizes_follow_dynamodb_rules() -> None:
    from benchkit.units import item_size

    # names plus values: "id" 2 + "abc" 3; "n" 1 + 123 (3 digits -> 2 bytes + 1)
    assert item_size({"id": {"S": "abc"}, "n": {"N": "123"}}) == 2 + 3 + 1 + 3
    # a list: 3 bytes plus one per element, each element its value
    assert item_size({"l": {"L": [{"S": "ab"}, {"BOOL": True}]}}) == 1 + 3 + (1 + 2) + (1 + 1)
    # the resource layer's plain values are sized the same as their typed form
    assert item_size({"id": "abc", "n": 123}) == item_size({"id": {"S": "abc"}, "n": {"N": "123"}})


def test_write_units_bill_the_larger_item_and_double_a_transaction() -> None:
    from benchkit.units import units_of

    big = {"id": {"S": "a"}, "blob": {"S": "x" * 2500}}  # 2,507 bytes: 3 units
    sizes = {"a": 900}
    assert units_of("PutItem", {"TableName": "t", "Item": big}, "t", sizes) == (0.0, 3)
    # shrinking an item still bills the larger of before and after
    small = {"id": {"S": "a"}, "v": {"N": "1"}}
    assert units_of("PutItem", {"TableName": "t", "Item": small}, "t", {"a": 3000}) == (0.0, 3)
    put = {"Put": {"TableName": "t", "Item": small}}
    update = {"Update": {"TableName": "t", "Key": {"id": {"S": "#count"}}}}
    assert units_of("TransactWriteItems", {"TransactItems": [put, update]}, "t", {}) == (0.0, 4.0)
    # a strongly consistent read of a 5 KB item: 2 units; eventually consistent: half
    get = {"TableName": "t", "Key": {"id": {"S": "a"}}}
    assert units_of("GetItem", {**get, "ConsistentRead": True}, "t", {"a": 5000}) == (2.0, 0.0)
    assert units_of("GetItem", get, "t", {"a": 5000}) == (1.0, 0.0)
    # a query bills the items it read, at least one unit's worth
    items = tuple({"id": {"S": "x" * 1000}} for _ in range(10))  # ~10 KB read: 3 units
    assert units_of("Query", {"TableName": "t"}, "t", {}, items) == (1.5, 0.0)
    assert units_of("Query", {"TableName": "t"}, "t", {}, ()) == (0.5, 0.0)


def test_tracked_puts_bill_the_item_each_replaces_not_the_final_one() -> None:
    """A one-off's record grows over its writes: each put is billed on the larger of the item
    the put before it wrote and its own, never on the record's final size."""
    from benchkit.units import Units

    def record(n: int) -> dict[str, Any]:
        return {"id": {"S": "a"}, "blob": {"S": "x" * n}}

    put = {"TableName": "t"}
    tracked = Units("t", {"a": 1500}, track=True)  # it ends at 1.5 KB
    assert tracked.add("PutItem", {**put, "Item": record(700)}) == (0.0, 1)
    assert tracked.add("PutItem", {**put, "Item": record(900)}) == (0.0, 1)
    assert tracked.add("PutItem", {**put, "Item": record(1500)}) == (0.0, 2)
    assert tracked.add("PutItem", {**put, "Item": record(100)}) == (0.0, 2)  # shrinking it
    untracked = Units("t", {"a": 1500})  # a recurring record: its aged size is every write's
    assert untracked.add("PutItem", {**put, "Item": record(700)}) == (0.0, 2)


def test_a_recurring_fire_is_the_difference_and_essential_drops_lifecycle_events() -> None:
    from benchkit.cost_rates import RateUsage

    three = RateUsage(
        "s",
        "recurring x3",
        30,
        transitions=9,
        read_units=60,
        write_units=90,
        events=40,
        events_by_type=Counter({"Schedule Tick": 30, "Schedule Started": 10}),
        breakdown={"Fulfill PutItem": (0.0, 80.0)},
    )
    one = RateUsage(
        "s",
        "recurring x1",
        10,
        transitions=5,
        read_units=20,
        write_units=30,
        events=20,
        events_by_type=Counter({"Schedule Tick": 10, "Schedule Started": 10}),
        breakdown={"Fulfill PutItem": (0.0, 20.0)},
    )
    steady = three.minus(one, fires=20)
    assert steady.each(steady.transitions) == 0.2
    assert steady.each(steady.write_units) == 3.0
    assert steady.breakdown["Fulfill PutItem"] == (0.0, 60.0)
    lean = one.essential()
    assert lean.events == 10 and lean.events_by_type == Counter({"Schedule Tick": 10})
    assert lean.per_million < one.per_million


def _item(**attributes: str) -> dict[str, Any]:
    return {name: {"S": value} for name, value in attributes.items()}


def test_index_writes_follow_dynamodb_rules() -> None:
    """An item entering an index is a put, leaving it a delete, re-keyed in it a delete and a
    put, and changing only a projected attribute one put; a change the index neither keys nor
    projects costs it nothing, and an item outside a sparse index never touches it."""
    from benchkit.indexes import IndexSpec, index_write_units

    by_status = IndexSpec("ByStatus", ("statusShard", "executionTime"), "KEYS_ONLY")
    by_group = IndexSpec("ByGroup", ("groupShard", "id"), "INCLUDE", ("status",))
    parked = IndexSpec("Parked", ("parkShard", "launchAt"), "KEYS_ONLY")
    specs = (by_status, by_group, parked)
    pending = _item(
        id="a", statusShard="PENDING#1", executionTime="1", groupShard="g#1", status="PENDING"
    )
    claimed = {**pending, **_item(statusShard="IN_PROGRESS#1", status="IN_PROGRESS")}
    assert index_write_units(None, pending, specs) == {"ByStatus": 1, "ByGroup": 1}
    assert index_write_units(pending, claimed, specs) == {"ByStatus": 2, "ByGroup": 1}
    assert index_write_units(claimed, None, specs) == {"ByStatus": 1, "ByGroup": 1}
    unkeyed = {**pending, **_item(data="x" * 5000)}
    assert index_write_units(pending, unkeyed, specs) == {}
    assert index_write_units(pending, pending, specs) == {}  # a refused write
    with_park = {**pending, **_item(parkShard="7#3", launchAt="9")}
    assert index_write_units(pending, with_park, specs) == {"Parked": 1}
    # an entry is its keys, the table's key and its projection, plus 100 bytes
    big = {**pending, **_item(status="S" * 1000)}
    assert index_write_units(None, big, (by_group,)) == {"ByGroup": 2}


def test_the_indexes_billed_are_the_templates() -> None:
    from benchkit.indexes import table_indexes

    keys, specs = table_indexes()
    assert keys == ("id",)
    named = {spec.name: spec for spec in specs}
    assert named["ByStatus"].keys == ("statusShard", "executionTime")
    assert named["ByStatus"].projection == "KEYS_ONLY"
    assert {"ByGroup", "ById", "Parked"} <= set(named)


def test_a_calls_units_come_from_its_items_before_and_after() -> None:
    """A write is billed on the larger of its item before and after, twice in a transaction,
    at least one unit when refused; its index writes only on the table that has them."""
    from benchkit.indexes import IndexSpec
    from benchkit.recorder import Call, Image
    from benchkit.units import call_units

    spec = (IndexSpec("ByStatus", ("statusShard",), "KEYS_ONLY"),)
    small = _item(id="a", statusShard="PENDING#1")
    grown = {**small, **_item(statusShard="IN_PROGRESS#1", blob="x" * 1500)}
    update = Call("f", "dynamodb", "UpdateItem", {}, images=(Image("t", small, grown),))
    reads, writes, indexes = call_units(update, "t", spec)
    assert (reads, writes, dict(indexes)) == (0.0, 2.0, {"ByStatus": 2})
    shrink = Call("f", "dynamodb", "PutItem", {}, images=(Image("t", grown, small, True),))
    assert call_units(shrink, "t", spec)[1] == 4.0  # 2 units, doubled in a transaction
    refused = Call("f", "dynamodb", "PutItem", {}, images=(Image("t", None, None),))
    assert call_units(refused, "t", spec)[:2] == (0.0, 1.0)
    elsewhere = Call("f", "dynamodb", "PutItem", {}, images=(Image("other", None, small),))
    assert not call_units(elsewhere, "t", spec)[2]
    read = Call("f", "dynamodb", "GetItem", {"ConsistentRead": True}, items_read=(grown,))
    assert call_units(read, "t", spec)[0] == 1.0


def test_logs_traces_and_lambda_follow_the_template() -> None:
    from benchkit import billing
    from benchkit.indexes import TEMPLATE
    from benchkit.recorder import Invocation

    # Lambda's system logs at WARN (LoggingConfig): no START/END/REPORT lines billed
    assert billing.tracing(TEMPLATE, {}) == billing.Tracing(
        functions=False, machines=False, system_lines=False
    )
    assert billing.tracing(TEMPLATE, {"Tracing": "Active"}) == billing.Tracing(True, True, False)
    # X-Ray's default rule: the first each second, then 5 % of the rest
    assert billing.Tracing.sampled(10, 10) == 10
    assert billing.Tracing.sampled(110, 10) == 10 + 5
    # what a function wrote, Lambda's three lines, and 26 bytes each log event
    quiet = billing.ingested_log_bytes(Invocation("f", 0.1, 0.1, 256))
    assert quiet == sum(len(line) for line in billing.PLATFORM_LINES) + 3 * 26
    spoke = billing.ingested_log_bytes(Invocation("f", 0.1, 0.1, 256, log_bytes=500, log_events=2))
    assert spoke == quiet + 500 + 2 * 26
    silent = Invocation("f", 0.1, 0.1, 256, log_bytes=500, log_events=2)
    assert billing.ingested_log_bytes(silent, system_lines=False) == 500 + 2 * 26
    assert prices.LAMBDA_PER_GB_SECOND == prices.LAMBDA_PER_GB_SECOND_ARM64


def test_a_run_whose_fires_ran_alone_or_whose_starts_were_refused_gets_no_price() -> None:
    """The bench reports no price for a layout it did not measure: fires due a second apart
    meant to share executions that ran alone, or Starts the stack refused."""
    from benchkit.cost_rates import RATE_SCENARIOS, RateUsage, _degraded, _refused_starts

    lone, per_second = RATE_SCENARIOS[0], RATE_SCENARIOS[1]
    assert _degraded(lone, 0, 3, 3) is None  # lone by design
    assert _degraded(per_second, 0, 20, 2) is None  # a window's edge: a few alone
    reason = _degraded(per_second, 0, 20, 12)
    assert reason is not None and "12 of 20" in reason
    refused = RateUsage("x", "one-off", 10, events_by_type=Counter({"Schedule Rejected": 2}))
    assert _refused_starts(refused) == "2 Start(s) refused"
    assert _refused_starts(RateUsage("x", "one-off", 10)) is None


def test_a_pump_run_that_only_writes_the_stacks_own_items_is_not_charged_to_fires() -> None:
    """A new stack's first pump run writes its watermarks into being (``#pump``): once a
    stack, not a fire's. A run that writes a record (or starts an execution) worked."""
    from benchkit.cost_rates import _writes_a_record
    from benchkit.recorder import Call

    def call(operation: str, item_id: str, typed: bool = False) -> Call:
        key = {"id": {"S": item_id}} if typed else {"id": item_id}
        params = {"Item": key} if operation == "PutItem" else {"Key": key}
        return Call("PumpFunction", "dynamodb", operation, params)

    assert not _writes_a_record(call("UpdateItem", "#pump"))
    assert not _writes_a_record(call("PutItem", "#tally", typed=True))
    assert not _writes_a_record(call("GetItem", "rate-0-0"))
    assert _writes_a_record(call("PutItem", "rate-0-0"))
    assert _writes_a_record(call("UpdateItem", "b-42", typed=True))
    assert not _writes_a_record(Call("PumpFunction", "stepfunctions", "StartExecution", {}))
