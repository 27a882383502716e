"""Global secondary index queries that read what they return, not the whole table.

moto answers a Query on a GSI by listing every item of the table, sorting them all, and then
testing each one against the key condition: a page of 50 cost O(items in the table), and
tickwork's pages, counts in flight, pump and reconciler each query 16 shards. Here each GSI of
a table without a sort key keeps, per partition key value, its entries sorted as moto sorts them
(index sort key, then the table's key). A Query then hands moto's own ``Table.query`` only the
entries it can return: from the first one at or after its lower bound (key condition or
``ExclusiveStartKey``), up to its ``Limit`` (plus those tied at the bound and one more), and no
further than its upper bound (plus one). moto still applies every condition, the order, the
paging and the projection to them, so the answer is moto's; only the items it would have
skipped are not shown to it.

The entries follow every write: after a put, update or delete (alone, batched or in a
transaction, which may also roll back) the keys it named are indexed again; PartiQL, table
updates and restores drop a table's entries, rebuilt at its next query. An index whose sort key
values cannot be ordered together (a string beside a number) is left to moto.
"""

from __future__ import annotations

import copy
import functools
import inspect
import threading
from bisect import bisect_left, insort
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock

__all__ = ["index_buckets"]

_ATTRIBUTE = "_tickwork_index_buckets"
_LOWER_BOUNDED = {">", ">=", "=", "BETWEEN", "BEGINS_WITH"}
_UPPER_BOUNDED = {"<", "<=", "=", "BETWEEN"}
_lock = threading.RLock()
_shown = threading.local()  # the entries a query on this thread may see


class _Unordered(Exception):
    """Sort key values of one index that Python cannot order together."""


class _Index:
    """One GSI's entries: partition value -> sorted [(sort value, table key value)]."""

    def __init__(self, hash_attr: str, range_attr: str | None) -> None:
        self.hash_attr = hash_attr
        self.range_attr = range_attr
        self.partitions: dict[Any, list[tuple[Any, Any]]] = {}
        self.placed: dict[Any, tuple[Any, tuple[Any, Any]]] = {}  # table key -> where it is

    def place(self, key: Any, item: Any) -> None:
        """Index ``item`` (stored under table key ``key``), or only remove it when None."""
        old = self.placed.pop(key.cast_value, None)
        if old is not None:
            partition = self.partitions[old[0]]
            del partition[bisect_left(partition, old[1])]
        if item is None:
            return
        value = item.attrs.get(self.hash_attr)
        if value is None or (self.range_attr and self.range_attr not in item.attrs):
            return
        order = item.attrs[self.range_attr].cast_value if self.range_attr else None
        entry = (order, key.cast_value)
        partition = self.partitions.setdefault(value, [])
        try:
            insort(partition, entry)
        except TypeError as error:
            raise _Unordered(self.range_attr) from error
        self.placed[key.cast_value] = (value, entry)

    def shown(self, value: Any, query: inspect.BoundArguments) -> list[tuple[Any, Any]]:
        """The entries of partition ``value`` a query with these arguments can read."""
        partition = self.partitions.get(value, [])
        args = query.arguments
        comparison = str(args.get("range_comparison") or "").upper()
        bounds = [v.cast_value for v in args.get("range_objs") or []]
        limit = args.get("limit")
        if not self.range_attr or args.get("scan_index_forward") is False:
            return partition
        low, high = 0, len(partition)
        if comparison in _LOWER_BOUNDED and bounds:
            low = bisect_left(partition, (bounds[0],))
        start = (args.get("exclusive_start_key") or {}).get(self.range_attr)
        if start is not None:
            from moto.dynamodb.models.dynamo_type import DynamoType

            low = max(low, bisect_left(partition, (DynamoType(start).cast_value,)))
        if comparison in _UPPER_BOUNDED and bounds:
            high = min(high, _after_ties(partition, bisect_left(partition, (bounds[-1],))) + 1)
        if limit is not None:
            high = min(high, _after_ties(partition, low) + int(limit) + 1)
        return partition[low:high]


def _after_ties(partition: list[tuple[Any, Any]], at: int) -> int:
    """The first position after ``at`` whose sort value differs from the one at ``at``."""
    end = at
    while end < len(partition) and partition[end][0] == partition[at][0]:
        end += 1
    return end


class _Buckets:
    """Every GSI of one table (without a sort key) that has a single partition key."""

    def __init__(self, table: Any) -> None:
        self.indexes: dict[str, _Index] = {}
        self.keys: dict[Any, Any] = {}  # a table key's value -> the key moto stores the item under
        for index in table.global_indexes or []:
            hashes = [k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"]
            ranges = [k["AttributeName"] for k in index.schema if k["KeyType"] == "RANGE"]
            if len(hashes) == 1 and len(ranges) <= 1:
                self.indexes[index.name] = _Index(hashes[0], ranges[0] if ranges else None)
        for key, item in table.items.items():
            self.place(key, item)

    def place(self, key: Any, item: Any) -> None:
        if item is None:
            self.keys.pop(key.cast_value, None)
        else:
            self.keys[key.cast_value] = key
        for name, index in list(self.indexes.items()):
            try:
                index.place(key, item)
            except _Unordered:
                del self.indexes[name]  # left to moto


def _buckets(table: Any) -> _Buckets | None:
    if table.range_key_attr is not None:
        return None
    found: _Buckets | None = table.__dict__.get(_ATTRIBUTE)
    if found is None:
        found = _Buckets(table)
        setattr(table, _ATTRIBUTE, found)
    return found


def _forget(table: Any) -> None:
    table.__dict__.pop(_ATTRIBUTE, None)


def _reindex(table: Any, attrs: dict[str, Any]) -> None:
    from moto.dynamodb.models.dynamo_type import DynamoType

    if table is None or _ATTRIBUTE not in table.__dict__ or table.hash_key_attr not in attrs:
        return
    key = DynamoType(attrs[table.hash_key_attr])
    table.__dict__[_ATTRIBUTE].place(key, table.items.get(key))


@contextmanager
def index_buckets() -> Iterator[None]:
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models import table as table_module
    from moto.dynamodb.models.table import Table

    query = Table.query
    all_items = Table.all_items
    signature = inspect.signature(query)

    @functools.wraps(query)
    def indexed_query(self: Any, *args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(self, *args, **kwargs)
        shown = _shown_items(self, bound)
        if shown is None:
            return query(self, *args, **kwargs)
        _shown.table, _shown.items = self, shown
        _shown.projected = _projects_less_than_all(self, bound.arguments["index_name"])
        try:
            return query(self, *args, **kwargs)
        finally:
            _shown.table = _shown.items = None
            _shown.projected = False

    def shown_or_all(self: Any) -> Any:
        if getattr(_shown, "table", None) is self:
            return _shown.items
        return all_items(self)

    def after(name: str, keys: Callable[..., list[tuple[str, dict[str, Any]]]]) -> Any:
        original = getattr(DynamoDBBackend, name)
        named = inspect.signature(original)

        @functools.wraps(original)  # its signature, for the journal's wrapper
        def write(backend: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return original(backend, *args, **kwargs)
            finally:
                with _lock:
                    for table_name, attrs in keys(**named.bind(backend, *args, **kwargs).arguments):
                        _reindex(backend.tables.get(table_name), attrs)

        return mock.patch.object(DynamoDBBackend, name, write)

    def dropping(name: str) -> Any:
        original = getattr(DynamoDBBackend, name)

        @functools.wraps(original)
        def write(backend: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return original(backend, *args, **kwargs)
            finally:
                with _lock:
                    for table in backend.tables.values():
                        _forget(table)

        return mock.patch.object(DynamoDBBackend, name, write)

    with ExitStack() as patches:
        patches.enter_context(mock.patch.object(table_module, "copy", _CopiedUnlessProjected))
        patches.enter_context(mock.patch.object(Table, "query", indexed_query))
        patches.enter_context(mock.patch.object(Table, "all_items", shown_or_all))
        patches.enter_context(
            after("put_item", lambda table_name, item_attrs, **_: [(table_name, item_attrs)])
        )
        patches.enter_context(
            after("update_item", lambda table_name, key, **_: [(table_name, key)])
        )
        patches.enter_context(
            after("delete_item", lambda table_name, key, **_: [(table_name, key)])
        )
        patches.enter_context(after("transact_write_items", _transaction_keys))
        for name in (
            "execute_statement",
            "update_table",
            "restore_table_from_backup",
            "restore_table_to_point_in_time",
        ):
            patches.enter_context(dropping(name))
        yield


class _CopiedUnlessProjected:
    """moto's ``copy`` in its table module: a query on an index that projects less than ALL
    does not deep-copy the whole items it found, since projecting them makes new ones."""

    copy = staticmethod(copy.copy)

    @staticmethod
    def deepcopy(value: Any, memo: Any = None) -> Any:
        if getattr(_shown, "projected", False) and isinstance(value, list):
            return list(value)
        return copy.deepcopy(value, memo)


def _projects_less_than_all(table: Any, name: str) -> bool:
    index = next((i for i in table.global_indexes or [] if i.name == name), None)
    return index is not None and index.projection.get("ProjectionType") in ("KEYS_ONLY", "INCLUDE")


def _shown_items(table: Any, query: inspect.BoundArguments) -> list[Any] | None:
    """The items ``query`` can read, from the entries; None when moto must list them all."""
    args = query.arguments
    name = args.get("index_name")
    if not name or args.get("filter_kwargs") or len(args.get("range_key_conditions") or []) > 1:
        return None
    with _lock:
        buckets = _buckets(table)
        index = buckets.indexes.get(name) if buckets else None
        if buckets is None or index is None:
            return None
        conditions = dict(args.get("hash_key_conditions") or [])
        value = conditions.get(index.hash_attr, args.get("hash_key"))
        if value is None or set(conditions) - {index.hash_attr}:
            return None
        try:
            entries = index.shown(value, query)
        except TypeError:  # a bound of another type than the sort key's values
            return None
        stored = (table.items.get(buckets.keys.get(key)) for _, key in entries)
        return [item for item in stored if item is not None]


def _transaction_keys(transact_items: list[dict[str, Any]], **_: Any) -> list[tuple[str, Any]]:
    keys = []
    for entry in transact_items:
        for op in entry.values():
            keys.append((op.get("TableName"), op.get("Item") or op.get("Key") or {}))
    return keys
