"""Runs our Lambda handlers in this process when the emulator invokes a function.

moto's Lambda backend would start a Docker container; there is none here. While installed,
``InProcessRuntime`` answers ``Invoke`` for the functions it knows by loading the handler
module from the function's CodeUri (a fresh module per runtime: a cold start) and calling it,
reporting an exception the way Lambda does — ``FunctionError: Unhandled`` with a payload of
``errorType`` (the exception's class name) and ``errorMessage``, which is what the state
machine's Retry and Catch match.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

from moto.awslambda.models import LambdaBackend

from tickwork_local.activity import Activity
from tickwork_local.template import FunctionSpec

__all__ = ["InProcessRuntime", "Invocation"]

log = logging.getLogger(__name__)
Handler = Callable[[dict[str, Any], Any], Any]


@dataclass
class LambdaContext:
    function_name: str
    invoked_function_arn: str
    timeout: int
    aws_request_id: str
    memory_limit_in_mb: int = 256
    function_version: str = "$LATEST"
    log_group_name: str = ""
    log_stream_name: str = ""

    def get_remaining_time_in_millis(self) -> int:
        return self.timeout * 1000


@dataclass(frozen=True)
class Invocation:
    function: str
    event: dict[str, Any]
    error_type: str | None
    result: Any = None  # what the handler returned (None when it raised)


class InProcessRuntime:
    def __init__(
        self,
        functions: list[FunctionSpec],
        arn_of: Callable[[str], str],
        activity: Activity | None = None,
    ) -> None:
        self._specs = {spec.name: spec for spec in functions}
        self._activity = activity
        self._arn_of = arn_of
        self._handlers: dict[str, Handler] = {}
        self._lock = threading.Lock()
        self.invocations: list[Invocation] = []

    def add(self, name: str, handler: Handler, timeout: int = 30) -> None:
        """Run ``handler`` when the emulator invokes ``name``: a target function of the user's
        (tests and the demo give one), beside the stack's own."""
        with self._lock:
            self._specs[name] = FunctionSpec(name, name, Path("."), "inline", timeout, {})
            self._handlers[name] = handler

    def handler(self, name: str) -> Handler:
        with self._lock:
            if name not in self._handlers:
                spec = self._specs[name]
                module_file, _, function = spec.handler.rpartition(".")
                module = _load(
                    spec.code_dir / f"{module_file}.py",
                    f"tickwork_fn_{spec.logical_id}_{uuid.uuid4().hex[:6]}",
                )
                self._handlers[name] = getattr(module, function)
            return self._handlers[name]

    def invoke(self, name: str, event: dict[str, Any]) -> tuple[Any, str | None]:
        """Call the handler; return (result or error payload, error type or None)."""
        if self._activity is None:
            return self._invoke(name, event)
        with self._activity.work(f"function {name}"):
            return self._invoke(name, event)

    def _invoke(self, name: str, event: dict[str, Any]) -> tuple[Any, str | None]:
        spec = self._specs[name]
        context = LambdaContext(name, self._arn_of(name), spec.timeout, str(uuid.uuid4()))
        try:
            result = self.handler(name)(event, context)
        except Exception as error:  # reported to the caller the way Lambda reports it
            error_type = type(error).__name__
            log.info("function %s raised %s: %s", name, error_type, error)
            self.invocations.append(Invocation(name, event, error_type))
            return {
                "errorType": error_type,
                "errorMessage": str(error),
                "stackTrace": traceback.format_exception(error)[-5:],
            }, error_type
        self.invocations.append(Invocation(name, event, None, result))
        return result, None

    def knows(self, name_or_arn: str) -> str | None:
        name = name_or_arn.rsplit(":", 1)[-1] if name_or_arn.startswith("arn:") else name_or_arn
        return name if name in self._specs else None

    @contextmanager
    def installed(self) -> Iterator[InProcessRuntime]:
        """Route moto's Lambda Invoke for our functions to this runtime while inside."""
        original = LambdaBackend.invoke
        runtime = self

        def invoke(
            backend: LambdaBackend,
            function_name: str,
            qualifier: str | None,
            body: Any,
            headers: Any,
            response_headers: Any,
        ) -> str | bytes | None:
            name = runtime.knows(function_name)
            if name is None:
                return original(backend, function_name, qualifier, body, headers, response_headers)
            event = json.loads(body) if body else {}
            payload, error_type = runtime.invoke(name, event)
            if error_type:
                response_headers["x-amz-function-error"] = "Unhandled"
            encoded = json.dumps(payload, default=str).encode()
            response_headers["Content-Length"] = str(len(encoded))
            return encoded

        with mock.patch.object(LambdaBackend, "invoke", invoke):
            yield self


def _load(path: Any, module_name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load handler module {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
