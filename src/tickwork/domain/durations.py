"""Durations as people write them: "90s", "5m", "1h30m", "2d", "1w", or ISO 8601 "PT5M"."""

from __future__ import annotations

import json
import re
from datetime import timedelta

from tickwork.domain.errors import ValidationFailed

__all__ = ["MAX_DURATION", "parse_duration"]

MAX_DURATION = timedelta(days=36_500)
_MOST_DIGITS = len(str(int(MAX_DURATION.total_seconds())))
_FIX = (
    'write whole numbers with units w, d, h, m, s such as "90s", "5m", "1h30m", "2d", '
    'or ISO 8601 such as "PT5M", "P1DT2H"'
)
_SHORT = re.compile(
    r"(?:(\d+)\s*w)?\s*(?:(\d+)\s*d)?\s*(?:(\d+)\s*h)?\s*(?:(\d+)\s*m)?\s*(?:(\d+)\s*s)?",
    re.IGNORECASE | re.ASCII,  # ASCII digits only: Arabic-Indic "10s" is not 10 s
)
_ISO = re.compile(
    r"P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?", re.IGNORECASE | re.ASCII
)
_ISO_CALENDAR = re.compile(r"P\d+[YM]", re.IGNORECASE | re.ASCII)
_SHORT_CALENDAR = re.compile(  # "100y", "3 months", "1y2d": a unit whose length varies
    r"\d\s*(?:y|yrs?|years?|mo|mos|months?)(?![a-z])", re.IGNORECASE | re.ASCII
)


def parse_duration(text: str, field: str) -> timedelta:
    """The positive duration ``text`` names; refused naming ``field`` otherwise.

    Whole numbers only ("PT1.5S" is refused, the message says so); ISO years and months
    are refused because their length varies; zero, negative and over 100 years too.
    """
    if not isinstance(text, str):
        raise ValidationFailed.of(  # shown as it was sent: null, true, ["1d"]
            field, f"{json.dumps(text, default=str)} is not a duration string", _FIX
        )
    cleaned = text.strip()
    if re.match(r"-\s*[0-9P]", cleaned, re.IGNORECASE | re.ASCII):
        raise ValidationFailed.of(
            field, f"{text!r} is negative", f"give a positive duration; {_FIX}"
        )
    if re.search(r"\d[.,]\d", cleaned, re.ASCII):
        raise ValidationFailed.of(
            field, f"{text!r} has a fraction; only whole numbers are accepted", _FIX
        )
    match = _ISO.fullmatch(cleaned) or _SHORT.fullmatch(cleaned)
    if match is None or not any(match.groups()) or cleaned.upper().endswith("T"):
        if _ISO_CALENDAR.match(cleaned) or _SHORT_CALENDAR.search(cleaned):
            raise ValidationFailed.of(
                field,
                f"{text!r} uses years or months, whose length varies",
                'give days or weeks such as "365d", "P30D" or "4w" (to repeat monthly, '
                'schedule frequency "MONTHLY" or a cron)',
            )
        raise ValidationFailed.of(field, f"{text!r} is not a duration", _FIX)
    # Range-checked before arithmetic: no part of a duration of 100 years has over 10 digits.
    if any(len((group or "").lstrip("0")) > _MOST_DIGITS for group in match.groups()):
        raise _too_long(text, field)
    weeks, days, hours, minutes, seconds = (int(group or 0) for group in match.groups())
    total = (((weeks * 7 + days) * 24 + hours) * 60 + minutes) * 60 + seconds
    if total == 0:
        raise ValidationFailed.of(
            field, f"{text!r} is zero", f"give a duration longer than zero; {_FIX}"
        )
    if total > MAX_DURATION.total_seconds():
        raise _too_long(text, field)
    return timedelta(seconds=total)


def _too_long(text: str, field: str) -> ValidationFailed:
    shown = text if len(text) <= 40 else f"{text[:40]}…"
    return ValidationFailed.of(
        field, f"{shown!r} is longer than 100 years", "give a duration of at most 100 years"
    )
