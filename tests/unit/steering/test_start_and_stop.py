"""GIVEN fakes and a fixed clock WHEN actions are started, replaced and cancelled THEN the
record, the executions and the events follow the contract — or nothing is written."""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.fakes import fake_dependencies
from tickwork.domain.action import SUPERSEDED_STARTS, Status
from tickwork.domain.errors import ActionExists, ActionLocked, ValidationFailed
from tickwork.domain.naming import execution_name
from tickwork.domain.times import iso
from tickwork.steering.start import MAX_PAYLOAD_BYTES, StartCommand, start_action
from tickwork.steering.stop import cancel_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)


def test_start_writes_pending_record_and_starts_named_execution() -> None:
    deps = fake_dependencies(NOW)

    result = start_action(StartCommand({"id": "a:1", "duration": "10m"}, "ev-1"), deps)

    assert result.outcome == "created"
    action = deps.records.get("a:1")
    assert action.status == Status.PENDING and action.execution_time == NOW + timedelta(minutes=10)
    payload = deps.executions.started[execution_name("a:1", 1, 1, key=None)].to_wire()
    assert payload["fireAt"] == "2026-03-07T12:10:00.000Z"
    assert payload["waitUntil"] == "2026-03-07T12:10:00.000Z"
    assert [t for t, _ in deps.publisher.events] == ["Schedule Started"]


@given(ms=st.sampled_from([0, 1, 500, 701, 999]) | st.integers(0, 999))
@settings(max_examples=30, deadline=None)
def test_wait_until_is_the_whole_second_at_or_after_the_fire_by_default(ms: int) -> None:
    # Step Functions ends a Wait on a whole second: rounded up, the fire is never early and its
    # task never sleeps (FirePrecision=second).
    deps = fake_dependencies(NOW)
    fire_at = NOW + timedelta(minutes=10, milliseconds=ms)

    start_action(StartCommand({"id": "a:1", "at": iso(fire_at)}, "ev-1"), deps)

    payload = deps.executions.started[execution_name("a:1", 1, 1, key=None)].to_wire()
    assert payload["fireAt"] == iso(fire_at)
    wait_until = datetime.fromisoformat(payload["waitUntil"])
    assert wait_until.microsecond == 0
    assert fire_at <= wait_until < fire_at + timedelta(seconds=1)


def test_wait_until_keeps_the_milliseconds_of_the_fire_at_millisecond_precision() -> None:
    # Step Functions truncates it to 12:10:00; Fulfill then sleeps off the last 0.701 s.
    deps = fake_dependencies(NOW, fire_precision="millisecond")

    start_action(StartCommand({"id": "a:1", "at": "2026-03-07T12:10:00.701Z"}, "ev-1"), deps)

    payload = deps.executions.started[execution_name("a:1", 1, 1, key=None)].to_wire()
    assert payload["waitUntil"] == payload["fireAt"] == "2026-03-07T12:10:00.701Z"


def test_an_unknown_fire_precision_is_refused_naming_the_setting() -> None:
    with pytest.raises(ValueError, match=r"FIRE_PRECISION='seconds'.*second, millisecond"):
        fake_dependencies(NOW, fire_precision="seconds")


def test_same_event_twice_is_unchanged_and_starts_nothing_new() -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "a:1", "duration": "10m"}, "ev-1"), deps)
    deps.clock.advance(seconds=3)  # a redelivery a little later: "duration" would move if re-read

    again = start_action(StartCommand({"id": "a:1", "duration": "10m"}, "ev-1"), deps)

    assert again.outcome == "unchanged"
    assert deps.records.get("a:1").generation == 1
    assert list(deps.executions.started) == [execution_name("a:1", 1, 1, key=None)]


def test_a_record_holding_the_whole_spec_hash_still_knows_the_same_request() -> None:
    """Records written before the hash was cut to 32 hex digits hold all 64: a redelivery of
    the same Start (a new event id) is still the same request, not a replacement."""
    deps = fake_dependencies(NOW)
    detail = {"id": "a:1", "at": "2026-03-07T12:10:00Z"}
    start_action(StartCommand(detail, "ev-1"), deps)
    stored = deps.records.get("a:1")
    canonical = json.dumps(detail, sort_keys=True, separators=(",", ":"), default=str)
    whole = hashlib.sha256(canonical.encode()).hexdigest()
    assert len(stored.spec_hash) == 32 and whole.startswith(stored.spec_hash)
    deps.records.items["a:1"] = replace(stored, spec_hash=whole)

    again = start_action(StartCommand(detail, "ev-2"), deps)

    assert again.outcome == "unchanged"
    assert deps.records.get("a:1").generation == 1


def test_replace_before_the_lock_bumps_generation_and_stops_the_old_execution() -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "a:1", "duration": "10m"}, "ev-1"), deps)

    result = start_action(StartCommand({"id": "a:1", "duration": "20m"}, "ev-2"), deps)

    assert result.outcome == "replaced"
    action = deps.records.get("a:1")
    assert action.generation == 2 and action.execution_time == NOW + timedelta(minutes=20)
    assert deps.executions.stopped == [
        deps.executions.execution_arn(execution_name("a:1", 1, 1, key=None))
    ]
    assert execution_name("a:1", 2, 1, key=None) in deps.executions.started


@pytest.mark.parametrize(("seconds_before_fire", "locked"), [(121, False), (120, True), (5, True)])
def test_lock_boundary_is_two_minutes_before_the_fire(
    seconds_before_fire: int, locked: bool
) -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "a:1", "duration": "10m"}, "ev-1"), deps)
    deps.clock.current = NOW + timedelta(minutes=10) - timedelta(seconds=seconds_before_fire)

    if locked:
        with pytest.raises(ActionLocked, match="locked 120s before it"):
            start_action(StartCommand({"id": "a:1", "duration": "20m"}, "ev-2"), deps)
        assert deps.records.get("a:1").status == Status.PENDING
    else:
        assert start_action(StartCommand({"id": "a:1", "duration": "20m"}, "ev-2"), deps)
    # a cancel is not held by the lock: it wins until the fire is claimed
    assert cancel_action("a:1", deps).to_wire()["outcome"] == "cancelled"


@pytest.mark.parametrize(("lock_seconds", "locked"), [(0, False), (30, False), (300, True)])
def test_an_actions_own_lock_replaces_the_stacks(lock_seconds: int, locked: bool) -> None:
    deps = fake_dependencies(NOW)
    detail = {"id": "a:1", "duration": "10m", "lockSeconds": lock_seconds}
    start_action(StartCommand(detail, "ev-1"), deps)
    deps.clock.current = NOW + timedelta(minutes=10) - timedelta(seconds=60)

    if locked:
        with pytest.raises(ActionLocked, match=f"locked {lock_seconds}s before it"):
            start_action(StartCommand({**detail, "duration": "20m"}, "ev-2"), deps)
    else:
        start_action(StartCommand({**detail, "duration": "20m"}, "ev-2"), deps)
        assert deps.records.get("a:1").generation == 2


@pytest.mark.parametrize(
    ("detail", "field"),
    [
        ({"id": "a b", "duration": "5m"}, "id"),
        ({"id": "a:1", "duration": "5m", "action": "NOPE"}, "action"),
        (
            {
                "id": "a:1",
                "duration": "5m",
                "action": "SEND_NOTIFICATION",
                "data": {"notificationType": "SMS"},
            },
            "data.",
        ),
        ({"id": "a:1", "duration": "5m", "data": {"blob": "x" * (MAX_PAYLOAD_BYTES + 1)}}, "data"),
        ({"id": "a:1", "duration": "5m", "colour": "red"}, "colour"),
    ],
    ids=["bad-id", "unregistered-type", "data-schema", "oversize", "unknown-field"],
)
def test_refused_start_names_the_field_and_writes_nothing(detail: dict, field: str) -> None:
    deps = fake_dependencies(NOW)

    with pytest.raises(ValidationFailed) as refused:
        start_action(StartCommand(detail, "ev-1"), deps)

    assert any(p.field.startswith(field) and p.fix for p in refused.value.problems), refused.value
    assert (
        deps.records.writes == 0 and deps.executions.started == {} and deps.publisher.events == []
    )


def test_a_fire_beyond_the_launch_horizon_is_parked_with_no_execution() -> None:
    deps = fake_dependencies(NOW, launch_ahead=timedelta(minutes=15))

    start_action(StartCommand({"id": "a:1", "at": "2028-01-01T00:00:00Z"}, "ev-1"), deps)

    record = deps.records.items["a:1"]
    assert deps.executions.started == {}
    assert (record.status, record.execution_arn) == (Status.PENDING, None)
    assert record.launch_at == datetime(2027, 12, 31, 23, 45, tzinfo=UTC)


def test_a_fire_within_the_launch_horizon_waits_in_its_execution_to_the_fire() -> None:
    deps = fake_dependencies(NOW, launch_ahead=timedelta(minutes=15))

    start_action(StartCommand({"id": "a:1", "at": iso(NOW + timedelta(minutes=14))}, "e"), deps)

    payload = deps.executions.started[execution_name("a:1", 1, 1, key=None)].to_wire()
    assert payload["waitUntil"] == payload["fireAt"] == iso(NOW + timedelta(minutes=14))
    assert deps.records.items["a:1"].launch_at is None


def _rival_writes_first(deps, rival: StartCommand) -> None:
    """The first read of the repository misses a rival Start that writes right after it."""
    real_get = deps.records.get
    raced = []

    def get_then_rival_writes(action_id: str):
        seen = real_get(action_id)
        if not raced:
            raced.append(True)
            start_action(rival, deps)
        return seen

    deps.records.get = get_then_rival_writes


def test_a_concurrent_duplicate_that_loses_the_write_reads_as_a_repeat() -> None:
    # GIVEN another delivery of the same Start that writes first, unseen
    deps = fake_dependencies(NOW)
    _rival_writes_first(deps, StartCommand({"id": "a:1", "duration": "10m"}, "ev-1"))

    # WHEN this delivery's create loses
    result = start_action(StartCommand({"id": "a:1", "duration": "10m"}, "ev-1"), deps)

    # THEN it reads again and reports a repeat; one generation, one execution
    assert result.outcome == "unchanged"
    assert deps.records.items["a:1"].generation == 1
    assert list(deps.executions.started) == [execution_name("a:1", 1, 1, key=None)]


def test_create_only_refuses_a_taken_id_even_when_it_loses_the_race() -> None:
    # GIVEN a create whose read misses a rival create of the same id
    deps = fake_dependencies(NOW)
    _rival_writes_first(deps, StartCommand({"id": "a:1", "duration": "10m"}, "ev-rival"))

    # WHEN it writes: THEN it is refused, and the rival's action stands unchanged
    with pytest.raises(ActionExists):
        start_action(StartCommand({"id": "a:1", "duration": "20m"}, "ev-1", create_only=True), deps)
    assert deps.records.items["a:1"].execution_time == NOW + timedelta(minutes=10)


@settings(max_examples=80, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.integers(3, 30), st.integers(0, 200), st.booleans(), st.booleans()),
        min_size=2,
        max_size=SUPERSEDED_STARTS // 2,
    ),
    again=st.data(),
)
def test_a_start_delivered_again_late_changes_nothing_whatever_came_after_it(
    steps: list[tuple[int, int, bool, bool]], again: st.DataObject
) -> None:
    """EventBridge delivers a Start at least once and in no order, and a publisher may put the
    same request again under a new event id: any Start already applied, replaced since, still
    waiting in the lock, or answered as a repeat, delivered again leaves the record as it is."""
    deps = fake_dependencies(NOW)
    delivered: list[tuple[dict[str, object], str]] = []
    for n, (minutes, pause, recurring, retried) in enumerate(steps):
        when = {"rate": f"rate({minutes} minutes)"} if recurring else {"duration": f"{minutes}m"}
        detail = {"id": "a:1", **when, "data": {"n": n}}
        for event_id in [f"ev-{n}", f"ev-{n}-retried"][: 1 + retried]:
            delivered.append((detail, event_id))
            with contextlib.suppress(ActionLocked):  # a one-off in its lock refuses a change
                start_action(StartCommand(detail, event_id), deps)
        deps.clock.advance(seconds=pause)  # some land inside the lock: deferred or refused
    before = deps.records.get("a:1")

    detail, event_id = again.draw(st.sampled_from(delivered), label="delivered again")
    try:
        outcome = str(start_action(StartCommand(detail, event_id), deps).outcome)
    except ActionLocked:
        outcome = "refused"  # still inside the lock of a one-off: refused again

    after = deps.records.get("a:1")
    assert outcome in ("unchanged", "refused")
    assert (after.generation, after.execution_time, after.deferred, after.version) == (
        before.generation,
        before.execution_time,
        before.deferred,
        before.version,
    )
