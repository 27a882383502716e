"""The task of a batch execution: the members of a batch order (``fire.grouping``), run
together by ``fire_batch`` once the execution's Wait has reached their second.
docs/protocol.md, "A batched fire" and "A handed-over fire".

- the order is proved first (``orders.check_batch``): one the stack did not issue for this
  execution, or that lists an action twice, fires nothing;
- every member at once, one thread each, exactly as a lone fire's Fulfill would run it
  (``fire.fulfill``): the record at the member's fire and time, naming this batch, claimed
  for it (a superseded, paused, cancelled or skipped member ends quietly), never before its own
  millisecond, in a slot of its type when the type has a limit;
- a member that fired is recorded at once, as the tick function would record its tick (the
  occurrence names the batch's execution); one that failed for good is recorded with its
  proved failure report (``onFailure`` decides the rest); one that failed transiently, or
  found no slot, is handed over to its own lone execution — the record names it and moves the
  claim to it before it starts — which retries it alone with the stack's retry policy, its
  attempts in the batch counted, so it gets as many attempts as a lone fire; when the policy
  allows no more, it is recorded failed here. One slow or failing target never delays or fails
  the others;
- the members' record writes carry their counter and fire-total changes on the records, under
  the task's tab, which it settles at its end — once for the batch (docs/protocol.md, "Counts
  and fire totals"); the ticks and reports go on the bus as they come, 10 to a PutEvents call
  (the tick rule leaves a batch's events out: its members are recorded).

A task that crashes or times out part-way is retried by the machine; the retry first settles
the tabs its earlier attempts left open. A member it recorded is not run again, and its tick
is put on the bus again only when no earlier task noted it as put (``_Noted``: rebuilt from
the record, the proof made anew — at least once where a crash left it unknown, the same
idempotency key); a member claimed for the batch resumes, as a lone fire's retry does; a
member it had handed over whose execution did not start is started. The output lists every
member with its outcome.
"""

from __future__ import annotations

import contextvars
import json
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from tickwork.answers import Done
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action
from tickwork.domain.batch import BatchOrder, Member, MemberOutcome, MemberResult
from tickwork.domain.errors import (
    ActionConflict,
    ActionSuperseded,
    ConcurrencyLimited,
    ForgedOrder,
    LaunchRefused,
    OccurrenceSkipped,
    PermanentFulfillmentError,
    WaitContinued,
)
from tickwork.domain.execution import name_of
from tickwork.domain.fire import FireAttempt, FireFailure, FireOrder, Outcome, Tick
from tickwork.domain.spread import hashed_share
from tickwork.domain.times import ceil_ms
from tickwork.fire import grouping, writes
from tickwork.fire.bus_sender import BusSender
from tickwork.fire.calendar_reads import calendars_read_once
from tickwork.fire.follow_on import FollowOns
from tickwork.fire.fulfill import fulfill_claimed, retry_budget
from tickwork.fire.needs import Fires
from tickwork.fire.orders import check_batch, start_lone
from tickwork.fire.planning import fire_order, planned_execution
from tickwork.fire.proofs import caught_failure, with_proof
from tickwork.fire.record import record_failure, record_tick
from tickwork.fire.recorded_ending import ending_recorded_by
from tickwork.ports import OutboundEvent, TabbedRecords

__all__ = ["fire_batch"]

_MOST_THREADS = 100  # members run at once in one task; a batch holds at most BatchMaxFires
_MS = timedelta(milliseconds=1)


def fire_batch(
    order: BatchOrder,
    execution_arn: str,
    retry_count: int,
    deps: Dependencies,  # the whole bundle: its records reopened on the batch's tab
    most_threads: int = _MOST_THREADS,
) -> list[MemberResult]:
    """Run, record and announce every member of the batch; what became of each, with at most
    ``most_threads`` members at once (one runs them in fire time order, as a replayable model
    needs)."""
    check_batch(order, execution_arn, deps)
    name = name_of(execution_arn)
    # In fire time order: a thread sleeping to its member's millisecond never holds up an
    # earlier member.
    members = sorted(order.members, key=lambda m: m.fire_at)
    threads = max(1, min(len(members), most_threads))
    for earlier in range(retry_count):  # an earlier attempt died: its tab is settled first
        deps.tabs.settle(f"{name}#{earlier}")
    # The members' counter changes are carried on this attempt's tab, added once at the end.
    ids = [m.action_id for m in members]
    tab = deps.tabs.open(name, retry_count, ids, deps.clock.now())
    deps = calendars_read_once(replace(deps, records=tab))
    follow_ons = FollowOns(name, deps)
    noted = _Noted(name, order, deps)
    with (
        ThreadPoolExecutor(max_workers=threads) as pool,
        BusSender(deps.publisher, on_sent=noted.sent) as sender,
    ):
        # Each call runs in a copy of the caller's context (logging keys, tracing).
        reads = [_in_context(pool, deps.records.get, m.action_id) for m in members]
        records = [read.result() for read in reads]
        follow_ons.plan(list(zip(members, records, strict=True)))
        batch = _Batch(execution_arn, retry_count, follow_ons, tab, noted, deps)

        def one(member: Member, read: Action | None) -> _Done:
            try:
                done = batch.run(member, read)
            finally:
                follow_ons.done_with(member)
            if done.event is not None:
                sender.put(done.event)
            return done

        runs = [_in_context(pool, one, m, r) for m, r in zip(members, records, strict=True)]
        follow_ons.start_when_ready()
        done = [run.result() for run in runs]
        tab.settle()
    return [d.result for d in done]


def _in_context[T](pool: ThreadPoolExecutor, call: Callable[..., T], *args: Any) -> Future[T]:
    return pool.submit(contextvars.copy_context().run, call, *args)


@dataclass(frozen=True)
class _Done:
    result: MemberResult
    event: OutboundEvent | None = None  # to put on the bus


class _Noted:
    """Which members' events the batch's tasks put on the bus: noted after each PutEvents call
    that took them (``CountTabs.note_announced``), read once by a task that finds a member an
    earlier task (a retry's, a redrive's) recorded — so that its tick is put again only when it
    is not known to have gone out. A crash between the call and the note leaves it unknown: it
    is put again, with the same idempotency key (docs/protocol.md, "A batched fire")."""

    def __init__(self, batch: str, order: BatchOrder, deps: Fires) -> None:
        self._batch = batch
        self._places = {m.action_id: n for n, m in enumerate(order.members)}  # once each
        self._deps = deps
        self._earlier: set[int] | None = None
        self._lock = threading.Lock()

    def sent(self, events: list[OutboundEvent]) -> None:
        ids = (getattr(event, "action_id", None) for event in events)
        places = sorted(self._places[i] for i in ids if i in self._places)
        self._deps.tabs.note_announced(self._batch, places, self._deps.clock.now())

    def earlier(self, action_id: str) -> bool:
        """Whether an earlier task of the batch noted the member's event as put on the bus."""
        with self._lock:
            if self._earlier is None:
                self._earlier = self._deps.tabs.announced(self._batch)
            return self._places[action_id] in self._earlier


@dataclass(frozen=True)
class _Batch:
    """One run of the batch task: its execution, and what its members share."""

    execution_arn: str
    retry_count: int
    follow_ons: FollowOns
    tab: TabbedRecords
    noted: _Noted
    deps: Fires

    @property
    def name(self) -> str:
        return name_of(self.execution_arn)

    def run(self, member: Member, read: Action | None) -> _Done:
        deps = self.deps
        order = FireOrder(
            member.action_id, member.generation, member.occurrence, member.fire_at, member.fire_at
        )
        attempt = FireAttempt(order, self.execution_arn, self.retry_count)
        early = member.fire_at - deps.clock.now()
        # The Wait ended at the earliest member's second: each sleeps to its own millisecond.
        if timedelta(0) < early <= grouping.reach(deps.settings):
            deps.clock.sleep(early.total_seconds())
        try:
            tick, claimed = fulfill_claimed(attempt, deps, read)
        except ForgedOrder as refused:  # the record contradicts the order (announced)
            return _Done(MemberResult(member, MemberOutcome.QUIET, reason=str(refused)))
        except (ActionSuperseded, OccurrenceSkipped, WaitContinued) as quiet:
            return self._quiet(member, order, quiet)
        except PermanentFulfillmentError as failed:
            return self._failed(member, order, failed)
        except Exception as transient:
            return self._hand_over(member, attempt, transient, read)
        tick = with_proof(replace(tick, recorded=True), deps)
        answer = record_tick(tick, deps, current=claimed, seat=self.follow_ons.seat(member))
        return _Done(_ran(member, tick, answer.outcome is Done.RECORDED), tick)

    def _quiet(self, member: Member, order: FireOrder, quiet: Exception) -> _Done:
        """A member this execution may not run now: ended quietly — unless an earlier attempt
        of this task recorded it (its tick goes out again) or handed it over (its execution
        is started, should the crash have come before)."""
        again = ending_recorded_by(order, self.execution_arn, self.deps)
        if again is not None:
            _finish_recording(again, self.deps)
            if self.noted.earlier(member.action_id):
                return _Done(_ran(member, again))  # its event went out: never twice
            return _Done(_ran(member, again), again)
        handed = self._handed_over_before(member)
        if handed is not None:
            return _Done(handed)
        reason = f"{type(quiet).__name__}: {quiet}"
        return _Done(MemberResult(member, MemberOutcome.QUIET, reason=reason))

    def _failed(self, member: Member, order: FireOrder, failed: Exception) -> _Done:
        error, now = type(failed).__name__, self.deps.clock.now()
        report = caught_failure(order, error, _cause(failed), self.execution_arn, self.deps, now)
        answer = record_failure(report, self.deps)
        return _Done(_ran(member, report, answer.outcome is Done.RECORDED), report)

    def _hand_over(
        self, member: Member, attempt: FireAttempt, error: Exception, read: Action | None
    ) -> _Done:
        """Hand the member over to its own lone execution, which retries it alone from a
        jittered first interval on, its attempts in the batch counted — or, when the retry
        policy allows no more attempts, record it failed here, as a lone fire's would be. The
        record names the lone execution and holds its claim before it is started."""
        deps = self.deps
        made = attempt.attempt - (1 if isinstance(error, ConcurrencyLimited) else 0)
        now = deps.clock.now()
        action = read or deps.records.get(member.action_id)
        if action is None:
            return _Done(MemberResult(member, MemberOutcome.QUIET, reason="it no longer exists"))
        if retry_budget(attempt, action, deps).spent(made, now) is not None:
            return self._failed(member, attempt.order, error)
        # under a name of its own: the fire's own name may have been launched beside the batch
        # (a fire parked far, launched by runs that met on it), and would be taken for it
        name, arn = planned_execution(action, deps, handed=True)
        written = writes.hand_over(
            deps.records, member.key, self.execution_arn, arn, now, deps.limits
        )
        if written is None:
            return _Done(MemberResult(member, MemberOutcome.QUIET, reason="it moved on meanwhile"))
        reason = f"{type(error).__name__}: {error}"[:500]
        return _Done(self._start_handed(member, written.after, name, made, reason))

    def _start_handed(
        self, member: Member, action: Action, name: str, made: int, reason: str
    ) -> MemberResult:
        deps = self.deps
        now = deps.clock.now()
        # spread over the retry interval by the execution's name: the same on every replay
        wait = timedelta(milliseconds=hashed_share(name, deps.settings.retry_interval // _MS))
        order = replace(
            fire_order(action, now, deps), wait_until=ceil_ms(now + wait), attempts_before=made
        )
        try:
            start_lone(name, order, deps)
        except LaunchRefused as refused:
            _withdraw(member, deps.executions.execution_arn(name), refused, deps)
            reason = f"{reason}; its own execution was refused ({refused.code}): parked again"
            return MemberResult(member, MemberOutcome.PARKED, reason=reason)
        return MemberResult(member, MemberOutcome.HANDED_OVER, handed_to=name, reason=reason)

    def _handed_over_before(self, member: Member) -> MemberResult | None:
        """A member an earlier attempt of this task handed over: the record names the member's
        own lone execution and holds its claim for it. Started again (harmless if it was)."""
        deps = self.deps
        if self.retry_count == 0:
            return None
        action = deps.records.get(member.action_id)
        if action is None or action.fire_key != member.key:
            return None
        for handed in (True, False):  # (an attempt of the release before handed to the own)
            name, arn = planned_execution(action, deps, handed=handed)
            if action.holds_claim(arn) and deps.executions.describe(name) is None:
                made = self.retry_count  # the attempts before: at least one per earlier task
                why = "handed over by an earlier attempt"
                return self._start_handed(member, action, name, made, why)
        return None


def _ran(member: Member, ended: Tick | FireFailure, recorded: bool = False) -> MemberResult:
    """The output line of a member that ran: FIRED (or NO_ACTION) with its tick, FAILED with
    its report; ``recorded`` when this run recorded it (not a retried task's repeat)."""
    if isinstance(ended, FireFailure):
        return MemberResult(member, MemberOutcome.FAILED, failure=ended, recorded=recorded)
    outcome = MemberOutcome.NO_ACTION if ended.outcome is Outcome.NO_ACTION else MemberOutcome.FIRED
    return MemberResult(member, outcome, tick=ended, recorded=recorded)


def _finish_recording(ended: Tick | FireFailure, deps: Fires) -> None:
    """What a crash after the record's write may have left undone — the next fire's start,
    the Schedule Completed — is done by recording it again (a repeat changes no record)."""
    if isinstance(ended, FireFailure):
        record_failure(ended, deps)
    else:
        record_tick(ended, deps)


def _cause(failed: Exception) -> str:
    """A task error's cause, as Lambda would put it for the state machine's Catch."""
    return json.dumps({"errorType": type(failed).__name__, "errorMessage": str(failed)})


def _withdraw(member: Member, handed_to: str, refused: LaunchRefused, deps: Fires) -> None:
    """The lone execution a member was handed over to could not be started (a quota,
    throttling): its claim is released and it waits in the table, due now, for the pump's next
    run (at least once, with the same idempotency key, as a transient failure's retry is)."""
    now = deps.clock.now()
    why = f"claim released: its retry's execution was refused ({refused.code})"
    # Should it keep changing, whatever changes it has it, and the reconciler looks after it.
    with suppress(ActionConflict):
        writes.withdraw(deps.records, member.key, handed_to, now, deps.limits, why)
