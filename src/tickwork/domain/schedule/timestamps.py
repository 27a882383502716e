"""Instants as tickwork stores and reads them: aware UTC, ISO 8601 with a ``Z``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule.wallclock import local_to_utc

__all__ = ["format_utc", "from_epoch_ms", "parse_iso", "parse_utc", "require_utc"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ISO_EXAMPLE = '"2026-05-01T09:00:00Z" or "2026-05-01T17:00:00+08:00"'
# Epoch milliseconds below this (1973-03-03) are almost surely epoch seconds.
_SMALLEST_MILLIS = 100_000_000_000


def require_utc(value: datetime, field: str) -> datetime:
    """``value`` as UTC; refused when it is naive (its instant would be a guess)."""
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise ValidationFailed.of(
            field, "must be a timezone-aware datetime", f"give an instant such as {_ISO_EXAMPLE}"
        )
    return value.astimezone(UTC)


def format_utc(value: datetime) -> str:
    """ISO 8601 in UTC with a ``Z``; microseconds kept when there are any."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def parse_utc(text: str, field: str) -> datetime:
    """An ISO 8601 instant with an offset, as UTC."""
    value = _fromisoformat(text, field)
    return require_utc(value, field)


def parse_iso(text: str, zone: ZoneInfo, field: str) -> datetime:
    """An ISO 8601 time as UTC; a naive time is a wall time in ``zone``."""
    value = _fromisoformat(text, field)
    if value.utcoffset() is not None:
        return value.astimezone(UTC)
    instant = local_to_utc(value, zone)
    if instant is None:
        raise ValidationFailed.of(
            field,
            f"{text!r} does not exist in {zone.key}: the clocks skip it",
            "give a time outside the daylight-saving gap, or one with an offset",
        )
    return instant


def from_epoch_ms(millis: int, field: str) -> datetime:
    """An instant from epoch milliseconds; refused when it looks like epoch seconds."""
    if millis < _SMALLEST_MILLIS:
        raise ValidationFailed.of(
            field,
            f"{millis} is before 1973 in epoch milliseconds (epoch seconds?)",
            "give epoch milliseconds, e.g. seconds * 1000 such as 1767254400000",
        )
    try:
        return _EPOCH + timedelta(milliseconds=millis)
    except OverflowError as error:
        raise ValidationFailed.of(
            field, f"{millis} is out of range", "give epoch milliseconds such as 1767254400000"
        ) from error


def _fromisoformat(text: str, field: str) -> datetime:
    try:
        return datetime.fromisoformat(text.strip())
    except (AttributeError, ValueError) as error:
        raise ValidationFailed.of(
            field,
            f"{text!r} is not an ISO 8601 time",
            f"give an ISO 8601 time such as {_ISO_EXAMPLE}",
        ) from error
