"""Counts what an in-process stack bills: every AWS call (by whom), every function invocation
with its wall and CPU time. The local delivery plumbing (SQS polling) and the bench's own calls
are left out: on AWS, EventBridge invokes a function without a queue."""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from botocore.client import BaseClient

from tickwork_local.runtime import InProcessRuntime

__all__ = ["Call", "Invocation", "Recorder"]

STATE_MACHINE = "state machine"
# Who is calling: a context variable, so the worker threads a batch task hands a copy of its
# context to (usecases/fire_batch.py) bill their calls to the task's function.
_CALLER: contextvars.ContextVar[str | None] = contextvars.ContextVar("bench-caller", default=None)
_OFF: contextvars.ContextVar[bool] = contextvars.ContextVar("bench-off", default=False)
_INVOCATION: contextvars.ContextVar[int] = contextvars.ContextVar("bench-invocation", default=-1)
_READS = {"Query", "Scan"}


@dataclass(frozen=True)
class Call:
    caller: str  # a function's logical id, or "state machine"
    service: str
    operation: str
    params: dict[str, Any]
    invocation: int = -1  # the Invocation.index it was made in; -1: none (a state machine's)
    items_read: tuple[dict[str, Any], ...] = ()  # a Query's or Scan's items, to size its units


@dataclass(frozen=True)
class Invocation:
    function: str
    wall_seconds: float
    cpu_seconds: float  # this thread's CPU, the emulator's share of its AWS calls included
    memory_mb: int
    index: int = -1


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

        def call(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
            service = client.meta.service_model.service_name
            result: Any = {}
            try:
                result = original_call(client, operation, params)
                return result
            finally:  # a refused call is billed too (a failed condition costs its units)
                if not _OFF.get() and service != "sqs":
                    caller = _CALLER.get() or STATE_MACHINE
                    items = tuple(result.get("Items", ())) if operation in _READS else ()
                    made = Call(caller, service, operation, dict(params), _INVOCATION.get(), items)
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
                measured = Invocation(
                    logical_ids.get(name, name),
                    time.perf_counter() - wall,
                    time.thread_time() - cpu,
                    memory.get(name, 128),
                    index,
                )
                _INVOCATION.reset(numbered)
                _CALLER.reset(token)
                with recorder._lock:
                    recorder.invocations.append(measured)

        BaseClient._make_api_call = call  # type: ignore[method-assign]
        InProcessRuntime.invoke = invoke  # type: ignore[method-assign]
        try:
            yield
        finally:
            BaseClient._make_api_call = original_call  # type: ignore[method-assign]
            InProcessRuntime.invoke = original_invoke  # type: ignore[method-assign]
