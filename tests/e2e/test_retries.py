"""GIVEN a fulfillment that fails WHEN it fires THEN transient errors are retried, permanent ones
recorded FAILED, and a FAILED action can be retried by hand."""

from __future__ import annotations

from tests.e2e.support import Stack, assert_never_early, in_seconds
from tickwork.domain.action import Status
from tickwork.steering.retry import retry_action
from tickwork_local.receiver import Receiver


def _http_action(action_id: str, receiver: Receiver) -> dict:
    return {
        "id": action_id,
        "at": in_seconds(2),
        "action": "HTTP_REQUEST",
        "data": {"url": receiver.url, "method": "POST", "body": {"hello": "world"}},
    }


def test_transient_failure_is_retried_then_succeeds(stack: Stack, receiver: Receiver) -> None:
    # GIVEN a receiver that answers 500 twice, then 200
    receiver.failures = 2
    stack.start(_http_action("hook:flaky", receiver))

    # WHEN the action fires
    action = stack.wait_record("hook:flaky", lambda a: a.status == Status.COMPLETED, timeout=20)
    stack.local.wait_idle()

    # THEN three attempts reached the receiver, the tick reports them, retryCount is recorded
    assert len(receiver.requests) == 3
    ticks = stack.ticks_for("hook:flaky", count=1, timeout=2)
    assert len(ticks) == 1 and ticks[0]["attempts"] == 3
    assert ticks[0]["result"]["status"] == 200
    assert action.retry_count == 2
    assert action.history[-1].attempts == 3
    assert_never_early(ticks)


def test_exhausted_retries_end_failed_then_manual_retry_completes(
    stack: Stack, receiver: Receiver
) -> None:
    # GIVEN a receiver that fails more often than the 2 retries allow
    receiver.failures = 3
    stack.start(_http_action("hook:down", receiver))

    # WHEN the action fires
    failed = stack.wait_record("hook:down", lambda a: a.status == Status.FAILED, timeout=20)
    stack.local.wait_idle()

    # THEN it is FAILED with the error and no tick was emitted
    assert len(receiver.requests) == 3
    assert "TransientFulfillmentError" in (failed.last_error or "")
    assert failed.history[-1].outcome == "FAILED"
    assert stack.ticks_for("hook:down") == []
    assert any(e["status"] == "FAILED" for e in stack.executions())

    # WHEN an operator retries it by hand, the receiver being back
    result = retry_action("hook:down", stack.deps).to_wire()

    # THEN the same occurrence runs again and completes
    assert result["occurrence"] == 1
    done = stack.wait_record("hook:down", lambda a: a.status == Status.COMPLETED, timeout=15)
    ticks = stack.ticks_for("hook:down", count=1, timeout=2)
    assert [t["occurrence"] for t in ticks] == [1]
    assert [h.outcome for h in done.history] == ["FAILED", "FIRED"]
    assert len(receiver.requests) == 4
