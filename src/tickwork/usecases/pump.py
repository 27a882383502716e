"""The pump: every parked fire that comes within ``LaunchAheadSeconds`` gets its execution.

A fire further away than the horizon waits in the table only (``launch.plan`` parks it), so
the account's open executions are the fires due within the horizon, not every pending action.
The pump runs on the template's schedule. For each parked fire due for launch it starts the
execution under the fire's deterministic name (a repeat is harmless) and then marks the record
launched with a write fenced on its version. Nothing is missed or doubled:

- a pump that was down finds every fire it should have launched (the index is read from a
  watermark, not from "now"); the execution fires late and the action's catch-up policy
  decides, as for any missed fire;
- a Start, update, pause or cancel that races the pump moves the record's version: the pump
  reads it again and marks the same fire again, or leaves the execution it started for a fire
  no longer wanted to find its record moved on at its fire time, and end quietly (it fires
  nothing, as any superseded execution);
- a refused start (``ExecutionLimitExceeded``, throttling) leaves the fire parked, due now, and
  ends the run: the next run retries it, and the refusals raise the alarm.
"""

from __future__ import annotations

import contextvars
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import ACTIVE, Action
from tickwork.domain.errors import ActionConflict, LaunchRefused
from tickwork.usecases.launch import fire_order, planned_execution

__all__ = ["PumpRun", "launch_parked", "pump"]

_MARK_ATTEMPTS = 3
# Launches in flight at once: each is a read, a StartExecution and a write (~3 round trips), so
# one at a time would cap the pump near 20 fires a second, under Step Functions' StartExecution
# refill rate (the capacity model in the README).
WORKERS = 16


@dataclass
class PumpRun:
    launched: list[str] = field(default_factory=list)
    moved: list[str] = field(default_factory=list)  # changed meanwhile: nothing to launch
    refused: list[str] = field(default_factory=list)  # left parked: the next run retries

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def pump(deps: Dependencies, limit: int = 50_000, workers: int = WORKERS) -> dict[str, Any]:
    """Launch the parked fires due for launch now, earliest first, at most ``limit`` a run,
    ``workers`` at a time. After a refusal the rest wait for the next run (the quota or the
    throttle holds for them as well)."""
    now = deps.clock.now()
    run = PumpRun()
    refused = threading.Event()

    def launch_one(action_id: str) -> tuple[str, str | None]:
        if refused.is_set():
            return action_id, None  # still parked: the next run
        outcome = launch_parked(action_id, now, deps)
        if outcome == "refused":
            refused.set()
        return action_id, outcome

    due = deps.parked.due(now, limit)
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(due) or 1))) as pool:
        # Each launch runs in a copy of the caller's context (logging keys, tracing).
        launches = [pool.submit(contextvars.copy_context().run, launch_one, i) for i in due]
        for launched in launches:
            action_id, outcome = launched.result()
            if outcome is not None:
                getattr(run, outcome).append(action_id)
    return run.as_dict()


def launch_parked(action_id: str, now: datetime, deps: Dependencies) -> str:
    """Start the parked fire of ``action_id`` and mark it launched: "launched", "moved" (no
    longer parked, or not due yet) or "refused" (left parked)."""
    started: str | None = None
    for _ in range(_MARK_ATTEMPTS):
        action = deps.records.get(action_id)
        if action is None or not action.is_parked or action.launch_at is None:
            return _settled(action, started)
        if action.launch_at > now:
            return _settled(action, started)  # parked again for later
        name, _ = planned_execution(action, deps)
        try:
            started = deps.executions.start(name, fire_order(action, now, deps))
        except LaunchRefused:
            return "refused"
        try:
            deps.records.save(action.launched(now, started), expected_version=action.version)
        except ActionConflict:
            continue  # read again: the same fire still parked, or moved on
        return "launched"
    raise ActionConflict(action_id, f"could not mark the launch after {_MARK_ATTEMPTS} attempts")


def _settled(action: Action | None, started: str | None) -> str:
    """The record is no longer a parked fire due now: launched under the name this run started
    (marked by another path, the reconciler; or already claimed by that execution, which ran
    at once because its fire was due), or moved on."""
    if started is not None and action is not None and action.status in ACTIVE:
        name = started.rpartition(":")[2]
        ours = action.execution_arn == started or action.claimed_by == name
        return "launched" if ours else "moved"
    return "moved"
