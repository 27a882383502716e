"""A DynamoDB transaction copies the items it names for its rollback, not whole tables.

Found: ``moto/dynamodb/models/__init__.py``, ``DynamoDBBackend.transact_write_items``,
deep-copies every table it touches before it begins (its rollback), so each transaction cost
O(items in the table): with the action counters, every Start. At 1,000 actions, about one Start
a second.

Replaced: ``transact_write_items`` for tables with a hash key only: the items the transaction
names are copied and put back if it fails, and moto's own whole-table copy is skipped (its
rollback then puts back the same table, a no-op). Tables with a sort key, and operations
this cannot read, go moto's own way.
"""

from __future__ import annotations

import copy as real_copy
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["transactions_copy_what_they_touch"]


@contextmanager
def transactions_copy_what_they_touch() -> Iterator[None]:

    from moto.dynamodb import models as dynamodb_models
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import Table

    cheap = threading.local()

    class _Copy:
        """moto's module-level ``copy``: a table is not copied while a transaction snapshots its
        own items instead; everything else is copied as before."""

        @staticmethod
        def deepcopy(value: Any, memo: Any = None) -> Any:
            if isinstance(value, Table) and getattr(cheap, "on", False):
                return value  # its rollback then puts back the same table: a no-op
            return real_copy.deepcopy(value, memo)

    original = DynamoDBBackend.transact_write_items

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> Any:
        saved: list[tuple[Any, Any, Any]] = []
        for entry in transact_items:
            _, op = next(iter(entry.items()))
            table = self.tables.get(op.get("TableName"))
            if table is None or table.range_key_attr is not None or len(entry) != 1:
                return original(self, transact_items)  # moto's own way, whole-table copies
            attrs = op["Item"] if "Item" in op else op.get("Key", {})
            if table.hash_key_attr not in attrs:
                return original(self, transact_items)
            hash_value = DynamoType(attrs[table.hash_key_attr])
            saved.append((table, hash_value, real_copy.deepcopy(table.items.get(hash_value))))
        cheap.on = True
        try:
            return original(self, transact_items)
        except BaseException:
            for table, hash_value, previous in reversed(saved):
                if previous is None:
                    table.items.pop(hash_value, None)
                else:
                    table.items[hash_value] = previous
            raise
        finally:
            cheap.on = False

    with (
        mock.patch.object(dynamodb_models, "copy", _Copy),
        mock.patch.object(DynamoDBBackend, "transact_write_items", transact_write_items),
    ):
        yield
