"""Wall clock in an IANA zone: local times that are skipped or repeated across DST.

The rule a wall-clock trigger (cron, DAILY, WEEKLY, MONTHLY) follows is the schedule's
``DstPolicy``. By default, as EventBridge Scheduler does, a local time that does not exist (the
spring-forward gap) is skipped, and a local time that happens twice (the fall-back hour) fires
once, at its first occurrence (``fold=0``). A schedule may ask instead for the last occurrence
of a repeated time or for both, and for a missing time to be shifted forward by the gap (02:30
on a night the clocks go from 02:00 to 03:00 fires at 03:30). Existence is checked by a round
trip through UTC, so no library's own DST handling is trusted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.times import parse_iso_text

__all__ = [
    "DEFAULT_DST",
    "DST_LOOKBACK",
    "ZONE_EXAMPLE",
    "DstPolicy",
    "MissingTime",
    "RepeatedTime",
    "load_zone",
    "local_to_utc",
    "next_transition",
    "parse_local",
    "utc_to_local",
]

# Longer than any DST shift (2 h at most): how far before a moment a trigger looks for a
# repeated local time whose second occurrence may still be to come.
DST_LOOKBACK = timedelta(hours=3)


class RepeatedTime(StrEnum):
    """A local time the fall-back hour repeats fires at its FIRST occurrence, its LAST, or
    BOTH."""

    FIRST = "FIRST"
    LAST = "LAST"
    BOTH = "BOTH"


class MissingTime(StrEnum):
    """A local time the spring-forward gap skips is SKIPped, or SHIFTed forward by the gap."""

    SKIP = "SKIP"
    SHIFT = "SHIFT"


@dataclass(frozen=True)
class DstPolicy:
    repeated: RepeatedTime = RepeatedTime.FIRST
    missing: MissingTime = MissingTime.SKIP

    def instants(self, wall: datetime, zone: ZoneInfo) -> tuple[datetime, ...]:
        """The UTC instants at which the naive local ``wall`` time fires, in order."""
        first = wall.replace(tzinfo=zone, fold=0).astimezone(UTC)
        if first.astimezone(zone).replace(tzinfo=None) != wall.replace(fold=0):
            # In the gap: with fold=0 the offset before the change applies (PEP 495), which is
            # the wall time moved forward by the gap.
            return (first,) if self.missing is MissingTime.SHIFT else ()
        second = wall.replace(tzinfo=zone, fold=1).astimezone(UTC)
        if second == first:
            return (first,)
        if self.repeated is RepeatedTime.LAST:
            return (second,)
        if self.repeated is RepeatedTime.BOTH:
            return (first, second)
        return (first,)

    @property
    def looks_back(self) -> bool:
        """Whether a fire may lie after a moment whose local time is past its wall time (the
        second occurrence of a repeated time)."""
        return self.repeated is not RepeatedTime.FIRST

    def to_dict(self) -> dict[str, str] | None:
        """As stored with the schedule; None at the default."""
        if self == DEFAULT_DST:
            return None
        return {"repeated": str(self.repeated), "missing": str(self.missing)}

    @classmethod
    def from_dict(cls, stored: dict[str, str] | None) -> DstPolicy:
        if not stored:
            return DEFAULT_DST
        return cls(RepeatedTime(stored["repeated"]), MissingTime(stored["missing"]))


DEFAULT_DST = DstPolicy()


def next_transition(zone: ZoneInfo, after: datetime) -> datetime | None:
    """The first instant after ``after`` at which ``zone``'s UTC offset changes (within about
    two years), to the second; None for a zone without DST."""
    step = timedelta(days=1)
    offset = after.astimezone(zone).utcoffset()
    moment = after
    for _ in range(800):
        following = moment + step
        if following.astimezone(zone).utcoffset() != offset:
            low, high = moment, following
            while high - low > timedelta(seconds=1):
                middle = low + (high - low) / 2
                if middle.astimezone(zone).utcoffset() == offset:
                    low = middle
                else:
                    high = middle
            return high.replace(microsecond=0)
        moment = following
    return None


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
