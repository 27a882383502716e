"""Every write of an action record, one function per rule of docs/protocol.md's "Who writes
what", each beside its guard: the only code in ``src/`` that saves or creates a record.

A rule's guard says whether the rule applies to the record as read; when it does not (the record
moved on: another fire, another generation, another execution named), nothing is written and
the rule answers None. Every write is fenced on the version read (``ActionRecords.save``): a
fire's rule that loses a race reads the record again and applies itself again (``update``); a
steering rule, decided on what its request read, raises ``ActionConflict`` and its request is
decided again (``decided_again``). A transition of the record itself (``domain.action``) checks
its own precondition: a guard here decides whether to ask for it.

Long for a module here, on purpose: it is the protocol page's table in code, one place to hold.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from tickwork.domain.action import ACTIVE, Action, Limits, Occurrence, Status
from tickwork.domain.errors import (
    ActionConflict,
    ActionSuperseded,
    ForgedOrder,
    TransitionRefused,
)
from tickwork.domain.execution import same_execution
from tickwork.domain.fire import FireAttempt, FireKey
from tickwork.domain.steering import Deferred
from tickwork.domain.times import ceil_ms, iso
from tickwork.ports import ActionRecords

__all__ = [
    "ATTEMPTS",
    "Rule",
    "Written",
    "ask_manual_fire",
    "backfill",
    "cancel",
    "change_occurrence",
    "claim",
    "claim_manual",
    "create",
    "decided_again",
    "defer",
    "hand_over",
    "hold",
    "know_start",
    "mark_launched",
    "move_own_occurrence",
    "name_follow_on_member",
    "name_leg",
    "name_repair",
    "note_failure",
    "note_missed",
    "order_agrees",
    "park_again",
    "pause",
    "plan_again",
    "record",
    "record_manual",
    "release",
    "release_manual",
    "replace_schedule",
    "resume",
    "retry_by_hand",
    "run_one_off_now",
    "update",
    "withdraw",
]

ATTEMPTS = 3  # reads and writes of one update before it gives up (ActionConflict)
_CONTENDED = 8  # for the writes many executions make on one record at once (a backfill's)
_BACKOFF_SECONDS = 0.01  # the most a lost race waits, times the races lost (full jitter)


class Rule(StrEnum):
    """The writes of a record: each a row of docs/protocol.md's "Who writes what"."""

    # the fire protocol
    CLAIM = "claim"
    CLAIM_MANUAL = "claim a manual fire"
    NOTE_FAILURE = "note an attempt's error"
    HAND_OVER = "hand over"
    HAND_ON = "hand on"
    RELEASE = "release"
    RECORD = "record"
    RECORD_MANUAL = "record a manual fire"
    MARK_LAUNCHED = "mark launched"
    PARK_AGAIN = "park again"
    PARK_DUE_NOW = "park due now"
    NAME_EXECUTION = "name the execution"
    MOVE_OWN_OCCURRENCE = "move its own occurrence"
    NOTE_MISSED = "note a missed fire"
    BACKFILL = "backfill"
    KNOW_START = "know a Start"
    # steering's own
    CREATE = "create"
    REPLACE = "replace"
    DEFER = "defer"
    PAUSE = "pause"
    RESUME = "resume"
    CANCEL = "cancel"
    ASK_MANUAL_FIRE = "ask a manual fire"
    RUN_ONE_OFF_NOW = "run a one-off now"
    RETRY_BY_HAND = "retry by hand"
    CHANGE_OCCURRENCE = "change an occurrence"
    PLAN_AGAIN = "plan again on a calendar"
    HOLD = "hold on a calendar"
    NOTE_CALENDAR_PUT = "note a calendar put"


_RECORDING = frozenset({Rule.RECORD, Rule.RECORD_MANUAL})


@dataclass(frozen=True)
class Written:
    before: Action  # the version the write was fenced on
    after: Action  # the version written


# --- the one helper ---------------------------------------------------------------------------
def update(
    records: ActionRecords,
    action_id: str,
    rule: Rule,
    change: Callable[[Action], Action | None],
    first: Action | None = None,
    attempts: int = ATTEMPTS,
) -> Written | None:
    """Apply ``change`` to the record and write it, fenced on the version it was applied to.

    ``change`` is pure: given the record as read it returns the next version; the record itself
    when the rule is already applied (nothing to write: ``Written(action, action)``); or None
    when the rule does not apply to it (the record moved on): nothing is written and None is
    returned, as for a record that does not exist. ``change`` may raise to refuse. ``first``:
    the record as the caller just read it (saves a read; a stale one costs a retry). After
    ``attempts`` lost races: ``ActionConflict``."""
    current = first
    for attempt in range(attempts):
        if attempt:  # a lost race: the others writing it are given a moment, not all at once
            time.sleep(random.uniform(0, _BACKOFF_SECONDS * attempt))
        action = current or records.get(action_id)
        current = None
        if action is None:
            return None
        after = change(action)
        if after is None:
            return None
        if after is action:
            return Written(action, action)
        try:
            _save(records, rule, action, after)
        except ActionConflict:
            continue
        return Written(action, after)
    raise ActionConflict(action_id, f"{rule}: the record kept changing ({attempts} attempts)")


def _save(records: ActionRecords, rule: Rule, before: Action, after: Action) -> None:
    """Write ``after`` over ``before`` (its version fences the write). A write under a record
    rule counts the fire it records in the fire totals: a manual fire's is its history's newest
    entry; a scheduled fire's is the entry of the occurrence ``before`` was at (those its overlap
    policy skipped follow it)."""
    records.save(after, expected_version=before.version, recorded=_recorded(rule, before, after))


def _recorded(rule: Rule, before: Action, after: Action) -> Occurrence | None:
    if rule not in _RECORDING or not after.history:
        return None
    if rule is Rule.RECORD_MANUAL:
        return after.history[-1]
    return next(
        (
            entry
            for entry in reversed(after.history)
            if not entry.manual and entry.occurrence == before.occurrence
        ),
        None,
    )


def decided_again[Answer](steer: Callable[[], Answer], attempts: int = ATTEMPTS) -> Answer:
    """A user's change whose write is fenced on the record it read, and which does nothing
    before that write: on a lost race — a fire recorded meanwhile, as after a Run Now — it reads
    the record again and decides again, as ``update`` does. After ``attempts`` lost races the
    last ``ActionConflict`` is raised."""
    for _ in range(attempts - 1):
        try:
            return steer()
        except ActionConflict:
            continue
    return steer()


# --- a fire's rules ----------------------------------------------------------------------------
def order_agrees(record: Action | None, fire: FireAttempt) -> Action:
    """The claim's guard: the record, if the execution of ``fire`` may run the fire it is at —
    the order's fire, due when the order says, claimed by this very execution (a retry resumes
    it), or waiting (PENDING) for this execution, which the record names. Else
    ``ActionSuperseded`` (the fire moved on: end quietly), or ``ForgedOrder`` when the record
    contradicts the order's fire time (the caller announces it)."""
    order = fire.order
    if record is None:
        raise ActionSuperseded(order.action_id, "the record no longer exists")
    if record.fire_key != order.key:
        raise ActionSuperseded(
            order.action_id,
            f"record is at generation {record.generation} occurrence {record.occurrence}, "
            f"this execution is for generation {order.generation} occurrence {order.occurrence}",
        )
    if record.execution_time is None or ceil_ms(record.execution_time) != ceil_ms(order.fire_at):
        raise ForgedOrder(
            fire.execution_arn,
            f"its fire time {iso(order.fire_at)} is not the record's "
            f"({iso(record.execution_time) if record.execution_time else 'none'})",
        )
    if record.holds_claim(fire.execution_arn):
        return record
    if record.status == Status.IN_PROGRESS:
        raise ActionSuperseded(order.action_id, f"another execution holds it: {record.claimed_by}")
    if record.status != Status.PENDING:
        raise ActionSuperseded(order.action_id, f"record is {record.status}")
    if not record.waits_for(fire.execution_arn):
        # Only the execution the record names may claim its fire (or, parked far, any the pump
        # started for it: the first claim decides): any other is a stale one (the fire was
        # parked again, handed over, repaired) and ends quietly.
        raise ActionSuperseded(
            order.action_id, f"the record names another execution: {record.execution_arn}"
        )
    return record


def claim(
    records: ActionRecords, fire: FireAttempt, now: datetime, limits: Limits, first: Action
) -> Action:
    """**claim**: PENDING → IN_PROGRESS for the execution of ``fire`` (guard: ``order_agrees``,
    checked again on every read); a retry of that execution, or the lone execution a batch
    handed the fire over to, resumes its claim (nothing written)."""

    def claimed(current: Action) -> Action:
        current = order_agrees(current, fire)
        if current.holds_claim(fire.execution_arn):
            return current
        return current.claimed(now, fire.execution_arn, limits.transitions)

    written = update(records, first.id, Rule.CLAIM, claimed, first=first)
    if written is None:
        raise ActionSuperseded(first.id, "the record no longer exists")
    return written.after


def claim_manual(records: ActionRecords, fire: FireAttempt, now: datetime) -> Action:
    """**claim a manual fire**: the order's manual fire, claimed on its own entry (guard: it is
    asked for, in the order's generation, and unclaimed or claimed by this execution already);
    the schedule's own fire is untouched. Else ``ActionSuperseded``."""
    order = fire.order

    def claimed(current: Action) -> Action:
        manual = current.manual.fire(order.manual)
        if manual is None or manual.generation != order.generation:
            # (numbers start over with a replace: one of another generation is another fire)
            raise ActionSuperseded(order.action_id, f"manual fire {order.manual} is not asked for")
        if manual.claimed_by == fire.execution_arn:
            return current
        if manual.claimed_by is not None:
            raise ActionSuperseded(
                order.action_id, f"manual fire {order.manual} is run by {manual.claimed_by}"
            )
        return current.manual_claimed(now, order.manual, fire.execution_arn)

    # (the fires of one backfill or catch-up claim their entries of one record at once)
    written = update(records, order.action_id, Rule.CLAIM_MANUAL, claimed, attempts=_CONTENDED)
    if written is None:
        raise ActionSuperseded(order.action_id, "the record no longer exists")
    return written.after


def note_failure(
    records: ActionRecords, fire: FireAttempt, error: str, retry_count: int, now: datetime
) -> Written | None:
    """**note an attempt's error**: the last error and the retries so far (guard: the execution
    holds the fire's claim). Best effort, one try: the machine records the failure."""

    def noted(current: Action) -> Action | None:
        number = fire.order.manual
        if number:  # a manual fire's own entry (its attempts count for its failure's record)
            entry = current.manual.fire(number)
            if entry is None or not same_execution(entry.claimed_by, fire.execution_arn):
                return None
            return current.manual_noted_failure(now, number, retry_count)
        if not current.holds_claim(fire.execution_arn):
            return None
        return current.noted_failure(now, error, retry_count)

    return update(records, fire.order.action_id, Rule.NOTE_FAILURE, noted, attempts=1)


def hand_over(
    records: ActionRecords,
    key: FireKey,
    batch_arn: str,
    to_arn: str,
    now: datetime,
    limits: Limits,
) -> Written | None:
    """**hand over**: the claim on the fire ``key``, and the record's named execution, move
    from the batch to the fire's own lone execution ``to_arn`` before it starts (guard: the
    batch holds the claim; or, a fire that failed before its claim, the record waits for the
    batch: names it, or is parked far, launched into it without a name)."""

    def handed(current: Action) -> Action | None:
        if current.fire_key != key:
            return None
        if current.holds_claim(batch_arn):
            return current.handed_over(now, batch_arn, to_arn, limits.transitions)
        if current.waits_for(batch_arn):
            return current.with_execution(now, to_arn)
        return None

    return update(records, key[0], Rule.HAND_OVER, handed)


def withdraw(
    records: ActionRecords, key: FireKey, handed_to: str, now: datetime, limits: Limits, why: str
) -> Written | None:
    """**release** (a batch's): the lone execution a fire was handed over to could not start;
    its claim is released and the fire parked again, due now (guard: that execution holds the
    claim, or the record is PENDING and names it)."""

    def withdrawn(current: Action) -> Action | None:
        if current.fire_key != key:
            return None
        if current.holds_claim(handed_to):
            return current.released(now, handed_to, limits.transitions, why).parked_again(now, now)
        if current.status == Status.PENDING and same_execution(current.execution_arn, handed_to):
            return current.parked_again(now, now)
        return None

    return update(records, key[0], Rule.RELEASE, withdrawn)


def hand_on(
    records: ActionRecords,
    fire: FireAttempt,
    handing: Callable[[Action], Action | None],
) -> Written | None:
    """**hand on**: overlap policy ALLOW_ALL — the scheduled fire this execution claims, about
    to be retried, becomes a fire in flight of its own (claimed by this execution) and the
    record goes on to the next occurrence, planned (guard: this execution holds the claim of
    the order's fire; ``handing`` makes the version, or None to leave it)."""
    order = fire.order

    def handed(current: Action) -> Action | None:
        if current.fire_key != order.key or not current.holds_claim(fire.execution_arn):
            return None
        return handing(current)

    return update(records, order.action_id, Rule.HAND_ON, handed)


def release(records: ActionRecords, seen: Action, now: datetime, limits: Limits) -> Written | None:
    """**release** (the reconciler's): a claim whose execution ended without a word, under
    ``onUnknownOutcome`` RETRY: the fire waits again (guard: the record is still the version
    the reconciler judged)."""

    def released(current: Action) -> Action | None:
        if current.version != seen.version or current.claimed_by is None:
            return None  # it moved on while we looked: the normal flow has it
        return current.released(now, current.claimed_by, limits.transitions)

    return update(records, seen.id, Rule.RELEASE, released, first=seen)


def release_manual(
    records: ActionRecords, seen: Action, number: int, now: datetime
) -> Written | None:
    """**release** (the reconciler's, a manual fire): the claim of the manual fire ``number``
    whose execution ended without a word, under RETRY (guard: the record is still the version
    judged). A fire never claimed has nothing to release: the record as it is."""

    def released(current: Action) -> Action | None:
        if current.version != seen.version:
            return None  # it moved on while we looked: the normal flow has it
        fire = current.manual.fire(number)
        if fire is None or fire.claimed_by is None:
            return current
        return current.manual_claimed(now, number, None)

    return update(records, seen.id, Rule.RELEASE, released, first=seen)


def ended_by(record: Action, key: FireKey, execution_arn: str) -> bool:
    """The record rule's guard: the record is at the fire ``key`` (waiting or running), and the
    ending is that of the execution that may run it — the one holding its claim, or (a skip, a
    failure before the claim) one it waits for (``Action.waits_for``: the one the record names,
    or, parked far, any the pump started for it). An ending of any other (a stale execution, a
    replay) records nothing."""
    if record.status not in ACTIVE or record.fire_key != key:
        return False
    if record.holds_claim(execution_arn):
        return True
    return record.waits_for(execution_arn)


def record(
    records: ActionRecords,
    key: FireKey,
    execution_arn: str,
    ended: Callable[[Action], Action],
    first: Action | None = None,
    seen: Callable[[Action], None] | None = None,
) -> Written | None:
    """**record**: the ending of the fire ``key`` by the execution ``execution_arn``, once
    (guard: ``ended_by``), in one write with what follows it — ``ended`` makes that version
    (the history entry, the next occurrence planned or the end, a change that waited). ``seen``
    is told each version read (the caller finishes what a repeat left undone)."""

    def recorded(current: Action) -> Action | None:
        if seen is not None:
            seen(current)
        if not ended_by(current, key, execution_arn):
            return None
        return ended(current)

    return update(records, key[0], Rule.RECORD, recorded, first=first)


def record_manual(
    records: ActionRecords,
    action_id: str,
    number: int,
    ending: Occurrence,
    key: str,
    now: datetime,
    limits: Limits,
) -> Written | None:
    """**record a manual fire**: its ending into the history, out of the fires in flight, once
    (guard: the manual fire ``number`` is in flight)."""

    def recorded(current: Action) -> Action | None:
        if current.manual.fire(number) is None:
            return None
        return current.manual_recorded(now, number, ending, key, limits)

    return update(records, action_id, Rule.RECORD_MANUAL, recorded, attempts=_CONTENDED)


# --- a launch's rules ---------------------------------------------------------------------------
def is_due_parked(record: Action, now: datetime) -> bool:
    """The pump's guard: the record's fire is parked and its launch moment has come."""
    return record.is_parked and record.launch_at is not None and record.launch_at <= now


def mark_launched(
    records: ActionRecords, seen: Action, execution_arn: str, now: datetime
) -> Written | None:
    """**mark launched**: the parked fire's record names the execution the pump is about to
    start (guard: still the same fire, parked and due)."""

    def launched(current: Action) -> Action | None:
        if current.fire_key != seen.fire_key or not is_due_parked(current, now):
            return None
        return current.launched(now, execution_arn)

    return update(records, seen.id, Rule.MARK_LAUNCHED, launched, first=seen)


def park_again(
    records: ActionRecords, seen: Action, execution_arn: str, now: datetime
) -> Written | None:
    """**park again**: Step Functions refused to start the execution the record names; the fire
    waits in the table, due now (guard: the same fire, PENDING, still naming that execution)."""

    def parked(current: Action) -> Action | None:
        named = same_execution(current.execution_arn, execution_arn)
        if current.fire_key != seen.fire_key or current.status != Status.PENDING or not named:
            return None
        return current.parked_again(now, now)

    return update(records, seen.id, Rule.PARK_AGAIN, parked, first=seen)


def park_due_now(records: ActionRecords, seen: Action, now: datetime) -> Written | None:
    """**park due now**: a pump worker read a parked fire due for launch and did not launch it
    (an error, a refusal before its turn): it waits due now, in the Parked index, where the
    next run finds it whatever the watermarks (guard: the same fire, still parked, not due now
    already)."""

    def parked(current: Action) -> Action | None:
        if current.fire_key != seen.fire_key or not current.is_parked:
            return None
        if current.launch_at is not None and current.launch_at == current.updated_at:
            return None  # parked due now already (in the Parked index)
        return current.parked_again(now, now)

    return update(records, seen.id, Rule.PARK_DUE_NOW, parked, first=seen)


def name_leg(
    records: ActionRecords, seen: Action, waking: str, leg_arn: str, now: datetime
) -> Written | None:
    """**name the execution** (a leg): an execution woke early and hands its wait to a new leg
    (guard: the record, still at the fire, waiting or running, names the execution that woke,
    or waits for it: parked far, launched without a name)."""

    def named(current: Action) -> Action | None:
        moved_on = current.fire_key != seen.fire_key or current.status not in ACTIVE
        named = same_execution(current.execution_arn, waking) or current.waits_for(waking)
        if moved_on or not named:
            return None  # it moved on meanwhile (a cancel, a pause): whatever moved it has it
        return current.with_execution(now, leg_arn)

    return update(records, seen.id, Rule.NAME_EXECUTION, named, first=seen)


def name_repair(
    records: ActionRecords, seen: Action, repair_arn: str, now: datetime
) -> Written | None:
    """**name the execution** (a repair): the reconciler names a fresh execution for a fire
    whose own ended without firing (guard: the record is still the version it judged)."""

    def named(current: Action) -> Action | None:
        if current.version != seen.version:
            return None
        if current.execution_arn == repair_arn:
            return current
        return current.with_execution(now, repair_arn)

    return update(records, seen.id, Rule.NAME_EXECUTION, named, first=seen)


def name_follow_on_member(
    records: ActionRecords,
    key: FireKey,
    follow_on_arn: str,
    planned: Callable[[Action], Action],
) -> Written | None:
    """**name the execution** (a follow-on's member): a fire written into a follow-on batch that
    an earlier attempt of the task started without it gets its own execution, ``planned``
    (guard: the record, PENDING at that fire, still names the follow-on)."""

    def named(current: Action) -> Action | None:
        in_follow_on = same_execution(current.execution_arn, follow_on_arn)
        if current.fire_key != key or current.status != Status.PENDING or not in_follow_on:
            return None
        return planned(current)

    return update(records, key[0], Rule.NAME_EXECUTION, named)


def move_own_occurrence(records: ActionRecords, seen: Action, moved: Action) -> None:
    """**move its own occurrence**: a fire's own execution, before its claim, moves the missed
    occurrence the record is at to the moment its calendar allows (a new generation, planned
    and sealed). Guard: the version read (the caller checked the seal)."""
    _write_once(records, Rule.MOVE_OWN_OCCURRENCE, seen, moved)


# --- the reconciler's and the watchdog's ----------------------------------------------------------
def note_missed(records: ActionRecords, seen: Action, now: datetime) -> Written | None:
    """**note a missed fire**: the watchdog's note on the fire the record is at (guard: still
    PENDING at that fire, not noted yet)."""

    def noted(current: Action) -> Action | None:
        if current.fire_key != seen.fire_key or current.status is not Status.PENDING:
            return None  # it fired, or moved on, meanwhile
        return None if current.missing_fire else current.noted_missed(now)

    return update(records, seen.id, Rule.NOTE_MISSED, noted, first=seen)


def backfill(
    records: ActionRecords, action_id: str, step: Callable[[Action], Action | None]
) -> Written | None:
    """**backfill**: the occurrences ``step`` asks as backfilled fires, added to the backfilled
    spans in the same write, so no later write asks them again (guard: ``step``'s — a backfill
    waits or is asked, the action live and recurring; ``fire.backfill_step``)."""
    return update(records, action_id, Rule.BACKFILL, step)


def know_start(
    records: ActionRecords, seen: Action, event_id: str, now: datetime
) -> Written | None:
    """**know a Start**: a repeat of the record's own Start under a new event id (a publisher's
    retry) is remembered, so that it changes nothing however late it comes again (guard: not
    known yet)."""
    return update(
        records, seen.id, Rule.KNOW_START, lambda c: c.knowing_start(now, event_id), first=seen
    )


# --- steering's own: each decided on the record its request read, fenced on that version ------
def _write_once(records: ActionRecords, rule: Rule, before: Action, after: Action) -> None:
    """One write of a decision made on ``before``: ``ActionConflict`` if the record moved on
    (the request is decided again: ``decided_again``)."""
    _save(records, rule, before, after)


def create(records: ActionRecords, new: Action) -> None:
    """**create**: a Start's first record of an id (guard: none exists: ``ActionConflict``)."""
    records.create(new)


def replace_schedule(records: ActionRecords, existing: Action, replacing: Action) -> None:
    """**replace**: a Start (or update) gives the id a new schedule, a new generation (guard:
    the version read, outside the lock)."""
    _write_once(records, Rule.REPLACE, existing, replacing)


def defer(records: ActionRecords, seen: Action, change: Deferred, now: datetime) -> Action:
    """**defer**: a change asked inside the lock waits on the record for the imminent fire
    (guard: the version read)."""
    deferring = seen.deferring(now, change)
    _write_once(records, Rule.DEFER, seen, deferring)
    return deferring


def undefer(records: ActionRecords, seen: Action, now: datetime) -> Action:
    """**defer**, withdrawn: a resume of a pause that waits for the fire under way drops it
    (guard: the version read)."""
    withdrawn = seen.withdrawing_deferred(now)
    _write_once(records, Rule.DEFER, seen, withdrawn)
    return withdrawn


def pause(records: ActionRecords, seen: Action, paused: Action) -> None:
    """**pause**: no fire until resumed, a new generation (guard: the version read, live, not
    paused, outside the lock)."""
    _write_once(records, Rule.PAUSE, seen, paused)


def resume(records: ActionRecords, seen: Action, resumed: Action) -> None:
    """**resume**: the next fire from now, or the end when none is left (guard: the version
    read, paused)."""
    _write_once(records, Rule.RESUME, seen, resumed)


def plan_again(records: ActionRecords, seen: Action, again: Action) -> None:
    """**plan again on a calendar**: its calendar, just written, allows an earlier fire than
    the one planned: that one, a new generation (guard: the version read, PENDING, outside the
    lock, an earlier fire)."""
    if seen.status is not Status.PENDING or again.execution_time is None:
        raise TransitionRefused(seen.id, "planned again", f"it is {seen.status}, not PENDING")
    if seen.execution_time is not None and again.execution_time >= seen.execution_time:
        raise TransitionRefused(seen.id, "planned again", "the fire planned is not earlier")
    _write_once(records, Rule.PLAN_AGAIN, seen, again)


def hold(records: ActionRecords, seen: Action, held: Action) -> None:
    """**hold on a calendar**: its calendar allows none of its fires within the search bound:
    paused on it, in attention, never ended on its account (guard: the version read, PENDING
    or PAUSED — never a claimed fire)."""
    if seen.status not in (Status.PENDING, Status.PAUSED) or held.held_by_calendar is None:
        raise TransitionRefused(seen.id, "held", f"it is {seen.status}, not PENDING or PAUSED")
    _write_once(records, Rule.HOLD, seen, held)


def note_calendar_put(records: ActionRecords, seen: Action, calendar: str) -> None:
    """**note a calendar put**: a fire under way whose schedule names the calendar just put
    finds its record changed when it writes it, reads it again and, recording the fire, reads
    the calendar again: its next fire is planned on the calendar as put. Only the version moves
    (guard: the version read, IN_PROGRESS, the schedule naming that calendar)."""
    use = seen.schedule.calendar
    if seen.status is not Status.IN_PROGRESS or use is None or use.name != calendar:
        raise TransitionRefused(seen.id, "noted a calendar put", f"it is {seen.status}")
    _write_once(records, Rule.NOTE_CALENDAR_PUT, seen, seen.noted_calendar_put())


def cancel(records: ActionRecords, seen: Action, cancelled: Action) -> None:
    """**cancel**: CANCELLED, a new generation (guard: the version read, live, its fire not
    claimed)."""
    _write_once(records, Rule.CANCEL, seen, cancelled)


def ask_manual_fire(records: ActionRecords, seen: Action, asking: Action) -> None:
    """**ask a manual fire**: a run now or retry by hand added to the fires in flight (guard:
    the version read, room in flight)."""
    _write_once(records, Rule.ASK_MANUAL_FIRE, seen, asking)


def run_one_off_now(records: ActionRecords, seen: Action, moved: Action) -> None:
    """**run a one-off now**: its one fire moves to now, a new generation (guard: the version
    read, outside the lock)."""
    _write_once(records, Rule.RUN_ONE_OFF_NOW, seen, moved)


def retry_by_hand(records: ActionRecords, seen: Action, retried: Action) -> None:
    """**retry by hand**: a FAILED action's failed occurrence runs again now, a new generation
    (guard: the version read)."""
    _write_once(records, Rule.RETRY_BY_HAND, seen, retried)


def change_occurrence(records: ActionRecords, seen: Action, changed: Action) -> None:
    """**change an occurrence**: one occurrence skipped, moved or restored, sealed again (guard:
    the version read; never the imminent occurrence inside its lock)."""
    _write_once(records, Rule.CHANGE_OCCURRENCE, seen, changed)
