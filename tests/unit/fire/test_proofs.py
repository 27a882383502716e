"""GIVEN a stack with a seal key WHEN the fulfill step makes a tick or a failure report THEN it
carries a proof that the tick handler accepts; a report anyone else makes — without a proof,
with one copied onto other fields, or made under another key — is refused as forged."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.unit.fakes import fake_dependencies
from tickwork.dependencies import Dependencies
from tickwork.domain.errors import ForgedReport
from tickwork.domain.fire import CaughtFailure, Outcome, Tick
from tickwork.fire.proofs import check_proof, proved_failure, with_proof

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
TICK = Tick(
    action_id="pay:42",
    generation=2,
    occurrence=3,
    scheduled_time=NOW,
    actual_time=NOW,
    attempts=1,
    action="HTTP_REQUEST",
    outcome=Outcome.FIRED,
    execution_name="pay-42-g2-o3",
    idempotency_key="5d1c9f8e-0000-5000-8000-000000000001",
    result={"status": 200, "elapsed": 0.25},
    data={"url": "https://example.com"},
)


def _deps(seal: bytes = b"the-seal-key") -> Dependencies:
    deps = fake_dependencies(NOW, seal_secret_id="seal")
    deps.secrets.values["seal"] = seal  # type: ignore[attr-defined]
    return deps


def test_a_proved_tick_is_accepted_and_survives_the_wire() -> None:
    deps = _deps()
    wire = with_proof(TICK, deps).to_wire()
    assert wire["proof"].startswith("v1=")
    check_proof("Schedule Tick", wire, deps)
    # what JSON and DynamoDB round-trips do to numbers does not break it
    check_proof("Schedule Tick", {**wire, "result": {"status": 200.0, "elapsed": 0.25}}, deps)
    # data and metadata are the sealed record's, carried for subscribers: not covered
    check_proof("Schedule Tick", {**wire, "data": {}, "metadata": {"x": 1}}, deps)


@pytest.mark.parametrize(
    "forge",
    [
        lambda w: {k: v for k, v in w.items() if k != "proof"},
        lambda w: {**w, "occurrence": 4},
        lambda w: {**w, "generation": 3},
        lambda w: {**w, "outcome": "NO_ACTION"},
        lambda w: {**w, "result": {"status": 500}},
        lambda w: {**w, "manual": 1},
        lambda w: {**w, "proof": "v1=" + "0" * 64},
    ],
    ids=["no-proof", "occurrence", "generation", "outcome", "result", "manual", "made-up"],
)
def test_a_forged_or_altered_tick_is_refused(forge: Any) -> None:
    deps = _deps()
    wire = with_proof(TICK, deps).to_wire()
    with pytest.raises(ForgedReport):
        check_proof("Schedule Tick", forge(wire), deps)


def test_a_tick_proved_under_another_stacks_key_is_refused() -> None:
    other = with_proof(TICK, _deps(b"another-stack")).to_wire()
    with pytest.raises(ForgedReport, match="does not match"):
        check_proof("Schedule Tick", other, _deps())


def test_the_failure_report_is_made_from_the_caught_input_with_its_proof() -> None:
    deps = _deps()
    caught = {
        "id": "pay:42",
        "generation": 2,
        "occurrence": 3,
        "fireAt": "2026-03-07T12:00:00.000Z",
        "waitUntil": "2026-03-07T12:00:00.000Z",
        "error": {"Error": "PermanentFulfillmentError", "Cause": "404 from the receiver"},
    }

    failure = proved_failure(CaughtFailure.from_wire(caught), "pay-42-g2-o3", deps)

    assert (failure.action_id, failure.generation, failure.occurrence) == ("pay:42", 2, 3)
    assert failure.error == "PermanentFulfillmentError"
    assert failure.cause == "404 from the receiver"
    assert failure.scheduled_time == NOW
    check_proof("Schedule Failed", failure.to_wire(), deps)
    with pytest.raises(ForgedReport):
        check_proof("Schedule Failed", {**failure.to_wire(), "occurrence": 2}, deps)


def test_without_a_seal_key_nothing_is_proved_or_checked() -> None:
    deps = fake_dependencies(NOW)
    assert with_proof(TICK, deps) == TICK
    check_proof("Schedule Tick", TICK.to_wire(), deps)
    assert replace(TICK).proof == ""
