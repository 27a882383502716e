"""GIVEN the values one fire passes across the state machine's boundaries WHEN written to the
wire and read back THEN nothing changes, the wire has exactly the documented shape (the
events/ files are such values), and a value of another shape is refused naming each field."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.conftest import load_event
from tickwork.domain.errors import MalformedFire
from tickwork.domain.fire import FireAttempt, FireFailure, FireOrder, Outcome, Tick, Trigger

DUE = datetime(2026, 11, 22, 4, 5, tzinfo=UTC)
ORDER = FireOrder("invoice:42", 1, 3, DUE, DUE, leg=2, repair=1)
TICK = Tick(
    action_id="invoice:42",
    generation=1,
    occurrence=3,
    scheduled_time=DUE,
    actual_time=DUE + timedelta(milliseconds=120, microseconds=1),
    attempts=2,
    action="TICK",
    outcome=Outcome.FIRED,
    execution_name="invoice_42-g1-o3",
    idempotency_key="0d3f6f7e-2b9a-5c4e-8f1d-6a7b8c9d0e1f",
    result={"delivered": "tick-event"},
    data={"k": [1, 2]},
    metadata={"m": "x"},
)
FAILURE = FireFailure("invoice:42", 1, 3, DUE, "invoice_42-g1-o3", "FireFailed", "{}")


@pytest.mark.parametrize(
    ("value", "parse"),
    [
        (ORDER, FireOrder.from_wire),
        (FireAttempt(ORDER, "invoice_42-g1-o3-l2-r1", 4), FireAttempt.from_wire),
        (TICK, Tick.from_wire),
        (FAILURE, FireFailure.from_wire),
    ],
    ids=["order", "attempt", "tick", "failure"],
)
def test_every_value_reads_back_as_written(value: object, parse: object) -> None:
    wire = value.to_wire()  # type: ignore[attr-defined]
    assert parse(wire) == value  # type: ignore[operator]


def test_the_order_on_the_wire_keeps_milliseconds_and_names_its_leg_and_repair() -> None:
    wire = FireOrder("a", 1, 1, DUE, DUE - timedelta(microseconds=999_500), leg=1).to_wire()
    assert wire == {
        "id": "a",
        "generation": 1,
        "occurrence": 1,
        "leg": 1,
        "fireAt": "2026-11-22T04:05:00.000Z",
        "waitUntil": "2026-11-22T04:04:59.001Z",  # rounded up: never earlier than computed
        "manual": 0,
        "trigger": "SCHEDULED",
    }
    assert "repair" not in wire and ORDER.to_wire()["repair"] == 1


def test_a_tick_is_kept_to_the_millisecond_and_reports_its_lateness() -> None:
    wire = TICK.to_wire()
    assert wire["actualTime"] == "2026-11-22T04:05:00.121Z" and wire["lateMs"] == 121
    assert TICK.late_ms == 121 and TICK.key == ("invoice:42", 1, 3, 0)
    assert set(wire) == {
        "id",
        "generation",
        "occurrence",
        "manual",
        "trigger",
        "idempotencyKey",
        "scheduledTime",
        "actualTime",
        "lateMs",
        "attempts",
        "action",
        "data",
        "metadata",
        "outcome",
        "result",
        "executionName",
    }


def test_the_events_files_are_values_of_the_contract() -> None:
    assert FireAttempt.from_wire(load_event("fulfill/fire")).order.key == (
        "test:duration-5m",
        1,
        1,
        0,
    )
    tick = Tick.from_wire(load_event("tick/tick")["detail"])
    assert tick.outcome is Outcome.FIRED and tick.late_ms == 120
    failure = FireFailure.from_wire(load_event("tick/failed")["detail"])
    assert failure.error == "PermanentFulfillmentError"


def test_the_failure_report_of_the_earlier_shape_is_refused() -> None:
    earlier = {**FAILURE.to_wire(), "fireAt": "2026-11-22T04:05:00.000Z"}
    del earlier["scheduledTime"]

    with pytest.raises(MalformedFire) as refused:
        FireFailure.from_wire(earlier)

    assert [(p.field, p.problem) for p in refused.value.problems] == [
        ("detail.scheduledTime", "is missing")
    ]


def test_every_bad_field_is_named_at_once() -> None:
    bad = {
        **TICK.to_wire(),
        "generation": "1",
        "occurrence": -1,
        "scheduledTime": "yesterday",
        "actualTime": "2026-11-22T04:05:00",  # no offset: which instant is it?
        "attempts": True,
        "outcome": "DONE",
        "data": [],
    }
    del bad["executionName"]

    with pytest.raises(MalformedFire) as refused:
        Tick.from_wire(bad)

    fields = {p.field for p in refused.value.problems}
    assert fields == {
        "detail.generation",
        "detail.occurrence",
        "detail.scheduledTime",
        "detail.actualTime",
        "detail.attempts",
        "detail.outcome",
        "detail.data",
        "detail.executionName",
    }
    assert "detail.idempotencyKey" not in fields  # given, and well formed
    assert all(p.fix for p in refused.value.problems)


def test_a_manual_fire_is_named_by_its_number_and_trigger() -> None:
    manual = FireOrder("a", 2, 0, DUE, DUE, manual=3, trigger=Trigger.RUN_NOW)
    assert FireOrder.from_wire(manual.to_wire()) == manual
    assert manual.key == ("a", 2, 0, 3)
    with pytest.raises(MalformedFire, match="is not a trigger"):
        FireOrder.from_wire({**manual.to_wire(), "trigger": "BY_HAND"})


@pytest.mark.parametrize("wire", [None, [], "tick", 42])
def test_a_value_that_is_not_an_object_is_refused(wire: object) -> None:
    with pytest.raises(MalformedFire) as refused:
        Tick.from_wire(wire)
    assert [p.field for p in refused.value.problems] == ["detail"]


def test_a_fulfill_payload_names_the_field_inside_its_input() -> None:
    payload = FireAttempt(ORDER, "n").to_wire()
    del payload["input"]["fireAt"]
    payload["retryCount"] = -1

    with pytest.raises(MalformedFire) as refused:
        FireAttempt.from_wire(payload)

    assert {p.field for p in refused.value.problems} == {
        "payload.input.fireAt",
        "payload.retryCount",
    }
