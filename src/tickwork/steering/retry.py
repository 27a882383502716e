"""Retry by hand a fire that failed past its retries.

- A FAILED action (failure policy STOP) runs its failed occurrence again, now, and resumes
  its fires.
- An action that went on (CONTINUE) or paused (PAUSE) after a failure runs the failed fire
  again as a fire of its own (trigger RETRY), with the same idempotency key as the failed one,
  beside its schedule; once it succeeds, the action no longer needs attention.
"""

from __future__ import annotations

from tickwork.answers import ChangeAnswer, Done
from tickwork.domain.action import Status
from tickwork.domain.errors import ActionNotFound, ActionNotRetryable, ValidationFailed
from tickwork.domain.fire import Trigger
from tickwork.domain.identifiers import check_steered_id
from tickwork.domain.times import ceil_ms
from tickwork.fire import writes
from tickwork.fire.launch import launch, launch_manual
from tickwork.fire.planning import plan
from tickwork.fire.sealing import seal_holds, seal_of
from tickwork.fire.writes import decided_again
from tickwork.steering.needs import Steers
from tickwork.steering.run_now import ask_manual_fire

__all__ = ["retry_action"]


def retry_action(action_id: str, deps: Steers, occurrence: int | None = None) -> ChangeAnswer:
    """``occurrence`` picks which failed fire (default: the latest). A retry that races another
    writer reads the record again and decides again."""
    action_id = check_steered_id(action_id)
    return decided_again(lambda: _retry(action_id, deps, occurrence))


def _retry(action_id: str, deps: Steers, occurrence: int | None) -> ChangeAnswer:
    action = deps.records.get(action_id)
    if action is None:
        raise ActionNotFound(action_id)
    now = deps.clock.now()
    if action.status == Status.FAILED:
        retried = action.retried(ceil_ms(now), deps.limits)
        if retried.occurrence_changes != action.occurrence_changes and seal_holds(action, deps):
            retried = retried.sealed(seal_of(retried, deps))  # a moved occurrence, moved to now
        retried = plan(retried, now, deps)
        writes.retry_by_hand(deps.records, action, retried)
        launch(retried, now, deps)
        return ChangeAnswer(
            action_id,
            Done.RETRIED,
            str(retried.status),
            execution_time=retried.execution_time or now,
            occurrence=retried.occurrence,
        )
    if not action.unresolved or action.status == Status.CANCELLED:
        raise ActionNotRetryable(action_id, str(action.status))
    failed = [f for f in action.unresolved if occurrence is None or f.occurrence == occurrence]
    if not failed:
        raise ValidationFailed.of(
            "occurrence",
            f"occurrence {occurrence} has no failed fire waiting for a retry",
            "give one of "
            + ", ".join(str(f.occurrence) for f in action.unresolved)
            + ", or leave it out for the latest",
        )
    target = failed[-1]
    running = next(
        (m for m in action.manual.in_flight if m.idempotency_key == target.idempotency_key), None
    )
    if running is not None:  # asked again while its retry runs: that one retry, not another
        return ChangeAnswer(
            action_id,
            Done.UNCHANGED,
            str(action.status),
            occurrence=target.occurrence,
            manual=running.number,
            idempotency_key=running.idempotency_key,
            message=f"a retry of it is under way (manual fire {running.number}): one runs",
        )
    updated, fire = ask_manual_fire(
        action,
        Trigger.RETRY,
        deps,
        occurrence=target.occurrence,
        key=target.idempotency_key,
        # a fire asked for by hand (a backfilled one) keeps its own time on its tick
        scheduled=target.scheduled_time if target.occurrence == 0 else None,
    )
    launch_manual(updated, fire, now, deps)
    return ChangeAnswer(
        action_id,
        Done.RETRIED,
        str(updated.status),
        execution_time=now,
        occurrence=target.occurrence,
        manual=fire.number,
        idempotency_key=fire.idempotency_key,
    )
