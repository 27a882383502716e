"""Pause and resume, as Temporal's schedules do: a paused action does not fire; resuming
computes its next fire from now, and the occurrences that came due while it was paused are
caught up as its ``catchUpOnResume`` says: SKIPped (the default), the LAST run once, or ALL
run (the latest 100), each a fire of its own (trigger CATCH_UP), run as a backfill runs them.

Pausing supersedes the waiting execution (a new generation) and stops it, so a paused action
costs nothing while it waits. A pause wins until the fire is claimed (inside the lock too);
once it is under way, a recurrence pauses when that fire is recorded, a one-off's pause is
refused (``FireUnderWay``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from tickwork.answers import ChangeAnswer, Done
from tickwork.domain.action import LIVE, Action, Status
from tickwork.domain.action.upcoming import next_fire_after
from tickwork.domain.announcements import Completed, Paused, Resumed
from tickwork.domain.backfill import BackfillRequest, Overlap, passed_while_paused
from tickwork.domain.errors import ActionFinished, ActionNotFound, TickworkError
from tickwork.domain.fire_policy import MAX_CATCH_UP_ON_RESUME, ResumeCatchUp
from tickwork.domain.identifiers import check_steered_id
from tickwork.domain.steering import ChangeKind, Deferred, check_note
from tickwork.domain.times import ceil_ms
from tickwork.fire import writes
from tickwork.fire.backfill_step import step_backfill
from tickwork.fire.calendar_reads import holding_calendar, with_fresh_calendar
from tickwork.fire.launch import launch, stop_own_execution
from tickwork.fire.planning import plan
from tickwork.fire.writes import decided_again
from tickwork.steering.lock import until_claimed
from tickwork.steering.needs import Steers

__all__ = ["pause_action", "resume_action"]


def pause_action(action_id: str, note: str | None, deps: Steers) -> ChangeAnswer:
    """Pause it; read and decided again if its record changed meanwhile (a fire recorded)."""
    action_id = check_steered_id(action_id)
    note = check_note(note)
    return decided_again(lambda: _pause(action_id, note, deps))


def resume_action(action_id: str, note: str | None, deps: Steers) -> ChangeAnswer:
    """Resume it; read and decided again if its record changed meanwhile (a fire recorded)."""
    action_id = check_steered_id(action_id)
    note = check_note(note)
    return decided_again(lambda: _resume(action_id, note, deps))


def _pause(action_id: str, note: str | None, deps: Steers) -> ChangeAnswer:
    action = _live(action_id, "paused", deps)
    if action.status == Status.PAUSED:
        return _answer(action, Done.UNCHANGED)
    if action.deferred is not None and action.deferred.kind is ChangeKind.CANCEL:
        # A cancel waits for the fire under way: the action ends CANCELLED after it, as it
        # would have had the cancel come before the claim. A pause changes nothing of that.
        return replace(
            _answer(action, Done.UNCHANGED),
            message="a cancel waits for the fire under way: it ends CANCELLED after it",
        )
    now = deps.clock.now()
    waiting = until_claimed(action, Deferred(ChangeKind.PAUSE, now, note=note), now, deps)
    if waiting is not None:
        return waiting
    paused = action.paused(now, note, deps.limits)
    writes.pause(deps.records, action, paused)
    stop_own_execution(action, f"paused: {note}" if note else "paused", deps)
    announce_paused(paused, deps)
    return _answer(paused, Done.PAUSED)


def _resume(action_id: str, note: str | None, deps: Steers) -> ChangeAnswer:
    action = seen = _live(action_id, "resumed", deps)
    waiting = action.deferred
    if action.status != Status.PAUSED and waiting is not None and waiting.kind is ChangeKind.PAUSE:
        # The pause waits for the fire under way: the resume, the later word, withdraws it.
        withdrawn = writes.undefer(deps.records, action, deps.clock.now())
        return replace(
            _answer(withdrawn, Done.RESUMED),
            message="the pause waiting for the fire under way is withdrawn: the schedule goes on",
        )
    if action.status != Status.PAUSED:
        return _answer(action, Done.UNCHANGED)
    now = deps.clock.now()
    due = action.execution_time
    held = action.held_by_calendar is not None
    passed_fire = None  # the fire due when it was paused, passed while it was
    catching: list[datetime] = []  # what its catchUpOnResume runs of what came due meanwhile
    unbumped = action
    if due is None or due <= now or held:
        # Its fire passed while it was paused: caught up only as its catchUpOnResume says
        # (``_catch_up``); the next one after now, if any, planned on the calendar as it is
        # now. (One held on its calendar has none its calendar allows: the next from now.)
        action = with_fresh_calendar(action, now, deps)
        passed = passed_fire = None if held else due
        catching = _to_catch_up(action, passed_fire, now)
        unbumped = action
        action = action.caught_up(len(catching))  # they are its occurrences: fewer are left
        due = next_fire_after(action, now, passed) if action.repeat else None
        holder = (
            None if due else holding_calendar(action, lambda a: next_fire_after(a, now, passed))
        )
        if holder is not None:
            return _hold(seen, action, holder, now, deps)
    else:
        # Its fire still ahead keeps the calendar it was planned on, unless the calendar has
        # changed since to allow an earlier one (a fire pushed out by dates since removed).
        action, due = _earlier_on_fresh_calendar(action, due, now, deps)
    if due is None:
        # (the fire that passed keeps its own number, before those caught up)
        finished = unbumped.missed_while_paused(now, deps.limits, caught_up=bool(catching))
        writes.resume(deps.records, action, finished)
        deps.publisher.publish(Completed(action.id, action.generation, action.occurrence))
        caught = _catch_up(finished, catching, now, deps)
        return replace(_answer(finished, Done.COMPLETED), message=caught)
    resumed = action.resumed(now, ceil_ms(due), note, deps.limits)
    resumed = plan(resumed, now, deps)
    writes.resume(deps.records, action, resumed)
    launch(resumed, now, deps)
    deps.publisher.publish(Resumed(action.id, resumed.generation, due))
    caught = _catch_up(resumed, catching, now, deps)
    return replace(_answer(resumed, Done.RESUMED), message=caught)


def _earlier_on_fresh_calendar(
    action: Action, due: datetime, now: datetime, deps: Steers
) -> tuple[Action, datetime]:
    """The record planned on its calendar as the stack has it now, and its first fire from
    now, when that calendar changed since and allows a fire earlier than ``due``; else both as
    they were."""
    use = action.schedule.calendar
    if use is None:
        return action, due
    fresh = with_fresh_calendar(action, now, deps)
    held = fresh.schedule.calendar
    if held is None or held.calendar == use.calendar:
        return action, due
    first = next_fire_after(fresh, now, None)
    return (fresh, ceil_ms(first)) if first is not None and ceil_ms(first) < due else (action, due)


def _to_catch_up(action: Action, passed_fire: datetime | None, now: datetime) -> list[datetime]:
    """The scheduled times of the occurrences that came due while it was paused that its
    ``catchUpOnResume`` runs: none (SKIP), the last (LAST) or each of the latest 100 (ALL) —
    never more than its schedule has left (``executionRemainder``, ``times``)."""
    policy = action.policy.resume_catch_up
    if policy is ResumeCatchUp.SKIP or passed_fire is None:
        return []
    if not action.repeat or action.backfill is not None:
        return []  # nothing to catch up (a one-off), or a backfill of another range runs
    most = action.schedule.max_occurrences
    left = None if most is None else max(0, most - (action.occurrence - 1))
    passed = passed_while_paused(
        action.schedule, action.origin_of(passed_fire), now, MAX_CATCH_UP_ON_RESUME, left
    )
    return passed[-1:] if policy is ResumeCatchUp.LAST else passed


def _catch_up(action: Action, times: list[datetime], now: datetime, deps: Steers) -> str | None:
    """Run the occurrences that came due while it was paused, as its ``catchUpOnResume`` says
    (a backfill of them: each once, its own key, a few at a time — on a schedule they ended,
    too); what the answer says of it. A catch-up that cannot run (a backfill of another range
    still running) is said so: the resume stands."""
    if not times:
        return None
    request = BackfillRequest(
        times[0], times[-1], Overlap.SKIP, now, note="caught up on resume", catch_up=True
    )
    try:
        step_backfill(action.id, request, deps, first=True)
    except TickworkError as refused:
        return f"the occurrences that came due while paused were not caught up: {refused}"
    return f"caught up: {len(times)} occurrence(s) that came due while paused run now"


def _hold(seen: Action, action: Action, calendar: str, now: datetime, deps: Steers) -> ChangeAnswer:
    """Its calendar allows none of its fires within the search bound: it stays paused, held on
    that calendar (in attention; it resumes by itself once the calendar allows a fire), never
    ended on the calendar's account."""
    if seen.held_by_calendar == calendar:
        return _answer(seen, Done.UNCHANGED)
    held = action.held(now, calendar, deps.limits)
    writes.hold(deps.records, seen, held)
    announce_paused(held, deps)
    return _answer(held, Done.UNCHANGED)


def announce_paused(action: Action, deps: Steers) -> None:
    deps.publisher.publish(Paused.of(action))


def _live(action_id: str, wanted: str, deps: Steers) -> Action:
    action = deps.records.get(action_id)
    if action is None:
        raise ActionNotFound(action_id)
    if action.status not in LIVE:
        raise ActionFinished(action_id, str(action.status), wanted)
    return action


def _answer(action: Action, outcome: Done) -> ChangeAnswer:
    shown = action.execution_time if action.status != Status.PAUSED else None
    return ChangeAnswer(
        action.id,
        outcome,
        str(action.status),
        execution_time=shown,
        note=action.pause.note if action.pause else None,
    )
