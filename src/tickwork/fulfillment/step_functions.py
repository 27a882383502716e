"""STEP_FUNCTIONS_EXECUTION: an execution of a state machine, named by the fire's idempotency
key, so a repeated attempt never starts a second one (the name is taken: it is the same
execution). Its input is the object given, with one more member, ``tickwork``, naming the
fire."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from botocore.exceptions import ClientError
from pydantic import BaseModel, Field, field_validator

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

__all__ = ["StepFunctionsData", "StepFunctionsFulfillment"]

_EXAMPLE = "arn:aws:states:us-east-1:123456789012:stateMachine:onboarding"


class StepFunctionsData(TargetData):
    """An execution of a state machine, named by the fire's idempotency key: a repeated
    attempt never starts a second one. The input gains a ``tickwork`` member."""

    service: ClassVar[str] = "states"
    arn_field: ClassVar[str] = "stateMachineArn"

    state_machine_arn: str = Field(description=f"The state machine, e.g. {_EXAMPLE}.")
    input: dict[str, Any] = Field(default_factory=dict, description="A JSON object.")

    @field_validator("state_machine_arn")
    @classmethod
    def _machine(cls, value: str) -> str:
        parse_arn(value, "states", r"stateMachine:[A-Za-z0-9_-]{1,80}", _EXAMPLE)
        return value

    @field_validator("input", mode="before")
    @classmethod
    def _input(cls, value: Any) -> Any:
        refuse_identity_member(value, "input")
        check_size(value, "input")
        return value

    @property
    def target(self) -> Arn:
        return parse_arn(self.state_machine_arn, "states", r".+", _EXAMPLE)


class StepFunctionsFulfillment:
    action_type: ClassVar[str] = "STEP_FUNCTIONS_EXECUTION"
    data_model: ClassVar[type[BaseModel]] = StepFunctionsData

    @classmethod
    def built(cls, delivery: Delivery) -> StepFunctionsFulfillment:
        return cls(delivery.targets)

    def __init__(self, clients: TargetClients) -> None:
        self._clients = clients

    def fulfill(self, request: FulfillmentRequest) -> dict[str, Any]:
        data = StepFunctionsData.model_validate(request.data)
        name = request.idempotency_key  # a UUID: a valid, unique execution name
        execution = data.target.text.replace(":stateMachine:", ":execution:") + f":{name}"
        target = f"StartExecution of {data.state_machine_arn}"
        with calling(target):
            try:
                answer = self._clients.client("stepfunctions", request.role_arn).start_execution(
                    stateMachineArn=data.state_machine_arn,
                    name=name,
                    input=json.dumps(with_identity(data.input, request)),
                )
            except ClientError as error:
                if error.response.get("Error", {}).get("Code") != "ExecutionAlreadyExists":
                    raise
                # An earlier attempt of this fire started it (its answer was lost): delivered.
                return {"executionArn": execution, "alreadyStarted": True}
        return {"executionArn": answer["executionArn"], "startDate": str(answer["startDate"])}
