"""One fire: prove the order, check it against the record, never early, claim, dispatch to the
action type's fulfillment. docs/protocol.md, "A lone fire".

Called by the fire machine's Fulfill task after its Wait (``fire.lone_fire``, the order
proved by it), and by a batch's task for each of its members (the batch's order proved by it):
``fulfill_claimed``. Its return value is the fire's tick, which the caller records and puts on
the bus. Raises, by name for
the machine to match: ``ForgedOrder`` (refused: the order is not the stack's, or the record
contradicts it), ``ActionSuperseded`` / ``WaitContinued`` / ``OccurrenceSkipped`` (end quietly),
``ConcurrencyLimited`` (waits for a slot, retried with jitter), ``TransientFulfillmentError``
(retried with backoff), ``PermanentFulfillmentError`` and ``RetriesExhausted`` (not retried,
recorded FAILED).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime, timedelta
from typing import Any, NoReturn

from tickwork.answers import Done
from tickwork.domain.action import Action
from tickwork.domain.announcements import Skipped, Tampered
from tickwork.domain.errors import (
    ActionConflict,
    ActionSuperseded,
    ConcurrencyLimited,
    ForgedOrder,
    OccurrenceSkipped,
    PermanentFulfillmentError,
    RetriesExhausted,
    TransientFulfillmentError,
    ValidationFailed,
    WaitContinued,
)
from tickwork.domain.fire import FireAttempt, Outcome, Tick, Trigger
from tickwork.domain.fire_policy import RetryBudget
from tickwork.domain.times import ceil_second, iso
from tickwork.fire import writes
from tickwork.fire.calendar_reads import excluded_now, late_exclusion, tampered_calendar
from tickwork.fire.launch import launch
from tickwork.fire.needs import Fires
from tickwork.fire.overlap import handed_on
from tickwork.fire.own_occurrence import shift_own_fire
from tickwork.fire.planning import planned_execution
from tickwork.fire.record import record_tick
from tickwork.fire.recorded_ending import recorded_ending
from tickwork.fire.sealing import seal_holds
from tickwork.fulfillment.base import FulfillmentRequest

__all__ = ["fulfill_claimed", "retry_budget"]

_BY_REQUEST = "REQUEST"  # the policy a skip asked for one occurrence is announced with
_CALENDAR = "CALENDAR"  # the policy a skip its calendar asked for is announced with
_TAMPERED = "the record's seal does not match: it was altered outside tickwork; nothing ran"


def fulfill_claimed(
    fire: FireAttempt, deps: Fires, read: Action | None = None
) -> tuple[Tick, Action]:
    """The fire's tick, and its record as this execution's claim left it (the version a write
    recording the tick is fenced on). ``read``: the record as the caller just read it, if it
    has (a batch reads its members' records first): a stale one only costs the claim a retry."""
    if not fire.order.manual:
        read = read or deps.records.get(fire.order.action_id)
        fire = handed_on(fire, read) or fire  # retried beside the schedule (ALLOW_ALL)
    if fire.order.manual:
        action, key = _claim_manual(fire, deps)
        return _run(fire, action, key, deps.clock.now(), deps), action
    action = _agreed(fire, read, deps)
    _wait_until_due(fire, action, deps)
    _announce_if_calendar_tampered(fire, action, deps)
    now = deps.clock.now()
    # (A fire its overlap policy held back runs late by design: it is not missed; nor is one
    # for its wake rounded to the whole second; nor a retry of a claim this execution holds —
    # its first attempt may have reached the target.)
    resumed = action.holds_claim(fire.execution_arn)
    judged = now - _rounded(fire)
    if not resumed and not action.buffered and not action.catch_up.runs(fire.order.fire_at, judged):
        policy = str(action.catch_up.policy)
        _skip(fire, action, now, deps, f"missed; catch-up {policy}", policy)
    if not resumed:
        _keep_off_excluded(fire, action, now, deps)
    action = _claim(fire, action, deps)
    # A skip (or its undoing) is read from the record the claim wrote, fenced on its version:
    # one asked while this execution slept off an early wake, or after a batch read its
    # members, is seen.
    _skip_if_asked(fire, action, now, deps)
    _skip_if_excluded(fire, action, now, deps)
    return _run(fire, action, action.key_of(fire.order.occurrence), now, deps), action


def _announce_if_calendar_tampered(fire: FireAttempt, action: Action, deps: Fires) -> None:
    """A calendar changed outside tickwork is not taken: the fire goes on as the record's own
    copy of it says (neither skipped nor moved on its account), says so once (on its first
    attempt), and its record notes it when the fire is recorded."""
    tampered = tampered_calendar(action, deps)
    if tampered is None or fire.attempt > 1:
        return
    order = fire.order
    deps.publisher.publish(
        Tampered(order.action_id, order.generation, order.occurrence, str(tampered))
    )


def _skip_if_asked(fire: FireAttempt, action: Action, now: datetime, deps: Fires) -> None:
    """Skip the occurrence if a skip of it is on the record, under its seal (a skip the seal
    does not vouch for is not taken: the claim's seal check ends that fire as tampered)."""
    if action.is_skipped(fire.order.fire_at) and seal_holds(action, deps):
        change = action.change_of(action.origin_of(fire.order.fire_at))
        note = f": {change.note}" if change and change.note else ""
        _skip(fire, action, now, deps, f"skipped by request{note}", _BY_REQUEST)


def _keep_off_excluded(fire: FireAttempt, action: Action, now: datetime, deps: Fires) -> None:
    """A missed fire whose catch-up would run at a moment its calendar excludes: skipped, or
    moved to the calendar's next allowed moment (this execution ends; the moved fire has its
    own), as its ``onExcluded`` says for an occurrence the calendar excludes."""
    late = late_exclusion(action, fire.order.fire_at, now, deps, _rounded(fire))
    if late is None:
        return
    if late.to is None:
        _skip(fire, action, now, deps, late.why, _CALENDAR)
    if shift_own_fire(action, late.to, late.why, deps):
        raise ActionSuperseded(action.id, f"{late.why}: moved to {iso(late.to)}")


def _rounded(fire: FireAttempt) -> timedelta:
    """The lateness its order planned: a lone fire's Wait ending at the whole second after its
    time (``planning.fire_order``); none for a batch's member (its Wait ends at the batch's
    first second, and its task sleeps to the member's millisecond)."""
    order = fire.order
    planned = order.wait_until - order.fire_at
    return min(max(planned, timedelta(0)), ceil_second(order.fire_at) - order.fire_at)


def _skip_if_excluded(fire: FireAttempt, action: Action, now: datetime, deps: Fires) -> None:
    """Skip the occurrence if its calendar, changed since it was planned, excludes it now."""
    name = excluded_now(action, fire.order.fire_at, deps)
    if name is not None:
        _skip(fire, action, now, deps, f"excluded by calendar {name}", _CALENDAR)


def _run(fire: FireAttempt, action: Action, key: str, now: datetime, deps: Fires) -> Tick:
    """The claimed fire: check the seal, validate, fulfill in a slot, and make the tick."""
    if not seal_holds(action, deps):
        # Altered outside tickwork: what it would run is not what was scheduled.
        deps.publisher.publish(Tampered(action.id, action.generation, action.occurrence))
        # Never pass altered data on to workers: the tick carries none.
        tampered = {"reason": _TAMPERED, "tampered": True}
        return _tick(fire, action, key, now, Outcome.NO_ACTION, tampered, withhold_payload=True)
    try:
        fulfillment = deps.registry.get(action.action)
        # As stored: data taken under a limit tightened since still fires (an SQS or SNS
        # action with 7 message attributes of its own, sent without tickwork-fire).
        data = deps.registry.validate(action.action, action.data, stored=True)
    except ValidationFailed as refused:
        # A type or payload that passed at creation but not now: the record was altered
        # outside tickwork. Nothing runs, and nothing is retried.
        return _tick(fire, action, key, now, Outcome.NO_ACTION, {"reason": str(refused)})
    waits = 0  # the retries of this execution that were waits for a slot, not attempts
    budget = retry_budget(fire, action, deps)
    try:
        with _slot(action.action, _holder(fire), deps) as waits:
            made = fire.attempt - waits - 1  # the attempts before this one
            if made:
                _refuse_if_spent(budget, made, action, deps)
            request = FulfillmentRequest(
                action_id=action.id,
                action=action.action,
                occurrence=fire.order.occurrence,
                scheduled_time=fire.order.fire_at,
                data=data,
                idempotency_key=key,
                metadata=action.metadata,
                attempt=made + 1,
                role_arn=action.role_arn,
                trigger=str(fire.order.trigger),
            )
            result = fulfillment.fulfill(request)
    except (TransientFulfillmentError, PermanentFulfillmentError) as error:
        if isinstance(error, RetriesExhausted) and error.before_attempt:
            raise
        _note_failure(fire, error, waits, deps)
        made = fire.attempt - waits
        spent = budget.spent(made, deps.clock.now())
        if isinstance(error, TransientFulfillmentError) and spent:
            raise RetriesExhausted(made, error, spent) from error
        raise
    return _tick(fire, action, key, deps.clock.now(), Outcome.FIRED, result, slot_waits=waits)


def retry_budget(fire: FireAttempt, action: Action, deps: Fires) -> RetryBudget:
    """What the action's retry policy allows this fire: its attempts in all (those a batch made
    before handing it over count), none started past its age, counted from its fire time — a
    batch's hand-over keeps it (the lone execution's wait is the hand-over's, not the fire's);
    a fire asked for by hand (its fire time may be a backfilled past) counts from when it was
    asked."""
    order = fire.order
    asked = order.manual and order.trigger is not Trigger.SCHEDULED  # (handed on: scheduled)
    since = max(order.fire_at, order.wait_until) if asked else order.fire_at
    return action.policy.budget(since, deps.settings.retry_max_attempts)


def _refuse_if_spent(budget: RetryBudget, made: int, action: Action, deps: Fires) -> None:
    """A retry the policy no longer allows (the attempts before it crashed or timed out, or
    its age ran out while the machine backed off) does not call the target: the fire fails."""
    spent = budget.spent(made, deps.clock.now())
    if spent is not None:
        last = TransientFulfillmentError(action.last_error or "the last attempt ended unrecorded")
        raise RetriesExhausted(made, last, spent, before_attempt=True)


def _agreed(fire: FireAttempt, read: Action | None, deps: Fires) -> Action:
    """The record, if this execution may run the fire it is at (``writes.order_agrees``); an
    order the record contradicts is announced as tampering, and nothing fires."""
    with _announced_if_forged(fire, deps):
        return writes.order_agrees(read or deps.records.get(fire.order.action_id), fire)


@contextmanager
def _announced_if_forged(fire: FireAttempt, deps: Fires) -> Iterator[None]:
    try:
        yield
    except ForgedOrder as refused:
        order = fire.order
        deps.publisher.publish(
            Tampered(
                order.action_id,
                order.generation,
                order.occurrence,
                str(refused),
                fire.execution_arn,
            )
        )
        raise


def _claim_manual(fire: FireAttempt, deps: Fires) -> tuple[Action, str]:
    """A fire asked for by hand: claimed on its own entry of the record, fenced on the version,
    so it runs once however often it is delivered; the schedule's own fire is untouched."""
    claimed = writes.claim_manual(deps.records, fire, deps.clock.now())
    manual = claimed.manual.fire(fire.order.manual)
    assert manual is not None
    return claimed, manual.idempotency_key


def _wait_until_due(fire: FireAttempt, action: Action, deps: Fires) -> None:
    """Never fire early: sleep off a short early wake; continue a longer one in a new leg (an
    execution waits to its fire, so this is a guard, not a plan)."""
    order = fire.order
    fire_at = order.fire_at
    early = fire_at - deps.clock.now()
    if early > deps.settings.early_tolerance:
        leg = order.leg + 1
        _, arn = planned_execution(action, deps, leg=leg, repair=order.repair)
        written = writes.name_leg(deps.records, action, fire.execution_arn, arn, deps.clock.now())
        if written is not None:
            launch(written.after, deps.clock.now(), deps, leg=leg, repair=order.repair)
        raise WaitContinued(order.action_id, leg, iso(fire_at))
    while early > timedelta(0):
        deps.clock.sleep(early.total_seconds())
        early = fire_at - deps.clock.now()


def _claim(fire: FireAttempt, action: Action, deps: Fires) -> Action:
    """PENDING → IN_PROGRESS for this execution, fenced on the version; a retry of this
    execution (or the lone execution a batch handed the fire over to) resumes its claim."""
    with _announced_if_forged(fire, deps):
        return writes.claim(deps.records, fire, deps.clock.now(), deps.limits, action)


def _skip(
    fire: FireAttempt,
    action: Action,
    now: datetime,
    deps: Fires,
    why: str,
    policy: str,
) -> NoReturn:
    """Record the occurrence as SKIPPED (``why``: missed, or skipped by request), schedule the
    next, end this execution (``policy``: the skip's, as the execution's error names it)."""
    reason = {"reason": why}
    skipped = _tick(fire, action, action.key_of(action.occurrence), now, Outcome.SKIPPED, reason)
    answer = record_tick(skipped, deps)
    if answer.outcome is not Done.RECORDED and not _recorded_by_this(fire, deps):
        # another execution of the fire (one launched beside this one) ended it meanwhile:
        # its ending is the fire's, and this one says nothing of it
        raise ActionSuperseded(action.id, "another execution ended this fire meanwhile")
    deps.publisher.publish(
        Skipped(
            action.id,
            action.generation,
            action.occurrence,
            skipped.scheduled_time,
            skipped.late_ms,
            str(action.catch_up.policy),
            why,
        )
    )
    late = (now - fire.order.fire_at).total_seconds()
    raise OccurrenceSkipped(action.id, action.occurrence, late, policy)


def _recorded_by_this(fire: FireAttempt, deps: Fires) -> bool:
    """Whether this very execution recorded the fire's ending (a retry repeating its own skip
    announces it again: at least once)."""
    return recorded_ending(fire.order, fire.execution_arn, deps) is not None


def _holder(fire: FireAttempt) -> str:
    """Who holds a slot: this execution's run of this fire (a batch runs many fires at once,
    each needing a slot of its own)."""
    return f"{fire.execution_arn}#{fire.order.action_id}"


@contextmanager
def _slot(action_type: str, holder: str, deps: Fires) -> Iterator[int]:
    """Hold one of the action type's concurrency slots while it runs, if it has a limit, and
    give how many times this execution waited for one (each wait was a retry of the state).

    All taken → ``ConcurrencyLimited``: the machine retries with jitter; the fire stays
    claimed, so it is neither lost nor run twice.
    """
    limit = deps.settings.concurrency_limits.get(action_type)
    if limit is None:
        yield 0
        return
    slot = deps.slots.acquire(
        action_type, limit, holder, deps.clock.now(), deps.settings.slot_lease
    )
    if slot is None:
        raise ConcurrencyLimited(action_type, limit)
    try:
        yield deps.slots.waits(holder)
    finally:
        deps.slots.release(slot, holder)


def _note_failure(fire: FireAttempt, error: Exception, waits: int, deps: Fires) -> None:
    """Record the attempt's error on the record (best effort: the machine records FAILED), with
    the fulfillment attempts before it (the state's retries less its waits for a slot)."""
    text = f"{type(error).__name__}: {error}"
    with suppress(ActionConflict):
        writes.note_failure(deps.records, fire, text, fire.attempt - 1 - waits, deps.clock.now())


def _tick(
    fire: FireAttempt,
    action: Action,
    key: str,
    now: datetime,
    outcome: Outcome,
    result: dict[str, Any],
    withhold_payload: bool = False,
    slot_waits: int = 0,
) -> Tick:
    return Tick(
        action_id=action.id,
        generation=fire.order.generation,
        occurrence=fire.order.occurrence,
        scheduled_time=fire.order.fire_at,
        actual_time=now,
        attempts=fire.attempt - slot_waits,
        slot_waits=slot_waits,
        action=action.action,
        outcome=outcome,
        execution_name=fire.execution_name,
        execution_arn=fire.execution_arn,
        idempotency_key=key,
        manual=fire.order.manual,
        trigger=fire.order.trigger,
        result=result,
        data={} if withhold_payload else action.data,
        metadata={} if withhold_payload else action.metadata,
    )
