"""Counts what an in-process stack bills: every AWS call (by whom), every function invocation
with its wall and CPU time and the log bytes it wrote. The local delivery plumbing (SQS
polling) and the bench's own calls are left out: on AWS, EventBridge invokes a function without
a queue.

Each DynamoDB write carries the images of the items it touched, read (unrecorded) just before
and just after it: what DynamoDB bills a write by (the larger of the two) and what decides the
writes on each index (benchkit/indexes.py). Each GetItem and BatchGetItem carries the items it
read, so reads are sized by what was stored. A function's standard output during an
invocation (Powertools' structured logs and metrics) is counted and not shown: on AWS it is
what CloudWatch Logs ingests."""

from __future__ import annotations

import contextvars
import io
import logging
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.client import BaseClient

from tickwork.adapters.dynamodb_sizes import as_typed
from tickwork_local.runtime import InProcessRuntime

__all__ = ["Call", "Image", "Invocation", "Recorder"]

STATE_MACHINE = "state machine"
# Who is calling: a context variable, so the worker threads a batch task hands a copy of its
# context to (fire/fire_batch.py) bill their calls to the task's function.
_CALLER: contextvars.ContextVar[str | None] = contextvars.ContextVar("bench-caller", default=None)
_OFF: contextvars.ContextVar[bool] = contextvars.ContextVar("bench-off", default=False)
_INVOCATION: contextvars.ContextVar[int] = contextvars.ContextVar("bench-invocation", default=-1)
_READS = {"Query", "Scan"}
_WRITES = {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}
Item = dict[str, Any]


@dataclass(frozen=True)
class Image:
    """One item a write touched: the table's copy just before and just after (None: absent)."""

    table: str
    before: Item | None
    after: Item | None
    transactional: bool = False  # a TransactWriteItems member: billed twice


@dataclass(frozen=True)
class Call:
    caller: str  # a function's logical id, or "state machine"
    service: str
    operation: str
    params: dict[str, Any]
    invocation: int = -1  # the Invocation.index it was made in; -1: none (a state machine's)
    items_read: tuple[dict[str, Any], ...] = ()  # the items a read returned, to size its units
    images: tuple[Image, ...] = ()  # a write's items before and after it


@dataclass(frozen=True)
class Invocation:
    function: str
    wall_seconds: float
    cpu_seconds: float  # this thread's CPU, the emulator's share of its AWS calls included
    memory_mb: int
    index: int = -1
    log_bytes: int = 0  # what it wrote to standard output (CloudWatch Logs ingests it)
    log_events: int = 0  # lines: each a log event


@dataclass
class Recorder:
    calls: list[Call] = field(default_factory=list)
    invocations: list[Invocation] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _invoked: int = 0

    def clear(self) -> None:
        with self._lock:
            self.calls.clear()
            self.invocations.clear()

    @contextmanager
    def unrecorded(self) -> Iterator[None]:
        """The bench's own calls (reading histories, waiting): not part of the bill."""
        token = _OFF.set(True)
        try:
            yield
        finally:
            _OFF.reset(token)

    @contextmanager
    def calling_as(self, caller: str) -> Iterator[None]:
        """Calls made on this thread are ``caller``'s (e.g. the publisher of Starts)."""
        token = _CALLER.set(caller)
        try:
            yield
        finally:
            _CALLER.reset(token)

    @contextmanager
    def installed(self, logical_ids: dict[str, str], memory: dict[str, int]) -> Iterator[None]:
        """``logical_ids``: function name -> logical id; ``memory``: name -> MB."""
        original_call = BaseClient._make_api_call
        original_invoke = InProcessRuntime.invoke
        recorder = self
        images = _Images(original_call)

        def call(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
            service = client.meta.service_model.service_name
            if _OFF.get() or service == "sqs":
                return original_call(client, operation, params)
            touched = images.keys(client, operation, params) if service == "dynamodb" else []
            before = [images.read(client, table, key) for table, key, _ in touched]
            result: Any = {}
            try:
                result = original_call(client, operation, params)
                return result
            finally:  # a refused call is billed too (a failed condition costs its units)
                caller = _CALLER.get() or STATE_MACHINE
                written = tuple(
                    Image(table, old, images.read(client, table, key), transactional)
                    for (table, key, transactional), old in zip(touched, before, strict=True)
                )
                made = Call(
                    caller,
                    service,
                    operation,
                    dict(params),
                    _INVOCATION.get(),
                    _items_read(operation, result),
                    written,
                )
                with recorder._lock:
                    recorder.calls.append(made)

        def invoke(runtime: InProcessRuntime, name: str, event: dict[str, Any]) -> Any:
            token = _CALLER.set(logical_ids.get(name, name))
            with recorder._lock:
                recorder._invoked += 1
                index = recorder._invoked
            numbered = _INVOCATION.set(index)
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return original_invoke(runtime, name, event)
            finally:
                logged, lines = output.taken(index)
                measured = Invocation(
                    logical_ids.get(name, name),
                    time.perf_counter() - wall,
                    time.thread_time() - cpu,
                    memory.get(name, 128),
                    index,
                    logged,
                    lines,
                )
                _INVOCATION.reset(numbered)
                _CALLER.reset(token)
                with recorder._lock:
                    recorder.invocations.append(measured)

        output = _Output(sys.stdout)
        BaseClient._make_api_call = call  # type: ignore[method-assign]
        InProcessRuntime.invoke = invoke  # type: ignore[method-assign]
        output.install()
        try:
            yield
        finally:
            output.uninstall()
            BaseClient._make_api_call = original_call  # type: ignore[method-assign]
            InProcessRuntime.invoke = original_invoke  # type: ignore[method-assign]


def _items_read(operation: str, result: Any) -> tuple[dict[str, Any], ...]:
    if operation in _READS:
        return tuple(result.get("Items", ()))
    if operation == "GetItem":
        return (result["Item"],) if result.get("Item") else ()
    if operation == "BatchGetItem":
        return tuple(item for items in result.get("Responses", {}).values() for item in items)
    return ()


class _Images:
    """Reads the items a DynamoDB write touches, outside the bill, through its own client."""

    def __init__(self, original_call: Any) -> None:
        self._original = original_call
        self._lock = threading.Lock()
        self._clients: dict[str, Any] = {}
        self._key_names: dict[str, tuple[str, ...]] = {}

    def _client(self, region: str) -> Any:
        with self._lock:
            if region not in self._clients:
                self._clients[region] = boto3.client("dynamodb", region_name=region)
            return self._clients[region]

    def _keys_of(self, client: BaseClient, table: str) -> tuple[str, ...]:
        if table not in self._key_names:
            own = self._client(client.meta.region_name)
            schema = self._original(own, "DescribeTable", {"TableName": table})["Table"]
            self._key_names[table] = tuple(k["AttributeName"] for k in schema["KeySchema"])
        return self._key_names[table]

    def keys(
        self, client: BaseClient, operation: str, params: dict[str, Any]
    ) -> list[tuple[str, dict[str, Any], bool]]:
        """(table, typed key, transactional) of each item the write touches."""
        if operation not in _WRITES:
            return []
        token = _OFF.set(True)
        try:
            found: list[tuple[str, dict[str, Any], bool]] = []

            def add(table: str, entry: dict[str, Any], transactional: bool) -> None:
                names = self._keys_of(client, table)
                source = entry.get("Item") or entry.get("Key") or {}
                key = {name: as_typed(source[name]) for name in names if name in source}
                found.append((table, key, transactional))

            if operation == "TransactWriteItems":
                for member in params["TransactItems"]:
                    ((_, entry),) = member.items()
                    add(entry["TableName"], entry, True)
            elif operation == "BatchWriteItem":
                for table, requests in params["RequestItems"].items():
                    for request in requests:
                        ((_, entry),) = request.items()
                        add(table, entry, False)
            else:
                add(params["TableName"], params, False)
            return found
        finally:
            _OFF.reset(token)

    def read(self, client: BaseClient, table: str, key: dict[str, Any]) -> Item | None:
        token = _OFF.set(True)
        try:
            own = self._client(client.meta.region_name)
            got = self._original(
                own, "GetItem", {"TableName": table, "Key": key, "ConsistentRead": True}
            )
            item: Item | None = got.get("Item")
            return item
        finally:
            _OFF.reset(token)


class _Output(io.TextIOBase):
    """Standard output: what an invocation writes is counted (bytes, lines) and not shown;
    anything else passes through. Log handlers that hold the real stream are pointed here."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self._lock = threading.Lock()
        self._bytes: Counter[int] = Counter()
        self._lines: Counter[int] = Counter()
        self._moved: list[logging.StreamHandler[Any]] = []

    def write(self, text: str) -> int:
        index = _INVOCATION.get()
        if index < 0:
            return int(self._real.write(text))
        with self._lock:
            self._bytes[index] += len(text.encode())
            self._lines[index] += text.count("\n")
        return len(text)

    def flush(self) -> None:
        self._real.flush()

    def taken(self, index: int) -> tuple[int, int]:
        with self._lock:
            return self._bytes.pop(index, 0), self._lines.pop(index, 0)

    def install(self) -> None:
        sys.stdout = self
        for logger in [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]:
            for handler in getattr(logger, "handlers", ()):
                stream = getattr(handler, "stream", None)
                if stream is self._real or isinstance(stream, _Output):
                    handler.setStream(self)  # type: ignore[attr-defined]
                    self._moved.append(handler)

    def uninstall(self) -> None:
        sys.stdout = self._real
        for handler in self._moved:
            handler.setStream(self._real)
