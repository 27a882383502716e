"""A DynamoDB item is sized once when it is built, not once per attribute.

Found: ``moto/dynamodb/models/dynamo_type.py``, ``Item.__init__``, set each attribute through a
``LimitedSizeDict`` that re-added the size of the whole item every time: O(n²) in the number of
attributes, for every item put, read back or projected.

Replaced: ``Item.__init__`` — the same conversion, sized once against the same limit (moto's
405,000 bytes: the documented 400 KB as measured on AWS) and refused the same way
(``ItemSizeTooLarge``); later single-attribute sets still go through ``LimitedSizeDict``.
Upstreamable as is.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["items_sized_once"]

ITEM_SIZE_LIMIT = 405000  # moto's own figure


@contextmanager
def items_sized_once() -> Iterator[None]:
    from moto.dynamodb.exceptions import ItemSizeTooLarge
    from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict
    from moto.dynamodb.models.utilities import bytesize

    def build(item: Item, hash_key: Any, range_key: Any, attrs: dict[str, Any]) -> None:
        item.hash_key = hash_key
        item.range_key = range_key
        converted = {key: DynamoType(value) for key, value in attrs.items()}
        size = sum(bytesize(key) + value.size() for key, value in converted.items())
        if size > ITEM_SIZE_LIMIT:
            raise ItemSizeTooLarge
        item.attrs = LimitedSizeDict(converted)  # later single-attribute sets are still checked

    with mock.patch.object(Item, "__init__", build):
        yield
