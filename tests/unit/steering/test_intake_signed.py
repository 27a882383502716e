"""GIVEN a stack that requires signed events WHEN Starts and control events (Stop, Pause,
Resume, Run Now) arrive on the bus THEN each must be signed for its own detail-type, each
signature is accepted once (a redelivery of the same event is the same request), and a request
signed before the last change applied to its action is refused as stale; every refusal is
published as Schedule Rejected with its reason, and changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.unit.fakes import fake_dependencies
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.events import DetailType
from tickwork.integrity.signed_events import sign_event
from tickwork.steering.intake import accept_control, accept_start
from tickwork.steering.start import StartCommand

KEY = b"the-stacks-signing-key"
NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
START = {"id": "pay:42", "duration": "1h"}


@pytest.fixture
def deps() -> Dependencies:
    deps = fake_dependencies(NOW, start_secret_id="start-key")
    deps.secrets.values["start-key"] = KEY  # type: ignore[attr-defined]
    return deps


def _signed(kind: str, detail: dict[str, Any], at: datetime = NOW) -> dict[str, Any]:
    return sign_event(KEY, kind, detail, int(at.timestamp()))


def _start(deps: Dependencies, detail: dict[str, Any], event_id: str) -> dict[str, Any]:
    return accept_start(StartCommand(detail, event_id), deps).to_wire()


def _control(
    deps: Dependencies, kind: str, detail: dict[str, Any], event_id: str
) -> dict[str, Any]:
    return accept_control(kind, detail, event_id, deps).to_wire()


def _status(deps: Dependencies) -> Status:
    action = deps.records.get("pay:42")
    assert action is not None
    return action.status


@pytest.mark.parametrize(
    "kind", [DetailType.STOP, DetailType.PAUSE, DetailType.RESUME, DetailType.RUN_NOW]
)
def test_an_unsigned_control_event_is_rejected_and_changes_nothing(deps, kind) -> None:
    assert _start(deps, _signed(DetailType.START, START), "e1")["outcome"] == "created"

    answer = _control(deps, kind, {"id": "pay:42"}, "e2")

    assert answer["outcome"] == "rejected" and answer["signature"] == "unsigned"
    assert _status(deps) == Status.PENDING
    rejected = deps.publisher.of_type(DetailType.REJECTED)  # type: ignore[attr-defined]
    assert [(r["request"], r["signature"]) for r in rejected] == [(str(kind), "unsigned")]


def test_a_signed_stop_cancels(deps) -> None:
    _start(deps, _signed(DetailType.START, START), "e1")
    deps.clock.current = NOW + timedelta(seconds=5)  # type: ignore[attr-defined]

    answer = _control(
        deps,
        DetailType.STOP,
        _signed(DetailType.STOP, {"id": "pay:42"}, NOW + timedelta(seconds=5)),
        "e2",
    )

    assert answer["outcome"] == "cancelled"
    assert _status(deps) == Status.CANCELLED


def test_a_signed_pause_cannot_pass_for_a_stop(deps) -> None:
    _start(deps, _signed(DetailType.START, START), "e1")
    pause = _signed(DetailType.PAUSE, {"id": "pay:42"})

    answer = _control(deps, DetailType.STOP, pause, "e2")

    assert answer["signature"] == "forged"
    assert _status(deps) == Status.PENDING


def test_a_signature_is_accepted_once_but_a_redelivery_is_the_same_request(deps) -> None:
    signed = _signed(DetailType.START, START)
    assert _start(deps, signed, "e1")["outcome"] == "created"

    again = _start(deps, signed, "e1")  # EventBridge delivered the same event twice
    replayed = _start(deps, signed, "e9")  # captured and put on the bus again

    assert again["outcome"] != "rejected"
    assert replayed["outcome"] == "rejected" and replayed["signature"] == "replayed"


def test_a_captured_start_replayed_after_the_owner_cancelled_stays_cancelled(deps) -> None:
    """The review's replay: a signed Start, captured, put again inside its window once the
    owner has cancelled the action, must not bring it back."""
    signed = _signed(DetailType.START, START)
    _start(deps, signed, "e1")
    deps.clock.current = NOW + timedelta(seconds=30)  # type: ignore[attr-defined]
    stop = _signed(DetailType.STOP, {"id": "pay:42"}, NOW + timedelta(seconds=30))
    assert _control(deps, DetailType.STOP, stop, "e2")["outcome"] == "cancelled"

    deps.clock.current = NOW + timedelta(seconds=60)  # type: ignore[attr-defined]
    replayed = _start(deps, signed, "e3")

    assert replayed["outcome"] == "rejected" and replayed["signature"] == "replayed"
    assert _status(deps) == Status.CANCELLED


def test_a_request_signed_before_the_last_change_is_stale(deps) -> None:
    """A Start signed at 12:00:00 but delivered after a Stop signed and applied at 12:00:30 (a
    delayed or withheld event) is older than the change already applied: refused."""
    _start(deps, _signed(DetailType.START, START), "e1")
    late_start = _signed(DetailType.START, {**START, "duration": "2h"}, NOW + timedelta(seconds=1))
    deps.clock.current = NOW + timedelta(seconds=30)  # type: ignore[attr-defined]
    stop = _signed(DetailType.STOP, {"id": "pay:42"}, NOW + timedelta(seconds=30))
    _control(deps, DetailType.STOP, stop, "e2")

    answer = _start(deps, late_start, "e3")

    assert answer["outcome"] == "rejected" and answer["signature"] == "stale"
    assert "before the signed request that already changed pay:42" in answer["message"]
    assert _status(deps) == Status.CANCELLED


def test_fires_do_not_make_a_fresh_request_stale(deps) -> None:
    """Only changes count: a fire writes the record but a Stop signed before it still stops."""
    from tests.unit import machine

    _start(deps, {**_signed(DetailType.START, {"id": "pay:42", "rate": "rate(1 minute)"})}, "e1")
    stop = _signed(DetailType.STOP, {"id": "pay:42"}, NOW + timedelta(seconds=30))  # before it
    deps.clock.current = NOW + timedelta(minutes=1, seconds=1)  # type: ignore[attr-defined]
    machine.run(deps, machine.current(deps, "pay:42"))  # occurrence 1 fires at 12:01
    deps.clock.current = NOW + timedelta(minutes=1, seconds=2)  # type: ignore[attr-defined]

    answer = _control(deps, DetailType.STOP, stop, "e2")

    assert answer["outcome"] in ("cancelled", "deferred"), answer


def test_a_request_signed_well_before_a_change_made_through_the_api_is_stale(deps) -> None:
    """A change without a signature (the API, the CLI) is timed by the stack's clock: a request
    signed more than 30 s before it is refused; a nearly simultaneous one still passes."""
    from tickwork.steering.pause import pause_action

    _start(deps, _signed(DetailType.START, START), "e1")
    deps.clock.current = NOW + timedelta(seconds=60)  # type: ignore[attr-defined]
    pause_action("pay:42", "by the API", deps)  # no signature: IAM let the caller in
    deps.clock.current = NOW + timedelta(seconds=65)  # type: ignore[attr-defined]

    withheld = _signed(DetailType.RESUME, {"id": "pay:42"}, NOW + timedelta(seconds=10))
    answer = _control(deps, DetailType.RESUME, withheld, "e2")
    assert answer["outcome"] == "rejected" and answer["signature"] == "stale"
    assert "through the API or the CLI" in answer["message"]

    nearly = _signed(DetailType.RESUME, {"id": "pay:42"}, NOW + timedelta(seconds=45))
    assert _control(deps, DetailType.RESUME, nearly, "e3")["outcome"] == "resumed"


@pytest.mark.parametrize("spelling", ["action_id", "actionId", "ID"])
def test_a_stale_request_naming_its_action_another_way_is_refused_not_applied(
    deps, spelling: str
) -> None:
    """A steering event names its action by "id" alone: one spelled otherwise is refused,
    never read past the staleness check (which reads "id")."""
    _start(deps, _signed(DetailType.START, START), "e1")
    late_stop = _signed(DetailType.STOP, {spelling: "pay:42"}, NOW + timedelta(seconds=5))
    deps.clock.current = NOW + timedelta(seconds=20)  # type: ignore[attr-defined]
    pause = _signed(DetailType.PAUSE, {"id": "pay:42"}, NOW + timedelta(seconds=10))
    assert _control(deps, DetailType.PAUSE, pause, "e2")["outcome"] == "paused"

    answer = _control(deps, DetailType.STOP, late_stop, "e3")

    assert answer["outcome"] == "rejected"
    assert {p["field"] for p in answer["problems"]} >= {"id", spelling}
    assert _status(deps) == Status.PAUSED
