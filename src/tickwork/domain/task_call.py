"""What the state machines' tasks invoke the fulfill function with, declared: one of a lone
fire's order (``input``), a batch's order (``batch``) or a failure report (``report``: the order
and the error the Catch caught), beside the execution (``executionArn``, ``$$.Execution.Id``;
``executionName``) and the state's ``retryCount``. docs/contracts.md, "One fire".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import model_validator

from tickwork.domain.batch import BatchOrder
from tickwork.domain.errors import MalformedFire
from tickwork.domain.fire import CaughtFailure, FireAttempt
from tickwork.domain.wire import FromZero, OptionalText, Text, WireModel, read, refusal

__all__ = ["TaskCall"]

_ONE_OF = ("input", "batch", "report")


class _TaskCallWire(WireModel):
    input: dict[str, Any] | None = None
    batch: dict[str, Any] | None = None
    report: dict[str, Any] | None = None
    execution_name: Text
    execution_arn: OptionalText = None
    retry_count: FromZero = 0

    @model_validator(mode="after")
    def _one_task(self) -> _TaskCallWire:
        given = [name for name in _ONE_OF if getattr(self, name) is not None]
        if len(given) != 1:
            raise refusal(
                f"holds {' and '.join(given) or 'none of them'}",
                "send exactly one of input (a fire), batch or report, as the state machines do",
            )
        return self


@dataclass(frozen=True)
class TaskCall:
    """One invocation of the fulfill function: exactly one of ``attempt``, ``batch`` and
    ``report``. ``execution_arn`` is '' for an execution started before payloads carried it:
    the caller names it by ``execution_name`` on the machine whose task sends the payload."""

    execution_arn: str
    execution_name: str
    retry_count: int
    attempt: FireAttempt | None = None
    batch: BatchOrder | None = None
    report: CaughtFailure | None = None

    @classmethod
    def from_wire(cls, wire: Any) -> TaskCall:
        call = read(_TaskCallWire, wire, "payload", MalformedFire)
        arn, name, retries = call.execution_arn or "", call.execution_name, call.retry_count
        if call.batch is not None:
            return cls(arn, name, retries, batch=BatchOrder.from_wire(call.batch))
        if call.report is not None:
            return cls(arn, name, retries, report=CaughtFailure.from_wire(call.report))
        attempt = FireAttempt.from_wire(wire)
        return cls(arn, name, attempt.retry_count, attempt=attempt)
