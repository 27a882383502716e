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
