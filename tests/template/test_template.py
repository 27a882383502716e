"""GIVEN template.yaml and statemachines/ WHEN checked as SAM, CloudFormation, ASL THEN pass."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

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


def test_happy_path_is_three_states() -> None:
    machine = json.loads(TEMPLATE.state_machine_definition("FireStateMachine"))
    states, path, name = machine["States"], [], machine["StartAt"]
    while name:
        path.append(name)
        state = states[name]
        name = None if state.get("End") else state.get("Next")
    assert path == ["Wait for fire time", "Fulfill", "Emit tick"]


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
    if path.parent.name == "fulfill":
        assert set(body) == {"input", "executionName", "retryCount"}
    elif path.parent.name == "api":
        from aws_lambda_powertools.utilities.parser import parse
        from aws_lambda_powertools.utilities.parser.models import APIGatewayProxyEventV2Model

        request = parse(event=body, model=APIGatewayProxyEventV2Model)
        assert request.rawPath.startswith("/")
    else:
        from aws_lambda_powertools.utilities.parser import parse
        from aws_lambda_powertools.utilities.parser.models import EventBridgeModel

        envelope = parse(event=body, model=EventBridgeModel)
        assert envelope.detail_type.startswith("Schedule ")
