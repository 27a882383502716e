"""Instants as tickwork writes and reads them: aware UTC inside, text or numbers at the edges.

Two text forms, each with one job:

- ``iso``: ISO 8601 UTC with milliseconds and a ``Z`` ("2026-05-01T09:00:00.120Z"), rounded
  *up* to the millisecond so a written fire time is never earlier than the computed one. The
  form of every time on the wire (execution input, events, API answers) and in records.
- ``iso_exact``: ISO 8601 UTC with a ``Z`` that keeps microseconds when there are any
  ("2026-05-01T09:00:00Z"). The form of a schedule's stored instants (its anchor and bounds),
  which must read back to the very instant they were computed from, and of previews.

``parse_iso`` reads either (any ISO 8601 instant with an offset); ``parse_epoch_ms`` reads a
user's epoch milliseconds, refusing what looks like epoch seconds. Naive local times are read
in ``wallclock.parse_local``. Pure: nothing here reads a clock.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tickwork.domain.errors import ValidationFailed

__all__ = [
    "ISO_EXAMPLE",
    "ceil_ms",
    "from_epoch_ms",
    "iso",
    "iso_exact",
    "parse_epoch_ms",
    "parse_iso",
    "parse_iso_text",
    "require_utc",
    "to_epoch_ms",
]

ISO_EXAMPLE = '"2026-05-01T09:00:00Z" or "2026-05-01T17:00:00+08:00"'
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Epoch milliseconds below this (1973-03-03) are almost surely epoch seconds.
_SMALLEST_MILLIS = 100_000_000_000


def ceil_ms(moment: datetime) -> datetime:
    micro = moment.microsecond % 1000
    return moment if micro == 0 else moment + timedelta(microseconds=1000 - micro)


def ceil_second(moment: datetime) -> datetime:
    """The whole second at or after ``moment``."""
    if moment.microsecond == 0:
        return moment
    return moment.replace(microsecond=0) + timedelta(seconds=1)


def to_epoch_ms(moment: datetime) -> int:
    delta = ceil_ms(moment) - _EPOCH
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


def from_epoch_ms(value: int) -> datetime:
    """The instant of epoch milliseconds that tickwork itself wrote (records, the wire)."""
    return _EPOCH + timedelta(milliseconds=int(value))


def parse_epoch_ms(millis: int, field: str) -> datetime:
    """A user's epoch milliseconds; refused naming ``field`` when it looks like seconds."""
    if millis < _SMALLEST_MILLIS:
        raise ValidationFailed.of(
            field,
            f"{millis} is before 1973 in epoch milliseconds (epoch seconds?)",
            "give epoch milliseconds, e.g. seconds * 1000 such as 1767254400000",
        )
    try:
        return from_epoch_ms(millis)
    except OverflowError as error:
        raise ValidationFailed.of(
            field, f"{millis} is out of range", "give epoch milliseconds such as 1767254400000"
        ) from error


def iso(moment: datetime) -> str:
    """UTC ISO 8601 with milliseconds and a Z: the wire form of a time."""
    utc = ceil_ms(moment).astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def iso_exact(moment: datetime) -> str:
    """UTC ISO 8601 with a Z, microseconds kept when there are any: a stored instant."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def require_utc(value: datetime, field: str) -> datetime:
    """``value`` as UTC; refused when it is naive (its instant would be a guess)."""
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise ValidationFailed.of(
            field, "must be a timezone-aware datetime", f"give an instant such as {ISO_EXAMPLE}"
        )
    try:
        return value.astimezone(UTC)
    except OverflowError as error:  # year 1 or 9999 with an offset that leaves the calendar
        raise ValidationFailed.of(
            field,
            f"{value.isoformat()} falls outside the years 1 to 9999 in UTC",
            f"give an instant such as {ISO_EXAMPLE}",
        ) from error


def parse_iso(text: str, field: str = "time") -> datetime:
    """An ISO 8601 instant with an offset (or Z), as aware UTC; refused naming ``field``."""
    return require_utc(parse_iso_text(text, field), field)


def parse_iso_text(text: str, field: str) -> datetime:
    """``datetime.fromisoformat`` of ``text``, naive or aware; refused naming ``field``."""
    try:
        return datetime.fromisoformat(text.strip())
    except (AttributeError, ValueError) as error:
        raise ValidationFailed.of(
            field,
            f"{text!r} is not an ISO 8601 time",
            f"give an ISO 8601 time such as {ISO_EXAMPLE}",
        ) from error
