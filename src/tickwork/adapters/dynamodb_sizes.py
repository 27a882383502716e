"""The size DynamoDB gives an item: attribute names plus values (a string its UTF-8 bytes, a
number about one byte per two digits, a list or map three bytes plus one per element). What it
bills a write by, and what it holds to its 400 KB item limit."""

from __future__ import annotations

import math
from typing import Any

from boto3.dynamodb.types import TypeSerializer

__all__ = ["MAX_ITEM_BYTES", "as_typed", "item_size"]

MAX_ITEM_BYTES = 400 * 1024  # DynamoDB's limit on one item, names and values together
_SERIALIZER = TypeSerializer()
_TYPES = {"S", "N", "B", "BOOL", "NULL", "L", "M", "SS", "NS", "BS"}


def item_size(item: dict[str, Any]) -> int:
    """The size of an item ({"S": ...} values, or plain ones)."""
    return sum(len(name.encode()) + _value_size(as_typed(value)) for name, value in item.items())


def as_typed(value: Any) -> dict[str, Any]:
    """A value as the low-level client sends it (the resource layer's are still plain)."""
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _TYPES:
        return value
    return dict(_SERIALIZER.serialize(value))


def _value_size(value: dict[str, Any]) -> int:
    ((kind, inner),) = value.items()
    if kind == "S":
        return len(str(inner).encode())
    if kind == "N":
        digits = str(inner).lstrip("-").replace(".", "").strip("0")
        return math.ceil(len(digits or "0") / 2) + 1
    if kind == "B":
        return len(inner)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "L":
        return 3 + sum(1 + _value_size(e) for e in inner)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + _value_size(e) for k, e in inner.items())
    if kind in ("SS", "NS", "BS"):
        return sum(len(str(e)) for e in inner)
    raise ValueError(f"unknown DynamoDB type {kind}")
