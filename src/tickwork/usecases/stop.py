"""Schedule Stop: cancel an action before its lock, and stop the execution waiting for it."""

from __future__ import annotations

from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import ACTIVE
from tickwork.domain.errors import ActionLocked, ActionNotFound
from tickwork.domain.events import DetailType
from tickwork.domain.times import iso

__all__ = ["cancel_action"]


def cancel_action(action_id: str, deps: Dependencies) -> dict[str, Any]:
    """Idempotent: cancelling a finished (or already cancelled) action reports its status."""
    action = deps.repository.get(action_id)
    if action is None:
        raise ActionNotFound(action_id)
    if action.status not in ACTIVE:
        return {"id": action_id, "outcome": "unchanged", "status": str(action.status)}
    now = deps.clock.now()
    if action.is_locked(now, deps.settings.lock):
        raise ActionLocked(
            action_id, iso(action.execution_time or now), int(deps.settings.lock.total_seconds())
        )
    cancelled = action.cancelled(now, deps.limits)
    deps.repository.save(cancelled, expected_version=action.version)
    if action.execution_arn:
        deps.executions.stop(action.execution_arn, "cancelled")
    deps.publisher.publish(DetailType.STOPPED, {"id": action_id, "generation": action.generation})
    return {"id": action_id, "outcome": "cancelled", "status": str(cancelled.status)}
