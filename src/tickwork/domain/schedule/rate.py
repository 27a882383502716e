"""EventBridge rate expressions: ``rate(5 minutes)``, ``rate(1 hour)``, ``rate(2 days)``.

tickwork also takes ``second(s)``, which EventBridge does not: Step Functions waits to the
second, and second-scale recurrences are what local runs and tests need.
"""

from __future__ import annotations

import re
from datetime import timedelta

from tickwork.domain.errors import ValidationFailed

__all__ = ["MAX_RATE", "parse_rate"]

# A rate's first fire is one interval away, and a first fire more than ten years away is
# refused (start_request.MAX_HORIZON): no longer rate could ever be scheduled.
MAX_RATE = timedelta(days=3_653)

_RATE = re.compile(r"rate\(\s*([0-9]+)\s+([a-z]+)\s*\)", re.IGNORECASE)
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
    digits, unit = match[1].lstrip("0") or "0", match[2].lower()
    singular = unit.removesuffix("s")
    if singular not in _UNITS:
        raise ValidationFailed.of(field, f"{unit!r} is not a rate unit", _FIX)
    # Range-checked before any arithmetic: a value of any length is refused, not overflowed.
    most = MAX_RATE // _UNITS[singular]
    if len(digits) > len(str(most)) or int(digits) > most:
        raise ValidationFailed.of(
            field,
            f"{digits[:20]}{'…' if len(digits) > 20 else ''} {unit} is longer than ten years",
            f"give at most rate({most} {singular}s)",
        )
    value = int(digits)
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
