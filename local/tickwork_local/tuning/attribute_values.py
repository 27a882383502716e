"""DynamoDB responses pass attribute values already in wire form through as they are.

Found: ``moto/core/serialize.py``, ``BaseJSONSerializer._serialize_type_structure``, visits
each of the ten members an ``AttributeValue`` may have, through five alias providers, for every
string or number of every item it returns: 0.47 s for a BatchGetItem of 50 records.

Replaced: that method, for an ``AttributeValue`` whose value holds no binary anywhere
(strings, numbers, booleans, nulls, and lists, maps and string/number sets of them): the value
is already the JSON the serializer would write, so it is written as it is. Anything holding
binary (``B``, ``BS``) still goes through moto. Upstreamable as is.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["attribute_values_passed_through", "plain"]


_SCALARS = {"S": str, "N": str, "BOOL": bool, "NULL": bool}


def plain(value: Any) -> bool:
    """An AttributeValue already in its wire form: no binary anywhere in it."""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    ((kind, inner),) = value.items()
    if kind in _SCALARS:
        return isinstance(inner, _SCALARS[kind])
    if kind == "M":
        return isinstance(inner, dict) and all(plain(v) for v in inner.values())
    if kind == "L":
        return isinstance(inner, list) and all(plain(v) for v in inner)
    if kind in ("SS", "NS"):
        return isinstance(inner, list) and all(isinstance(v, str) for v in inner)
    return False


@contextmanager
def attribute_values_passed_through() -> Iterator[None]:
    from moto.core.serialize import BaseJSONSerializer

    original = BaseJSONSerializer._serialize_type_structure

    @functools.wraps(original)
    def serialize(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        if key and shape.name == "AttributeValue" and plain(value):
            serialized[self.get_serialized_name(shape, key)] = value
            return
        original(self, serialized, value, shape, key)

    with mock.patch.object(BaseJSONSerializer, "_serialize_type_structure", serialize):
        yield
