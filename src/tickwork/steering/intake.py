"""Events that arrive on the bus: refusals are answered, not retried.

A Start or Stop that is invalid, locked or names no action, or a tick or failure report that
does not have the fire contract's shape, would fail the same way on every redelivery, so it is
not raised back to EventBridge. It is logged, counted and published as "Schedule Rejected"
(the sender's only way to learn about it on an asynchronous bus), and nothing is written.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tickwork.answers import BackfillAnswer, ChangeAnswer, RecordAnswer, Rejection
from tickwork.domain.announcements import Rejected
from tickwork.domain.errors import (
    ActionFinished,
    ActionLocked,
    ActionNotFound,
    BackfillOverlap,
    ForgedReport,
    ManualFiresInFlight,
    NotRecurring,
    OccurrenceLocked,
    RecordAltered,
    SignatureRefused,
    ValidationFailed,
)
from tickwork.domain.events import CONTROL, INBOUND, DetailType, meant_detail_type
from tickwork.domain.fire import FireFailure, Tick
from tickwork.domain.times import iso
from tickwork.fire.proofs import check_proof
from tickwork.fire.record import record_failure, record_tick
from tickwork.fire.rejections import announce_rejected
from tickwork.integrity.signed_events import TOLERANCE_SECONDS, check_event_signature
from tickwork.ports import Spent
from tickwork.steering.needs import Takes
from tickwork.steering.pause import pause_action, resume_action
from tickwork.steering.run_now import run_now
from tickwork.steering.stop import cancel_action

if TYPE_CHECKING:
    from tickwork.domain.control_events import ControlDetail, OccurrenceDetail
    from tickwork.steering.start import StartCommand, StartResult

__all__ = ["accept_control", "accept_near_miss", "accept_report", "accept_start"]

REFUSALS = (
    ValidationFailed,
    ActionLocked,
    OccurrenceLocked,
    NotRecurring,
    RecordAltered,
    ActionNotFound,
    ActionFinished,
    ManualFiresInFlight,
    SignatureRefused,
    BackfillOverlap,
)


def accept_start(command: StartCommand, deps: Takes) -> StartResult | Rejection:
    # Here, not at the top: the Control and Tick functions import this module and never parse
    # a Start (the Start request's models are built where one is).
    from tickwork.steering.start import start_action

    try:
        unsigned = _verified(DetailType.START, command.detail, command.event_id, deps)
        return start_action(replace(command, detail=unsigned), deps)
    except REFUSALS as refused:
        return _rejected(
            DetailType.START, command.detail, command.event_id, refused, deps, command.source
        )


def accept_near_miss(
    detail_type: str, detail: Any, event_id: str | None, source: str | None, deps: Takes
) -> Rejection | None:
    """An event on the bus whose detail-type the stack does not take: answered with a Schedule
    Rejected naming the detail-types it takes when it is a slip of one (``Schedule Strat``,
    ``schedule start``, a trailing space), and kept with the rejections; None (nothing
    answered, nothing kept) when it is near none: an event for another consumer."""
    meant = meant_detail_type(detail_type)
    if meant is None:
        return None
    taken = ", ".join(sorted(str(kind) for kind in INBOUND))
    refused = ValidationFailed.of(
        "detail-type",
        f"is {detail_type!r}, which the stack does not take (did you mean {str(meant)!r}?)",
        f"publish it as {str(meant)!r}; the detail-types the stack takes: {taken}",
    )
    return _rejected(detail_type, detail, event_id, refused, deps, source)


def accept_control(
    detail_type: str,
    detail: dict[str, Any],
    event_id: str | None,
    deps: Takes,
    source: str | None = None,
) -> ChangeAnswer | BackfillAnswer | Rejection:
    """Schedule Stop, Pause, Resume, Run Now, Skip, Move or Restore Occurrence, or Backfill:
    ``{"id": ...}`` and the event's own fields (``domain.control_events``)."""
    # Here, not at the top: the steering events' models are built where one is read (the Tick
    # function imports this module and reads none).
    from tickwork.domain.control_events import read_control

    kind = DetailType(detail_type) if detail_type in CONTROL else DetailType.STOP
    try:
        detail = _verified(kind, detail, event_id, deps)
        return _steer(kind, read_control(kind, detail), event_id, deps)
    except REFUSALS as refused:
        return _rejected(kind, detail, event_id, refused, deps, source)


def _steer(
    kind: DetailType, asked: ControlDetail, event_id: str | None, deps: Takes
) -> ChangeAnswer | BackfillAnswer:
    from tickwork.domain.control_events import (
        BackfillDetail,
        OccurrenceDetail,
        PauseDetail,
        RunNowDetail,
    )

    action_id = asked.action_id
    if isinstance(asked, PauseDetail):
        steer = pause_action if kind is DetailType.PAUSE else resume_action
        return steer(action_id, asked.note, deps)
    if isinstance(asked, RunNowDetail):
        return run_now(action_id, deps, asked.request_id or event_id)
    if isinstance(asked, OccurrenceDetail):
        return _occurrence(kind, asked, event_id, deps)
    if isinstance(asked, BackfillDetail):
        from tickwork.steering.backfill import backfill

        request_id = asked.request_id or event_id
        return backfill(
            action_id, asked.start_time, asked.end_time, asked.overlap, deps, request_id, asked.note
        )
    return cancel_action(action_id, deps)


def _occurrence(
    kind: DetailType, asked: OccurrenceDetail, event_id: str | None, deps: Takes
) -> ChangeAnswer:
    """Skip, move or restore one occurrence, named by ``occurrence`` (its number) or ``at``
    (its scheduled time)."""
    from tickwork.domain.control_events import MoveDetail
    from tickwork.steering.occurrences import (
        Which,
        move_occurrence,
        restore_occurrence,
        skip_occurrence,
    )

    which = Which(number=asked.occurrence, at=asked.at)
    if isinstance(asked, MoveDetail):
        return move_occurrence(asked.action_id, which, asked.to, asked.note, deps, event_id)
    if kind is DetailType.RESTORE_OCCURRENCE:
        return restore_occurrence(asked.action_id, which, asked.note, deps, event_id)
    return skip_occurrence(asked.action_id, which, asked.note, deps, event_id)


def _verified(kind: DetailType, detail: Any, event_id: str | None, deps: Takes) -> Any:
    """The detail without its signature, when the stack requires signed events and this one's
    holds, is fresh, is not older than the last change applied to its action, and was never
    used by another event; the detail as it is when signatures are not required."""
    secret = deps.secret(deps.settings.start_secret_id)
    if secret is None:
        return detail
    now = deps.clock.now()
    signed = check_event_signature(kind, detail, secret, now)
    until = datetime.fromtimestamp(signed.signed_at + TOLERANCE_SECONDS + 60, UTC)
    spent = deps.signatures.spend(signed.digest, event_id, until)
    if spent is Spent.REPLAYED:
        raise SignatureRefused(
            "replayed",
            "this signature was already used by another event: each signed request is "
            "accepted once; sign a new one",
        )
    if spent is Spent.AGAIN:
        return signed.detail  # the same event delivered again: acted on as the first time
    action_id = signed.detail.get("id")
    if not isinstance(action_id, str) or not action_id:
        return signed.detail  # a Start without an id makes a new action: nothing to be late for
    if not deps.signatures.advance(action_id, signed.signed_at, until):
        raise SignatureRefused(
            "stale",
            f"signed at {_iso_seconds(signed.signed_at)}, before the signed request that "
            f"already changed {action_id}: a replay, or a request overtaken by a later one; "
            "sign it again if it is still wanted",
        )
    current = deps.records.get(action_id)
    changed = (current.changed_at or current.created_at) if current is not None else None
    if changed is not None and signed.signed_at < changed.timestamp() - _UNSIGNED_CHANGE_GRACE:
        raise SignatureRefused(
            "stale",
            f"signed at {_iso_seconds(signed.signed_at)}, before the change applied to "
            f"{action_id} at {iso(changed)} (through the API or the CLI): a request overtaken "
            "by a later one; sign it again if it is still wanted",
        )
    return signed.detail


# A change made without a signature (API, CLI) is timed by the stack's clock, not the signer's:
# requests signed up to this long before it still pass (clock skew, near-simultaneous sends).
_UNSIGNED_CHANGE_GRACE = 30


def _iso_seconds(seconds: int) -> str:
    return iso(datetime.fromtimestamp(seconds, UTC))


def accept_report(
    detail_type: str,
    detail: dict[str, Any],
    event_id: str | None,
    deps: Takes,
    source: str | None = None,
) -> RecordAnswer | Rejection:
    """A Schedule Tick or Schedule Failed of this stack's state machine: record the fire —
    only once its proof shows a fire of this stack made it."""
    kind = DetailType.FAILED if detail_type == DetailType.FAILED else DetailType.TICK
    try:
        if kind is DetailType.FAILED:
            failure = FireFailure.from_wire(detail)
            check_proof(kind, detail, deps)
            return record_failure(failure, deps)
        tick = Tick.from_wire(detail)
        check_proof(kind, detail, deps)
        return record_tick(tick, deps)
    except (ValidationFailed, ForgedReport) as refused:
        return _rejected(kind, detail, event_id, refused, deps, source)


def _rejected(
    request: str,
    detail: Any,
    event_id: str | None,
    refused: Exception,
    deps: Takes,
    source: str | None = None,
) -> Rejection:
    action_id = detail.get("id") if isinstance(detail, dict) else None
    problems = (
        [p.as_dict() for p in refused.problems] if isinstance(refused, ValidationFailed) else []
    )
    rejection = Rejected(
        action_id=action_id if isinstance(action_id, str) else None,
        request=str(request),
        reason=type(refused).__name__,
        message=str(refused),
        problems=problems,
        event_id=event_id,
        signature=refused.reason if isinstance(refused, SignatureRefused) else None,
        source=source,
    )
    announce_rejected(rejection, deps)
    return Rejection(rejection)
