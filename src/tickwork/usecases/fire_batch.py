"""The task of a batch execution: the fires due in one second (``usecases.batch_plan``), run
together by ``fire_batch`` once the execution's Wait has reached their second:

- every fire at once, one thread each, exactly as a lone fire's Fulfill would run it
  (``usecases.fulfill``): fenced on its key and claimed for the batch (a superseded, paused,
  cancelled or skipped fire ends quietly), never before its own millisecond, in a slot of its
  type when the type has a limit;
- a fire that fired is recorded at once, as the tick function would record its tick (the
  occurrence names the batch's execution); one that failed for good is recorded with its
  proved failure report (``onFailure`` decides the rest); one that failed transiently, or
  found no slot, is handed over to its own execution of the fire machine — its claim with it —
  which retries it alone with the stack's retry policy (backoff, jitter, the batch's attempt
  counted). One slow or failing target never delays or fails the others;
- then the fire tallies are added once for the batch, and the ticks and reports go on the bus,
  10 to a PutEvents call (the tick rule leaves a batch's events out: its fires are recorded).

A task that crashes or times out part-way is retried by the machine: a fire it recorded is not
run again, and its tick is put on the bus again (rebuilt from the record, the proof made anew:
at least once, the same idempotency key); a fire claimed for the batch resumes, as a lone
fire's retry does. The output lists every fire with its outcome.
"""

from __future__ import annotations

import contextvars
import json
import random
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action, Status
from tickwork.domain.batch import (
    BatchedFire,
    BatchFire,
    BatchOrder,
    BatchOutcome,
)
from tickwork.domain.errors import (
    ActionConflict,
    ActionSuperseded,
    LaunchRefused,
    OccurrenceSkipped,
    PermanentFulfillmentError,
    WaitContinued,
)
from tickwork.domain.fire import FireAttempt, FireFailure, FireOrder, Outcome, Tick
from tickwork.domain.fire_tally import FireKind, fire_kind
from tickwork.domain.times import ceil_ms
from tickwork.ports import CountingRecords, OutboundEvent
from tickwork.usecases.answers import Done
from tickwork.usecases.batch_chain import Chains
from tickwork.usecases.fire_proofs import proved_failure, with_proof
from tickwork.usecases.fulfill import fulfil_claimed
from tickwork.usecases.launch import fire_order, planned_execution
from tickwork.usecases.outbox import Outbox
from tickwork.usecases.record import occurrence_of, record_failure, record_tick

__all__ = ["fire_batch"]

_MOST_THREADS = 100  # fires run at once in one task; a batch holds at most BatchMaxFires
_WRITE_ATTEMPTS = 3  # a record write fenced on its version, read again after a conflict
_WITHIN_THE_SECOND = timedelta(seconds=1)


def fire_batch(
    order: BatchOrder, execution_name: str, retry_count: int, deps: Dependencies
) -> list[BatchFire]:
    """Run, record and announce every fire of the batch; what became of each."""
    fires = list(order.fires)
    threads = max(1, min(len(fires), _MOST_THREADS))
    # The fires' counter changes wait on a tab named for the batch, added once at the end.
    tab = deps.records.counting_later(execution_name, retry_count)
    deps = replace(deps, records=tab)
    chains = Chains(execution_name, deps)
    with ThreadPoolExecutor(max_workers=threads) as pool, Outbox(deps.publisher) as outbox:
        # Each call runs in a copy of the caller's context (logging keys, tracing).
        reads = [_in_context(pool, deps.records.get, f.action_id) for f in fires]
        records = [read.result() for read in reads]
        chains.plan(list(zip(fires, records, strict=True)))

        def one(fire: BatchedFire, read: Action | None) -> _Done:
            try:
                done = _fire_one(fire, read, execution_name, retry_count, chains, tab, deps)
            finally:
                chains.settle(fire)
            if done.event is not None:
                outbox.put(done.event)
            return done

        runs = [_in_context(pool, one, f, r) for f, r in zip(fires, records, strict=True)]
        chains.start_when_ready()
        done = [run.result() for run in runs]
        tab.add_counts()
        _tally(done, deps)
    return [d.fire for d in done]


def _in_context[T](pool: ThreadPoolExecutor, call: Callable[..., T], *args: Any) -> Future[T]:
    return pool.submit(contextvars.copy_context().run, call, *args)


@dataclass(frozen=True)
class _Done:
    fire: BatchFire
    event: OutboundEvent | None = None  # to put on the bus
    group: str | None = None  # the action's group, when this run recorded the fire
    kind: FireKind | None = None  # how the fire counts in the tallies


def _fire_one(
    fire: BatchedFire,
    read: Action | None,
    execution_name: str,
    retry_count: int,
    chains: Chains,
    tab: CountingRecords,
    deps: Dependencies,
) -> _Done:
    order = FireOrder(fire.action_id, fire.generation, fire.occurrence, fire.fire_at, fire.fire_at)
    attempt = FireAttempt(order, execution_name, retry_count)
    early = fire.fire_at - deps.clock.now()
    if timedelta(0) < early <= _WITHIN_THE_SECOND:  # the Wait ended at the second: never early
        deps.clock.sleep(early.total_seconds())
    try:
        tick, claimed = fulfil_claimed(attempt, deps, read)
    except (ActionSuperseded, OccurrenceSkipped, WaitContinued) as quiet:
        again = _recorded_before(fire, order, execution_name, deps)
        if again is not None:  # this task ran before and recorded it: it goes out again
            tab.recover(fire.action_id)  # counted with this attempt's, if no attempt did yet
            _finish_recording(again, deps)
            return _Done(_ran(fire, again), again)
        reason = f"{type(quiet).__name__}: {quiet}"
        return _Done(BatchFire(fire, BatchOutcome.QUIET, reason=reason))
    except PermanentFulfillmentError as failed:
        report = _report(order, type(failed).__name__, _cause(failed), deps, execution_name)
        answer = record_failure(report, deps, tally=False)
        recorded = answer.outcome is Done.RECORDED
        group = read.group if read is not None and recorded else None
        return _Done(_ran(fire, report, recorded), report, group, FireKind.FAILED)
    except Exception as transient:
        return _Done(_hand_off(fire, attempt, transient, deps))
    tick = with_proof(tick, deps)
    answer = record_tick(tick, deps, current=claimed, tally=False, seat=chains.seat(fire))
    recorded = answer.outcome is Done.RECORDED
    group = claimed.group if recorded else None
    return _Done(_ran(fire, tick, recorded), tick, group, fire_kind(occurrence_of(tick)))


def _ran(fire: BatchedFire, ended: Tick | FireFailure, recorded: bool = False) -> BatchFire:
    """The output line of a fire that ran: FIRED (or NO_ACTION) with its tick, FAILED with its
    report; ``recorded`` when this run recorded it (not a retried task's repeat)."""
    if isinstance(ended, FireFailure):
        return BatchFire(fire, BatchOutcome.FAILED, failure=ended, recorded=recorded)
    outcome = BatchOutcome.NO_ACTION if ended.outcome is Outcome.NO_ACTION else BatchOutcome.FIRED
    return BatchFire(fire, outcome, tick=ended, recorded=recorded)


def _recorded_before(
    fire: BatchedFire, order: FireOrder, execution_name: str, deps: Dependencies
) -> Tick | FireFailure | None:
    """The tick or failure report of a fire this batch already recorded (a task retried after
    a crash between recording and publishing), rebuilt from the record with its proof; None
    when it was not this batch that ran it."""
    action = deps.records.get(fire.action_id)
    if action is None or action.generation != fire.generation:
        return None
    ran = [
        h
        for h in action.history
        if h.occurrence == fire.occurrence and not h.manual and h.execution == execution_name
    ]
    if not ran or ran[-1].outcome is Outcome.SKIPPED:  # a skip announced itself when recorded
        return None
    record = ran[-1]
    if record.outcome is Outcome.FAILED:
        error, _, cause = (record.error or "").partition(": ")
        return _report(order, error or "States.Unknown", cause or None, deps, execution_name)
    latest = action.history[-1] is record
    tick = Tick(
        action_id=action.id,
        generation=fire.generation,
        occurrence=fire.occurrence,
        scheduled_time=record.scheduled_time,
        actual_time=record.actual_time,
        attempts=record.attempts,
        action=action.action,
        outcome=record.outcome,
        execution_name=execution_name,
        idempotency_key=action.key_of(fire.occurrence),
        result=(action.last_result or {}) if latest else {},
        data=action.data,
        metadata=action.metadata,
    )
    return with_proof(tick, deps)


def _finish_recording(ended: Tick | FireFailure, deps: Dependencies) -> None:
    """What a crash after the record's write may have left undone — the next fire's start,
    the Schedule Completed — is done by recording it again (a repeat changes no record)."""
    if isinstance(ended, FireFailure):
        record_failure(ended, deps, tally=False)
    else:
        record_tick(ended, deps, tally=False)


def _cause(failed: Exception) -> str:
    """A task error's cause, as Lambda would put it for the state machine's Catch."""
    return json.dumps({"errorType": type(failed).__name__, "errorMessage": str(failed)})


def _report(
    order: FireOrder, error: str, cause: str | None, deps: Dependencies, execution_name: str
) -> FireFailure:
    """The failure report the fire machine's Catch and "Prove failure" would make."""
    caught = {**order.to_wire(), "error": {"Error": error, "Cause": cause}}
    return proved_failure(caught, execution_name, deps)


def _hand_off(
    fire: BatchedFire, attempt: FireAttempt, error: Exception, deps: Dependencies
) -> BatchFire:
    """The fire's own execution of the fire machine retries it alone, from a jittered first
    interval on, its attempts so far counted; the batch's claim is handed over to it. Started
    before the claim moves, and its order names the batch (``handedFrom``): it takes the
    claim over itself if it runs before the batch moved it, or if the batch crashed in
    between (whose retry then finds the fire claimed elsewhere and leaves it)."""
    action = deps.records.get(fire.action_id)
    if action is None or action.fire_key != fire.key:
        return BatchFire(fire, BatchOutcome.QUIET, reason="it moved on meanwhile")
    now = deps.clock.now()
    name, arn = planned_execution(action, deps)
    wait = timedelta(seconds=random.uniform(0, deps.settings.retry_interval.total_seconds()))
    made = attempt.attempt if not _before_the_target(error) else attempt.attempt - 1
    order = replace(
        fire_order(action, now, deps),
        wait_until=ceil_ms(now + wait),
        attempts_before=made,
        handed_from=attempt.execution_name,
    )
    reason = f"{type(error).__name__}: {error}"[:500]
    try:
        deps.executions.start(name, order)
    except LaunchRefused as refused:
        _park_again(fire, attempt.execution_name, refused, deps)
        reason = f"{reason}; its own execution was refused ({refused.code}): parked again"
        return BatchFire(fire, BatchOutcome.PARKED, reason=reason)
    _move_claim(fire, attempt.execution_name, name, arn, deps)
    return BatchFire(fire, BatchOutcome.HANDED_OFF, execution_name=name, reason=reason)


def _move_claim(fire: BatchedFire, batch: str, name: str, arn: str, deps: Dependencies) -> None:
    """The record names the fire's own execution, which holds the claim the batch held."""
    for _ in range(_WRITE_ATTEMPTS):
        action = deps.records.get(fire.action_id)
        if action is None or action.fire_key != fire.key:
            return  # it moved on: the execution ends quietly
        now = deps.clock.now()
        if action.status == Status.IN_PROGRESS and action.claimed_by == batch:
            handed = replace(action.with_execution(now, arn), claimed_by=name)
        elif action.status == Status.PENDING:  # it failed before its claim
            handed = action.with_execution(now, arn)
        else:
            return
        with suppress(ActionConflict):
            deps.records.save(handed, expected_version=action.version)
            return


def _park_again(fire: BatchedFire, batch: str, refused: LaunchRefused, deps: Dependencies) -> None:
    """Step Functions refused the fire's own execution (a quota, throttling): its claim is
    released and it waits in the table, due now, for the pump's next run (at least once, with
    the same idempotency key, as a transient failure's retry is)."""
    for _ in range(_WRITE_ATTEMPTS):
        action = deps.records.get(fire.action_id)
        if action is None or action.fire_key != fire.key:
            return
        now = deps.clock.now()
        if action.status == Status.IN_PROGRESS and action.claimed_by == batch:
            why = f"claim released: its retry's execution was refused ({refused.code})"
            action_now = action.released(now, deps.limits.transitions, why)
        elif action.status == Status.PENDING:
            action_now = action
        else:
            return
        with suppress(ActionConflict):
            deps.records.save(action_now.parked_again(now, now), expected_version=action.version)
            return


def _before_the_target(error: Exception) -> bool:
    """No slot was free (nothing was sent): a wait, not an attempt."""
    return type(error).__name__ == "ConcurrencyLimited"


def _tally(done: list[_Done], deps: Dependencies) -> None:
    """Add the fires this run recorded to the fire tallies at once: one ADD per group, minute
    and kind, not one per fire."""
    counts: Counter[tuple[str, int, FireKind]] = Counter()
    now = deps.clock.now()
    for d in done:
        if d.group is None or d.kind is None:
            continue
        at = d.fire.tick.actual_time if d.fire.tick is not None else now
        counts[(d.group, int(at.timestamp()) // 60, d.kind)] += 1
    for (group_name, minute, kind), count in sorted(counts.items()):
        deps.tallies.add(group_name, _minute_start(minute), kind, count)


def _minute_start(minute: int) -> datetime:
    return datetime.fromtimestamp(minute * 60, UTC)
