"""Events that arrive on the bus: refusals are answered, not retried.

A Start or Stop that is invalid, locked or names no action, or a tick or failure report that
does not have the fire contract's shape, would fail the same way on every redelivery, so it is
not raised back to EventBridge. It is logged, counted and published as "Schedule Rejected"
(the sender's only way to learn about it on an asynchronous bus), and nothing is written.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from tickwork.dependencies import Dependencies
from tickwork.domain.errors import (
    ActionFinished,
    ActionLocked,
    ActionNotFound,
    ManualFiresInFlight,
    SignatureRefused,
    ValidationFailed,
)
from tickwork.domain.events import DetailType
from tickwork.domain.fire import FireFailure, Tick
from tickwork.domain.start_signature import check_start_signature
from tickwork.usecases.pause import pause_action, resume_action
from tickwork.usecases.record import record_failure, record_tick
from tickwork.usecases.run_now import run_now
from tickwork.usecases.stop import cancel_action

if TYPE_CHECKING:
    from tickwork.usecases.start import StartCommand

__all__ = ["accept_control", "accept_report", "accept_start"]

REFUSALS = (
    ValidationFailed,
    ActionLocked,
    ActionNotFound,
    ActionFinished,
    ManualFiresInFlight,
    SignatureRefused,
)
# The fields each control event's detail may hold beside "id".
_CONTROL_FIELDS = {
    DetailType.STOP: frozenset(),
    DetailType.PAUSE: frozenset({"note"}),
    DetailType.RESUME: frozenset({"note"}),
    DetailType.RUN_NOW: frozenset({"requestId"}),
}


def accept_start(command: StartCommand, deps: Dependencies) -> dict[str, Any]:
    # Here, not at the top: the Stop function imports this module and never parses a Start
    # (the Start request's models bring pydantic).
    from tickwork.usecases.start import start_action

    try:
        secret = deps.secret(deps.settings.start_secret_id)
        if secret is not None:
            unsigned = check_start_signature(command.detail, secret, deps.clock.now())
            command = replace(command, detail=unsigned)
        return start_action(command, deps).as_dict()
    except REFUSALS as refused:
        return _rejected(DetailType.START, command.detail, command.event_id, refused, deps)


def accept_control(
    detail_type: str, detail: dict[str, Any], event_id: str | None, deps: Dependencies
) -> dict[str, Any]:
    """Schedule Stop, Pause, Resume or Run Now: ``{"id": ...}`` and the event's own fields."""
    kind = DetailType(detail_type) if detail_type in _CONTROL_FIELDS else DetailType.STOP
    try:
        action_id = _control_id(kind, detail)
        if kind is DetailType.PAUSE:
            return pause_action(action_id, detail.get("note"), deps)
        if kind is DetailType.RESUME:
            return resume_action(action_id, detail.get("note"), deps)
        if kind is DetailType.RUN_NOW:
            return run_now(action_id, deps, detail.get("requestId") or event_id)
        return cancel_action(action_id, deps)
    except REFUSALS as refused:
        return _rejected(kind, detail, event_id, refused, deps)


def _control_id(kind: DetailType, detail: Any) -> str:
    allowed = _CONTROL_FIELDS[kind]
    shape = ", ".join(f'"{name}"' for name in ("id", *sorted(allowed)))
    if not isinstance(detail, dict) or not isinstance(detail.get("id"), str):
        raise ValidationFailed.of(
            "id", f"a {kind} detail holds {shape}", "send the id of the action as a string"
        )
    unknown = sorted(set(detail) - allowed - {"id"})
    if unknown:
        raise ValidationFailed.of(
            ", ".join(unknown),
            f"is not a field of {kind}",
            f"remove it; a {kind} detail holds {shape}",
        )
    return str(detail["id"])


def accept_report(
    detail_type: str, detail: dict[str, Any], event_id: str | None, deps: Dependencies
) -> dict[str, Any]:
    """A Schedule Tick or Schedule Failed of this stack's state machine: record the fire."""
    try:
        if detail_type == DetailType.FAILED:
            return record_failure(FireFailure.from_wire(detail), deps)
        return record_tick(Tick.from_wire(detail), deps)
    except ValidationFailed as refused:
        kind = DetailType.FAILED if detail_type == DetailType.FAILED else DetailType.TICK
        return _rejected(kind, detail, event_id, refused, deps)


def _rejected(
    kind: DetailType,
    detail: Any,
    event_id: str | None,
    refused: Exception,
    deps: Dependencies,
) -> dict[str, Any]:
    action_id = detail.get("id") if isinstance(detail, dict) else None
    problems = (
        [p.as_dict() for p in refused.problems] if isinstance(refused, ValidationFailed) else []
    )
    rejection = {
        "id": action_id if isinstance(action_id, str) else None,
        "request": str(kind),
        "eventId": event_id,
        "reason": type(refused).__name__,
        **({"signature": refused.reason} if isinstance(refused, SignatureRefused) else {}),
        "message": str(refused),
        "problems": problems,
    }
    deps.publisher.publish(DetailType.REJECTED, rejection)
    return {"outcome": "rejected", **rejection}
