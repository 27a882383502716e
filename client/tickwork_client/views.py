"""What the client reads back, typed: an action as ``GET /actions/{id}`` shows it, its fires,
its transitions, and the local stack's outbox messages. Each is a ``TypedDict``: a plain JSON
object at run time (``action["status"]``), checked by a type checker (docs/contracts.md, "The
HTTP API" and "The local outbox", hold every field)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "ActionPage",
    "ActionSummary",
    "ActionView",
    "FireCounts",
    "FireView",
    "OccurrenceView",
    "OutboxMessage",
    "RejectionView",
    "StatsView",
    "StatusName",
    "TransitionView",
]

StatusName = Literal[
    "PENDING", "IN_PROGRESS", "PAUSED", "COMPLETED", "FAILED", "CANCELLED", "NO_ACTION"
]


class FireView(TypedDict):
    """One occurrence the action ran (its ``history``), oldest first."""

    occurrence: int
    scheduledTime: str
    actualTime: str
    attempts: int
    outcome: str  # FIRED, FAILED, NO_ACTION or SKIPPED
    error: NotRequired[str | None]
    lateMs: NotRequired[int | None]
    trigger: str  # SCHEDULED, RUN_NOW or RETRY
    manual: int
    execution: NotRequired[str | None]


class OccurrenceView(TypedDict):
    """One coming occurrence (``GET /actions/{id}/occurrences``): its number, its time as the
    schedule has it, when it fires (left out when skipped), and whether it was changed."""

    occurrence: int
    scheduledTime: str
    firesAt: NotRequired[str]
    skipped: bool
    moved: bool
    note: NotRequired[str]


TransitionView = TypedDict(
    "TransitionView", {"at": str, "from": str | None, "to": str, "reason": str}
)


class ActionView(TypedDict):
    """An action as the stack holds it."""

    id: str
    action: str
    status: StatusName
    executionTime: str | None
    occurrence: int
    executionRemainder: int | None
    schedule: str
    retryCount: int
    manualRetries: int
    lastError: str | None
    group: str
    needsAttention: bool
    pauseNote: str | None
    deferred: str | None
    data: dict[str, Any]
    metadata: dict[str, Any]
    timezone: str
    scheduleSpec: dict[str, Any]
    repeat: bool
    frequency: str | None
    catchUp: dict[str, Any]
    onFailure: str
    onUnknownOutcome: str
    roleArn: NotRequired[str | None]
    lockSeconds: NotRequired[int | None]
    maximumRetryAttempts: NotRequired[int | None]
    maximumEventAgeSeconds: NotRequired[int]
    deadLetterArn: NotRequired[str | None]
    catchUpOnResume: NotRequired[str]
    overlapPolicy: NotRequired[str]
    retrying: NotRequired[dict[str, Any] | None]
    pausedAt: str | None
    idempotencyKey: str | None
    manualFires: list[dict[str, Any]]
    failedFires: list[dict[str, Any]]
    occurrenceChanges: NotRequired[list[dict[str, Any]]]
    generation: int
    version: int
    executionArn: str | None
    launchAt: str | None
    lastResult: dict[str, Any] | None
    createdAt: str
    updatedAt: str
    history: list[FireView]
    transitions: list[TransitionView]


class OutboxMessage(TypedDict):
    """One message a fire sent on the local stack (``tickwork outbox``), newest first."""

    number: int
    at: str
    kind: str  # sms, push, email, queue, topic, event or webhook
    to: NotRequired[str | None]
    body: NotRequired[Any]
    subject: NotRequired[str | None]
    html: NotRequired[str | None]
    messageId: NotRequired[str | None]
    template: NotRequired[str | None]
    status: NotRequired[int | None]  # a webhook's answer
    error: NotRequired[str | None]
    attributes: NotRequired[dict[str, str | None]]  # a queue's, topic's or push's message's
    tags: NotRequired[dict[str, str]]  # an e-mail's SES message tags
    fire: NotRequired[dict[str, Any]]  # id, occurrence, scheduledTime, attempt, trigger, ...


class ActionSummary(TypedDict):
    """One action of a page (``GET /actions``): its id, type, status, next fire and schedule."""

    id: str
    action: str
    status: str
    group: NotRequired[str]
    executionTime: NotRequired[str | None]
    occurrence: NotRequired[int]
    executionRemainder: NotRequired[int | None]
    schedule: NotRequired[str]
    lastOutcome: NotRequired[str | None]  # the last fire's: FIRED, FAILED, NO_ACTION, SKIPPED
    lastFiredAt: NotRequired[str | None]


class ActionPage(TypedDict):
    """A page of actions; ``nextCursor`` asks for the next one (None: the last page)."""

    items: list[ActionSummary]
    nextCursor: str | None


class FireCounts(TypedDict):
    fired: int
    late: int  # a part of fired: more than 1 s after its time
    failed: int


class StatsView(TypedDict):
    """``GET /stats``: actions by status (each once), those needing attention apart (a part
    of the statuses), and the fires of the last hour and day."""

    byStatus: dict[str, int]
    needsAttention: int
    lastHour: FireCounts
    lastDay: FireCounts


class RejectionView(TypedDict):
    """One refusal the stack kept (``GET /rejections``), newest first."""

    at: str
    request: str  # the detail-type refused: Schedule Start, ...
    reason: str
    message: str
    id: NotRequired[str | None]
    eventId: NotRequired[str | None]
    source: NotRequired[str | None]
    problems: NotRequired[list[dict[str, str]]]  # field, problem, fix
