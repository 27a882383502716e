"""The open-execution quota, as Step Functions enforces it: with ``limit`` executions RUNNING
in the account and region, StartExecution of a new one fails with ``ExecutionLimitExceeded``
(AWS's default quota is 1,000,000). moto has no such quota; ``tickwork local
--max-open-executions N`` sets one, so what a full account does to tickwork can be tried on a
laptop: the fire is parked again, the pump retries it, nothing is lost.

The quota is read at each start (``limit`` is asked each time), so it can be changed while the
stack runs: a test closes the account (0) until its fires are parked, then opens it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any
from unittest import mock

from moto.core.exceptions import AWSError

__all__ = ["ExecutionLimitExceeded", "open_execution_quota"]


class ExecutionLimitExceeded(AWSError):
    TYPE = "ExecutionLimitExceeded"
    STATUS = 400


@contextmanager
def open_execution_quota(limit: Callable[[], int | None]) -> Iterator[None]:
    """Inside: at most ``limit()`` RUNNING executions (None: no quota, moto's own behaviour;
    a quota set when the stack started can be changed, not added later)."""
    if limit() is None:
        yield
        return
    from moto.stepfunctions.models import StepFunctionBackend
    from moto.stepfunctions.parser.models import StepFunctionsParserBackend

    with ExitStack() as patches:
        for backend in (StepFunctionBackend, StepFunctionsParserBackend):
            original = backend.__dict__["start_execution"]
            patches.enter_context(
                mock.patch.object(backend, "start_execution", _limited(original, limit))
            )
        yield


def _limited(original: Callable[..., Any], limit: Callable[[], int | None]) -> Callable[..., Any]:
    def start_execution(
        self: Any, state_machine_arn: str, name: str | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        most = limit()
        executions = [e for machine in self.state_machines for e in machine.executions]
        known = any(e.name == name and e.state_machine_arn == state_machine_arn for e in executions)
        running = sum(1 for e in executions if e.status == "RUNNING")
        if most is not None and running >= most and not known:
            raise ExecutionLimitExceeded(
                f"The maximum number of running executions ({most}) has been reached"
            )
        return original(self, state_machine_arn, name, *args, **kwargs)

    return start_execution
