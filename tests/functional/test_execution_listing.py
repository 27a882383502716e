"""GIVEN a state machine with running and stopped executions (moto) WHEN the adapter lists the
running ones THEN it names exactly those, across pages, and None past the most asked for."""

from __future__ import annotations

import json

import boto3
from moto import mock_aws

from tickwork.adapters.stepfunctions import StepFunctionsExecutions

DEFINITION = {"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": True}}}
ROLE = "arn:aws:iam::123456789012:role/sfn"


@mock_aws
def test_the_running_executions_are_listed_and_a_stopped_one_is_not() -> None:
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    arn = sfn.create_state_machine(name="m", definition=json.dumps(DEFINITION), roleArn=ROLE)[
        "stateMachineArn"
    ]
    started = [
        sfn.start_execution(stateMachineArn=arn, name=f"e{n}")["executionArn"] for n in range(5)
    ]
    sfn.stop_execution(executionArn=started[0])
    executions = StepFunctionsExecutions(arn, client=sfn)

    assert executions.running_names(100) == {"e1", "e2", "e3", "e4"}
    assert executions.running_names(3) is None  # more than asked for: describe instead
