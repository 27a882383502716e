"""The stack's last rejections: /rejections."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.openapi.params import Query

from tickwork import bootstrap
from tickwork.api.documented import new_router, responses
from tickwork.api.models import Rejections

__all__ = ["router"]

router = new_router()


@router.get(
    "/rejections",
    summary="The Starts, steering events and reports the stack refused, newest first",
    description="What the stack answered with a Schedule Rejected event (nothing was written), "
    "kept for a publisher that does not subscribe to the bus: the last KeepRejections of them "
    "(a template parameter, 100 by default) of each sender (the event's source), so that one "
    "publisher's refusals never push out another's. Each names the request, the action id if "
    "it had one, the event id, the sender, the error and, field by field, the problem and the "
    "fix, every text cut to a bound (and marked so). Requests this API refuses are answered "
    "400 at once and not kept here.",
    responses=responses(200, Rejections, "The newest first", 400),
    tags=["stats"],
)
def get_rejections(
    limit: Annotated[int, Query(ge=1, le=500, description="At most this many.")] = 20,
    source: Annotated[
        str | None,
        Query(min_length=1, max_length=256, description="Only this sender's (its source)."),
    ] = None,
) -> Rejections:
    deps = bootstrap.from_environment()
    return Rejections.model_validate({"rejections": deps.rejections.latest(limit, source)})
