"""The periodic repair: actions that should have a live execution but do not get one.

- PENDING and due within the horizon, with no execution of its deterministic name: the start
  was lost (a crash between write and start, an outage) — start it. Starting is idempotent, so
  a concurrent normal start cannot make a second fire.
- IN_PROGRESS for longer than ``stuck_after`` whose claiming execution is no longer running:
  the fire died mid-way — release the claim and fire again (at least once; receivers dedupe on
  ``<id>:<occurrence>``).

After an outage that lost every execution (a restarted local stack), ``horizon=None`` and
``stuck_after=0`` start every waiting action again and release every lost claim.
"""

from __future__ import annotations

from contextlib import suppress
from datetime import timedelta
from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.errors import ActionConflict
from tickwork.domain.times import parse_iso
from tickwork.usecases.launch import launch, planned_execution

__all__ = ["reconcile"]


def reconcile(
    deps: Dependencies,
    horizon: timedelta | None = timedelta(minutes=10),
    stuck_after: timedelta = timedelta(minutes=15),
    limit: int = 10_000,
) -> dict[str, Any]:
    now = deps.clock.now()
    restarted: list[str] = []
    released: list[str] = []
    for action in deps.repository.list(Status.PENDING, limit):
        if horizon is not None and (
            action.execution_time is None or action.execution_time > now + horizon
        ):
            break  # ordered by next fire: the rest are further away
        name, _ = planned_execution(action, deps)
        if not deps.executions.exists(name):
            launch(action, now, deps)
            restarted.append(action.id)
    for action in deps.repository.list(Status.IN_PROGRESS, limit):
        if now - parse_iso(action.updated_at) < stuck_after:
            continue
        if action.claimed_by and deps.executions.is_running(action.claimed_by):
            continue
        with suppress(ActionConflict):
            release = action.released(now, deps.limits.transitions)
            deps.repository.save(release, action.version)
            launch(release, now, deps)
            released.append(action.id)
    if restarted or released:
        deps.publisher.publish(
            "Schedule Reconciled", {"restarted": restarted, "released": released}
        )
    return {"restarted": restarted, "released": released}
