"""When a scheduled action fires, as typed values that become a Start detail's "when" fields.

``schedule(when=...)`` takes any of these:

- a ``datetime``: one fire at that instant (``at``); a naive one is read in ``timezone``;
- a ``timedelta``: one fire that long after the stack receives the Start (``delay``);
- ``at(moment)``: the same as a datetime, or EventBridge Scheduler's ``at(2030-11-20T13:00:00)``;
- ``cron("30 9 * * MON-FRI")`` or ``cron("cron(30 9 ? * MON-FRI *)")``;
- ``rate("5 minutes")``, ``rate("rate(5 minutes)")`` or ``rate(timedelta(minutes=5))``;
- ``every("DAILY", first=datetime(...))``: a frequency preset (TEN_MINS, HOURLY, DAILY,
  WEEKLY, MONTHLY) from its first time;
- a string: any expression ``tickwork next`` takes (``"rate(1 hour)"``, ``"90s"``, a 5-field
  cron, an ISO 8601 time).

How many times a recurring action fires is ``count=`` here or ``times=`` on ``schedule``
(``executionRemainder``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.preview import when_detail

__all__ = ["When", "at", "cron", "every", "rate", "when_fields"]

_UNITS = ((86_400, "day"), (3_600, "hour"), (60, "minute"), (1, "second"))


@dataclass(frozen=True)
class When:
    """The Start detail's "when" fields (exactly one of them, with a frequency's first time)."""

    fields: dict[str, Any] = field(default_factory=dict)
    naive: bool = False  # made from a datetime without a zone: schedule() wants timezone=


def _iso(moment: datetime) -> str:
    text = moment.isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def at(moment: datetime | str) -> When:
    """One fire at ``moment``: a datetime, an ISO 8601 text or ``at(yyyy-mm-ddThh:mm:ss)``."""
    if isinstance(moment, datetime):
        return When({"at": _iso(moment)}, naive=moment.tzinfo is None)
    return When({"at": moment})


def cron(expression: str, count: int | None = None) -> When:
    """A cron: 5 fields (``"30 9 * * MON-FRI"``) or EventBridge's ``cron(m h dom mon dow y)``;
    ``count`` fires at most."""
    return When(_counted({"cron": expression}, count))


def rate(every_: str | timedelta, count: int | None = None) -> When:
    """A fixed rate: ``"5 minutes"``, ``"rate(5 minutes)"`` or a timedelta of whole seconds;
    ``count`` fires at most."""
    if isinstance(every_, timedelta):
        return When(_counted({"rate": f"rate({_rate_text(every_)})"}, count))
    text = every_.strip()
    expression = text if text.lower().startswith("rate(") else f"rate({text})"
    return When(_counted({"rate": expression}, count))


def every(preset: str, first: datetime | str | None = None, count: int | None = None) -> When:
    """A frequency preset (TEN_MINS, HOURLY, DAILY, WEEKLY, MONTHLY), from ``first``;
    ``count`` fires at most (the seed's ``executionRemainder``)."""
    fields: dict[str, Any] = {"frequency": preset.upper()}
    if first is not None:
        fields["at"] = _iso(first) if isinstance(first, datetime) else first
    naive = isinstance(first, datetime) and first.tzinfo is None
    return When(_counted(fields, count), naive=naive)


def _counted(fields: dict[str, Any], count: int | None) -> dict[str, Any]:
    return fields if count is None else {**fields, "executionRemainder": count}


def when_fields(when: When | datetime | timedelta | str) -> dict[str, Any]:
    """The Start detail's "when" fields of any accepted form."""
    if isinstance(when, When):
        return dict(when.fields)
    if isinstance(when, datetime):
        return at(when).fields  # a naive one: read in the Start's timezone (schedule() asks it)
    if isinstance(when, timedelta):
        return {"delay": f"{_whole_seconds(when, 'when')}s"}
    if isinstance(when, str):
        return when_detail(when)
    raise ValidationFailed.of(
        "when",
        f"{type(when).__name__} is not a time",
        "give a datetime, a timedelta, at(...), cron(...), rate(...), every(...) or an "
        "expression such as 'rate(5 minutes)'",
    )


def _whole_seconds(span: timedelta, name: str) -> int:
    seconds = span.total_seconds()
    if seconds <= 0 or seconds != int(seconds):
        raise ValidationFailed.of(
            name, f"{span} is not a positive whole number of seconds", "round it to the second"
        )
    return int(seconds)


def _rate_text(span: timedelta) -> str:
    seconds = _whole_seconds(span, "rate")
    for size, unit in _UNITS:
        if seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    raise AssertionError("a whole number of seconds always divides by one")
