"""The steering events on the bus — Schedule Stop, Pause, Resume, Run Now, Skip, Move and Restore
Occurrence, Backfill — each detail declared: ``{"id": ...}`` and the event's own fields, nothing
else. ``read_control(kind, detail)`` reads one, or refuses it naming every bad field and its fix.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, PlainValidator

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.events import DetailType
from tickwork.domain.identifiers import check_steered_id
from tickwork.domain.steering import check_note
from tickwork.domain.times import parse_iso
from tickwork.domain.wire import read, refusal

__all__ = [
    "BackfillDetail",
    "ControlDetail",
    "MoveDetail",
    "OccurrenceDetail",
    "PauseDetail",
    "RunNowDetail",
    "StopDetail",
    "read_control",
]

_TIME_FIX = 'give ISO 8601, e.g. "...Z"'


def _action_id(value: Any) -> str:
    if not isinstance(value, str):
        raise refusal(f"{value!r} is not an action id", "send the id of the action as a string")
    try:
        return check_steered_id(value)
    except ValidationFailed as refused:
        raise refusal(refused.problems[0].problem, refused.problems[0].fix) from refused


def _note(value: Any) -> str | None:
    try:
        return check_note(value)
    except ValidationFailed as refused:
        raise refusal(refused.problems[0].problem, refused.problems[0].fix) from refused


def _request_id(value: Any) -> str | None:
    try:
        return check_note(value, "requestId")
    except ValidationFailed as refused:
        raise refusal(refused.problems[0].problem, refused.problems[0].fix) from refused


def _moment(value: Any) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise refusal(f"{value!r} is not a time", _TIME_FIX)
    try:
        return parse_iso(value, "")
    except ValidationFailed as refused:
        raise refusal(refused.problems[0].problem, refused.problems[0].fix) from refused


def _required_moment(value: Any) -> datetime:
    """A time the event must give: null is as good as missing."""
    moment = _moment(value)
    if moment is None:
        raise refusal("is missing", 'give an ISO 8601 time, e.g. "...Z"')
    return moment


def _number(value: Any) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise refusal(f"{value!r} is not a number", "give 1 or more")
    return value


def _policy(value: Any) -> str:
    if not isinstance(value, str):
        raise refusal(f"{value!r} is not a policy", "give REFUSE or SKIP")
    return value


_Id = Annotated[str, PlainValidator(_action_id)]
_Note = Annotated[str | None, PlainValidator(_note)]
_RequestId = Annotated[str | None, PlainValidator(_request_id)]
_Moment = Annotated[datetime | None, PlainValidator(_moment)]
_Number = Annotated[int | None, PlainValidator(_number)]


class ControlDetail(BaseModel):
    """A steering event's detail: the id of the action it steers."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
    # the fix of a field left out, by name (one not named here: "add it")
    missing: ClassVar[dict[str, str]] = {"id": "send the id of the action as a string"}

    action_id: _Id = Field(alias="id")


class StopDetail(ControlDetail):
    pass


class PauseDetail(ControlDetail):
    """A Pause or a Resume: why, optionally."""

    note: _Note = None


class RunNowDetail(ControlDetail):
    request_id: _RequestId = Field(default=None, alias="requestId")


class OccurrenceDetail(ControlDetail):
    """A Skip or Restore Occurrence: the occurrence by its number or its scheduled time."""

    occurrence: _Number = None
    at: _Moment = None
    note: _Note = None


class MoveDetail(OccurrenceDetail):
    missing: ClassVar[dict[str, str]] = {
        **ControlDetail.missing,
        "to": 'give the time it fires instead, e.g. "...Z"',
    }

    to: Annotated[datetime, PlainValidator(_required_moment)]


class BackfillDetail(ControlDetail):
    missing: ClassVar[dict[str, str]] = {
        **ControlDetail.missing,
        "startTime": 'give an ISO 8601 time, e.g. "...Z"',
        "endTime": 'give an ISO 8601 time, e.g. "...Z"',
    }

    start_time: Annotated[datetime, PlainValidator(_required_moment)] = Field(alias="startTime")
    end_time: Annotated[datetime, PlainValidator(_required_moment)] = Field(alias="endTime")
    overlap: Annotated[str, PlainValidator(_policy)] = "REFUSE"
    request_id: _RequestId = Field(default=None, alias="requestId")
    note: _Note = None


DETAILS: dict[DetailType, type[ControlDetail]] = {
    DetailType.STOP: StopDetail,
    DetailType.PAUSE: PauseDetail,
    DetailType.RESUME: PauseDetail,
    DetailType.RUN_NOW: RunNowDetail,
    DetailType.SKIP_OCCURRENCE: OccurrenceDetail,
    DetailType.MOVE_OCCURRENCE: MoveDetail,
    DetailType.RESTORE_OCCURRENCE: OccurrenceDetail,
    DetailType.BACKFILL: BackfillDetail,
}


def read_control(kind: DetailType, detail: Any) -> ControlDetail:
    """The detail of the steering event ``kind``, declared; or ``ValidationFailed`` naming each
    bad field, its problem and its fix."""
    model = DETAILS[kind]
    shape = ", ".join(f'"{field.alias or name}"' for name, field in model.model_fields.items())
    return read(
        model,
        detail,
        "",
        not_object=(f"a {kind} detail holds {shape}", "send the detail as a JSON object"),
        missing_fix=lambda path: model.missing.get(path, "add it"),
        unknown=lambda path: (
            f"is not a field of {kind}",
            f"remove it; a {kind} detail holds {shape}",
        ),
    )
