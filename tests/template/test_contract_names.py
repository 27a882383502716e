"""GIVEN the names and shapes that template.yaml and the state machine write by hand WHEN held
against tickwork's code THEN they are the same: the detail types of domain.events, and the
fire contract's Fulfill payload and failure report (domain.fire)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tickwork.domain.events import INBOUND, DetailType
from tickwork.domain.fire import FireAttempt, FireOrder
from tickwork_local.template import Template

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = Template(REPO / "template.yaml")
DEFINITION: dict[str, Any] = json.loads(
    TEMPLATE.state_machine_definition(next(iter(TEMPLATE.of_type("AWS::Serverless::StateMachine"))))
)
STATES: dict[str, Any] = DEFINITION["States"]
DUE = datetime(2026, 1, 1, tzinfo=UTC)


def _rule_patterns() -> dict[str, dict[str, Any]]:
    return {rule.name: rule.pattern for spec in TEMPLATE.functions() for rule in spec.rules}


def test_every_detail_type_a_rule_matches_is_a_known_one() -> None:
    matched = {
        name
        for pattern in _rule_patterns().values()
        for name in pattern["detail-type"]
        if isinstance(name, str)  # the near-miss rule's anything-but: every other one
    }
    assert matched <= set(DetailType)
    assert set(INBOUND) | {DetailType.TICK, DetailType.FAILED} == matched


def test_the_state_machine_emits_the_tick_and_failure_by_their_names() -> None:
    emitted = {
        entry["DetailType"]
        for state in STATES.values()
        if state.get("Resource", "").endswith(":states:::events:putEvents")
        for entry in state["Parameters"]["Entries"]
    }
    assert emitted == {DetailType.TICK, DetailType.FAILED}


def test_the_fulfill_payload_has_the_fields_of_a_fire_attempt() -> None:
    payload = STATES["Fulfill"]["Parameters"]["Payload"]
    written = {key.removesuffix(".$") for key in payload}
    assert written == set(FireAttempt(FireOrder("a", 1, 1, DUE, DUE), "n").to_wire())


def test_the_failure_report_is_the_proved_failure_the_fulfill_step_makes() -> None:
    """The Catch hands the fire's input and its error to the fulfill step ("Prove failure"),
    whose answer — a FireFailure with its proof — is the Schedule Failed detail as it is."""
    (failed,) = (s for s in STATES.values() if _emits(s, DetailType.FAILED))
    (entry,) = failed["Parameters"]["Entries"]
    assert entry["Detail.$"] == "$"
    (caught,) = (c for c in STATES["Fulfill"]["Catch"] if c["ErrorEquals"] == ["States.ALL"])
    prove = STATES[caught["Next"]]
    assert caught["ResultPath"] == "$.error" and prove["Next"] != caught["Next"]
    assert STATES[prove["Next"]] is failed
    assert prove["Parameters"]["Payload"] == {
        "report.$": "$",
        "executionName.$": "$$.Execution.Name",
        "executionArn.$": "$$.Execution.Id",  # the execution's whole identity: its machine
    }
    assert prove["Parameters"]["FunctionName"] == STATES["Fulfill"]["Parameters"]["FunctionName"]


def _emits(state: dict[str, Any], detail_type: DetailType) -> bool:
    return any(
        entry.get("DetailType") == detail_type
        for entry in state.get("Parameters", {}).get("Entries", [])
    )
