"""What every route module shares: the documented answers of a route, the action a path
names, and the API's metrics."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.event_handler import content_types
from aws_lambda_powertools.event_handler.router import APIGatewayHttpRouter
from aws_lambda_powertools.metrics import MetricUnit

from tickwork.api.models import ErrorBody
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Action
from tickwork.domain.errors import ActionNotFound
from tickwork.domain.identifiers import check_steered_id
from tickwork.entry import add_metric

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse

__all__ = ["count", "deferred", "found", "new_router", "responses"]

_ERRORS = {
    400: "Invalid input: each problem names the field and the fix.",
    404: "No action has this id.",
    409: "The action's state refuses the request (see the message and fix).",
}
metrics = Metrics()


def responses(
    status: int, model: type, description: str, *codes: int
) -> dict[int, OpenAPIResponse]:
    """The documented answers of a route: its success model and the errors it can give."""
    return {
        status: {
            "description": description,
            "content": {content_types.APPLICATION_JSON: {"model": model}},
        },
        **{
            code: {
                "description": _ERRORS[code],
                "content": {content_types.APPLICATION_JSON: {"model": ErrorBody}},
            }
            for code in codes
        },
    }


def deferred(model: type, what: str) -> dict[int, OpenAPIResponse]:
    """The 202 of a change to a recurrence inside its lock: it applies after the imminent fire."""
    return {
        202: {
            "description": f"Inside the lock: {what} once the imminent fire is recorded",
            "content": {content_types.APPLICATION_JSON: {"model": model}},
        }
    }


def new_router() -> APIGatewayHttpRouter:
    """A router of routes for the API's resolver (Powertools leaves its __init__ untyped)."""
    return APIGatewayHttpRouter()  # type: ignore[no-untyped-call]


def found(action_id: str, deps: Dependencies) -> Action:
    """The action, or refused: an id of the stack's own items (400), none of that id (404)."""
    action = deps.records.get(check_steered_id(action_id))
    if action is None:
        raise ActionNotFound(action_id)
    return action


def count(name: str) -> None:
    add_metric(metrics, name, MetricUnit.Count, 1)
