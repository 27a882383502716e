"""DynamoDB's one-item atomicity, which moto's backend lacks.

DynamoDB applies a conditional write to an item atomically: of eight concurrent
``attribute_not_exists`` puts of one key exactly one succeeds. moto evaluates the condition and
then writes, with nothing held between the two, so under its threaded server (or our in-process
functions on several threads) two writers can both pass the check — measured: 29 of 50 keys had
more than one winner with eight threads. tickwork's exactly-once rules (the claim, the version
check, concurrency slots, idempotency records) all rest on that atomicity, so while
``atomic_items()`` is active every item operation on the backend runs under one lock, and a read
never sees an update half applied.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from moto.dynamodb.models import DynamoDBBackend

__all__ = ["atomic_items"]

# Writes (batch_write_item's handler calls put/delete_item), reads, and PartiQL.
_GUARDED = (
    "put_item",
    "update_item",
    "delete_item",
    "transact_write_items",
    "execute_statement",
    "get_item",
    "query",
    "scan",
)
_MARK = "__tickwork_atomic__"


@contextmanager
def atomic_items() -> Iterator[None]:
    originals = {name: getattr(DynamoDBBackend, name) for name in _GUARDED}
    if any(getattr(method, _MARK, False) for method in originals.values()):
        yield  # already guarded by an enclosing stack in this process
        return
    lock = threading.RLock()
    for name, original in originals.items():
        setattr(DynamoDBBackend, name, _guarded(original, lock))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(DynamoDBBackend, name, original)


def _guarded(original: Callable[..., Any], lock: threading.RLock) -> Callable[..., Any]:
    @functools.wraps(original)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return original(*args, **kwargs)

    setattr(guarded, _MARK, True)
    return guarded
