"""JSON-ready views of an action, shared by the CLI and the HTTP API."""

from __future__ import annotations

from typing import Any

from tickwork.domain.action import Action, Status
from tickwork.domain.fire import Trigger
from tickwork.domain.times import iso

__all__ = ["action_summary", "action_view", "retrying"]


def action_summary(action: Action) -> dict[str, Any]:
    return {
        "id": action.id,
        "action": action.action,
        "status": str(action.status),
        "executionTime": iso(action.execution_time) if action.execution_time else None,
        "occurrence": action.occurrence,
        "executionRemainder": action.execution_remainder,
        "schedule": action.schedule.describe(),
        "retryCount": action.retry_count,
        "manualRetries": sum(1 for o in action.history if o.trigger == Trigger.RETRY),
        "lastError": action.last_error,
        "group": action.group,
        "needsAttention": action.needs_attention,
        "pauseNote": action.pause.note if action.pause and action.status == Status.PAUSED else None,
        "heldByCalendar": action.held_by_calendar,
        "deferred": str(action.deferred.kind) if action.deferred else None,
        # the last fire's result, for a list that shows it beside the next fire
        "lastOutcome": str(action.history[-1].outcome) if action.history else None,
        "lastFiredAt": iso(action.history[-1].actual_time) if action.history else None,
    }


def action_view(action: Action, retries: int | None = None) -> dict[str, Any]:
    """``retries``: the stack's RetryMaxAttempts, the default of an action that sets none."""
    return {
        **action_summary(action),
        "data": action.data,
        "metadata": action.metadata,
        "timezone": action.schedule.timezone,
        "scheduleSpec": action.schedule.to_dict(),
        "repeat": action.repeat,
        "frequency": action.frequency,
        "catchUp": action.catch_up.to_dict(),
        "onFailure": str(action.failure_policy),
        "onUnknownOutcome": str(action.unknown_outcome_policy),
        "roleArn": action.role_arn,
        "lockSeconds": action.policy.lock_seconds,
        "maximumRetryAttempts": action.policy.maximum_retry_attempts,
        "maximumEventAgeSeconds": int(action.policy.event_age.total_seconds()),
        "deadLetterArn": action.policy.dead_letter_arn,
        "catchUpOnResume": str(action.policy.resume_catch_up),
        "overlapPolicy": str(action.policy.overlap),
        "retrying": retrying(action, retries),
        "pausedAt": iso(action.pause.at) if action.pause else None,
        "idempotencyKey": action.key_of(action.occurrence) if action.execution_time else None,
        "generation": action.generation,
        "version": action.version,
        "executionArn": action.execution_arn,
        "launchAt": iso(action.launch_at) if action.is_parked and action.launch_at else None,
        "lastResult": action.last_result,
        "createdAt": iso(action.created_at),
        "updatedAt": iso(action.updated_at),
        "manualFires": [
            {
                "manual": m.number,
                "trigger": str(m.trigger),
                "occurrence": m.occurrence,
                "requestedAt": iso(m.requested_at),
                "idempotencyKey": m.idempotency_key,
                "scheduledTime": m.scheduled and iso(m.scheduled),
            }
            for m in action.manual.in_flight
        ],
        "calendarTampered": (
            {
                "calendar": action.tampered_calendar.name,
                "notedAt": iso(action.tampered_calendar.noted_at),
            }
            if action.tampered_calendar
            else None
        ),
        "missedFire": (
            {
                "occurrence": action.missed.occurrence,
                "scheduledTime": iso(action.missed.scheduled_time),
                "notedAt": iso(action.missed.noted_at),
            }
            if action.missing_fire and action.missed
            else None
        ),
        "occurrenceChanges": [
            {
                "scheduledTime": iso(c.scheduled),
                "firesAt": None if c.to is None else iso(c.to),
                "skipped": c.to is None,
                "requestedAt": iso(c.requested_at),
                "note": c.note,
            }
            for c in action.coming_changes
        ],
        "backfill": (
            {
                "startTime": iso(action.backfill.start),
                "endTime": iso(action.backfill.end),
                "overlap": str(action.backfill.overlap),
                "requestedAt": iso(action.backfill.requested_at),
                "note": action.backfill.note,
            }
            if action.backfill
            else None
        ),
        "backfilled": [{"first": iso(s.first), "last": iso(s.last)} for s in action.backfilled],
        "failedFires": [
            {
                "occurrence": f.occurrence,
                "scheduledTime": iso(f.scheduled_time),
                "idempotencyKey": f.idempotency_key,
                "error": f.error,
            }
            for f in action.unresolved
        ],
        "history": [
            {
                "occurrence": h.occurrence,
                "scheduledTime": iso(h.scheduled_time),
                "actualTime": iso(h.actual_time),
                "attempts": h.attempts,
                "outcome": str(h.outcome),
                "error": h.error,
                "lateMs": h.late_ms,
                "trigger": str(h.trigger),
                "manual": h.manual,
                "execution": h.execution,
                "reason": h.reason,
                "movedTo": iso(h.moved_to) if h.moved_to else None,
            }
            for h in action.history
        ],
        "transitions": [
            {
                "at": iso(t.at),
                "from": t.from_status and str(t.from_status),
                "to": str(t.to_status),
                "reason": t.reason,
            }
            for t in action.transitions
        ],
    }


def retrying(action: Action, retries: int | None) -> dict[str, Any] | None:
    """A claimed fire whose attempts failed so far: how many it made, how many its retry policy
    still allows (None: the stack's default is not known here), and the deadline past which
    none starts."""
    if action.status != Status.IN_PROGRESS or action.last_error is None:
        return None
    made = action.retry_count + 1
    known = retries is not None or action.policy.maximum_retry_attempts is not None
    fire_at = action.execution_time
    budget = None if fire_at is None else action.policy.budget(fire_at, retries or 0)
    return {
        "occurrence": action.occurrence,
        "attemptsMade": made,
        "attemptsLeft": max(budget.attempts - made, 0) if budget and known else None,
        "deadline": iso(budget.deadline) if budget else None,
        "lastError": action.last_error,
    }
