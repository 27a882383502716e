"""Cancel an action: at once until its fire is claimed; a recurrence whose fire is under way,
after that fire (a one-off's is refused: its only fire is running)."""

from __future__ import annotations

from tickwork.answers import ChangeAnswer, Done
from tickwork.domain.action import ACTIVE, LIVE, Action, Status
from tickwork.domain.announcements import Stopped
from tickwork.domain.errors import ActionNotFound
from tickwork.domain.identifiers import check_steered_id
from tickwork.domain.steering import ChangeKind, Deferred
from tickwork.fire import writes
from tickwork.fire.launch import stop_own_execution
from tickwork.fire.writes import decided_again
from tickwork.steering.lock import until_claimed
from tickwork.steering.needs import Steers

__all__ = ["cancel_action"]


def cancel_action(action_id: str, deps: Steers) -> ChangeAnswer:
    """Idempotent: cancelling a finished (or already cancelled) action reports its status.

    It wins until the fire is claimed, wherever the fire waits (in its execution, parked, in a
    batch, inside the lock): the claim is the one point that decides. Once claimed, a one-off's
    cancel is refused (``FireUnderWay``), a recurrence is cancelled as soon as that fire is
    recorded (outcome ``deferred``). A cancel
    that races another writer (the pump launching the fire, the reconciler parking it again)
    reads the record again and decides again.
    """
    action_id = check_steered_id(action_id)
    attempts: list[Action] = []
    return decided_again(lambda: _cancel(action_id, deps, attempts))


def _cancel(action_id: str, deps: Steers, attempts: list[Action]) -> ChangeAnswer:
    """``attempts``: the records the earlier attempts of this request read."""
    action = deps.records.get(action_id)
    if action is None:
        raise ActionNotFound(action_id)
    if action.status not in LIVE:
        if attempts and action.status == Status.CANCELLED and attempts[-1].status in LIVE:
            # This request's own write landed, its answer lost (a retried conditional write
            # fails its condition): finish what follows it, once.
            _stopped(attempts[-1], deps)
            return ChangeAnswer(action_id, Done.CANCELLED, str(action.status))
        return ChangeAnswer(action_id, Done.UNCHANGED, str(action.status))
    attempts.append(action)
    now = deps.clock.now()
    waiting = until_claimed(action, Deferred(ChangeKind.CANCEL, now), now, deps)
    if waiting is not None:
        return waiting
    cancelled = action.cancelled(now, deps.limits)
    writes.cancel(deps.records, action, cancelled)
    _stopped(action, deps)
    return ChangeAnswer(action_id, Done.CANCELLED, str(cancelled.status))


def _stopped(action: Action, deps: Steers) -> None:
    """What follows the cancel of ``action`` (the record as it was): its execution stopped,
    the cancel announced."""
    if action.status in ACTIVE:
        stop_own_execution(action, "cancelled", deps)
    announce_stopped(action.id, action.generation, deps)


def announce_stopped(action_id: str, generation: int, deps: Steers) -> None:
    deps.publisher.publish(Stopped(action_id, generation))
