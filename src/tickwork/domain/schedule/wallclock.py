"""Wall clock in an IANA zone: local times that are skipped or repeated across DST.

The rule every trigger follows: a local time that does not exist (the spring-forward
gap) is skipped, and a local time that happens twice (the fall-back hour) fires once,
at its first occurrence (``fold=0``). Existence is checked by a round trip through UTC,
so no library's own DST handling is trusted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.times import parse_iso_text

__all__ = ["ZONE_EXAMPLE", "load_zone", "local_to_utc", "parse_local", "utc_to_local"]

ZONE_EXAMPLE = '"Europe/London" or "Asia/Kuala_Lumpur"'


def load_zone(name: str, field: str = "timezone") -> ZoneInfo:
    """The IANA zone called ``name``; refused naming ``field`` when there is none."""
    if not isinstance(name, str) or not name.strip():
        raise ValidationFailed.of(field, "is empty", f"give an IANA zone such as {ZONE_EXAMPLE}")
    try:
        return ZoneInfo(name)
    # OSError: a tzdata folder such as "America" is not a zone, and opening it raises one.
    except (ZoneInfoNotFoundError, ValueError, OSError) as error:
        raise ValidationFailed.of(
            field,
            f"{name!r} is not an IANA time zone",
            f"give an IANA zone such as {ZONE_EXAMPLE}",
        ) from error


def local_to_utc(wall: datetime, zone: ZoneInfo) -> datetime | None:
    """The UTC instant of the naive local ``wall`` time; None when DST skips it.

    A repeated wall time maps to its first occurrence (``fold=0``).
    """
    instant = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) != wall.replace(fold=0):
        return None
    return instant


def utc_to_local(instant: datetime, zone: ZoneInfo) -> datetime:
    """The naive local wall time of an aware ``instant`` (``fold`` cleared)."""
    return instant.astimezone(zone).replace(tzinfo=None, fold=0)


def parse_local(text: str, zone: ZoneInfo, field: str) -> datetime:
    """An ISO 8601 time as UTC; a naive time is a wall time in ``zone``."""
    value = parse_iso_text(text, field)
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
