"""GIVEN a tick recorded once WHEN its delivery comes again (the tick function crashed after
its write) THEN nothing is recorded twice, and what the crash may have lost is done."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.unit.fakes import attempt, fake_dependencies
from tests.unit.machine import fulfill_fire
from tickwork.domain.action import Status
from tickwork.domain.events import DetailType
from tickwork.fire.record import record_tick
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)


def test_a_redelivered_last_tick_publishes_completed_again_and_records_nothing() -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "one", "duration": "1m"}), deps)
    deps.clock.current = NOW + timedelta(minutes=1)
    report = fulfill_fire(attempt("one", 1, "2026-03-07T12:01:00.000Z"), deps)
    record_tick(report, deps)
    deps.publisher.events.clear()  # as if the crash came between the write and the event

    again = record_tick(report, deps).to_wire()

    assert again["outcome"] == "ignored"
    action = deps.records.get("one")
    assert action.status == Status.COMPLETED and len(action.history) == 1
    assert deps.publisher.of_type(DetailType.COMPLETED) == [
        {"id": "one", "generation": 1, "occurrences": 1}
    ]


def test_a_stale_tick_of_an_earlier_occurrence_publishes_nothing() -> None:
    deps = fake_dependencies(NOW)
    start_action(
        StartCommand({"id": "rec", "rate": "rate(1 minute)", "executionRemainder": 2}), deps
    )
    for occurrence in (1, 2):
        deps.clock.current = NOW + timedelta(minutes=occurrence)
        fire_at = f"2026-03-07T12:0{occurrence}:00.000Z"
        first = fulfill_fire(attempt("rec", occurrence, fire_at), deps)
        record_tick(first, deps)
        if occurrence == 1:
            stale = first
    deps.publisher.events.clear()

    record_tick(stale, deps)

    assert deps.publisher.events == []
