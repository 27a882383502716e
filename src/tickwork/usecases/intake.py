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
    ActionLocked,
    ActionNotFound,
    SignatureRefused,
    ValidationFailed,
)
from tickwork.domain.events import DetailType
from tickwork.domain.fire import FireFailure, Tick
from tickwork.domain.start_signature import check_start_signature
from tickwork.usecases.record import record_failure, record_tick
from tickwork.usecases.stop import cancel_action

if TYPE_CHECKING:
    from tickwork.usecases.start import StartCommand

__all__ = ["accept_report", "accept_start", "accept_stop"]

REFUSALS = (ValidationFailed, ActionLocked, ActionNotFound, SignatureRefused)


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


def accept_stop(detail: dict[str, Any], event_id: str | None, deps: Dependencies) -> dict[str, Any]:
    action_id = detail.get("id")
    try:
        if not isinstance(action_id, str) or set(detail) != {"id"}:
            raise ValidationFailed.of(
                "id",
                'a Stop detail is exactly {"id": "<action id>"}',
                "send the id of the action to cancel",
            )
        return cancel_action(action_id, deps)
    except REFUSALS as refused:
        return _rejected(DetailType.STOP, detail, event_id, refused, deps)


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
