"""Domain errors.

The class names are a contract: a Lambda that raises one reports it as its ``errorType``,
and the state machine's ``ErrorEquals`` matches on that name (see statemachines/).
Each error builds its own message from the values it is given.

Long for a domain module, on purpose: every error the stack raises stands here, side by side,
so that the names the state machines match are one list.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ActionConflict",
    "ActionExists",
    "ActionFinished",
    "ActionLocked",
    "ActionNotFound",
    "ActionNotRetryable",
    "ActionSuperseded",
    "BackfillOverlap",
    "CalendarConflict",
    "CalendarEndsSchedules",
    "CalendarNotFound",
    "CalendarTampered",
    "ConcurrencyLimited",
    "FieldProblem",
    "FireUnderWay",
    "ForgedOrder",
    "InvalidActionData",
    "LaunchRefused",
    "MalformedFire",
    "ManualFiresInFlight",
    "OccurrenceSkipped",
    "PermanentFulfillmentError",
    "RecordFormatUnknown",
    "RecordTooLarge",
    "RetriesExhausted",
    "SignatureRefused",
    "TickPending",
    "TickUndelivered",
    "TickworkError",
    "TransientFulfillmentError",
    "TransitionRefused",
    "UnknownActionType",
    "ValidationFailed",
    "WaitContinued",
    "field_path",
]


class TickworkError(Exception):
    """Base of every error tickwork raises on purpose."""


@dataclass(frozen=True)
class FieldProblem:
    """One refused field: where it is, what is wrong, and how to fix it."""

    field: str
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"{self.field}: {self.problem}. Fix: {self.fix}"

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "problem": self.problem, "fix": self.fix}


def field_path(parts: Iterable[int | str], under: str = "") -> str:
    """A field's path as refusals name it, from a pydantic error's ``loc``: a list item by its
    index, a key after a dot (``dates[0]``, ``hours.MON``; ``data.items[2]`` ``under`` "data")."""
    path = under
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path


class ValidationFailed(TickworkError):
    """Input refused before anything was written. Carries one problem per field."""

    def __init__(self, problems: list[FieldProblem] | FieldProblem) -> None:
        self.problems = [problems] if isinstance(problems, FieldProblem) else list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))

    @classmethod
    def of(cls, field: str, problem: str, fix: str) -> ValidationFailed:
        return cls(FieldProblem(field, problem, fix))


class RecordTooLarge(ValidationFailed):
    """A write would make the action's record larger than one item may be: nothing written."""

    def __init__(self, action_id: str, size: int, limit: int) -> None:
        self.action_id = action_id
        super().__init__(
            FieldProblem(
                "data",
                f"with this change the record of {action_id!r} would take {size // 1024} KB, over "
                f"the {limit // 1024} KB DynamoDB holds in one item (its data and metadata, the "
                "Start they came in, and a change waiting for the imminent fire are kept on it)",
                "send smaller data or metadata (keep a large payload elsewhere, e.g. S3, and "
                "schedule a reference to it), or make the change once the imminent fire is past",
            )
        )


class UnknownActionType(ValidationFailed):
    """The action type has no registered fulfillment."""

    def __init__(self, action_type: str, known: list[str]) -> None:
        self.action_type = action_type
        super().__init__(
            FieldProblem(
                "action",
                f"unregistered action type {action_type!r}",
                f"use one of {', '.join(sorted(known))} or register a fulfillment for it",
            )
        )


class InvalidActionData(ValidationFailed):
    """The action's data does not match its action type's schema."""


class MalformedFire(ValidationFailed):
    """A fire's value on the wire (execution input, Fulfill payload, tick or failure report)
    does not have its documented shape (tickwork.domain.fire, docs/contracts.md)."""


class ForgedReport(TickworkError):
    """A Schedule Tick or Schedule Failed with tickwork's source that no fire of this stack
    made: its proof is missing or does not match (tickwork.integrity.fire_proof)."""

    def __init__(self, detail_type: str, problem: str) -> None:
        self.detail_type = detail_type
        super().__init__(
            f"{detail_type} {problem}: only the stack's own fires make these; nothing is recorded"
        )


class ForgedOrder(TickworkError):
    """An execution's input that the stack did not issue, or that the record contradicts: no
    proof, a proof for another execution or kind, a fire time that is not the record's, a
    member listed twice (docs/protocol.md, "What an order must prove"). Nothing fires."""

    def __init__(self, execution: str, problem: str) -> None:
        self.execution = execution
        self.problem = problem
        super().__init__(f"execution {execution}: {problem}; nothing fired")


class NameTaken(TickworkError):
    """The stack went to start an execution and found its name taken by one it did not start:
    that execution's input carries no proof the stack made for the name (docs/protocol.md,
    "How an execution is known"). Names are keyed, so this is a name found by chance (1 in
    2^64) or by someone holding the key; the fire is never trusted to that execution. The start
    fails, loudly, and a ``Schedule Tampered`` event names the execution."""

    def __init__(self, execution: str) -> None:
        self.execution = execution
        super().__init__(
            f"execution {execution} exists and the stack did not start it (its input carries no "
            "proof for its name): nothing was started; rotate the seal key if it has leaked"
        )


class RepairsIncomplete(TickworkError):
    """A reconciler pass made every repair it could but these (their errors are logged): the
    pass after tries them again."""

    def __init__(self, subjects: list[str], repaired: dict[str, Any] | None = None) -> None:
        self.subjects = subjects
        self.repaired = repaired or {}  # what the pass did repair, by kind
        shown = ", ".join(subjects[:10]) + (
            f" and {len(subjects) - 10} more" if len(subjects) > 10 else ""
        )
        super().__init__(f"{len(subjects)} repairs failed and are tried again next pass: {shown}")


class ActionNotFound(TickworkError):
    def __init__(self, action_id: str) -> None:
        self.action_id = action_id
        super().__init__(f"action {action_id!r} does not exist")


class ActionConflict(TickworkError):
    """A write lost a race: the record changed (or appeared) since it was read."""

    def __init__(self, action_id: str, detail: str) -> None:
        self.action_id = action_id
        super().__init__(f"action {action_id!r} changed concurrently: {detail}")


class CalendarConflict(TickworkError):
    """A calendar changed (or was made) since it was read: read it again and retry."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"calendar {name!r} changed concurrently: read it again and retry")


class CalendarEndsSchedules(TickworkError):
    """A calendar as given would leave live schedules naming it with no fire within the search
    bound: refused, naming them, unless the caller asks to hold them."""

    SHOWN = 10  # ids named in the message; the rest counted

    def __init__(self, name: str, action_ids: list[str]) -> None:
        self.name = name
        self.action_ids = action_ids
        shown = ", ".join(repr(i) for i in action_ids[: self.SHOWN])
        more = len(action_ids) - self.SHOWN
        rest = f" and {more} more" if more > 0 else ""
        super().__init__(
            f"calendar {name!r} as given allows no fire within its search bound to"
            f" {len(action_ids)} live schedule(s) naming it: {shown}{rest}; let it allow some"
            " of their fires, change or cancel them, or hold them until it does"
            " (--hold-schedules, holdSchedules=true)"
        )


class CalendarNotFound(TickworkError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"no calendar named {name!r}")


class CalendarTampered(TickworkError):
    """The stack's copy of a calendar is not as tickwork wrote it (its seal does not hold, or
    it cannot be read): written outside tickwork. Its content is not taken."""

    def __init__(
        self, name: str, why: str = "its seal does not match", version: int | None = None
    ) -> None:
        self.name = name
        self.version = version  # the version its item says, when its content cannot be read
        super().__init__(
            f"calendar {name!r} was changed outside tickwork ({why}): its content is not taken"
        )


class ActionExists(TickworkError):
    """A create-only request named an id that is taken: creating never replaces."""

    def __init__(self, action_id: str) -> None:
        self.action_id = action_id
        super().__init__(f"action {action_id!r} already exists")


class ActionLocked(TickworkError):
    """A change to a one-off arrived inside its lock: its only fire is fixed. (A recurrence's
    change there is accepted and applies after the imminent fire.)"""

    def __init__(self, action_id: str, fire_time: str, lock_seconds: int) -> None:
        self.action_id = action_id
        super().__init__(
            f"one-off action {action_id!r} fires at {fire_time} and is locked {lock_seconds}s "
            "before it: its only fire is fixed and can no longer be changed, paused or "
            "cancelled — let it fire, then schedule it again if needed"
        )


class FireUnderWay(ActionLocked):
    """A cancel or pause of a one-off whose only fire is already claimed: it is under way and
    completes as it runs. (Until the claim, a cancel or a pause wins; a recurrence's, after the
    claim, applies from the next occurrence on.)"""

    def __init__(self, action_id: str, occurrence: int, fire_time: str, change: str) -> None:
        TickworkError.__init__(
            self,
            f"one-off action {action_id!r}: its fire (occurrence {occurrence}, due "
            f"{fire_time}) is under way — claimed by the execution running it — and "
            f"completes as it runs; it can no longer be {_past(change)}",
        )
        self.action_id = action_id
        self.occurrence = occurrence
        self.change = change


def _past(change: str) -> str:
    return {"cancel": "cancelled", "pause": "paused"}.get(change, f"changed ({change})")


class OccurrenceLocked(TickworkError):
    """A skip or move of the imminent occurrence arrived inside its lock: it happens as
    planned."""

    def __init__(self, action_id: str, occurrence: int, fire_time: str, lock_seconds: int) -> None:
        self.action_id = action_id
        self.occurrence = occurrence
        super().__init__(
            f"occurrence {occurrence} of {action_id!r} fires at {fire_time} and is locked "
            f"{lock_seconds}s before it: it happens as planned and can no longer be skipped or "
            "moved"
        )


class RecordAltered(TickworkError):
    """A change that keeps what the record holds (a skip or move of one occurrence) asked of a
    record whose seal does not match: altered outside tickwork, it is not sealed again."""

    def __init__(self, action_id: str) -> None:
        self.action_id = action_id
        super().__init__(
            f"action {action_id!r} was altered outside tickwork (its seal does not match): a "
            "change that keeps its data will not seal it again"
        )


class NotRecurring(TickworkError):
    """A request about one occurrence of a recurrence named a one-off."""

    def __init__(self, action_id: str, wanted: str) -> None:
        self.action_id = action_id
        super().__init__(f"action {action_id!r} is a one-off: it has no occurrence to {wanted}")


class BackfillOverlap(TickworkError):
    """A backfill with overlap REFUSE whose range holds occurrences of the live schedule (at or
    after the action's creation): nothing of it is run."""

    def __init__(self, action_id: str, first: str, count: int, live_from: str) -> None:
        self.action_id = action_id
        self.first = first
        self.count = count
        self.live_from = live_from
        super().__init__(
            f"the backfill of {action_id!r} holds {count} occurrence(s) of the live schedule, "
            f"the first at {first} (the action fires its own occurrences from {live_from}): "
            "nothing was run"
        )


class ActionFinished(TickworkError):
    """A request that needs a live action (pause, resume, run now) named a finished one."""

    def __init__(self, action_id: str, status: str, wanted: str) -> None:
        self.action_id = action_id
        self.status = status
        super().__init__(
            f"action {action_id!r} is {status}: it has finished and cannot be {wanted}"
        )


class ManualFiresInFlight(TickworkError):
    """Too many fires asked for by hand are still running for one action."""

    def __init__(self, action_id: str, limit: int) -> None:
        self.action_id = action_id
        super().__init__(
            f"action {action_id!r} already has {limit} fires asked for by hand in flight"
        )


class ActionNotRetryable(TickworkError):
    def __init__(self, action_id: str, status: str) -> None:
        self.action_id = action_id
        super().__init__(
            f"action {action_id!r} is {status} and has no failed fire to retry; only a FAILED "
            "action, or one whose fire failed (see its history), can be retried by hand"
        )


class ActionSuperseded(TickworkError):
    """An execution found its action replaced, updated, cancelled or already past it.

    The state machine ends such an execution quietly: it is not a failure.
    """

    def __init__(self, action_id: str, reason: str) -> None:
        self.action_id = action_id
        super().__init__(f"execution for action {action_id!r} is superseded: {reason}")


class RecordFormatUnknown(TickworkError):
    """A stored record says a format this code does not read (a newer tickwork wrote it, or it
    was altered by hand): nothing is read from it, and nothing is written over it."""

    def __init__(self, action_id: str, stated: str, known: list[int]) -> None:
        self.action_id = action_id
        readable = ", ".join(str(k) for k in known)
        super().__init__(
            f"action {action_id!r} is stored in format {stated}, which this tickwork does not "
            f"read (it reads formats {readable}): deploy the tickwork that wrote it, or restore "
            "the item from a backup"
        )


class TransitionRefused(TickworkError):
    """A transition of the record asked of a record not in the state it starts from (a claim
    of a fire not waiting for that execution, a hand-over by one not holding the claim): a
    caller's mistake, never a race — a race is a write rule's guard saying no."""

    def __init__(self, action_id: str, transition: str, why: str) -> None:
        self.action_id = action_id
        self.transition = transition
        super().__init__(f"action {action_id!r} cannot be {transition}: {why}")


class LaunchRefused(TickworkError):
    """Step Functions would not start an execution: the account's open-execution quota
    (ExecutionLimitExceeded) or StartExecution throttling. The fire is parked again and the
    pump retries it; nothing is lost."""

    def __init__(self, name: str, code: str) -> None:
        self.name = name
        self.code = code
        super().__init__(f"execution {name!r} was not started: {code}")


class WaitContinued(TickworkError):
    """A Wait ended early (never by design: an execution waits at most LaunchAheadSeconds, to
    its fire); the wait goes on in a new leg, a new execution.

    The state machine ends this execution quietly.
    """

    def __init__(self, action_id: str, next_leg: int, fire_time: str) -> None:
        self.action_id = action_id
        super().__init__(f"action {action_id!r} fires at {fire_time}: waiting on in leg {next_leg}")


class OccurrenceSkipped(TickworkError):
    """A missed occurrence that the action's catch-up policy does not run: recorded SKIPPED,
    the next occurrence scheduled. The state machine ends the execution quietly."""

    def __init__(self, action_id: str, occurrence: int, late_seconds: float, policy: str) -> None:
        self.action_id = action_id
        super().__init__(
            f"action {action_id!r} occurrence {occurrence} skipped: "
            f"{late_seconds:.0f}s late, catch-up policy {policy}"
        )


class SignatureRefused(TickworkError):
    """An inbound event whose signature is missing, malformed, expired, forged, already used
    (replayed) or older than the change already applied to its action (stale)."""

    def __init__(self, reason: str, fix: str) -> None:
        self.reason = reason
        self.fix = fix
        super().__init__(f"signature {reason}: {fix}")


class ConcurrencyLimited(TickworkError):
    """Every slot of the action type's concurrency limit is taken: the state machine retries
    the fire with backoff and jitter until one frees up."""

    def __init__(self, action_type: str, limit: int) -> None:
        self.action_type = action_type
        super().__init__(f"{limit} fires of {action_type} are already running; waiting for a slot")


class TickUndelivered(TickworkError):
    """The bus refused the tick of a fire that ran: the error's message is the tick itself (its
    wire JSON, with its proof), which the state machine reads back and puts on the bus with
    retries of its own (the fire machine's "Emit tick")."""

    def __init__(self, tick_json: str) -> None:
        super().__init__(tick_json)


class TickPending(TickworkError):
    """A fire is recorded, but its tick is not on the bus yet (too large to carry in an error,
    or what follows the record failed): the state machine retries the task, which finds the
    occurrence its execution recorded and puts the same tick again — the fire never runs
    again."""

    def __init__(self, action_id: str, occurrence: int, why: str) -> None:
        self.action_id = action_id
        super().__init__(
            f"action {action_id!r} occurrence {occurrence} is recorded; its tick is not on the "
            f"bus yet ({why}): put again"
        )


class TransientFulfillmentError(TickworkError):
    """The fulfillment failed in a way a later attempt may not: retried with backoff."""


class PermanentFulfillmentError(TickworkError):
    """The fulfillment failed in a way no retry can fix: not retried."""


class RetriesExhausted(PermanentFulfillmentError):
    """The fire's retry policy allows no more attempts (its ``maximumRetryAttempts`` made, or its
    ``maximumEventAgeSeconds`` passed): not retried again, recorded FAILED (and sent to its
    dead-letter queue). ``before_attempt``: found before an attempt, which was not made."""

    def __init__(
        self, attempt: int, error: Exception, why: str | None = None, before_attempt: bool = False
    ) -> None:
        self.attempt = attempt
        self.before_attempt = before_attempt
        spent = why or "the last the retry policy allows"
        if before_attempt:  # ``error``: the last attempt's, as the record noted it
            super().__init__(
                f"no attempt after the {attempt} made: retry policy spent ({spent}); the last "
                f"failed with {error}"
            )
            return
        super().__init__(
            f"attempt {attempt} failed, retry policy spent ({spent}): "
            f"{type(error).__name__}: {error}"
        )
