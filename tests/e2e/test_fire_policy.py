"""GIVEN the local stack on virtual time WHEN a one-off is cancelled in its last seconds, or a
target answers 503 forever under an action's own retry policy THEN the cancel wins until the
claim and the target is never called; the failing fire is attempted until its policy (its age)
runs out, then lands once in its dead-letter queue, recorded FAILED and counted."""

from __future__ import annotations

import json
from datetime import timedelta

from tests.e2e.support import Stack, in_seconds
from tests.functional.target_support import Targets
from tickwork.domain.action import Status
from tickwork.domain.selection import Selection
from tickwork.domain.times import parse_iso
from tickwork.steering.pause import pause_action
from tickwork.steering.stop import cancel_action
from tickwork_local.receiver import Receiver

# The stack's own lock (as deployed: 120 s) and retry backoff (2 s doubling, capped at 300 s)
DEPLOYED = {"LockSeconds": "120", "RetryIntervalSeconds": "2", "RetryMaxDelaySeconds": "300"}


def _hook(action_id: str, receiver: Receiver, seconds: float, **more: object) -> dict:
    return {
        "id": action_id,
        "at": in_seconds(seconds),
        "action": "HTTP_REQUEST",
        "data": {"url": receiver.url, "method": "POST", "body": {"cancel": "subscription"}},
        **more,
    }


def test_a_one_off_cancelled_inside_its_lock_never_calls_its_target(
    make_stack, receiver: Receiver
) -> None:
    stack: Stack = make_stack(**DEPLOYED)
    stack.start(_hook("sub:cust-43:cancel", receiver, 60))
    stack.wait_launched("sub:cust-43:cancel")

    # WHEN it is cancelled 60 s before its fire: inside the stack's 120 s lock
    answer = cancel_action("sub:cust-43:cancel", stack.deps).to_wire()

    # THEN it is cancelled at once, and the fire never reaches the target
    assert answer["outcome"] == "cancelled"
    stack.local.time.advance(300)
    stack.local.wait_idle()
    assert receiver.requests == []
    assert stack.record("sub:cust-43:cancel").status == Status.CANCELLED
    assert stack.ticks_for("sub:cust-43:cancel") == []


def test_a_paused_one_off_in_its_lock_waits_and_fires_once_resumed_never_before(
    make_stack, receiver: Receiver
) -> None:
    stack: Stack = make_stack(**DEPLOYED)
    stack.start(_hook("sub:pause", receiver, 30))
    stack.wait_launched("sub:pause")

    assert pause_action("sub:pause", "customer called", stack.deps).to_wire()["outcome"] == (
        "paused"
    )
    stack.local.time.advance(120)
    stack.local.wait_idle()
    assert receiver.requests == []
    assert stack.record("sub:pause").status == Status.PAUSED


def test_a_target_down_for_good_is_tried_until_its_age_then_dead_lettered_once(
    make_stack, receiver: Receiver
) -> None:
    stack: Stack = make_stack(**DEPLOYED)
    dlq = Targets(stack.local).queue("billing-dlq")
    receiver.failures = 10**6  # 503 forever
    detail = _hook(
        "bill:1",
        receiver,
        5,
        maximumRetryAttempts=20,
        maximumEventAgeSeconds=3600,
        deadLetterArn=dlq,
    )
    stack.start(detail)

    failed = stack.wait_record("bill:1", lambda a: a.status == Status.FAILED, timeout=120)
    stack.local.wait_idle()

    # THEN it was attempted as its policy allows, with one key, never after its age
    attempts = len(receiver.requests)
    assert 2 <= attempts <= 21
    keys = {r["headers"].get("Idempotency-Key") for r in receiver.requests}
    assert len(keys) == 1
    numbered = [r["headers"].get("X-Tickwork-Attempt") for r in receiver.requests]
    assert numbered == [str(n) for n in range(1, attempts + 1)]
    scheduled = failed.history[-1].scheduled_time
    assert failed.history[-1].outcome == "FAILED" and failed.history[-1].attempts == attempts
    assert failed.history[-1].actual_time <= scheduled + timedelta(seconds=3600 + 300)
    # AND its letter is in the dead-letter queue, once, saying what failed and why
    queue = stack.local.client("sqs")
    url = queue.get_queue_url(QueueName="billing-dlq")["QueueUrl"]
    letters = queue.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    ).get("Messages", [])
    assert len(letters) == 1
    body = json.loads(letters[0]["Body"])
    assert body["actionId"] == "bill:1" and body["occurrence"] == 1
    assert parse_iso(body["scheduledTime"]) == scheduled
    assert body["attempts"] == attempts and body["idempotencyKey"] in keys
    assert "RetriesExhausted" in body["error"] + body["errorMessage"]
    attributes = letters[0]["MessageAttributes"]
    assert attributes["RETRY_ATTEMPTS"]["StringValue"] == str(attempts - 1)
    assert attributes["tickwork-action-id"]["StringValue"] == "bill:1"
    # AND the failure is counted
    stack.wait_counted()
    assert stack.queries.count(Selection())["FAILED"] == 1


def test_a_long_policy_ends_when_the_fires_age_runs_out_not_its_attempts(
    make_stack, receiver: Receiver
) -> None:
    stack: Stack = make_stack(**DEPLOYED)
    receiver.failures = 10**6
    policy = {"maximumRetryAttempts": 185, "maximumEventAgeSeconds": 600}
    stack.start(_hook("bill:age", receiver, 5, **policy))

    failed = stack.wait_record("bill:age", lambda a: a.status == Status.FAILED, timeout=120)

    entry = failed.history[-1]
    assert entry.attempts == len(receiver.requests) < 186
    started = [parse_iso(r["headers"]["X-Tickwork-Scheduled-Time"]) for r in receiver.requests]
    assert set(started) == {entry.scheduled_time}
    assert "past the retry policy's deadline" in (failed.last_error or "") or (
        "deadline" in (entry.error or "")
    )
