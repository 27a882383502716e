"""The pump: every parked fire that comes within ``LaunchAheadSeconds`` gets its execution.

A fire further away than the horizon waits in the table only (``launch.plan`` parks it), so
the account's open executions are the fires due within the horizon, not every pending action.
The pump runs on the template's schedule. For each parked fire due for launch it starts the
execution under the fire's deterministic name (a repeat is harmless) and then marks the record
launched with a write fenced on its version. The fires due in the same second, when there are
at least ``BatchMinFires`` of them, share one execution of the batch machine instead
(``usecases.batch_plan``): the pump starts the batch, then marks each member launched into it.
Nothing is missed or doubled:

- a pump that was down finds every fire it should have launched (the index is read from a
  watermark, not from "now"); the execution fires late and the action's catch-up policy
  decides, as for any missed fire;
- a Start, update, pause or cancel that races the pump moves the record's version: the pump
  reads it again and marks the same fire again, or leaves the execution it started for a fire
  no longer wanted to find its record moved on at its fire time, and end quietly (it fires
  nothing, as any superseded execution);
- a refused start (``ExecutionLimitExceeded``, throttling) leaves the fire parked, due now, and
  ends the run: the next run retries it, and the refusals raise the alarm. A refused batch
  leaves every one of its fires parked the same way.
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
from tickwork.usecases.batch_plan import Planned, group
from tickwork.usecases.launch import fire_order, planned_execution

__all__ = ["PumpRun", "launch_parked", "pump"]

_MARK_ATTEMPTS = 3
# Launches in flight at once: each is a read, a StartExecution and a write (~3 round trips), so
# one at a time would cap the pump near 20 fires a second, under Step Functions' StartExecution
# refill rate (the capacity model in the README).
WORKERS = 16


@dataclass
class PumpRun:
    launched: list[str] = field(default_factory=list)  # ids: alone, or in one of ``batches``
    moved: list[str] = field(default_factory=list)  # changed meanwhile: nothing to launch
    refused: list[str] = field(default_factory=list)  # left parked: the next run retries
    batches: list[str] = field(default_factory=list)  # the batch executions started

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def pump(deps: Dependencies, limit: int = 50_000, workers: int = WORKERS) -> dict[str, Any]:
    """Launch the parked fires due for launch now, earliest first, at most ``limit`` a run,
    ``workers`` at a time: the fires of a second with at least ``BatchMinFires`` of them in
    batches (usecases.batch_plan), the others alone. After a refusal the rest wait for the next
    run (the quota or the throttle holds for them as well)."""
    now = deps.clock.now()
    run = PumpRun()
    refused = threading.Event()
    due_ids = deps.parked.due(now, limit)
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(due_ids) or 1))) as pool:
        # Each call runs in a copy of the caller's context (logging keys, tracing).
        reads = [pool.submit(contextvars.copy_context().run, deps.records.get, i) for i in due_ids]
        due = [a for r in reads if (a := r.result()) is not None and _due(a, now)]
        run.moved += sorted(set(due_ids) - {a.id for a in due})
        batches, alone = group(due, deps)
        for planned in batches:
            if refused.is_set():
                run.refused += [a.id for a in planned.actions]
                continue
            if _launch_batch(planned, now, deps, run, pool) == "refused":
                refused.set()

        def launch_one(action: Action) -> tuple[str, str | None]:
            if refused.is_set():
                return action.id, None  # still parked: the next run
            outcome = launch_parked(action.id, now, deps, action)
            if outcome == "refused":
                refused.set()
            return action.id, outcome

        launches = [pool.submit(contextvars.copy_context().run, launch_one, a) for a in alone]
        for launched in launches:
            action_id, result = launched.result()
            if result is not None:
                getattr(run, result).append(action_id)
    return run.as_dict()


def _due(action: Action, now: datetime) -> bool:
    return action.is_parked and action.launch_at is not None and action.launch_at <= now


def _launch_batch(
    planned: Planned, now: datetime, deps: Dependencies, run: PumpRun, pool: ThreadPoolExecutor
) -> str:
    """Start the batch's execution, then mark each member launched into it (the pool's workers
    at a time): "launched", or "refused" (every member left parked)."""
    try:
        arn = deps.batches.start(planned.name, planned.order)
    except LaunchRefused:
        run.refused += [a.id for a in planned.actions]
        return "refused"
    run.batches.append(planned.name)

    def mark(action: Action) -> str:
        return _mark(action, now, arn, deps)

    marks = [pool.submit(contextvars.copy_context().run, mark, a) for a in planned.actions]
    for action, marked in zip(planned.actions, marks, strict=True):
        getattr(run, marked.result()).append(action.id)
    return "launched"


def _mark(action: Action, now: datetime, arn: str, deps: Dependencies) -> str:
    """Mark one member of a started batch launched, fenced on its version: "launched", or
    "moved" (it changed meanwhile: the batch finds it superseded and leaves it)."""
    for _ in range(_MARK_ATTEMPTS):
        try:
            deps.records.save(action.launched(now, arn), expected_version=action.version)
            return "launched"
        except ActionConflict:
            fresh = deps.records.get(action.id)
            if fresh is None or not _due(fresh, now) or fresh.fire_key != action.fire_key:
                return _settled(fresh, arn)
            action = fresh
    raise ActionConflict(action.id, f"could not mark the launch after {_MARK_ATTEMPTS} attempts")


def launch_parked(
    action_id: str, now: datetime, deps: Dependencies, action: Action | None = None
) -> str:
    """Start the parked fire of ``action_id`` alone and mark it launched: "launched", "moved"
    (no longer parked, or not due yet) or "refused" (left parked). ``action``: its record as
    just read, if the caller has it."""
    started: str | None = None
    for _ in range(_MARK_ATTEMPTS):
        action = action or deps.records.get(action_id)
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
            action = None
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
