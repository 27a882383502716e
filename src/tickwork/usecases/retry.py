"""Retry by hand: a FAILED action runs its failed occurrence again, now, and resumes its chain."""

from __future__ import annotations

from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.errors import ActionNotFound, ActionNotRetryable
from tickwork.domain.times import ceil_ms, iso
from tickwork.usecases.launch import launch, planned_execution

__all__ = ["retry_action"]


def retry_action(action_id: str, deps: Dependencies) -> dict[str, Any]:
    action = deps.repository.get(action_id)
    if action is None:
        raise ActionNotFound(action_id)
    if action.status != Status.FAILED:
        raise ActionNotRetryable(action_id, str(action.status))
    now = deps.clock.now()
    retried = action.retried(ceil_ms(now), deps.limits)
    retried = retried.planned(planned_execution(retried, deps)[1])
    deps.repository.save(retried, expected_version=action.version)
    launch(retried, now, deps)
    return {
        "id": action_id,
        "outcome": "retried",
        "status": str(retried.status),
        "occurrence": retried.occurrence,
        "executionTime": iso(retried.execution_time or now),
    }
