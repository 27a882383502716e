"""What every store and bus on a fire's way can hold: refused by field before anything is
written, in the stack and in the publisher client alike.

JSON and Python take numbers and strings DynamoDB cannot: a number of more than 38
significant digits, or beyond 1E+125 or under 1E-130 in magnitude (``1e200``, ``1e-200``, a
41-digit integer), and a string with a lone surrogate (``"\\ud800"``), which has no UTF-8 form.
Accepted, they would reach the table only at a fire's first write: a 502 on the API, a Start
dead-lettered on the bus. ``storable_problems`` names each such value by its place.

Pure.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from tickwork.domain.errors import FieldProblem

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "storable_problems"]

MAX_DIGITS = 38  # DynamoDB numbers: 38 significant digits
# DynamoDB nests maps and lists 32 levels deep; a record holds the data inside its Start
# (``request``) and a waiting change (``deferred``): the data keeps 8 levels clear of it.
MAX_DEPTH = 24
_LARGEST_EXPONENT = 125  # magnitudes up to 9.99...E+125
_SMALLEST_EXPONENT = -130  # and down to 1E-130
_NUMBER_FIX = (
    "give a number DynamoDB can hold (at most 38 significant digits, between 1E-130 and "
    "1E+125 in magnitude), or send it as a string"
)


def storable_problems(value: Any, path: str, limit: int = 10) -> list[FieldProblem]:
    """Every place inside ``value`` (at ``path``) that DynamoDB cannot store, at most
    ``limit`` of them."""
    problems: list[FieldProblem] = []
    _walk(value, path, problems, limit, 0)
    return problems


def _walk(value: Any, path: str, problems: list[FieldProblem], limit: int, depth: int) -> None:
    if len(problems) >= limit:
        return
    if depth > MAX_DEPTH and isinstance(value, dict | list | tuple):
        problems.append(
            FieldProblem(
                path,
                f"nests objects and lists more than {MAX_DEPTH} levels deep",
                f"keep it at most {MAX_DEPTH} levels deep (DynamoDB holds 32, and tickwork "
                "keeps the data inside the record's own fields), or send the deep part as a "
                "JSON string",
            )
        )
        return
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float | Decimal):
        problem = _number_problem(value)
        if problem is not None:
            problems.append(FieldProblem(path, problem, _NUMBER_FIX))
    elif isinstance(value, str):
        problem = _text_problem(value)
        if problem is not None:
            problems.append(FieldProblem(path, problem, "give text that is valid Unicode"))
    elif isinstance(value, dict):
        for key, item in value.items():
            key_problem = _text_problem(str(key))
            place = f"{path}.{key if key_problem is None else ascii(key)}"
            if key_problem is not None:
                problems.append(FieldProblem(place, f"key {key_problem}", "rename it"))
            _walk(item, place, problems, limit, depth + 1)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _walk(item, f"{path}.{index}", problems, limit, depth + 1)


def _number_problem(value: int | float | Decimal) -> str | None:
    try:
        number = Decimal(str(value)) if isinstance(value, float) else Decimal(value)
    except (InvalidOperation, ValueError):
        return f"{value!r} is not a finite number"
    if not number.is_finite():
        return f"{value!r} is not a finite number"
    if number.is_zero():
        return None
    digits = len(number.as_tuple().digits)  # as boto3 sends it: trailing zeros count
    if digits > MAX_DIGITS:
        return f"has {digits} digits, over the {MAX_DIGITS} a DynamoDB number holds"
    exponent = number.adjusted()
    if exponent > _LARGEST_EXPONENT:
        return f"{_short(number)} is beyond 1E+126 in magnitude, over DynamoDB's largest number"
    if exponent < _SMALLEST_EXPONENT:
        return f"{_short(number)} is under 1E-130 in magnitude, below DynamoDB's smallest number"
    return None


def _short(number: Decimal) -> str:
    return f"{number:.3E}"


def _text_problem(text: str) -> str | None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        lone = text[error.start]
        return (
            f"holds a lone surrogate ({lone!r} at position {error.start}), which has no UTF-8 form"
        )
    return None
