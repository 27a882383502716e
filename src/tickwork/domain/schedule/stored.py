"""A schedule as JSON (stored in DynamoDB): camelCase keys, UTC instants with a ``Z``."""

from __future__ import annotations

from typing import Any

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule.calendar import CalendarUse
from tickwork.domain.schedule.shape import ScheduleFields
from tickwork.domain.schedule.wallclock import DstPolicy
from tickwork.domain.schedule.window import FireWindow
from tickwork.domain.times import iso_exact, parse_iso

__all__ = ["fields_from_stored", "to_stored"]

_INSTANTS = ("anchor", "start", "end")
_KEYS = frozenset(
    {"kind", "expression", "timezone", "maxOccurrences", "dst", "window", "calendar", *_INSTANTS}
)


def to_stored(schedule: ScheduleFields) -> dict[str, Any]:
    """The JSON-ready dict; absent values are left out."""
    stored: dict[str, Any] = {"kind": str(schedule.kind), "timezone": schedule.timezone}
    if schedule.expression is not None:
        stored["expression"] = schedule.expression
    for name in _INSTANTS:
        value = getattr(schedule, name)
        if value is not None:
            stored[name] = iso_exact(value)
    if schedule.max_occurrences is not None:
        stored["maxOccurrences"] = schedule.max_occurrences
    dst = schedule.dst.to_dict()
    if dst is not None:  # left out at the default: records and seals written before read alike
        stored["dst"] = dst
    if schedule.window is not None:  # left out without one, as dst is
        stored["window"] = schedule.window.to_dict()
    if schedule.calendar is not None:  # with the snapshot the record holds, under its seal
        stored["calendar"] = schedule.calendar.to_dict()
    return stored


def fields_from_stored(stored: dict[str, Any]) -> dict[str, Any]:
    """The Schedule constructor's arguments from a dict ``to_stored`` wrote."""
    unknown = set(stored) - _KEYS
    if unknown or "kind" not in stored:
        raise ValidationFailed.of(
            ", ".join(sorted(unknown)) or "kind",
            "is not part of a stored schedule" if unknown else "is missing",
            "store the dict that Schedule.to_dict() returns",
        )
    instants = {name: parse_iso(stored[name], name) for name in _INSTANTS if name in stored}
    return {
        "kind": stored["kind"],
        "expression": stored.get("expression"),
        "timezone": stored.get("timezone", "UTC"),
        "max_occurrences": stored.get("maxOccurrences"),
        "dst": DstPolicy.from_dict(stored.get("dst")),
        "window": FireWindow.from_dict(stored.get("window")),
        "calendar": CalendarUse.from_dict(stored.get("calendar")),
        **instants,
    }
