"""X-Ray tracing of the handlers, made at the first invocation rather than at import.

Powertools' Tracer imports the X-Ray SDK and patches botocore as soon as it is constructed:
the largest single share of a function's import (270 ms of ~800 on the bench machine).
``LazyTracer`` builds it when the first event arrives, and not at all where tracing is off
(``POWERTOOLS_TRACE_DISABLED=true``: the local stack, the tests, a stack deployed without
it). With tracing on, the SDK's import moves from the function's init to its first
invocation; ``make bench`` reports it separately.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["LazyTracer"]

Handler = Callable[[Any, Any], Any]


class LazyTracer:
    def __init__(self) -> None:
        self._traced: dict[Handler, Handler] = {}
        self._lock = threading.Lock()

    def capture_lambda_handler(self, handler: Handler) -> Handler:
        @functools.wraps(handler)
        def run(event: Any, context: Any) -> Any:
            return self._wrapped(handler)(event, context)

        return run

    def _wrapped(self, handler: Handler) -> Handler:
        with self._lock:
            if handler not in self._traced:
                self._traced[handler] = (
                    handler if tracing_disabled() else _powertools_tracer(handler)
                )
            return self._traced[handler]


def tracing_disabled() -> bool:
    return os.environ.get("POWERTOOLS_TRACE_DISABLED", "").strip().lower() in ("true", "1")


def _powertools_tracer(handler: Handler) -> Handler:
    from aws_lambda_powertools import Tracer

    traced: Handler = Tracer().capture_lambda_handler(handler)
    return traced
