"""LAMBDA_INVOKE: a Lambda function invoked with the payload given (a JSON object) and one more
member, ``tickwork``, naming the fire. ``Event`` (the default) queues it; ``RequestResponse``
waits for its answer, and the function's own error is classified: a throttle or timeout is
retried, any other error is final, recorded with the function's message."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator

from tickwork.domain.errors import PermanentFulfillmentError, TransientFulfillmentError
from tickwork.fulfillment.arns import Arn, check_size, parse_arn
from tickwork.fulfillment.base import FulfillmentRequest
from tickwork.fulfillment.delivery import Delivery
from tickwork.fulfillment.targets import (
    TargetData,
    calling,
    refuse_identity_member,
    with_identity,
)
from tickwork.ports import TargetClients

__all__ = ["LambdaInvokeData", "LambdaInvokeFulfillment"]

_EXAMPLE = "arn:aws:lambda:us-east-1:123456789012:function:send-invoice"
_RESULT_BYTES = 1024
_TRANSIENT_FUNCTION_ERRORS = re.compile(r"Throttl|TooManyRequests|Timeout|Unavailable", re.I)


class LambdaInvokeData(TargetData):
    """An invocation of a Lambda function: Event (asynchronous, the default, as EventBridge
    Scheduler invokes) or RequestResponse (waits; the function's own error fails the fire, a
    throttling or timeout error is retried). The payload gains a ``tickwork`` member."""

    service: ClassVar[str] = "lambda"
    arn_field: ClassVar[str] = "functionArn"

    function_arn: str = Field(description=f"The function (or version/alias), e.g. {_EXAMPLE}.")
    payload: dict[str, Any] = Field(default_factory=dict, description="A JSON object.")
    invocation_type: Literal["Event", "RequestResponse"] = Field(
        default="Event",
        description="Event queues the invocation; RequestResponse waits for the function.",
    )

    @field_validator("function_arn")
    @classmethod
    def _function(cls, value: str) -> str:
        parse_arn(
            value, "lambda", r"function:[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9$_-]{1,128})?", _EXAMPLE
        )
        return value

    @field_validator("payload", mode="before")
    @classmethod
    def _payload(cls, value: Any) -> Any:
        refuse_identity_member(value, "payload")
        check_size(value, "payload")
        return value

    @property
    def target(self) -> Arn:
        return parse_arn(self.function_arn, "lambda", r".+", _EXAMPLE)


class LambdaInvokeFulfillment:
    action_type: ClassVar[str] = "LAMBDA_INVOKE"
    data_model: ClassVar[type[BaseModel]] = LambdaInvokeData

    @classmethod
    def built(cls, delivery: Delivery) -> LambdaInvokeFulfillment:
        return cls(delivery.targets)

    def __init__(self, clients: TargetClients) -> None:
        self._clients = clients

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        data = LambdaInvokeData.model_validate(request.data)
        target = f"Invoke {data.function_arn}"
        with calling(target):
            answer = self._clients.client("lambda", request.role_arn).invoke(
                FunctionName=data.function_arn,
                InvocationType=data.invocation_type,
                Payload=json.dumps(with_identity(data.payload, request)).encode(),
            )
        request_id = answer.get("ResponseMetadata", {}).get("RequestId")
        returned = answer["Payload"].read() if "Payload" in answer else b""
        if answer.get("FunctionError"):
            raise _function_error(target, returned)
        result: dict[str, Any] = {"statusCode": answer.get("StatusCode"), "requestId": request_id}
        if data.invocation_type == "RequestResponse":
            result["executedVersion"] = answer.get("ExecutedVersion")
            result["response"] = returned[:_RESULT_BYTES].decode("utf-8", errors="replace")
        return result


def _function_error(target: str, returned: bytes) -> Exception:
    try:
        error = json.loads(returned)
    except ValueError:
        error = {}
    kind = str(error.get("errorType", "Unhandled")) if isinstance(error, dict) else "Unhandled"
    said = str(error.get("errorMessage", "")) if isinstance(error, dict) else ""
    message = f"{target}: the function failed: {kind}: {said}"[:1000]
    if _TRANSIENT_FUNCTION_ERRORS.search(kind):
        return TransientFulfillmentError(message)
    return PermanentFulfillmentError(message)
