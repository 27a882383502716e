"""One occurrence of a recurrence: list the coming ones with their skips and moves, skip one,
move one, or undo that — the schedule itself untouched; and backfill a past range of them."""

from __future__ import annotations

from http import HTTPStatus
from typing import Annotated
from urllib.parse import unquote

from aws_lambda_powertools.event_handler.openapi.params import Query

from tickwork import bootstrap
from tickwork.api.documented import count as tally
from tickwork.api.documented import found, new_router, responses
from tickwork.api.models import (
    BackfillRequest,
    BackfillResult,
    ChangeResult,
    MoveRequest,
    OccurrenceList,
    OccurrenceRequest,
    OccurrenceView,
)
from tickwork.domain.action.upcoming import upcoming
from tickwork.domain.times import iso
from tickwork.steering.backfill import backfill
from tickwork.steering.occurrences import (
    Which,
    move_occurrence,
    restore_occurrence,
    skip_occurrence,
)

__all__ = ["router"]

router = new_router()
_LOCKED = (
    " Inside the lock before the imminent occurrence (or while it fires) it happens as "
    "planned: a skip or move of it is refused (409), as a one-off's change is. A one-off or "
    "a finished action is refused (409)."
)


def _which(body: OccurrenceRequest) -> Which:
    return Which(number=body.occurrence, at=body.at)


@router.get(
    "/actions/<id>/occurrences",
    summary="List an action's coming occurrences",
    description="Its next occurrences from the one its record is at: number, scheduled time, "
    "when each fires, and which are skipped or moved by request.",
    responses=responses(200, OccurrenceList, "The coming occurrences", 400, 404),
    tags=["occurrences"],
)
def list_occurrences(
    id: str,
    count: Annotated[int, Query(ge=1, le=100, description="How many (1-100).")] = 10,
) -> OccurrenceList:
    action = found(unquote(id), bootstrap.from_environment())
    views = [
        OccurrenceView(
            occurrence=item.number,
            scheduled_time=iso(item.scheduled),
            fires_at=None if item.fires_at is None else iso(item.fires_at),
            skipped=item.fires_at is None,
            moved=item.change is not None and item.change.to is not None,
            note=item.change.note if item.change else None,
        )
        for item in upcoming(action, count)
    ]
    return OccurrenceList(id=action.id, status=action.status, occurrences=views)


@router.post(
    "/actions/<id>/backfill",
    status_code=HTTPStatus.ACCEPTED,
    summary="Backfill a past range",
    description="Runs each occurrence the schedule has from `startTime` to `endTime` (both "
    "inclusive, both past) now, once: as a fire recorded BACKFILL whose tick carries the "
    "occurrence's own scheduled time and an idempotency key of its own. A few run at a time; "
    "each one recorded runs the next, so a long range goes on by itself (GET /actions/{id} "
    "shows `backfill` while it runs). Occurrences backfilled before never run again; those of "
    "the action's own schedule (at or after its creation) are refused (409) or skipped, as "
    "`overlap` says. Asked again for the same range, it goes on where it is; another range "
    "waits until this one is done (400). A one-off or a finished action is refused (409).",
    responses=responses(202, BackfillResult, "Backfilling", 400, 404, 409),
    tags=["occurrences"],
)
def backfill_range(id: str, body: BackfillRequest) -> BackfillResult:
    deps = bootstrap.from_environment()
    result = backfill(
        unquote(id),
        body.start_time,
        body.end_time,
        body.overlap,
        deps,
        request_id=body.request_id,
        note=body.note,
    )
    tally(f"backfill_{result.outcome}")
    return BackfillResult.model_validate(result.to_wire())


@router.post(
    "/actions/<id>/occurrences/skip",
    summary="Skip one occurrence",
    description="The occurrence (by number or by its scheduled time) does not run: it is "
    "recorded SKIPPED at its time (a Schedule Skipped event with the note) and the schedule "
    "goes on. With executionRemainder it still counts as one of the fires." + _LOCKED,
    responses=responses(200, ChangeResult, "Skipped", 400, 404, 409),
    tags=["occurrences"],
)
def skip(id: str, body: OccurrenceRequest) -> ChangeResult:
    result = skip_occurrence(unquote(id), _which(body), body.note, bootstrap.from_environment())
    tally(f"skip_{result.outcome}")
    return ChangeResult.model_validate(result.to_wire())


@router.post(
    "/actions/<id>/occurrences/move",
    summary="Move one occurrence to another time",
    description="The occurrence fires at `to` instead: in the future, strictly between the "
    "occurrences before and after it, so the next one still fires where the schedule has it."
    + _LOCKED,
    responses=responses(200, ChangeResult, "Moved", 400, 404, 409),
    tags=["occurrences"],
)
def move(id: str, body: MoveRequest) -> ChangeResult:
    deps = bootstrap.from_environment()
    result = move_occurrence(unquote(id), _which(body), body.to, body.note, deps)
    tally(f"move_{result.outcome}")
    return ChangeResult.model_validate(result.to_wire())


@router.post(
    "/actions/<id>/occurrences/restore",
    summary="Undo the skip or move of one occurrence",
    description="The occurrence fires as its schedule says again." + _LOCKED,
    responses=responses(200, ChangeResult, "Restored", 400, 404, 409),
    tags=["occurrences"],
)
def restore(id: str, body: OccurrenceRequest) -> ChangeResult:
    deps = bootstrap.from_environment()
    result = restore_occurrence(unquote(id), _which(body), body.note, deps)
    tally(f"restore_{result.outcome}")
    return ChangeResult.model_validate(result.to_wire())
