"""The few conversions between instants and the text/number forms tickwork writes.

Fire times are kept at millisecond precision (the seed schema's ``executionTime`` is epoch
milliseconds); rounding is always *up*, so a stored fire time is never earlier than the
computed one.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = [
    "ceil_ms",
    "from_epoch_ms",
    "iso",
    "parse_iso",
    "to_epoch_ms",
]


def ceil_ms(moment: datetime) -> datetime:
    micro = moment.microsecond % 1000
    return moment if micro == 0 else moment + timedelta(microseconds=1000 - micro)


def to_epoch_ms(moment: datetime) -> int:
    delta = ceil_ms(moment) - datetime(1970, 1, 1, tzinfo=UTC)
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


def from_epoch_ms(value: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=int(value))


def iso(moment: datetime) -> str:
    """UTC ISO 8601 with milliseconds and a Z: the one text form of a time tickwork writes."""
    utc = ceil_ms(moment).astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_iso(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no zone offset")
    return moment.astimezone(UTC)
