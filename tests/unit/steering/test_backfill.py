"""GIVEN a recurrence WHEN a past range of it is backfilled THEN each occurrence of the range
runs once — now, as a fire recorded BACKFILL, its tick carrying the occurrence's own scheduled
time and a key no live fire has — a few at a time, each recorded one running the next; the
live schedule's occurrences (at or after creation) refuse the backfill, or are skipped, as the
request says; a repeated or overlapping request runs nothing twice; a bad range is refused
naming its field. As a stateful property: whatever backfills, repeats, deliveries again,
reconciler runs and recorded fires interleave, every occurrence asked for runs exactly once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.config import MAX_HISTORY
from tickwork.dependencies import Dependencies
from tickwork.domain.backfill import MAX_BACKFILL, Overlap
from tickwork.domain.errors import (
    ActionFinished,
    ActionNotFound,
    BackfillOverlap,
    NotRecurring,
    ValidationFailed,
)
from tickwork.domain.fire import Outcome, Tick, Trigger
from tickwork.fire.backfill_step import AT_ONCE, continue_backfill
from tickwork.fire.reconcile import reconcile
from tickwork.steering.backfill import backfill
from tickwork.steering.retry import retry_action
from tickwork.steering.start import StartCommand, start_action
from tickwork.steering.stop import cancel_action

NOW = datetime(2026, 11, 20, 12, 30, tzinfo=UTC)  # created at 12:30: 12:00 was never live
HOUR = timedelta(hours=1)
DAY_START = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)


def _fakes() -> Dependencies:
    """The fakes, with a history long enough to hold every fire a test makes."""
    return fake_dependencies(NOW, history_limit=MAX_HISTORY)


def _deps(action_id: str = "hourly", **detail: Any) -> Dependencies:
    deps = _fakes()
    start_action(StartCommand({"id": action_id, "cron": "0 * * * *", **detail}), deps)
    return deps


def _run_manual_fires(deps: Dependencies, action_id: str = "hourly") -> list[Tick]:
    """Run every manual fire in flight (and those their recording starts), until none is: the
    ticks of those that fired."""
    ticks = []
    while True:
        action = deps.records.get(action_id)
        assert action is not None
        if not action.manual.in_flight:
            return ticks
        name = machine.manual(deps, action_id, action.manual.in_flight[0].number)
        tick = machine.run(deps, name)
        assert tick is not None
        ticks.append(tick)


def _backfilled(deps: Dependencies, action_id: str = "hourly") -> list[datetime]:
    action = deps.records.get(action_id)
    assert action is not None
    return [h.scheduled_time for h in action.history if h.trigger is Trigger.BACKFILL]


def test_a_past_range_runs_each_occurrence_once_a_few_at_a_time() -> None:
    deps = _deps()
    answer = backfill("hourly", DAY_START, DAY_START + 11 * HOUR, Overlap.REFUSE, deps)
    wire = answer.to_wire()
    assert wire["outcome"] == "backfilling" and wire["occurrences"] == 12
    assert len(wire["launched"]) == AT_ONCE and wire["remaining"] == 12 - AT_ONCE
    assert wire["launched"][0]["scheduledTime"] == "2026-11-20T00:00:00.000Z"
    ticks = _run_manual_fires(deps)
    assert len(ticks) == 12, "each recorded fire ran the next"
    assert _backfilled(deps) == [DAY_START + n * HOUR for n in range(12)]
    action = deps.records.get("hourly")
    assert action is not None and action.backfill is None
    backfilled = [h for h in action.history if h.trigger is Trigger.BACKFILL]
    assert all(h.outcome is Outcome.FIRED and h.actual_time >= NOW for h in backfilled)
    assert all(t.trigger is Trigger.BACKFILL and t.occurrence == 0 for t in ticks)
    assert [t.scheduled_time for t in ticks] == [DAY_START + n * HOUR for n in range(12)]
    live_key = action.key_of(action.occurrence)
    keys = {t.idempotency_key for t in ticks}
    assert len(keys) == 12 and live_key not in keys, "keys of their own, never a live fire's"
    # asked again: nothing runs twice
    again = backfill("hourly", DAY_START, DAY_START + 11 * HOUR, Overlap.REFUSE, deps)
    assert again.outcome.value == "unchanged" and again.to_wire()["alreadyBackfilled"] == 12
    assert _run_manual_fires(deps) == []


def test_an_overlap_with_the_live_schedule_is_refused_or_skipped_as_asked() -> None:
    deps = _deps()
    deps.clock.current = NOW + 3 * HOUR  # type: ignore[attr-defined]
    with pytest.raises(BackfillOverlap) as refused:
        backfill("hourly", NOW - 2 * HOUR, NOW + 2 * HOUR, Overlap.REFUSE, deps)
    assert refused.value.count == 2 and "13:00" in refused.value.first
    action = deps.records.get("hourly")
    assert action is not None and not action.manual.in_flight and not action.backfilled
    answer = backfill("hourly", NOW - 2 * HOUR, NOW + 2 * HOUR, Overlap.SKIP, deps)
    assert answer.to_wire()["overlapping"] == 2 and len(answer.launched) == 2
    _run_manual_fires(deps)
    assert _backfilled(deps) == [NOW - 1.5 * HOUR, NOW - 0.5 * HOUR]  # 11:00 and 12:00


def test_overlapping_requests_run_nothing_twice() -> None:
    deps = _deps()
    backfill("hourly", DAY_START, DAY_START + 3 * HOUR, Overlap.REFUSE, deps)
    _run_manual_fires(deps)
    answer = backfill("hourly", DAY_START + 2 * HOUR, DAY_START + 6 * HOUR, Overlap.REFUSE, deps)
    assert answer.to_wire()["alreadyBackfilled"] == 2 and len(answer.launched) == 3
    _run_manual_fires(deps)
    assert _backfilled(deps) == [DAY_START + n * HOUR for n in range(7)]
    action = deps.records.get("hourly")
    assert action is not None
    assert [(s.first, s.last) for s in action.backfilled] == [(DAY_START, DAY_START + 6 * HOUR)], (
        "touching spans join"
    )


def test_a_second_range_waits_for_the_first_and_the_same_one_goes_on() -> None:
    deps = _deps()
    backfill("hourly", DAY_START, DAY_START + 9 * HOUR, Overlap.REFUSE, deps)
    with pytest.raises(ValidationFailed) as refused:
        backfill("hourly", DAY_START - 5 * HOUR, DAY_START - HOUR, Overlap.REFUSE, deps)
    assert refused.value.problems[0].field == "startTime, endTime"
    same = backfill("hourly", DAY_START, DAY_START + 9 * HOUR, Overlap.REFUSE, deps)
    assert same.outcome.value == "backfilling" and not same.launched  # all slots taken


def test_a_broken_chain_is_taken_up_by_the_reconciler() -> None:
    deps = _deps()
    backfill("hourly", DAY_START, DAY_START + 7 * HOUR, Overlap.REFUSE, deps)
    action = deps.records.get("hourly")
    assert action is not None
    # the fires run and are recorded, but the recording's step on is lost: drop what it launched
    for fire in action.manual.in_flight:
        machine.run(deps, machine.manual(deps, "hourly", fire.number))
        break
    stalled = deps.records.get("hourly")
    assert stalled is not None and stalled.backfill is not None
    deps.clock.current = NOW + HOUR  # type: ignore[attr-defined]
    reconcile(deps)
    _run_manual_fires(deps)
    assert _backfilled(deps) == [DAY_START + n * HOUR for n in range(8)]


def test_a_failed_backfilled_fire_needs_attention_and_keeps_its_key() -> None:
    deps = _deps()
    backfill("hourly", DAY_START, DAY_START, Overlap.REFUSE, deps)
    action = deps.records.get("hourly")
    assert action is not None
    (fire,) = action.manual.in_flight
    machine.fail(deps, machine.manual(deps, "hourly", fire.number))
    failed = deps.records.get("hourly")
    assert failed is not None and failed.needs_attention
    (unresolved,) = failed.unresolved
    assert unresolved.idempotency_key == fire.idempotency_key
    assert unresolved.scheduled_time == DAY_START


@pytest.mark.parametrize(
    ("start", "end", "field"),
    [
        (DAY_START, NOW + HOUR, "endTime"),  # the future is the schedule's
        (DAY_START + 2 * HOUR, DAY_START, "startTime"),  # backwards
        (NOW - timedelta(days=3_700), DAY_START, "startTime"),  # over ten years back
        (NOW - timedelta(days=60), NOW - timedelta(hours=2), "endTime"),  # over MAX_BACKFILL
        # an offset that takes the instant out of the calendar in UTC (year 0)
        (DAY_START, datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=19))), "endTime"),
    ],
)
def test_a_bad_range_is_refused_naming_the_field(
    start: datetime, end: datetime, field: str
) -> None:
    deps = _deps()
    with pytest.raises(ValidationFailed) as refused:
        backfill("hourly", start, end, Overlap.REFUSE, deps)
    assert refused.value.problems[0].field == field
    action = deps.records.get("hourly")
    assert action is not None and not action.manual.in_flight and action.backfill is None
    assert MAX_BACKFILL < 60 * 24


def test_a_one_off_a_finished_action_and_an_unknown_id_are_refused() -> None:
    deps = _fakes()
    start_action(StartCommand({"id": "once", "at": "2026-11-21T00:00:00Z"}), deps)
    with pytest.raises(NotRecurring):
        backfill("once", DAY_START, DAY_START, Overlap.REFUSE, deps)
    with pytest.raises(ActionNotFound):
        backfill("nobody", DAY_START, DAY_START, Overlap.REFUSE, deps)
    deps2 = _deps()
    cancel_action("hourly", deps2)
    with pytest.raises(ActionFinished):
        backfill("hourly", DAY_START, DAY_START, Overlap.REFUSE, deps2)
    with pytest.raises(ValidationFailed) as refused:
        backfill("hourly", DAY_START, DAY_START, "LATER", deps2)  # type: ignore[arg-type]
    assert refused.value.problems[0].field == "overlap"


def test_a_cancel_ends_a_waiting_backfill() -> None:
    deps = _deps()
    backfill("hourly", DAY_START, DAY_START + 9 * HOUR, Overlap.REFUSE, deps)
    cancel_action("hourly", deps)
    action = deps.records.get("hourly")
    assert action is not None and action.backfill is None and not action.manual.in_flight
    assert continue_backfill("hourly", deps) is None


# --- as a stateful property ------------------------------------------------------------------
IDS = ["b-1", "x-g1-o2", "h" * 200]


class Backfills(RuleBasedStateMachine):
    """Backfills of ranges that overlap each other and the live schedule, repeated, with the
    fires run in any order, delivered again, and the reconciler between."""

    def __init__(self) -> None:
        super().__init__()
        self.deps = _fakes()
        self.action_id = IDS[0]
        self.asked: set[datetime] = set()

    @rule(action_id=st.sampled_from(IDS))
    def start(self, action_id: str) -> None:
        if action_id == self.action_id and self.deps.records.get(action_id) is not None:
            return
        if self.deps.records.get(self.action_id) is None:
            self.action_id = action_id
            start_action(StartCommand({"id": action_id, "cron": "0 * * * *"}), self.deps)

    @precondition(lambda self: self.deps.records.get(self.action_id) is not None)
    @rule(
        first=st.integers(min_value=-30, max_value=14),
        hours=st.integers(min_value=0, max_value=20),
        overlap=st.sampled_from(list(Overlap)),
    )
    def ask(self, first: int, hours: int, overlap: Overlap) -> None:
        start = DAY_START + first * HOUR
        end = min(start + hours * HOUR, self.deps.clock.now())
        try:
            answer = backfill(self.action_id, start, end, overlap, self.deps)
        except (BackfillOverlap, ValidationFailed):
            return
        action = self.deps.records.get(self.action_id)
        assert action is not None
        if action.backfill is None or (action.backfill.start, action.backfill.end) == (start, end):
            created = action.created_at  # from then on, the live schedule's
            moment = start
            while moment <= end:
                if moment < created:
                    self.asked.add(moment)
                moment += HOUR
        assert answer.remaining >= 0

    @precondition(lambda self: self.deps.records.get(self.action_id) is not None)
    @rule(index=st.integers(min_value=0, max_value=9), again=st.booleans())
    def run_one(self, index: int, again: bool) -> None:
        action = self.deps.records.get(self.action_id)
        assert action is not None
        if not action.manual.in_flight:
            return
        fire = action.manual.in_flight[index % len(action.manual.in_flight)]
        name = machine.manual(self.deps, self.action_id, fire.number)
        machine.run(self.deps, name)
        if again:
            machine.run(self.deps, name)  # the same task delivered again: a repeat

    @rule()
    def reconciler(self) -> None:
        self.deps.clock.current += timedelta(minutes=10)  # type: ignore[attr-defined]
        reconcile(self.deps)

    @invariant()
    def each_occurrence_runs_at_most_once(self) -> None:
        action = self.deps.records.get(self.action_id)
        if action is None:
            return
        ran = _backfilled(self.deps, self.action_id)
        assert len(ran) == len(set(ran)), f"an occurrence ran twice: {sorted(ran)}"
        assert all(t < action.created_at for t in ran), "never one of the live schedule's"

    def teardown(self) -> None:
        action = self.deps.records.get(self.action_id)
        if action is None:
            return
        for _ in range(200):  # finish: every asked occurrence runs, once
            if not _run_manual_fires(self.deps, self.action_id):
                self.deps.clock.current += timedelta(minutes=10)  # type: ignore[attr-defined]
                reconcile(self.deps)
                current = self.deps.records.get(self.action_id)
                assert current is not None
                if current.backfill is None and not current.manual.in_flight:
                    break
        ran = _backfilled(self.deps, self.action_id)
        assert len(ran) == len(set(ran))
        assert set(ran) == self.asked, "every occurrence asked for ran"


Backfills.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestBackfills = Backfills.TestCase


# --- found by an outside attack: each a regression test ---------------------------------------
def test_a_replace_mid_backfill_leaves_the_unrun_fires_to_a_later_backfill() -> None:
    deps = _deps()
    backfill("hourly", DAY_START, DAY_START + 9 * HOUR, Overlap.REFUSE, deps)
    old = deps.records.get("hourly")
    assert old is not None
    stale = [machine.manual(deps, "hourly", m.number) for m in old.manual.in_flight]
    start_action(StartCommand({"id": "hourly", "cron": "0 * * * *", "data": {"v": 2}}), deps)
    again = backfill("hourly", DAY_START, DAY_START + 9 * HOUR, Overlap.REFUSE, deps)
    assert again.already == 0, "the dropped fires were never run: they are not backfilled"
    for name in stale:  # the old generation's, numbered as the new ones: they end quietly
        assert machine.run(deps, name) is None
    _run_manual_fires(deps)
    assert _backfilled(deps) == [DAY_START + n * HOUR for n in range(10)]


def test_a_replace_with_another_schedule_starts_its_backfills_afresh() -> None:
    deps = _deps()
    backfill("hourly", DAY_START, DAY_START + 3 * HOUR, Overlap.REFUSE, deps)
    _run_manual_fires(deps)
    start_action(StartCommand({"id": "hourly", "cron": "30 * * * *"}), deps)
    answer = backfill("hourly", DAY_START, DAY_START + 4 * HOUR, Overlap.REFUSE, deps)
    assert answer.already == 0 and answer.total == 4  # 00:30 to 03:30, never run
    _run_manual_fires(deps)
    assert _backfilled(deps)[-4:] == [
        DAY_START + timedelta(minutes=30) + n * HOUR for n in range(4)
    ]


def test_going_on_by_itself_is_no_change_a_signed_event_is_stale_against() -> None:
    deps = _deps()
    backfill("hourly", DAY_START, DAY_START + 9 * HOUR, Overlap.REFUSE, deps)
    asked = deps.records.get("hourly")
    assert asked is not None
    deps.clock.current = NOW + timedelta(minutes=5)  # type: ignore[attr-defined]
    _run_manual_fires(deps)
    after = deps.records.get("hourly")
    assert after is not None and after.changed_at == asked.changed_at


def test_a_retried_backfilled_fire_keeps_its_own_scheduled_time() -> None:
    deps = _deps()
    backfill("hourly", DAY_START + 2 * HOUR, DAY_START + 2 * HOUR, Overlap.REFUSE, deps)
    action = deps.records.get("hourly")
    assert action is not None
    (fire,) = action.manual.in_flight
    machine.fail(deps, machine.manual(deps, "hourly", fire.number))
    retry_action("hourly", deps)
    retried = deps.records.get("hourly")
    assert retried is not None
    (again,) = retried.manual.in_flight
    tick = machine.run(deps, machine.manual(deps, "hourly", again.number))
    assert tick is not None and tick.scheduled_time == DAY_START + 2 * HOUR
    assert tick.idempotency_key == fire.idempotency_key


def test_a_range_to_the_microsecond_repeats_as_itself_and_an_empty_one_is_refused() -> None:
    deps = _deps()
    start = DAY_START + timedelta(microseconds=1)  # past 00:00: from 01:00
    first = backfill("hourly", start, DAY_START + 9 * HOUR, "skip", deps)
    again = backfill("hourly", start, DAY_START + 9 * HOUR, "skip", deps)
    assert first.total == again.total == 9
    with pytest.raises(ValidationFailed) as refused:
        backfill("hourly", DAY_START + timedelta(minutes=1), DAY_START + timedelta(minutes=59),
                 Overlap.REFUSE, _deps())  # fmt: skip
    assert refused.value.problems[0].field == "startTime, endTime"
