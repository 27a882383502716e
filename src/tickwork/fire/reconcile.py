"""The periodic repair: every action that should have a live execution gets exactly one.

Four repairs, each safe to repeat and to run beside the normal flow (every start is
idempotent by name, every write is fenced on the record's version, and an execution that finds
its record moved on ends quietly):

- **restarted** — PENDING and due within the horizon, but its execution never started (a crash
  between the write and the start, a stack that was down) or ended without firing (stopped by
  hand, a failure before the claim whose report was lost, a batch whose task failed past its
  retries or was lost): start one, of its own — but not for a fire not yet due whose record
  named a batch under 30 s ago that has not started: its starter (the pump between its marks
  and the start, a task whose follow-on waits for its members) is at work. A parked fire
  whose launch moment passed by more than a third of the horizon (the pump is down or far
  behind: it had that long; with the defaults, 5 of its runs, and a reconciler every 5 minutes
  still launches it before it is due) is launched as the pump would, the fires due in one
  second together in a batch (``pump.launch_due``), each named as it starts; one just past its
  launch moment is left to the pump's next run, never raced to a lone start. A fire parked far
  that the pump launched without a write (its shard's watermark passed it:
  ``ParkedFires.passed``) is its execution's — alone or in a batch no record names — until
  ``MissedGraceSeconds`` after its time; still unclaimed then, it is started alone.
- **recorded** — IN_PROGRESS, and the claiming execution SUCCEEDED, but its Schedule Tick never
  got recorded (a lost event, a tick handler that kept failing, a bus that refused the tick past
  the Emit tick retries): record the tick from the execution's output, after putting it on the
  bus when the bus had refused it. Nothing runs twice.
- **failed** — IN_PROGRESS, and the claiming execution ended in ``FireFailed`` but its Schedule
  Failed report was lost or refused: record the occurrence FAILED from the report the execution
  left as its cause (or the record's last error). Nothing runs twice. Also a claimed fire whose
  execution ended any other way (an error no Catch takes, aborted, timed out, gone): its
  fulfillment may have happened, so under ``onUnknownOutcome`` FAIL (the default) it is recorded
  FAILED as ``FireOutcomeUnknown``, retryable by hand with the same idempotency key. A fire
  claimed by a batch whose execution ended without recording it is the same case.
- **released** — the same unknown outcome under ``onUnknownOutcome`` RETRY: release the claim
  and fire again, with the same idempotency key. The one at-least-once repair, chosen by the
  action; receivers dedupe on the key.
- **settled** — a batch's tab still open after its batch stopped running (its task failed past
  its retries, or the stack lost it): the counter changes its members carry are added, once.

Before them the watchdog (``fire.watchdog``) notes each fire not happened by its time plus
``MissedGraceSeconds`` (``missed``, announced as Schedule Missed): not a repair, a signal, and
first, because a fire a repair relaunches fires at once and would no longer look missed.

After an outage that lost every execution (a restarted local stack), ``horizon=None`` and
``stuck_after=0`` look at every waiting action and every claim.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from tickwork.answers import Done
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action, Status
from tickwork.domain.announcements import Reconciled
from tickwork.domain.errors import ActionConflict, RepairsIncomplete
from tickwork.domain.execution import Machine, name_of, same_execution
from tickwork.domain.fire import FireFailure, FireKey, Outcome
from tickwork.domain.fire_ending import (
    FIRE_FAILED,
    OUTCOME_UNKNOWN,
    LeftFailure,
    LeftTick,
    UnknownOutcomePolicy,
    failure_left,
    tick_left,
)
from tickwork.domain.fire_kinds import RANGE_TRIGGERS
from tickwork.domain.steering import ManualFire
from tickwork.fire import writes
from tickwork.fire.backfill_step import continue_backfill
from tickwork.fire.grouping import window
from tickwork.fire.launch import launch, launch_manual
from tickwork.fire.needs import Repairs
from tickwork.fire.orders import kind_of
from tickwork.fire.planning import manual_execution, planned_execution
from tickwork.fire.pump import WORKERS, launch_due
from tickwork.fire.record import record_failure, record_tick
from tickwork.fire.watchdog import note_missed
from tickwork.ports import ExecutionStarter, ExecutionState

__all__ = ["HORIZON", "STUCK_AFTER", "reconcile"]

log = logging.getLogger("tickwork")

_MAX_REPAIRS = 50  # repair executions per fire; each one needs a name of its own
# A claim this old may belong to an execution that ended with its tick or report refused by the
# bus (Emit tick and Report failure retry for about 30 s): looked at before ``stuck_after``.
_UNDELIVERED_AFTER = timedelta(seconds=30)
# A batch named this lately, for a fire not yet due, is still being started (``_batch_starting``).
_BATCH_START_GRACE = timedelta(seconds=30)
# A run lists at most this many running executions of a machine (100 calls); past it, it
# describes the executions it needs to know about, one call each.
_MOST_LISTED = 100_000


HORIZON = timedelta(minutes=10)  # a scheduled run looks this far ahead of now
STUCK_AFTER = timedelta(minutes=15)  # a claim held this long is resolved


def reconcile(
    deps: Dependencies,  # the whole bundle: its executions described once a run
    horizon: timedelta | None = HORIZON,
    stuck_after: timedelta = STUCK_AFTER,
    limit: int = 10_000,
    deadline: datetime | None = None,
    workers: int = WORKERS,
) -> dict[str, Any]:
    """One pass over what may need repair (overdue parked fires launched ``workers`` at a time,
    as the pump launches them). A repair that fails (an execution name taken, a
    throttled call) is logged and the pass goes on with the others; ``RepairsIncomplete`` then
    names them, after the repairs that were made are announced. With ``deadline`` (the run's
    timeout less a margin) the pass stops looking once it passes: what it did not reach is
    named under ``unfinished`` (its parts: pending, overdue, claims, manual, tabs) and the next
    run looks again, nearest fires first."""
    now = deps.clock.now()
    unfinished: list[str] = []

    def in_time(part: str) -> bool:
        if deadline is None or deps.clock.now() < deadline:
            return True
        if part not in unfinished:
            unfinished.append(part)
        return False

    # A running execution is described once a run: a batch's members, and a claim beside its
    # fire's own check, do not describe it again.
    deps = replace(
        deps, executions=_RunningOnce(deps.executions), batches=_RunningOnce(deps.batches)
    )
    # First the watchdog, on the records as they are: a fire a repair below relaunches fires
    # at once, and would no longer look missed, though it was.
    missed = note_missed(deps, now, limit)
    repairs = Reconciled()
    unrepaired: list[str] = []
    until = None if horizon is None else now + horizon
    overdue: list[str] = []  # parked fires the pump missed
    far: list[Action] = []  # parked far: launched without a name once the pump passed them
    for action in deps.queries.in_fire_order(Status.PENDING, limit, until):
        if not in_time("pending"):
            break
        if action.parked_far:
            far.append(action)
        elif action.is_parked:
            if _missed_by_the_pump(action, now, deps):
                overdue.append(action.id)
        else:
            with _alone(action.id, unrepaired):
                if _restart_if_lost(action, now, deps):
                    repairs.restarted.append(action.id)
    passed = deps.parked.passed(far) if far else set()
    held = _Held(deps)
    for action in far:
        if action.id not in passed:
            if _missed_by_the_pump(action, now, deps):
                overdue.append(action.id)
            continue
        with _alone(action.id, unrepaired):
            if _restart_unnamed(action, now, deps, held):
                repairs.restarted.append(action.id)
    if overdue and in_time("overdue"):  # each batch and lone fire on its own, failures named
        with _alone("parked fires the pump missed", unrepaired):
            # named as they start: no watermark of the pump's says they were launched
            run = launch_due(overdue, now, deps, workers, name_all=True)
            repairs.restarted.extend(run.launched)
            unrepaired.extend(run.failed)
    claims = deps.queries.in_fire_order(Status.IN_PROGRESS, limit) if in_time("claims") else []
    for action in claims:
        if not in_time("claims"):
            break
        claimed_for = now - action.updated_at
        with _alone(action.id, unrepaired):
            if claimed_for >= stuck_after:
                _resolve_claim(action, now, deps, repairs)
            elif claimed_for >= _UNDELIVERED_AFTER:
                _resolve_claim(action, now, deps, repairs, only_undelivered=True)
    manual = deps.queries.with_manual_fires(limit) if in_time("manual") else []
    for action in manual:
        if not in_time("manual"):
            break
        for fire in action.manual.in_flight:
            if now - fire.requested_at >= stuck_after:
                with _alone(action.id, unrepaired):
                    _resolve_manual(action, fire, now, deps, repairs)
        if _backfill_stalled(action):
            with _alone(action.id, unrepaired):
                if continue_backfill(action.id, deps) is not None:
                    repairs.restarted.append(action.id)
    tabs = deps.tabs.open_tabs(now, limit) if in_time("tabs") else []
    for tab in tabs:  # a batch running now keeps its tab open
        if not in_time("tabs"):
            break
        with _alone(tab, unrepaired):
            _settle_if_ended(tab, deps, repairs)
    if repairs.total:
        deps.publisher.publish(repairs)
    if unfinished:
        log.warning("reconciler run out of time", extra={"unfinished": unfinished})
    if unrepaired:
        raise RepairsIncomplete(unrepaired, repairs.to_wire())
    return {
        **repairs.to_wire(),
        "missed": [m.action_id for m in missed],
        **({"unfinished": unfinished} if unfinished else {}),
    }


class _RunningOnce:
    """An execution starter whose ``describe`` knows, for one run, the executions running: from
    one listing of the machine's running executions (a call per 1,000), made at the first
    question, and from each answer found running (one that ends meanwhile is seen by the next
    run). A name the listing lacks (it lags a start) is described, as anything not running is."""

    def __init__(self, starter: ExecutionStarter) -> None:
        self._starter = starter
        self._running: set[str] | None = None
        self._incomplete = False
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._starter, name)

    def listing(self) -> set[str] | None:
        """The names the run's listing found running; None when it could not list them all."""
        with self._lock:
            if self._running is None:
                self._running = self._listed()
            return None if self._incomplete else set(self._running)

    def describe(self, name: str) -> ExecutionState | None:
        with self._lock:
            if self._running is None:
                self._running = self._listed()
            if name in self._running:
                return ExecutionState("RUNNING")
        state = self._starter.describe(name)
        if state is not None and state.running:
            with self._lock:
                self._running.add(name)
        return state

    def _listed(self) -> set[str]:
        try:
            listed = self._starter.running_names(_MOST_LISTED)
        except Exception:  # throttled, say: each execution is described instead
            log.warning("listing running executions failed", exc_info=True)
            self._incomplete = True
            return set()
        self._incomplete = listed is None
        return set() if listed is None else listed


@contextmanager
def _alone(subject: str, unrepaired: list[str]) -> Iterator[None]:
    """One action's (or tab's) repair: its failure is logged and kept, never the pass's end."""
    try:
        yield
    except Exception:
        log.exception("repair failed", extra={"id": subject})
        unrepaired.append(subject)


def _batch_starting(execution: str, action: Action, now: datetime, deps: Repairs) -> bool:
    """The record names a batch not started yet, lately, for a fire not yet due: its starter
    (the pump between its marks and the start, a task whose follow-on waits for its members)
    is at work; a lone start now would split the batch. Past the grace, or once the fire is
    due, a batch never started is lost, and its fire is restarted alone."""
    due = action.execution_time
    return (
        kind_of(_arn_of(execution, action, deps), deps) is Machine.BATCH
        and due is not None
        and due > now
        and now - action.updated_at < _BATCH_START_GRACE
    )


def _missed_by_the_pump(action: Action, now: datetime, deps: Repairs) -> bool:
    """A parked fire is the pump's until a third of the horizon past its launch moment (a start
    by the reconciler before that would race the pump's batch of its second) — or, parked
    nearer its fire than that (NearParkSeconds: due now, created inside the horizon), until
    half the way from its launch moment to its fire: the pump had two runs at least."""
    if action.launch_at is None:
        return False
    settings = deps.settings
    grace = settings.launch_ahead / 3
    ahead = None if action.execution_time is None else action.execution_time - action.launch_at
    if settings.near_park and ahead is not None and ahead > settings.near_park:
        grace = min(grace, ahead / 2)  # (a fire parked again, due now, waits as before)
    return action.launch_at + grace <= now


def _restart_if_lost(action: Action, now: datetime, deps: Repairs) -> bool:
    current = action.execution_arn or planned_execution(action, deps)[1]
    state = _describe(current, action, deps)
    if state is not None and state.running:
        return False
    if state is None and _batch_starting(current, action, now, deps):
        return False
    fresh = deps.records.get(action.id)
    if fresh is None or fresh.version != action.version:
        return False  # it moved on while we looked: the normal flow has it
    return _relaunch(fresh, now, deps)


def _restart_unnamed(action: Action, now: datetime, deps: Repairs, held: _Held) -> bool:
    """A fire parked far that the pump launched (its watermark passed it) without naming the
    execution: its own lone one, or a batch no record names. Before ``MissedGraceSeconds``
    after its time it is left to it — unless the pump had its runs (a third of the horizon
    past its launch moment) and no execution the run's listings show running could hold it
    (a share whose worker was lost, a writer's clock behind by more than 20 s): then it is
    started now, before its time. Past it, still unclaimed: the execution that had it is
    lost, stopped or never started — unless its own is running (waiting for a concurrency
    slot, retrying). Either way it is started alone, named first, so that a batch still
    holding it can no longer claim it."""
    due = action.execution_time
    if due is None:
        return False
    if due + deps.settings.missed_grace > now and not (
        _missed_by_the_pump(action, now, deps) and not held.may_hold(action, due)
    ):
        return False  # its execution, alone or a batch, claims it at its time
    name, _ = planned_execution(action, deps)
    state = deps.executions.describe(name)
    if state is not None and state.running:
        return False
    fresh = deps.records.get(action.id)
    if fresh is None or fresh.version != action.version:
        return False  # it moved on while we looked: the normal flow has it
    return _relaunch(fresh, now, deps)


class _Held:
    """For one run: whether an execution its listings show running may hold a fire parked far —
    its own, or a batch of its window (named for its first second, at or before the fire's);
    always, when a listing is incomplete. The listings are read once, at the first question;
    nothing is asked per fire."""

    def __init__(self, deps: Repairs) -> None:
        self._deps = deps
        self._read = False
        self._fires: set[str] | None = None
        self._seconds: set[int] | None = None

    def may_hold(self, action: Action, due: datetime) -> bool:
        if not self._read:
            self._read = True
            self._fires = _listing(self._deps.executions)
            batches = _listing(self._deps.batches)
            self._seconds = None if batches is None else {_batch_second(n) for n in batches}
        if self._fires is None or self._seconds is None:
            return True
        if planned_execution(action, self._deps)[0] in self._fires:
            return True
        first = int(window(due, self._deps.settings).timestamp())
        return any(second in self._seconds for second in range(first, int(due.timestamp()) + 1))


def _listing(starter: ExecutionStarter) -> set[str] | None:
    """What the run's listing of a machine found running (``_RunningOnce``); None unknown."""
    listing = getattr(starter, "listing", None)
    return listing() if callable(listing) else None


def _batch_second(name: str) -> int:
    """The second a batch is named for (``b-<second>-…``); -1 for any other name."""
    head, _, rest = name.partition("-")
    second = rest.partition("-")[0]
    return int(second) if head == "b" and second.isdigit() else -1


def _settle_if_ended(tab: str, deps: Repairs, repairs: Reconciled) -> None:
    """A batch's tab still open: its task settles it at its end, a retry of the task first
    thing; a batch no longer running (failed past its retries, lost) never will."""
    batch = tab.rpartition("#")[0]
    state = deps.batches.describe(batch)
    if state is not None and state.running:
        return
    if deps.tabs.settle(tab):
        repairs.settled.append(batch)


def _resolve_claim(
    action: Action,
    now: datetime,
    deps: Repairs,
    repairs: Reconciled,
    only_undelivered: bool = False,
) -> None:
    """A claim held past ``stuck_after``: record what its execution left, exactly once. With
    ``only_undelivered``, only a tick or report the bus refused: nothing else will record it,
    so it need not wait for ``stuck_after``."""
    holder = _arn_of(action.claimed_by, action, deps)
    state = _describe(holder, action, deps)
    if state is not None and state.running:
        return  # still retrying, or waiting for a concurrency slot
    left = _left_by(state)
    if only_undelivered and not (left is not None and left.undelivered):
        return
    if isinstance(left, LeftTick) and left.tick.key == action.fire_key:
        if left.tick.outcome is not Outcome.SKIPPED:  # a skip records itself before it ends
            _record_left_tick(left, action.id, deps, repairs)
        return
    if isinstance(left, LeftFailure):
        failure = left.failure or _unproved(action, holder, now, state)
        if failure.key == action.fire_key:
            _record_left_failure(failure, left.undelivered, deps, repairs)
            return
    if action.unknown_outcome_policy is UnknownOutcomePolicy.FAIL:
        lost = _unknown(action.fire_key, action.execution_time or now, holder, state)
        if record_failure(lost, deps).outcome is Done.RECORDED:
            repairs.failed.append(action.id)
        return
    with suppress(ActionConflict):  # RETRY: at least once, with the same idempotency key
        written = writes.release(deps.records, action, now, deps.limits)
        if written is not None and _relaunch(written.after, now, deps):
            repairs.released.append(action.id)


def _backfill_stalled(action: Action) -> bool:
    """A backfill waits and none of its fires runs: the recording of its last one could not
    run the next (the record step goes on with it otherwise)."""
    return action.backfill is not None and not any(
        m.trigger in RANGE_TRIGGERS for m in action.manual.in_flight
    )


def _resolve_manual(
    action: Action, fire: ManualFire, now: datetime, deps: Repairs, repairs: Reconciled
) -> None:
    """A fire asked for by hand whose execution ended unrecorded, or was lost."""
    at_most_once = action.unknown_outcome_policy is UnknownOutcomePolicy.FAIL
    repair = 0
    for repair in range(_MAX_REPAIRS + 1):
        # (a scheduled fire handed on runs in its own execution first; its repairs in manual
        # ones, as a fire asked for by hand)
        own = fire.execution if repair == 0 and fire.execution else None
        name = name_of(own) if own else manual_execution(action, fire, deps, repair)
        arn = deps.executions.execution_arn(name)
        state = deps.executions.describe(name)
        if state is None:
            break
        if state.running:
            return
        left = _left_by(state)
        if isinstance(left, LeftTick) and left.tick.manual == fire.number:
            _record_left_tick(left, action.id, deps, repairs)
            return
        if isinstance(left, LeftFailure):
            failure = left.failure or replace(
                _unproved(action, arn, now, state),
                generation=fire.generation,
                occurrence=fire.occurrence,
                scheduled_time=fire.scheduled or fire.requested_at,
                manual=fire.number,
                trigger=fire.trigger,
            )
            _record_left_failure(failure, left.undelivered, deps, repairs)
            return
        if same_execution(fire.claimed_by, arn) and at_most_once:
            break  # it ended after its claim without a word: the outcome is unknown
    else:
        raise RuntimeError(f"{action.id}: {_MAX_REPAIRS} repair executions already used")
    if fire.claimed_by is not None and at_most_once:
        key = (action.id, fire.generation, fire.occurrence, fire.number)
        holder = _arn_of(fire.claimed_by, action, deps)
        lost = _unknown(key, fire.scheduled or fire.requested_at, holder, state)
        if record_failure(replace(lost, trigger=fire.trigger), deps).outcome is Done.RECORDED:
            repairs.failed.append(action.id)
        return
    with suppress(ActionConflict):  # RETRY: the claim goes; one never claimed just starts
        if writes.release_manual(deps.records, action, fire.number, now) is not None:
            launch_manual(action, fire, now, deps, repair=repair)
            # a claimed fire runs again (RETRY: at least once); one never claimed just starts
            (repairs.released if fire.claimed_by is not None else repairs.restarted).append(
                action.id
            )


def _left_by(state: ExecutionState | None) -> LeftTick | LeftFailure | None:
    if state is None:
        return None
    return tick_left(state.status, state.output) or failure_left(
        state.status, state.error, state.cause
    )


def _record_left_tick(left: LeftTick, action_id: str, deps: Repairs, repairs: Reconciled) -> None:
    """A fire that happened: its tick is recorded once. A tick the bus refused is put there
    first (its proof travels with it), so workers get it late rather than never."""
    if left.undelivered:
        deps.publisher.publish(left.tick)
    # Put on the bus, the tick may be recorded by the tick handler first: a repair either way.
    if record_tick(left.tick, deps).outcome is Done.RECORDED or left.undelivered:
        repairs.recorded.append(action_id)


def _record_left_failure(
    failure: FireFailure, undelivered: bool, deps: Repairs, repairs: Reconciled
) -> None:
    """A fire that failed past its retries: recorded FAILED once, never run again. A proved
    report the bus refused is put there first."""
    published = undelivered and bool(failure.proof)
    if published:
        deps.publisher.publish(failure)
    if record_failure(failure, deps).outcome is Done.RECORDED or published:
        repairs.failed.append(failure.action_id)


def _unproved(
    action: Action, holder: str, now: datetime, state: ExecutionState | None
) -> FireFailure:
    """The failure of an execution that ended in FireFailed without its report."""
    return FireFailure(
        action_id=action.id,
        generation=action.generation,
        occurrence=action.occurrence,
        scheduled_time=action.execution_time or now,
        execution_name=name_of(holder),
        execution_arn=holder,
        error=FIRE_FAILED,
        cause=action.last_error or (state.cause if state else None),
        failed_at=_ended_at(state, action.execution_time or now),
    )


def _unknown(
    key: FireKey, scheduled: datetime, holder: str, state: ExecutionState | None
) -> FireFailure:
    """A claimed fire whose execution ended without a tick or a report (onUnknownOutcome FAIL)."""
    how = "is gone" if state is None else f"ended {state.status} ({state.error or 'no error'})"
    name = name_of(holder)
    return FireFailure(
        action_id=key[0],
        generation=key[1],
        occurrence=key[2],
        scheduled_time=scheduled,
        execution_name=name,
        execution_arn=holder,
        error=OUTCOME_UNKNOWN,
        cause=(
            f"its execution {name} {how} after claiming the fire, without a tick or a failure "
            "report: the fulfillment may have happened, so it is not run again "
            "(onUnknownOutcome FAIL; retry it by hand, with the same idempotency key)"
        ),
        manual=key[3],
        failed_at=_ended_at(state, scheduled),
    )


def _ended_at(state: ExecutionState | None, scheduled: datetime) -> datetime | None:
    """When an execution that ended without a report ended — its fire's ending, for the overlap
    window (a later one is cut to the recording) — unless before its fire's time (an emulator's
    executions may be timed on another clock than the stack's): then None, the recording's."""
    stopped = state.stopped_at if state else None
    return None if stopped is None or stopped < scheduled else stopped


def _relaunch(action: Action, now: datetime, deps: Repairs) -> bool:
    """Start the fire's execution under the first name not used yet — its own name if it never
    started, else a numbered repair — once the record names it. False if one is already
    running, or the record moved on meanwhile."""
    for repair in range(_MAX_REPAIRS + 1):
        name, arn = planned_execution(action, deps, repair=repair)
        state = deps.executions.describe(name)
        if state is not None and state.running:
            return False
        if state is None:
            return _name_and_launch(action, arn, repair, now, deps)
    raise RuntimeError(f"{action.id}: {_MAX_REPAIRS} repair executions already used")


def _name_and_launch(action: Action, arn: str, repair: int, now: datetime, deps: Repairs) -> bool:
    """The record names the repair execution (fenced on the version looked at), then it starts."""
    written = None
    with suppress(ActionConflict):
        written = writes.name_repair(deps.records, action, arn, now)
    if written is None:
        return False
    launch(written.after, now, deps, repair=repair)
    return True


def _describe(execution: str | None, action: Action, deps: Repairs) -> ExecutionState | None:
    """The execution, on the machine its ARN names: a batch's (its fires share it), or a lone
    fire's. None: it never started, or is gone."""
    arn = _arn_of(execution, action, deps)
    machine = kind_of(arn, deps)
    if machine is None:
        return None
    return (deps.batches if machine is Machine.BATCH else deps.executions).describe(name_of(arn))


def _arn_of(execution: str | None, action: Action, deps: Repairs) -> str:
    """A stored execution as an ARN: claims written before claims held ARNs hold the bare name
    of the execution the record named, or of the fire machine's."""
    if not execution or ":" in execution:
        return execution or ""
    if action.execution_arn and name_of(action.execution_arn) == execution:
        return action.execution_arn
    return deps.executions.execution_arn(execution)
