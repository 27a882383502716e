"""EventBridge rate expressions: ``rate(5 minutes)``, ``rate(1 hour)``, ``rate(2 days)``.

tickwork also takes ``second(s)``, which EventBridge does not: Step Functions waits to the
second, and second-scale recurrences are what local runs and tests need.
"""

from __future__ import annotations

import re
from datetime import timedelta

from tickwork.domain.errors import ValidationFailed

__all__ = ["parse_rate"]

_RATE = re.compile(r"rate\(\s*(\d+)\s+([a-z]+)\s*\)", re.IGNORECASE)
_UNITS = {
    "second": timedelta(seconds=1),
    "minute": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
}
_FIX = (
    "write rate(value unit) with unit second(s), minute(s), hour(s) or day(s), "
    'e.g. "rate(5 minutes)"'
)


def parse_rate(text: str, field: str = "rate") -> timedelta:
    """The interval of an EventBridge rate expression.

    Strict like EventBridge, so the same text works there: the unit is singular for a
    value of 1 and plural otherwise; the refusal spells out the corrected expression.
    """
    match = _RATE.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise ValidationFailed.of(field, f"{text!r} is not a rate expression", _FIX)
    value, unit = int(match[1]), match[2].lower()
    singular = unit.removesuffix("s")
    if singular not in _UNITS:
        raise ValidationFailed.of(field, f"{unit!r} is not a rate unit", _FIX)
    if value < 1:
        raise ValidationFailed.of(field, "the value must be at least 1", _FIX)
    wanted = singular if value == 1 else f"{singular}s"
    if unit != wanted:
        raise ValidationFailed.of(
            field,
            f"{unit!r} does not agree with the value {value}",
            f'write "rate({value} {wanted})"',
        )
    return value * _UNITS[singular]
