"""ExecutionStarter over Step Functions: one Standard execution per upcoming fire (the fire
machine), or per batch of fires due in the same second (the batch machine)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from tickwork.adapters.clients import AwsClients
from tickwork.domain.errors import LaunchRefused
from tickwork.ports import AlreadyStarted, ExecutionInput, ExecutionState

if TYPE_CHECKING:
    from mypy_boto3_stepfunctions import SFNClient

__all__ = ["StepFunctionsExecutions"]

# The open-execution quota, and throttling that outlived botocore's own retries.
_REFUSALS = {"ExecutionLimitExceeded", "ThrottlingException", "TooManyRequestsException"}
_LIST_PAGE = 1000  # ListExecutions' largest page


class StepFunctionsExecutions:
    def __init__(
        self,
        state_machine_arn: str,
        client: SFNClient | None = None,
        clients: AwsClients | None = None,
    ) -> None:
        self._arn = state_machine_arn
        self._given = client
        self._clients = clients or AwsClients()

    @property
    def _client(self) -> SFNClient:
        if self._given is not None:
            return self._given
        client: SFNClient = self._clients.client("stepfunctions")
        return client

    def execution_arn(self, name: str) -> str:
        prefix, _, machine = self._arn.rpartition(":stateMachine:")
        return f"{prefix}:execution:{machine}:{name}"

    def owns(self, execution_arn: str) -> bool:
        return execution_arn.startswith(self.execution_arn(""))

    def start(self, name: str, order: ExecutionInput) -> str:
        try:
            response = self._client.start_execution(
                stateMachineArn=self._arn, name=name, input=json.dumps(order.to_wire())
            )
        except ClientError as error:
            code = error.response["Error"]["Code"]
            if code == "ExecutionAlreadyExists":
                # Whose it is, its input tells (its proof): the caller decides.
                raise self._already_started(name) from error
            if code in _REFUSALS:
                raise LaunchRefused(name, code) from error
            raise
        return response["executionArn"]

    def _already_started(self, name: str) -> AlreadyStarted:
        arn = self.execution_arn(name)
        found = self._client.describe_execution(executionArn=arn)
        try:
            given: Any = json.loads(found.get("input") or "null")
        except ValueError:
            given = None
        return AlreadyStarted(name, arn, given)

    def describe(self, name: str) -> ExecutionState | None:
        try:
            found = self._client.describe_execution(executionArn=self.execution_arn(name))
        except ClientError as error:
            if error.response["Error"]["Code"] == "ExecutionDoesNotExist":
                return None
            raise
        output = found.get("output")
        return ExecutionState(
            status=found["status"],
            output=json.loads(output) if output else None,
            error=found.get("error"),
            cause=found.get("cause"),
            stopped_at=found.get("stopDate"),
        )

    def running_names(self, most: int) -> set[str] | None:
        names: set[str] = set()
        pages = self._client.get_paginator("list_executions").paginate(
            stateMachineArn=self._arn,
            statusFilter="RUNNING",
            PaginationConfig={"PageSize": _LIST_PAGE},
        )
        for page in pages:
            names.update(execution["name"] for execution in page["executions"])
            if len(names) > most:
                return None
        return names

    def stop(self, execution_arn: str, cause: str) -> None:
        try:
            self._client.stop_execution(executionArn=execution_arn, cause=cause[:32768])
        except ClientError as error:
            if error.response["Error"]["Code"] not in {
                "ExecutionDoesNotExist",
                "ValidationException",
            }:
                raise
