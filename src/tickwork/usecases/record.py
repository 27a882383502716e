"""After a fire: record the occurrence, then start the next recurrence or finish.

Driven by tickwork's own "Schedule Tick" and "Schedule Failed" events. Each handler is keyed on
(action, generation, occurrence): a repeated or stale delivery changes nothing, except that a
record already moved on to its next occurrence makes sure that occurrence's execution runs
(repairing a crash between the write and the start).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import ACTIVE, Action, Occurrence, Status
from tickwork.domain.errors import ActionConflict
from tickwork.domain.times import ceil_ms, iso, parse_iso
from tickwork.usecases.launch import launch, planned_execution

__all__ = ["FireReport", "record_failure", "record_tick"]

_WRITE_ATTEMPTS = 3
_OUTCOMES = ("FIRED", "NO_ACTION", "SKIPPED")


@dataclass(frozen=True)
class FireReport:
    """The parts of a Tick or Failed detail that identify the fire."""

    id: str
    generation: int
    occurrence: int
    scheduled_time: str
    detail: dict[str, Any]

    @classmethod
    def from_detail(cls, detail: dict[str, Any]) -> FireReport:
        return cls(
            id=detail["id"],
            generation=int(detail["generation"]),
            occurrence=int(detail["occurrence"]),
            scheduled_time=detail.get("scheduledTime") or detail.get("fireAt", ""),
            detail=detail,
        )


def record_tick(report: FireReport, deps: Dependencies) -> dict[str, Any]:
    for _ in range(_WRITE_ATTEMPTS):
        action = deps.repository.get(report.id)
        if not _is_current(action, report):
            return _repeat(action, report, deps)
        assert action is not None
        now = deps.clock.now()
        detail = report.detail
        record = Occurrence(
            occurrence=report.occurrence,
            scheduled_time=report.scheduled_time,
            actual_time=detail.get("actualTime", iso(now)),
            attempts=int(detail.get("attempts", 1)),
            outcome=detail["outcome"] if detail.get("outcome") in _OUTCOMES else "FIRED",
            late_ms=detail.get("lateMs"),
        )
        following = None
        if record.outcome != "NO_ACTION":
            # Occurrences missed in an outage that the catch-up policy does not run are
            # passed over here: the chain resumes at the first one still worth a fire.
            following = action.schedule.next_fire_time(
                parse_iso(report.scheduled_time),
                report.occurrence,
                not_before=action.catch_up.resume_from(now),
            )
        updated = action.fired(
            now, record, following and ceil_ms(following), detail.get("result"), deps.limits
        )
        if updated.status == Status.PENDING:
            updated = replace(updated, execution_arn=planned_execution(updated, deps)[1])
        try:
            deps.repository.save(updated, expected_version=action.version)
        except ActionConflict:
            continue
        if updated.status == Status.PENDING:
            launch(updated, now, deps)
        elif updated.status == Status.COMPLETED:
            _publish_completed(updated, report.occurrence, deps)
        return {
            "id": updated.id,
            "outcome": "recorded",
            "status": str(updated.status),
            "executionTime": iso(updated.execution_time) if following else None,
        }
    raise ActionConflict(report.id, f"could not record occurrence {report.occurrence}")


def record_failure(report: FireReport, deps: Dependencies) -> dict[str, Any]:
    for _ in range(_WRITE_ATTEMPTS):
        action = deps.repository.get(report.id)
        if not _is_current(action, report):
            return {"id": report.id, "outcome": "ignored", "reason": "stale or repeated delivery"}
        assert action is not None
        now = deps.clock.now()
        error = report.detail.get("error") or "Unknown"
        cause = _cause_message(report.detail.get("cause"))
        record = Occurrence(
            occurrence=report.occurrence,
            scheduled_time=report.scheduled_time,
            actual_time=iso(now),
            attempts=action.retry_count + 1,
            outcome="FAILED",
            error=f"{error}: {cause}"[:1000] if cause else error,
        )
        try:
            deps.repository.save(
                action.failed(now, record, deps.limits), expected_version=action.version
            )
        except ActionConflict:
            continue
        return {"id": action.id, "outcome": "recorded", "status": "FAILED", "error": record.error}
    raise ActionConflict(
        report.id, f"could not record the failure of occurrence {report.occurrence}"
    )


def _is_current(action: Action | None, report: FireReport) -> bool:
    return (
        action is not None
        and action.status in ACTIVE
        and (action.generation, action.occurrence) == (report.generation, report.occurrence)
    )


def _repeat(action: Action | None, report: FireReport, deps: Dependencies) -> dict[str, Any]:
    moved_on = (
        action is not None
        and action.status == Status.PENDING
        and action.generation == report.generation
        and action.occurrence == report.occurrence + 1
    )
    if moved_on:
        assert action is not None
        launch(action, deps.clock.now(), deps)
    elif _completed_by(action, report):
        assert action is not None
        # The write landed but the event may not have (a crash in between): at least once.
        _publish_completed(action, report.occurrence, deps)
    return {"id": report.id, "outcome": "ignored", "reason": "stale or repeated delivery"}


def _completed_by(action: Action | None, report: FireReport) -> bool:
    return (
        action is not None
        and action.status == Status.COMPLETED
        and action.generation == report.generation
        and bool(action.history)
        and action.history[-1].occurrence == report.occurrence
    )


def _publish_completed(action: Action, occurrences: int, deps: Dependencies) -> None:
    deps.publisher.publish(
        "Schedule Completed",
        {"id": action.id, "generation": action.generation, "occurrences": occurrences},
    )


def _cause_message(cause: Any) -> str:
    """A Lambda error's Cause is the JSON of {errorType, errorMessage, ...}: keep the message."""
    if isinstance(cause, str):
        try:
            parsed = json.loads(cause)
        except ValueError:
            return cause
        if isinstance(parsed, dict):
            return str(parsed.get("errorMessage", cause))
    return "" if cause is None else str(cause)
