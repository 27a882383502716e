"""Projecting an item on top-level names copies those attributes, not the item through JSON.

Found: ``moto/dynamodb/models/dynamo_type.py``, ``Item.project``, turns the whole item into
plain JSON and back for every projection, three times for a KEYS_ONLY index, for every item a
query returns.

Replaced: ``Item.project`` when every projected path is a top-level name (an index's keys, a
plain ProjectionExpression): those attributes are copied as they are. Nested paths
(``a.b``, ``a[0]``) still go through moto. Upstreamable as is.
"""

from __future__ import annotations

import copy as real_copy
import functools
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

__all__ = ["top_level_projections_copied"]


@contextmanager
def top_level_projections_copied() -> Iterator[None]:
    from moto.dynamodb.models.dynamo_type import Item

    original = Item.project

    @functools.wraps(original)
    def project(self: Item, projection_expressions: list[list[str]]) -> Item:
        if any(len(path) != 1 for path in projection_expressions):
            return original(self, projection_expressions)  # nested paths: moto's way
        names = {path[0] for path in projection_expressions}
        return Item(
            hash_key=self.hash_key,
            range_key=self.range_key,
            attrs={n: real_copy.deepcopy(v.to_json()) for n, v in self.attrs.items() if n in names},
        )

    with mock.patch.object(Item, "project", project):
        yield
