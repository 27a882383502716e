"""What every Lambda handler of tickwork wraps itself in, written once.

``entry = Entry(correlation_id_path="detail.id")`` at module level (one per function, as the
SAM templates make them), then ``@entry`` on the handler: Powertools' structured logs with the
action id as correlation id and the Lambda context, X-Ray tracing made at the first event
(``LazyTracer``), and metrics flushed per invocation with the cold-start metric.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork.tracing import LazyTracer

__all__ = ["Entry", "Handler", "add_metric"]

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


class Entry:
    def __init__(self, correlation_id_path: str | None = None) -> None:
        self.logger = Logger()
        self.metrics = Metrics()
        self._tracer = LazyTracer()
        self._correlation_id_path = correlation_id_path

    def __call__(self, handler: Handler) -> Handler:
        # Powertools prints the cold start metric even with POWERTOOLS_METRICS_DISABLED (it
        # flushes it on its own): honour the setting here, as its other metrics do.
        from aws_lambda_powertools.metrics.functions import is_metrics_disabled

        capture = not is_metrics_disabled()
        wrapped: Any = self.metrics.log_metrics(capture_cold_start_metric=capture)(handler)
        wrapped = self._tracer.capture_lambda_handler(wrapped)
        return self._logged(wrapped)

    def _logged(self, handler: Handler) -> Handler:
        """The invocation's keys (cold start, the Lambda context, the correlation id) on every
        line it logs — as Powertools' inject_lambda_context adds them, but kept per thread
        (a context variable) instead of on the formatter every Logger of the service shares:
        several functions running in one process at once (the local stack) each log their
        own, and threads a handler starts in a copy of its context log its keys too."""
        from aws_lambda_powertools.logging.lambda_context import build_lambda_context_model
        from aws_lambda_powertools.utilities import jmespath_utils

        cold = [True]

        @functools.wraps(handler)
        def logged(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
            keys: dict[str, Any] = {"cold_start": cold[0]}
            cold[0] = False
            keys.update(build_lambda_context_model(context).__dict__)
            if self._correlation_id_path:
                keys["correlation_id"] = jmespath_utils.query(
                    envelope=self._correlation_id_path, data=event
                )
            self.logger.thread_safe_clear_keys()
            self.logger.thread_safe_append_keys(**keys)
            try:
                return handler(event, context)
            finally:
                self.logger.thread_safe_clear_keys()

        return logged

    def correlate(self, correlation_id: str | None) -> None:
        """Name this invocation's correlation id once the handler knows it (its lines only)."""
        self.logger.thread_safe_append_keys(correlation_id=correlation_id)

    def logged(self, message: str, answer: dict[str, Any], notable: bool) -> None:
        """The invocation's answer, logged: at WARNING when it is ``notable`` (a rejection, a
        refused launch, a repair), else at DEBUG. A plain success is already in the metrics,
        the record and the events; a line per invocation of it would be logs billed for every
        fire (LogLevel DEBUG shows them)."""
        if notable:
            self.logger.warning(message, extra={"result": answer})
        else:
            self.logger.debug(message, extra={"result": answer})

    def count(self, name: str, value: float = 1) -> None:
        add_metric(self.metrics, name, MetricUnit.Count, value)

    def count_for(self, name: str, dimension: str, value: str, count: float = 1) -> None:
        """A count under a dimension of its own (``action`` = an id): one EMF line apart from
        the invocation's metrics, so its dimension does not split theirs."""
        from aws_lambda_powertools.metrics import single_metric
        from aws_lambda_powertools.metrics.functions import is_metrics_disabled

        if is_metrics_disabled():
            return
        namespace = self.metrics.provider.namespace
        with single_metric(
            name=name, unit=MetricUnit.Count, value=count, namespace=namespace
        ) as metric:
            metric.add_dimension(name=dimension, value=value)

    def measure(self, name: str, milliseconds: float) -> None:
        add_metric(self.metrics, name, MetricUnit.Milliseconds, milliseconds)


def add_metric(metrics: Metrics, name: str, unit: MetricUnit, value: float) -> None:
    """Add a value to the invocation's metrics, or nothing while metrics are off.

    Powertools keeps what is added while POWERTOOLS_METRICS_DISABLED is set (its flush then
    clears nothing), so a warm function's values pile up across invocations; at a metric's 100th
    value it prints them all, or fails the invocation if its namespace is unset."""
    from aws_lambda_powertools.metrics.functions import is_metrics_disabled

    if not is_metrics_disabled():
        metrics.add_metric(name=name, unit=unit, value=value)
