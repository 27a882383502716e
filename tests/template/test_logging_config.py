"""GIVEN the template's logging settings WHEN resolved for each LogLevel THEN Lambda writes no
START/END/REPORT line for a successful invocation (its system logs at WARN, which needs the JSON
format), and never filters the application's lines above INFO: the metric lines (EMF) carry no
level, Lambda takes them for INFO, and the alarms read them."""

from __future__ import annotations

import pytest

from tests.contract.conftest import REPO
from tickwork_local.template import load_yaml

TEMPLATE = load_yaml(REPO / "template.yaml")


def _resolved(node: object, log_level: str) -> object:
    conditions = TEMPLATE["Conditions"]
    if isinstance(node, dict) and "Fn::If" in node:
        condition, then, otherwise = node["Fn::If"]
        left, right = conditions[condition]["Fn::Equals"]
        holds = (log_level if left == {"Ref": "LogLevel"} else left) == right
        return then if holds else otherwise
    return node


@pytest.mark.parametrize("log_level", TEMPLATE["Parameters"]["LogLevel"]["AllowedValues"])
def test_system_lines_are_off_and_metric_lines_always_pass(log_level: str) -> None:
    config = TEMPLATE["Globals"]["Function"]["LoggingConfig"]
    assert config["LogFormat"] == "JSON" and config["SystemLogLevel"] == "WARN"
    application = _resolved(config["ApplicationLogLevel"], log_level)
    assert application in ("DEBUG", "INFO")
    assert (application == "DEBUG") == (log_level == "DEBUG")
    # no function sets a level of its own above it
    for name, resource in TEMPLATE["Resources"].items():
        if resource["Type"] == "AWS::Serverless::Function":
            own = resource["Properties"].get("LoggingConfig", {})
            assert own.get("ApplicationLogLevel", "INFO") in ("DEBUG", "INFO"), name
