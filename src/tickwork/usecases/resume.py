"""After an outage that lost the running executions (a restarted local stack, a region
failover): start again every action that should be waiting or firing.

PENDING actions get the execution for their current (generation, occurrence) — a repeat start
is harmless. An IN_PROGRESS action was mid-fire when its execution was lost: whether its
fulfillment ran is unknown, so it is released to PENDING and fired again (at least once;
receivers dedupe on the idempotency key ``<id>:<occurrence>``), and its tick is emitted once.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.errors import ActionConflict
from tickwork.usecases.launch import launch

__all__ = ["resume_actions"]


def resume_actions(deps: Dependencies, limit: int = 100_000) -> dict[str, Any]:
    now = deps.clock.now()
    resumed, released = 0, 0
    for action in deps.repository.list(Status.IN_PROGRESS, limit):
        with suppress(ActionConflict):  # it moved on meanwhile: nothing to release
            deps.repository.save(action.released(now, deps.limits.transitions), action.version)
            released += 1
    for action in deps.repository.list(Status.PENDING, limit):
        launch(action, now, deps)
        resumed += 1
    return {"resumed": resumed, "released": released}
