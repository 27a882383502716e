"""Counts what an in-process stack bills: every AWS call (by whom), every function invocation
with its wall and CPU time. The local delivery plumbing (SQS polling) and the bench's own calls
are left out: on AWS, EventBridge invokes a function without a queue."""

from __future__ import annotations

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


@dataclass(frozen=True)
class Call:
    caller: str  # a function's logical id, or "state machine"
    service: str
    operation: str
    params: dict[str, Any]


@dataclass(frozen=True)
class Invocation:
    function: str
    wall_seconds: float
    cpu_seconds: float  # this thread's CPU, the emulator's share of its AWS calls included
    memory_mb: int


@dataclass
class Recorder:
    calls: list[Call] = field(default_factory=list)
    invocations: list[Invocation] = field(default_factory=list)
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def clear(self) -> None:
        with self._lock:
            self.calls.clear()
            self.invocations.clear()

    @contextmanager
    def unrecorded(self) -> Iterator[None]:
        """The bench's own calls (reading histories, waiting): not part of the bill."""
        self._local.off = True
        try:
            yield
        finally:
            self._local.off = False

    @contextmanager
    def calling_as(self, caller: str) -> Iterator[None]:
        """Calls made on this thread are ``caller``'s (e.g. the publisher of Starts)."""
        self._local.function = caller
        try:
            yield
        finally:
            self._local.function = None

    @contextmanager
    def installed(self, logical_ids: dict[str, str], memory: dict[str, int]) -> Iterator[None]:
        """``logical_ids``: function name -> logical id; ``memory``: name -> MB."""
        original_call = BaseClient._make_api_call
        original_invoke = InProcessRuntime.invoke
        recorder = self

        def call(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
            service = client.meta.service_model.service_name
            if not getattr(recorder._local, "off", False) and service != "sqs":
                caller = getattr(recorder._local, "function", None) or STATE_MACHINE
                with recorder._lock:
                    recorder.calls.append(Call(caller, service, operation, dict(params)))
            return original_call(client, operation, params)

        def invoke(runtime: InProcessRuntime, name: str, event: dict[str, Any]) -> Any:
            previous = getattr(recorder._local, "function", None)
            recorder._local.function = logical_ids.get(name, name)
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return original_invoke(runtime, name, event)
            finally:
                measured = Invocation(
                    logical_ids.get(name, name),
                    time.perf_counter() - wall,
                    time.thread_time() - cpu,
                    memory.get(name, 128),
                )
                recorder._local.function = previous
                with recorder._lock:
                    recorder.invocations.append(measured)

        BaseClient._make_api_call = call  # type: ignore[method-assign]
        InProcessRuntime.invoke = invoke  # type: ignore[method-assign]
        try:
            yield
        finally:
            BaseClient._make_api_call = original_call  # type: ignore[method-assign]
            InProcessRuntime.invoke = original_invoke  # type: ignore[method-assign]
