"""GIVEN a recurrence WHEN one occurrence is skipped or moved (by number or by its time), or
that is undone THEN the schedule is untouched: a skipped occurrence comes due and is recorded
SKIPPED without running, a moved one fires at its new time and the next one where the schedule
has it (a move earlier never fires the original time again), and the imminent occurrence inside
its lock, a time that is not an occurrence, a past one and a move past a neighbour are refused.
And as a property: whatever skips, moves and undos are asked between fires, every occurrence
is recorded once — FIRED at its (moved) time, or SKIPPED when skipped — in time order, never
before its time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.errors import (
    ActionNotFound,
    NotRecurring,
    OccurrenceLocked,
    ValidationFailed,
)
from tickwork.domain.events import DetailType
from tickwork.domain.fire import Outcome
from tickwork.steering.occurrences import (
    Which,
    move_occurrence,
    restore_occurrence,
    skip_occurrence,
)
from tickwork.steering.start import StartCommand, start_action
from tickwork.views import action_view

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


def _deps(**detail: object) -> Dependencies:
    deps = fake_dependencies(NOW, history_limit=50)
    start_action(StartCommand({"id": "h", "rate": "rate(1 hour)", **detail}), deps)
    return deps


def _fire_next(deps: Dependencies) -> None:
    """The record's next fire comes due and its execution runs."""
    action = deps.records.get("h")
    assert action is not None and action.execution_time is not None
    deps.clock.current = max(deps.clock.current, action.execution_time)  # type: ignore[attr-defined]
    machine.run(deps, machine.current(deps, "h"))


def _history(deps: Dependencies) -> list[tuple[int, datetime, Outcome]]:
    """Each occurrence, the time it fired for (a moved one's moved time), and its outcome."""
    action = deps.records.get("h")
    assert action is not None
    return [(h.occurrence, h.moved_to or h.scheduled_time, h.outcome) for h in action.history]


def test_a_skipped_occurrence_is_recorded_skipped_and_the_next_fires() -> None:
    deps = _deps()
    answer = skip_occurrence("h", Which(number=2), "bank holiday", deps).to_wire()
    assert answer["outcome"] == "skipped" and answer["occurrence"] == 2
    assert answer["scheduledTime"] == "2026-03-07T14:00:00.000Z" and "firesAt" not in answer
    for _ in range(3):
        _fire_next(deps)
    assert _history(deps) == [
        (1, NOW + HOUR, Outcome.FIRED),
        (2, NOW + 2 * HOUR, Outcome.SKIPPED),
        (3, NOW + 3 * HOUR, Outcome.FIRED),
    ]
    (announced,) = deps.publisher.of_type(DetailType.SKIPPED)
    assert (
        announced["occurrence"] == 2 and announced["reason"] == "skipped by request: bank holiday"
    )
    action = deps.records.get("h")
    assert action is not None
    # the history says why, apart from a missed fire: the skip's own note
    skipped = [h for h in action.history if h.outcome is Outcome.SKIPPED]
    assert [h.reason for h in skipped] == ["skipped by request: bank holiday"]
    shown = action_view(action)["history"]
    assert [h["reason"] for h in shown] == [None, "skipped by request: bank holiday", None]
    assert [c.scheduled for c in action.occurrence_changes] == [NOW + 2 * HOUR]  # kept, sealed
    # the next change sealed drops the ones done with
    skip_occurrence("h", Which(number=5), None, deps)
    after = deps.records.get("h")
    assert after is not None
    assert [c.scheduled for c in after.occurrence_changes] == [NOW + 5 * HOUR]
    assert any("occurrence 2" in t.reason and "skipped" in t.reason for t in action.transitions)


def test_a_skip_by_time_undone_fires_as_scheduled() -> None:
    deps = _deps()
    skip_occurrence("h", Which(at=NOW + 2 * HOUR), None, deps)
    answer = restore_occurrence("h", Which(number=2), None, deps).to_wire()
    assert answer["outcome"] == "restored" and answer["firesAt"] == "2026-03-07T14:00:00.000Z"
    assert restore_occurrence("h", Which(number=2), None, deps).outcome.value == "unchanged"
    for _ in range(2):
        _fire_next(deps)
    assert [outcome for *_, outcome in _history(deps)] == [Outcome.FIRED, Outcome.FIRED]


def test_moving_the_next_fire_supersedes_its_execution_and_the_schedule_goes_on() -> None:
    deps = _deps()
    waiting = machine.current(deps, "h")
    later = NOW + HOUR + timedelta(minutes=30)
    answer = move_occurrence("h", Which(number=1), later, "after the deploy", deps).to_wire()
    assert answer["outcome"] == "moved" and answer["firesAt"] == "2026-03-07T13:30:00.000Z"
    action = deps.records.get("h")
    assert action is not None and action.execution_time == later and action.generation == 2
    assert deps.executions.stopped == [deps.executions.execution_arn(waiting)]
    deps.clock.current = NOW + HOUR  # the old execution wakes at the old time: it is superseded
    assert machine.run(deps, waiting) is None
    _fire_next(deps)
    _fire_next(deps)
    assert _history(deps) == [(1, later, Outcome.FIRED), (2, NOW + 2 * HOUR, Outcome.FIRED)]
    # the moved occurrence keeps its own scheduled time, and says where and why it moved
    moved = deps.records.get("h").history[0]  # type: ignore[union-attr]
    assert moved.scheduled_time == NOW + HOUR
    assert moved.moved_to == later and moved.reason == "moved by request: after the deploy"
    assert moved.late_ms == int((moved.actual_time - later).total_seconds() * 1000)


def test_a_move_earlier_never_fires_the_original_time_again() -> None:
    deps = _deps()
    earlier = NOW + HOUR + timedelta(minutes=40)
    move_occurrence("h", Which(at=NOW + 2 * HOUR), earlier, None, deps)
    for _ in range(3):
        _fire_next(deps)
    assert _history(deps) == [
        (1, NOW + HOUR, Outcome.FIRED),
        (2, earlier, Outcome.FIRED),
        (3, NOW + 3 * HOUR, Outcome.FIRED),
    ]
    entries = deps.records.get("h").history  # type: ignore[union-attr]
    assert [h.scheduled_time for h in entries] == [NOW + n * HOUR for n in (1, 2, 3)]


def test_the_imminent_occurrence_inside_its_lock_is_fixed() -> None:
    deps = _deps()
    deps.clock.current = NOW + HOUR - timedelta(seconds=30)  # type: ignore[attr-defined]
    with pytest.raises(OccurrenceLocked):
        skip_occurrence("h", Which(number=1), None, deps)
    with pytest.raises(OccurrenceLocked):
        move_occurrence("h", Which(number=1), NOW + HOUR + timedelta(minutes=5), None, deps)
    # the one after it is not locked
    assert skip_occurrence("h", Which(number=2), None, deps).outcome.value == "skipped"


@pytest.mark.parametrize(
    ("which", "to", "field"),
    [
        (Which(at=NOW + HOUR + timedelta(minutes=7)), None, "at"),  # not an occurrence
        (Which(number=0), None, "occurrence"),  # already come
        (Which(number=2), NOW + 3 * HOUR, "to"),  # onto its neighbour
        (Which(number=2), NOW + HOUR, "to"),  # onto the one before
        (Which(number=1), NOW - HOUR, "to"),  # into the past
        (Which(number=5_000), None, "occurrence"),  # too far ahead
        (Which(number=2), datetime(9999, 12, 31, 23, 59, 59, 999_900, tzinfo=UTC), "to"),
        (Which(at=datetime(9999, 12, 31, 23, 59, 59, 999_900, tzinfo=UTC)), None, "at"),
    ],
)
def test_a_bad_request_is_refused_naming_the_field_and_writes_nothing(
    which: Which, to: datetime | None, field: str
) -> None:
    deps = _deps()
    before = deps.records.get("h")
    with pytest.raises(ValidationFailed) as refused:
        if to is None:
            skip_occurrence("h", which, None, deps)
        else:
            move_occurrence("h", which, to, None, deps)
    assert [p.field for p in refused.value.problems] == [field]
    assert refused.value.problems[0].fix
    assert deps.records.get("h") == before


def test_the_last_occurrence_of_a_bounded_schedule_is_the_end_of_what_can_be_named() -> None:
    deps = _deps(executionRemainder=3)
    assert skip_occurrence("h", Which(number=3), None, deps).outcome.value == "skipped"
    with pytest.raises(ValidationFailed) as refused:
        skip_occurrence("h", Which(number=4), None, deps)
    assert "ends with occurrence 3" in refused.value.problems[0].problem


def test_a_one_off_and_an_unknown_id_are_refused() -> None:
    deps = fake_dependencies(NOW, history_limit=50)
    start_action(StartCommand({"id": "once", "duration": "1h"}), deps)
    with pytest.raises(NotRecurring):
        skip_occurrence("once", Which(number=1), None, deps)
    with pytest.raises(ActionNotFound):
        skip_occurrence("nobody", Which(number=1), None, deps)


def test_a_paused_action_takes_skips_and_keeps_them_on_resume() -> None:
    from tickwork.steering.pause import pause_action, resume_action

    deps = _deps()
    pause_action("h", None, deps)
    skip_occurrence("h", Which(number=1), None, deps)
    resume_action("h", None, deps)
    action = deps.records.get("h")
    assert action is not None and action.status is Status.PENDING
    _fire_next(deps)
    _fire_next(deps)
    assert [outcome for *_, outcome in _history(deps)] == [Outcome.SKIPPED, Outcome.FIRED]


def test_a_resume_keeps_a_moved_occurrence_whose_move_is_still_ahead() -> None:
    from tickwork.steering.pause import pause_action, resume_action

    # GIVEN an hourly action (its first fire at 13:00), paused at 12:30, whose 14:00 moves to 14:50
    deps = _deps()
    deps.clock.current = NOW + HOUR / 2  # type: ignore[attr-defined]
    pause_action("h", None, deps)
    moved_to = NOW + 2 * HOUR + timedelta(minutes=50)
    move_occurrence("h", Which(at=NOW + 2 * HOUR), moved_to, None, deps)
    # WHEN it is resumed at 14:20: 14:00 has passed, its move has not
    deps.clock.current = NOW + 2 * HOUR + timedelta(minutes=20)  # type: ignore[attr-defined]
    resume_action("h", None, deps)
    # THEN it goes on with the moved fire, not 15:00
    action = deps.records.get("h")
    assert action is not None and action.execution_time == moved_to


# --- as a property ------------------------------------------------------------------------
_asks = st.lists(
    st.tuples(
        st.sampled_from(["skip", "move", "restore"]),
        st.integers(min_value=0, max_value=4),  # how far past the next occurrence
        st.integers(min_value=-59, max_value=59),  # a move's minutes from its scheduled time
        st.booleans(),  # named by its time (else by its number)
    ),
    max_size=4,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rounds=st.lists(_asks, min_size=6, max_size=6))
def test_every_occurrence_is_recorded_once_in_order_and_never_early(
    rounds: list[list[tuple[str, int, int, bool]]],
) -> None:
    deps = _deps(executionRemainder=6)
    skipped: dict[datetime, bool] = {}  # scheduled time → skipped, as last asked
    moved: dict[datetime, datetime] = {}
    for asks in rounds:
        action = deps.records.get("h")
        assert action is not None
        if action.status is not Status.PENDING:
            break
        for kind, ahead, minutes, by_time in asks:
            number = action.occurrence + ahead
            scheduled = NOW + number * HOUR
            which = Which(at=scheduled) if by_time else Which(number=number)
            try:
                if kind == "skip":
                    skip_occurrence("h", which, None, deps)
                    skipped[scheduled] = True
                    moved.pop(scheduled, None)
                elif kind == "move":
                    to = scheduled + timedelta(minutes=minutes or 1)
                    move_occurrence("h", which, to, None, deps)
                    moved[scheduled], skipped[scheduled] = to, False
                else:
                    restore_occurrence("h", which, None, deps)
                    skipped[scheduled] = False
                    moved.pop(scheduled, None)
            except (ValidationFailed, OccurrenceLocked):
                pass  # past the schedule's end, or into the past: refused, nothing written
        _fire_next(deps)
    while (action := deps.records.get("h")) is not None and action.status is Status.PENDING:
        _fire_next(deps)
    assert action is not None and action.status is Status.COMPLETED
    entries = deps.records.get("h").history  # type: ignore[union-attr]
    assert [h.occurrence for h in entries] == [1, 2, 3, 4, 5, 6]
    fire_times = [h.moved_to or h.scheduled_time for h in entries]
    assert fire_times == sorted(fire_times) and len(set(fire_times)) == 6
    for entry, at in zip(entries, fire_times, strict=True):
        scheduled = NOW + entry.occurrence * HOUR
        assert entry.scheduled_time == scheduled  # its own, moved or not
        assert at == moved.get(scheduled, scheduled), (entry.occurrence, at)
        assert entry.outcome is (Outcome.SKIPPED if skipped.get(scheduled) else Outcome.FIRED)
        assert entry.actual_time >= at  # never early: at or after the time it fired for


# --- the seal -----------------------------------------------------------------------------
def _sealed_deps() -> Dependencies:
    deps = fake_dependencies(NOW, history_limit=50, seal_secret_id="seal")
    deps.secrets.values["seal"] = b"the-seal-key"  # type: ignore[attr-defined]
    start_action(StartCommand({"id": "h", "rate": "rate(1 hour)"}), deps)
    return deps


def test_skips_and_moves_asked_through_tickwork_are_sealed_and_taken() -> None:
    deps = _sealed_deps()
    skip_occurrence("h", Which(number=1), None, deps)
    move_occurrence("h", Which(number=2), NOW + 2 * HOUR + timedelta(minutes=5), None, deps)
    skip_occurrence("h", Which(number=3), None, deps)
    for _ in range(4):
        _fire_next(deps)
    assert [outcome for *_, outcome in _history(deps)] == [
        Outcome.SKIPPED, Outcome.FIRED, Outcome.SKIPPED, Outcome.FIRED
    ]  # fmt: skip


def test_a_skip_written_by_hand_is_not_taken_and_the_fire_ends_as_tampered() -> None:
    """A change the seal does not vouch for (a console edit) never silences a fire quietly."""
    from dataclasses import replace

    from tickwork.domain.occurrence_changes import OccurrenceChange

    deps = _sealed_deps()
    action = deps.records.get("h")
    assert action is not None and action.execution_time is not None
    forged = replace(
        action,
        occurrence_changes=(OccurrenceChange(action.execution_time, NOW),),
        version=action.version + 1,
    )
    deps.records.save(forged, expected_version=action.version)
    _fire_next(deps)
    assert [outcome for *_, outcome in _history(deps)] == [Outcome.NO_ACTION]


# --- found from outside (a helper's attack), each failing before its fix --------------------
def test_a_move_or_skip_of_the_paused_fire_holds_when_it_is_resumed() -> None:
    from tickwork.steering.pause import pause_action, resume_action

    deps = _deps()
    later = NOW + HOUR + timedelta(minutes=40)
    pause_action("h", None, deps)
    move_occurrence("h", Which(number=1), later, None, deps)
    resume_action("h", None, deps)
    _fire_next(deps)
    assert _history(deps) == [(1, later, Outcome.FIRED)]
    # resumed after its time, the next occurrence fires where it was moved to
    deps = _deps()
    moved = NOW + 2 * HOUR + timedelta(minutes=30)
    move_occurrence("h", Which(number=2), moved, None, deps)
    pause_action("h", None, deps)
    deps.clock.current = NOW + HOUR + timedelta(minutes=10)  # type: ignore[attr-defined]
    resume_action("h", None, deps)
    action = deps.records.get("h")
    assert action is not None and action.execution_time == moved


def test_a_skip_asked_while_the_execution_sleeps_off_an_early_wake_is_taken() -> None:
    """Step Functions wakes an execution up to a second early; the skip lands meanwhile."""
    deps = fake_dependencies(NOW, history_limit=50, lock=timedelta(0))
    start_action(StartCommand({"id": "h", "rate": "rate(1 hour)"}), deps)
    name = machine.current(deps, "h")
    deps.clock.current = NOW + HOUR - timedelta(milliseconds=900)  # type: ignore[attr-defined]
    original_sleep = deps.clock.sleep

    def sleep_while_a_skip_lands(seconds: float) -> None:
        skip_occurrence("h", Which(number=1), None, deps)
        original_sleep(seconds)

    deps.clock.sleep = sleep_while_a_skip_lands  # type: ignore[method-assign]
    assert machine.run(deps, name) is None
    assert [outcome for *_, outcome in _history(deps)] == [Outcome.SKIPPED]


def test_a_skip_event_delivered_again_after_its_restore_changes_nothing() -> None:
    from tickwork.steering.intake import accept_control

    deps = _deps()
    skip = {"id": "h", "occurrence": 2}
    assert accept_control("Schedule Skip Occurrence", skip, "e1", deps).to_wire()["outcome"] == (
        "skipped"
    )
    accept_control("Schedule Restore Occurrence", skip, "e2", deps)
    again = accept_control("Schedule Skip Occurrence", skip, "e1", deps).to_wire()
    assert again["outcome"] == "unchanged"
    for _ in range(2):
        _fire_next(deps)
    assert [outcome for *_, outcome in _history(deps)] == [Outcome.FIRED, Outcome.FIRED]


def test_a_record_altered_by_hand_is_refused_not_sealed_again() -> None:
    from dataclasses import replace

    from tickwork.domain.errors import RecordAltered

    deps = _sealed_deps()
    action = deps.records.get("h")
    assert action is not None
    forged = replace(action, data={"n": 666}, version=action.version + 1)
    deps.records.save(forged, expected_version=action.version)
    with pytest.raises(RecordAltered):
        skip_occurrence("h", Which(number=3), None, deps)
    assert deps.records.get("h") == forged


@pytest.mark.parametrize("policy", ["ONCE", "SKIP"])
def test_an_occurrence_moved_past_an_outage_still_fires_at_its_moved_time(policy: str) -> None:
    deps = _deps(catchUp=policy)
    moved = NOW + 2 * HOUR + timedelta(minutes=50)
    move_occurrence("h", Which(number=2), moved, None, deps)
    deps.clock.current = NOW + 2 * HOUR + timedelta(minutes=10)  # type: ignore[attr-defined]
    machine.run(deps, machine.current(deps, "h"))  # occurrence 1, an outage late
    _fire_next(deps)
    assert [at for _, at, _ in _history(deps)][1:] == [moved]


def test_a_failed_moved_occurrence_retried_by_hand_is_not_run_again_as_the_next() -> None:
    from tickwork.steering.retry import retry_action

    deps = _deps(onFailure="STOP")
    _fire_next(deps)
    moved = NOW + HOUR + timedelta(minutes=20)
    move_occurrence("h", Which(number=2), moved, None, deps)
    deps.clock.current = moved  # type: ignore[attr-defined]
    machine.fail(deps, machine.current(deps, "h"))
    deps.clock.current = moved + timedelta(minutes=10)  # type: ignore[attr-defined]
    retry_action("h", deps)
    _fire_next(deps)  # the retry
    _fire_next(deps)  # the next occurrence: 15:00, not 14:00 again
    assert [at for _, at, _ in _history(deps)][-1] == NOW + 3 * HOUR


def test_the_fifty_first_coming_change_is_refused_not_dropping_the_soonest() -> None:
    deps = _deps()
    for number in range(2, 52):
        skip_occurrence("h", Which(number=number), None, deps)
    with pytest.raises(ValidationFailed) as refused:
        skip_occurrence("h", Which(number=60), None, deps)
    assert refused.value.problems[0].field == "occurrence"
    action = deps.records.get("h")
    assert action is not None and len(action.occurrence_changes) == 50
    assert action.occurrence_changes[0].scheduled == NOW + 2 * HOUR


def test_a_refusal_names_the_field_the_request_named_its_occurrence_by() -> None:
    deps = _deps()
    move_occurrence("h", Which(number=2), NOW + 2 * HOUR + timedelta(minutes=30), None, deps)
    move_occurrence("h", Which(number=1), NOW + 2 * HOUR + timedelta(minutes=10), None, deps)
    for undo in (skip_occurrence, restore_occurrence):  # back at 14:00: before 14:10's move
        with pytest.raises(ValidationFailed) as refused:
            undo("h", Which(at=NOW + 2 * HOUR), None, deps)
        assert [p.field for p in refused.value.problems] == ["at"]


@pytest.mark.parametrize(
    ("kind", "detail", "field"),
    [
        ("Schedule Move Occurrence", {"occurrence": 2, "to": None}, "to"),
        ("Schedule Backfill", {"startTime": None, "endTime": "2026-01-01T00:00:00Z"}, "startTime"),
        ("Schedule Backfill", {"startTime": "2026-01-01T00:00:00Z", "endTime": None}, "endTime"),
    ],
)
def test_a_time_sent_as_null_is_rejected_as_missing(kind: str, detail: dict, field: str) -> None:
    """null where a time is required is as good as missing: a Schedule Rejected naming it,
    never an error the bus would deliver again."""
    from tickwork.steering.intake import accept_control

    deps = fake_dependencies(NOW, history_limit=50)
    answer = accept_control(kind, {"id": "any", **detail}, "ev", deps).to_wire()
    assert answer["outcome"] == "rejected"
    assert [p["field"] for p in answer["problems"]] == [field]
    assert answer["problems"][0]["problem"] == "is missing"
