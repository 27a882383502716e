"""What every Lambda handler of tickwork wraps itself in, written once.

``entry = Entry(correlation_id_path="detail.id")`` at module level (one per function, as the
SAM templates make them), then ``@entry`` on the handler: Powertools' structured logs with the
action id as correlation id and the Lambda context, X-Ray tracing made at the first event
(``LazyTracer``), and metrics flushed per invocation with the cold-start metric.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork.tracing import LazyTracer

__all__ = ["Entry", "Handler"]

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


class Entry:
    def __init__(self, correlation_id_path: str | None = None) -> None:
        self.logger = Logger()
        self.metrics = Metrics()
        self._tracer = LazyTracer()
        self._correlation_id_path = correlation_id_path

    def __call__(self, handler: Handler) -> Handler:
        wrapped: Any = self.metrics.log_metrics(capture_cold_start_metric=True)(handler)
        wrapped = self._tracer.capture_lambda_handler(wrapped)
        logged: Handler = self.logger.inject_lambda_context(
            correlation_id_path=self._correlation_id_path
        )(wrapped)
        return logged

    def count(self, name: str, value: float = 1) -> None:
        self.metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)

    def measure(self, name: str, milliseconds: float) -> None:
        self.metrics.add_metric(name=name, unit=MetricUnit.Milliseconds, value=milliseconds)
