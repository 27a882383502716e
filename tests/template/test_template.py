"""GIVEN template.yaml and statemachines/ WHEN checked as SAM, CloudFormation, ASL THEN pass."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tickwork_local.template import Template

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TEMPLATE = Template(REPO / "template.yaml")
MACHINES = TEMPLATE.of_type("AWS::Serverless::StateMachine")


def test_sam_validate_lint_passes() -> None:
    env = {**os.environ, "SAM_CLI_TELEMETRY": "0", "AWS_DEFAULT_REGION": "us-east-1"}
    run = subprocess.run(
        [str(BIN / "sam"), "validate", "--lint", "--template-file", str(REPO / "template.yaml")],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "is a valid SAM Template" in run.stdout + run.stderr


@pytest.mark.parametrize("logical_id", sorted(MACHINES))
def test_every_definition_variable_has_a_substitution_and_none_is_unused(logical_id: str) -> None:
    props = MACHINES[logical_id]["Properties"]
    text = (REPO / props["DefinitionUri"]).read_text()
    used = set(re.findall(r"\$\{([A-Za-z0-9_]+)\}", text))
    given = set(props.get("DefinitionSubstitutions", {}))
    assert used - given == set(), f"no substitution for {sorted(used - given)}"
    assert given - used == set(), f"unused substitutions {sorted(given - used)}"


@pytest.mark.parametrize("logical_id", sorted(MACHINES))
def test_substituted_definition_passes_statelint(logical_id: str, tmp_path: Path) -> None:
    definition = tmp_path / "definition.json"
    definition.write_text(TEMPLATE.state_machine_definition(logical_id))
    run = subprocess.run(
        [str(BIN / "statelint"), str(definition)], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.parametrize("logical_id", sorted(MACHINES))
def test_definition_has_no_account_region_or_arn_literal(logical_id: str) -> None:
    text = (REPO / MACHINES[logical_id]["Properties"]["DefinitionUri"]).read_text()
    assert not re.search(r"\d{12}", text), "account id literal"
    assert not re.search(r"(us|eu|ap|sa|ca|me|af)-[a-z]+-\d", text), "region literal"
    assert "arn:aws" not in text, "partition literal: use ${Partition}"


def test_a_lone_fires_happy_path_is_two_states() -> None:
    """Wait, then Fulfill: the task records the fire and puts its tick itself."""
    machine = json.loads(TEMPLATE.state_machine_definition("FireStateMachine"))
    states, path, name = machine["States"], [], machine["StartAt"]
    while name:
        path.append(name)
        state = states[name]
        name = None if state.get("End") else state.get("Next")
    assert path == ["Wait for fire time", "Fulfill"]


def test_a_batch_is_two_states_for_all_its_fires() -> None:
    machine = json.loads(TEMPLATE.state_machine_definition("BatchStateMachine"))
    states, path, name = machine["States"], [], machine["StartAt"]
    while name:
        path.append(name)
        state = states[name]
        name = None if state.get("End") else state.get("Next")
    assert path == ["Wait for the second", "Fulfill fires"]
    assert states["Wait for the second"]["TimestampPath"] == "$.waitUntil"


def test_layer_requirements_match_the_package_dependencies() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    lines = (REPO / "src" / "requirements.txt").read_text().splitlines()
    shipped = [line for line in lines if line.strip() and not line.startswith("#")]
    assert sorted(shipped) == sorted(declared)


@pytest.mark.parametrize("function", TEMPLATE.functions(), ids=lambda f: f.logical_id)
def test_every_function_handler_exists(function) -> None:
    module, _, attribute = function.handler.rpartition(".")
    source = (function.code_dir / f"{module}.py").read_text()
    assert f"def {attribute}(" in source


@pytest.mark.parametrize(
    "path", sorted((REPO / "events").rglob("*.json")), ids=lambda p: str(p.relative_to(REPO))
)
def test_event_files_are_valid_invoke_payloads(path: Path) -> None:
    body = json.loads(path.read_text())
    if path.parent.name == "fulfill":  # what the state machines' tasks send (ASL Payload)
        from tickwork.domain.task_call import TaskCall

        call = TaskCall.from_wire(body)
        assert (
            call.execution_name
            and sum(x is not None for x in (call.attempt, call.batch, call.report)) == 1
        )
    elif path.parent.name == "pump-worker":  # what a pump run hands a worker (asynchronous)
        from tickwork.adapters.record_keys import PARK_SHARDS

        if "shard" in body:
            assert set(body) == {"shard"} and body["shard"] in range(PARK_SHARDS)
        else:
            assert set(body) == {"ids"} and all(isinstance(i, str) for i in body["ids"])
    elif path.parent.name == "count" and "lagSeconds" in body:  # a fold asked for by hand
        assert set(body) == {"lagSeconds"} and body["lagSeconds"] >= 0
    elif path.parent.name == "api":
        from aws_lambda_powertools.utilities.parser import parse
        from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventV2Model

        request = parse(event=body, model=APIGatewayProxyEventV2Model)
        assert request.rawPath.startswith("/")
    else:
        from aws_lambda_powertools.utilities.parser import parse
        from aws_lambda_powertools.utilities.parser.models import EventBridgeModel

        envelope = parse(event=body, model=EventBridgeModel)
        if path.parent.name in ("pump", "reconcile", "count"):  # run by an EventBridge schedule
            assert (envelope.source, envelope.detail_type) == ("aws.events", "Scheduled Event")
        else:
            assert envelope.detail_type.startswith("Schedule ")


# --- what AWS accepts, and what one execution can hold ------------------------------------------
HISTORY_EVENTS = 25_000  # events in one Standard execution's history; past it the execution fails
EVENTS_PER_TASK_ATTEMPT = 3  # TaskScheduled, TaskStarted, TaskSucceeded / TaskFailed / TimedOut
AWS_MAX_DELAY_SECONDS = 31_622_400  # a retrier's MaxDelaySeconds
AWS_MAX_INTERVAL_SECONDS = 99_999_999  # a retrier's IntervalSeconds
AWS_MAX_ATTEMPTS = 99_999_999  # a retrier's MaxAttempts
RETRY_PARAMETERS = {
    "RetryIntervalSeconds": AWS_MAX_INTERVAL_SECONDS,
    "RetryMaxDelaySeconds": AWS_MAX_DELAY_SECONDS,
    "RetryMaxAttempts": AWS_MAX_ATTEMPTS,
    "SlotWaitSeconds": AWS_MAX_INTERVAL_SECONDS,
    "SlotMaxWaitSeconds": AWS_MAX_DELAY_SECONDS,
}


def _at_their_maxima() -> dict[str, Any]:
    parameters = TEMPLATE.doc["Parameters"]
    numbers = {name: spec for name, spec in parameters.items() if spec.get("Type") == "Number"}
    unbounded = sorted(name for name, spec in numbers.items() if "MaxValue" not in spec)
    assert unbounded == [], f"Number parameters without a MaxValue: {unbounded}"
    at_most = {name: str(spec["MaxValue"]) for name, spec in numbers.items()}
    machine = Template(REPO / "template.yaml", parameters=at_most)
    return json.loads(machine.state_machine_definition("FireStateMachine"))


def _longest_history(states: dict[str, Any], name: str) -> int:
    """The most history events an execution entering ``name`` can still write: every Task
    attempt its retriers allow, two events per state entered, along the longest path."""
    state = states[name]
    events = 2
    if state["Type"] == "Task":
        attempts = 1 + sum(retrier.get("MaxAttempts", 3) for retrier in state.get("Retry", []))
        events += EVENTS_PER_TASK_ATTEMPT * attempts
    following = [state.get("Next"), *(c["Next"] for c in state.get("Catch", []))]
    return events + max((_longest_history(states, n) for n in following if n), default=0)


def test_every_number_parameter_is_bounded_so_an_execution_can_hold_its_retries() -> None:
    # GIVEN every Number parameter at its MaxValue WHEN the definition is substituted
    machine = _at_their_maxima()
    # THEN the longest path (every retry of Fulfill, its waits for a slot, then the failure
    # path with its own retries) still fits one execution's history, with room to spare
    longest = 2 + _longest_history(machine["States"], machine["StartAt"])  # started, ended
    assert longest <= HISTORY_EVENTS, f"{longest} events: lower RetryMaxAttempts' MaxValue"


@pytest.mark.parametrize(("name", "aws_most"), sorted(RETRY_PARAMETERS.items()))
def test_retry_parameters_stay_within_what_step_functions_accepts(name: str, aws_most: int) -> None:
    spec = TEMPLATE.doc["Parameters"][name]
    assert 1 <= spec["Default"] <= spec["MaxValue"] <= aws_most
