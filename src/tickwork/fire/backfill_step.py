"""The backfill's step, run by a request and again after each backfilled fire recorded: the
next occurrences of the range asked as fires by hand, as slots free up (``domain.backfill``
holds the rules; ``steering.backfill`` takes the request).

A backfill runs ``AT_ONCE`` occurrences at a time at most, within the manual fires in flight
(so a Run Now still has room). The rest wait on the record; each backfilled fire recorded runs
the next (``continue_backfill``), and the reconciler does for a backfill whose chain broke. Every
write is fenced on the version read (``writes.backfill``): two of them racing never run an
occurrence twice, since each write adds what it runs to the backfilled spans.
"""

from __future__ import annotations

from datetime import UTC, datetime

from tickwork.answers import BackfillAnswer, Done
from tickwork.domain.action import LIVE, Action
from tickwork.domain.backfill import (
    BackfillPlan,
    BackfillRequest,
    Overlap,
    occurrences_in,
    plan_backfill,
    with_span,
)
from tickwork.domain.errors import ActionFinished, BackfillOverlap, NotRecurring, ValidationFailed
from tickwork.domain.fire_kinds import RANGE_TRIGGERS, Trigger
from tickwork.domain.steering import MAX_MANUAL_IN_FLIGHT, ManualFire
from tickwork.domain.times import iso_exact
from tickwork.fire import writes
from tickwork.fire.launch import launch_manual
from tickwork.fire.needs import Launches

__all__ = ["AT_ONCE", "continue_backfill", "step_backfill"]

AT_ONCE = 5  # backfilled fires in flight at most: the other manual fires keep room
_NEVER = datetime.max.replace(tzinfo=UTC)  # a catch-up's occurrences are none the live one's


def continue_backfill(action_id: str, deps: Launches) -> BackfillAnswer | None:
    """Run the next occurrences of the backfill waiting on the record, as slots free up (after
    a backfilled fire is recorded; by the reconciler). None: no backfill waits."""
    return step_backfill(action_id, None, deps, first=False)


def step_backfill(
    action_id: str, asked: BackfillRequest | None, deps: Launches, first: bool
) -> BackfillAnswer | None:
    now = deps.clock.now()
    steps: list[tuple[BackfillPlan, tuple[ManualFire, ...], BackfillRequest]] = []

    def change(action: Action) -> Action | None:
        request = asked or action.backfill
        if request is None:
            return None
        if asked is None and action.status not in LIVE and not request.catch_up:
            return action.backfilling(now, (), action.backfilled, None)[0]  # it ended: drop
        if asked is not None:
            _check_backfillable(action, asked)
        occurrences = occurrences_in(action.schedule, request.start, request.end)
        if asked is not None and not occurrences:
            raise ValidationFailed.of(
                "startTime, endTime",
                "the range holds no occurrence of the schedule",
                "give a range its schedule fires in (tickwork next --id shows its times; a rate "
                "has none before its first fire)",
            )
        plan = plan_backfill(
            occurrences,
            _NEVER if request.catch_up else action.created_at,
            action.backfilled,
            request.overlap,
            _free(action),
        )
        if request.overlap is Overlap.REFUSE and plan.overlapping:
            raise BackfillOverlap(
                action.id,
                iso_exact(plan.overlapping[0]),
                len(plan.overlapping),
                iso_exact(action.created_at),
            )
        still = None if plan.done else (action.backfill or request)
        spans = with_span(action.backfilled, plan.launch, action.schedule)
        trigger = Trigger.CATCH_UP if request.catch_up else Trigger.BACKFILL
        updated, fires = action.backfilling(
            now, plan.launch, spans, still, asked=first, trigger=trigger
        )
        steps[:] = [(plan, fires, request)]
        if not fires and still == action.backfill:
            return action  # nothing to run yet, nothing to write
        return updated

    written = writes.backfill(deps.records, action_id, change)
    if written is None or not steps:
        return None
    plan, fires, request = steps[0]
    for fire in fires:
        launch_manual(written.after, fire, now, deps)
    in_flight = _backfills_in_flight(written.after)
    waiting = written.after.backfill is not None
    outcome = Done.BACKFILLING if waiting else Done.BACKFILLED
    if first and not fires and not waiting and not in_flight:
        outcome = Done.UNCHANGED  # all of it backfilled before (or the live schedule's)
    return BackfillAnswer(
        action_id,
        outcome,
        str(written.after.status),
        plan.total,
        fires,
        plan.already,
        plan.overlapping,
        plan.remaining,
        in_flight,
        request,
    )


def _check_backfillable(action: Action, asked: BackfillRequest) -> None:
    # (a resume's catch-up runs on a schedule it ended: its occurrences were the last)
    if action.status not in LIVE and not asked.catch_up:
        raise ActionFinished(action.id, str(action.status), "backfilled")
    if not action.repeat:
        raise NotRecurring(action.id, "backfill")
    running = action.backfill
    if running is not None and (running.start, running.end) != (asked.start, asked.end):
        raise ValidationFailed.of(
            "startTime, endTime",
            f"a backfill from {iso_exact(running.start)} to {iso_exact(running.end)} is still "
            "running",
            "wait until it is done (the action shows it), or ask for that same range again",
        )


def _backfills_in_flight(action: Action) -> int:
    return sum(1 for m in action.manual.in_flight if m.trigger in RANGE_TRIGGERS)


def _free(action: Action) -> int:
    """Slots for backfilled fires: up to ``AT_ONCE`` of them, within all manual fires."""
    return max(
        0,
        min(
            AT_ONCE - _backfills_in_flight(action),
            MAX_MANUAL_IN_FLIGHT - len(action.manual.in_flight),
        ),
    )
