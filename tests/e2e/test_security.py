"""GIVEN attacks on a running stack WHEN they are tried THEN they are refused and nothing runs:
unsigned, forged and replayed Starts when signatures are required; a record altered by hand in
DynamoDB; a webhook aimed at the instance metadata service. And the webhooks tickwork does send
carry a signature that verifies with the stack's key."""

from __future__ import annotations

import time
from typing import Any

from tests.e2e.support import Stack, in_seconds, now
from tests.functional.target_support import Targets
from tickwork.domain.action import ACTIVE, Status
from tickwork.domain.times import iso
from tickwork.integrity.signature import SIGNATURE_HEADER, verify_signature
from tickwork.integrity.signed_events import sign_event
from tickwork.integrity.start_signature import sign_start
from tickwork_local.receiver import Receiver


def _secret(stack: Stack, output: str) -> bytes:
    client = stack.local.client("secretsmanager")
    return client.get_secret_value(SecretId=stack.local.outputs[output])["SecretString"].encode()


def _webhook(action_id: str, url: str, seconds: float) -> dict[str, Any]:
    return {
        "id": action_id,
        "at": in_seconds(seconds),
        "action": "HTTP_REQUEST",
        "data": {"url": url, "method": "POST", "body": {"pay": 10}},
    }


def _rejections(stack: Stack, count: int) -> list[dict[str, Any]]:
    events = stack.lifecycle.wait_for(
        lambda evs: sum(e["detail-type"] == "Schedule Rejected" for e in evs) >= count, 10
    )
    return [e["detail"] for e in events if e["detail-type"] == "Schedule Rejected"]


def test_only_a_fresh_start_signed_with_the_key_is_accepted(make_stack) -> None:
    stack: Stack = make_stack(RequireSignedStarts="true")
    key = _secret(stack, "StartSigningKeyArn")
    signed_at = int(now().timestamp())
    detail = {"id": "signed:ok", "duration": "10m"}

    # WHEN an unsigned, a forged (other key), an altered and a replayed (10 min old) Start arrive
    stack.start({"id": "signed:none", "duration": "10m"})
    stack.start(sign_start(b"not-the-key", {"id": "signed:forged", "duration": "10m"}, signed_at))
    altered = sign_start(key, {"id": "signed:altered", "duration": "10m"}, signed_at)
    stack.start({**altered, "duration": "1m"})
    stack.start(sign_start(key, {"id": "signed:replayed", "duration": "10m"}, signed_at - 600))
    # AND one signed properly
    stack.start(sign_start(key, detail, signed_at))

    # THEN the four are rejected with their reason, and nothing of them is written
    reasons = {r["id"]: r["signature"] for r in _rejections(stack, 4)}
    assert reasons == {
        "signed:none": "unsigned",
        "signed:forged": "forged",
        "signed:altered": "forged",
        "signed:replayed": "expired",
    }
    for action_id in reasons:
        assert stack.records.get(action_id) is None
    # AND the signed one is scheduled, stored without its signature
    action = stack.wait_record("signed:ok", lambda a: a.status == Status.PENDING)
    assert action.request == detail


def test_signed_control_events_are_required_and_each_signature_is_used_once(make_stack) -> None:
    stack: Stack = make_stack(RequireSignedStarts="true")
    key = _secret(stack, "StartSigningKeyArn")
    start = sign_event(
        key, "Schedule Start", {"id": "signed:steer", "duration": "10m"}, int(now().timestamp())
    )
    stack.start(start)
    stack.wait_record("signed:steer", lambda a: a.status == Status.PENDING)

    # WHEN an unsigned Stop and a signed Pause relabelled as a Stop arrive
    stack.stop("signed:steer")
    pause = sign_event(key, "Schedule Pause", {"id": "signed:steer"}, int(now().timestamp()))
    stack.local.publish("Schedule Stop", pause)

    # THEN both are rejected and the action is untouched
    reasons = [(r["request"], r["signature"]) for r in _rejections(stack, 2)]
    assert reasons == [("Schedule Stop", "unsigned"), ("Schedule Stop", "forged")]
    assert stack.record("signed:steer").status == Status.PENDING

    # WHEN the owner's signed Stop arrives, and then the captured Start is put on the bus again
    time.sleep(1.1)  # the Stop is signed, and applied, a second after the Start
    stop = sign_event(key, "Schedule Stop", {"id": "signed:steer"}, int(now().timestamp()))
    stack.local.publish("Schedule Stop", stop)
    stack.wait_record("signed:steer", lambda a: a.status == Status.CANCELLED)
    stack.start(start)
    stack.local.publish("Schedule Stop", stop)

    # THEN the replays are refused: the action stays cancelled
    replays = [(r["request"], r["signature"]) for r in _rejections(stack, 4)[2:]]
    assert sorted(replays) == [("Schedule Start", "replayed"), ("Schedule Stop", "replayed")]
    stack.local.wait_idle()
    assert stack.record("signed:steer").status == Status.CANCELLED


def test_a_tick_or_failure_put_on_the_bus_by_anyone_but_a_fire_changes_nothing(
    make_stack,
) -> None:
    stack = make_stack(LaunchAheadSeconds="900")  # its fire 10 minutes away has an execution
    # GIVEN a recurrence waiting for its first fire
    stack.start({"id": "forge:me", "rate": "rate(10 minutes)"})
    waiting = stack.wait_record("forge:me", lambda a: a.execution_arn is not None)
    assert waiting.execution_arn is not None
    executions = len(stack.wait_execution(waiting.execution_arn))
    key = {"id": "forge:me", "generation": 1, "occurrence": 1, "manual": 0}
    scheduled = iso(waiting.execution_time) if waiting.execution_time else in_seconds(600)

    # WHEN a principal of the account puts a Schedule Tick and a Schedule Failed with tickwork's
    # source for it, of the right shape (naming the fire machine's execution), one with a
    # made-up proof
    execution = waiting.execution_arn
    tick = {
        **key, "trigger": "SCHEDULED", "idempotencyKey": "x", "scheduledTime": scheduled,
        "actualTime": scheduled, "lateMs": 0, "attempts": 1, "action": "TICK", "data": {},
        "metadata": {}, "outcome": "FIRED", "result": {}, "executionName": "forged",
        "executionArn": execution,
    }  # fmt: skip
    failure = {
        **key, "trigger": "SCHEDULED", "scheduledTime": scheduled, "executionName": "forged",
        "executionArn": execution, "error": "FireFailed", "cause": None,
        "proof": "v1=" + "0" * 64,
    }  # fmt: skip
    stack.local.publish("Schedule Tick", tick, source="tickwork")
    stack.local.publish("Schedule Failed", failure, source="tickwork")

    # THEN both are rejected as forged, and the action still waits for its real first fire
    reasons = {(r["request"], r["reason"]) for r in _rejections(stack, 2)}
    assert reasons == {("Schedule Tick", "ForgedReport"), ("Schedule Failed", "ForgedReport")}
    after = stack.record("forge:me")
    assert (after.status, after.occurrence, after.history) == (Status.PENDING, 1, ())
    assert after.version == waiting.version and len(stack.executions()) == executions


def test_a_record_altered_by_hand_ends_no_action_and_never_runs(stack: Stack) -> None:
    receiver = Receiver()
    try:
        # GIVEN a webhook action, whose record an attacker then edits in DynamoDB
        stack.start(_webhook("sealed:hook", receiver.url, seconds=3))
        stack.wait_record("sealed:hook", lambda a: a.execution_arn is not None)
        table = stack.local.client("dynamodb")
        table.update_item(
            TableName=stack.local.outputs["ActionsTableName"],
            Key={"id": {"S": "sealed:hook"}},
            UpdateExpression="SET #d.#b.#p = :big",
            ExpressionAttributeNames={"#d": "data", "#b": "body", "#p": "pay"},
            ExpressionAttributeValues={":big": {"N": "1000000"}},
        )

        # WHEN its fire comes
        done = stack.wait_record("sealed:hook", lambda a: a.status not in ACTIVE, 15)
        stack.local.wait_idle()

        # THEN nothing reached the receiver; NO_ACTION after one attempt, no altered data on
        # the tick, and a Schedule Tampered event
        assert done.status == Status.NO_ACTION
        assert receiver.requests == []
        (tick,) = stack.ticks_for("sealed:hook", count=1, timeout=5)
        assert tick["outcome"] == "NO_ACTION" and tick["result"]["tampered"] is True
        assert tick["attempts"] == 1 and tick["data"] == {}
        assert any(
            e["detail-type"] == "Schedule Tampered" and e["detail"]["id"] == "sealed:hook"
            for e in stack.lifecycle.wait_for(lambda evs: evs, 5)
        )
    finally:
        receiver.close()


def test_a_role_given_by_hand_to_a_sealed_record_never_runs(stack: Stack) -> None:
    """The seal covers what a fire does beyond its data: the role its target is reached with
    (and the catch-up and failure policies)."""
    # GIVEN an SQS action reaching its queue with the stack's own role
    targets = Targets(stack.local)
    queue = targets.queue("orders-due")
    data = {"queueArn": queue, "messageBody": "due"}
    stack.start({"id": "sealed:role", "at": in_seconds(3), "action": "SQS_MESSAGE", "data": data})
    stack.wait_record("sealed:role", lambda a: a.execution_arn is not None)
    # WHEN an attacker gives the record a role of their choosing, in DynamoDB
    stack.local.client("dynamodb").update_item(
        TableName=stack.local.outputs["ActionsTableName"],
        Key={"id": {"S": "sealed:role"}},
        UpdateExpression="SET roleArn = :role",
        ExpressionAttributeValues={
            ":role": {"S": "arn:aws:iam::123456789012:role/tickwork-targets/attacker"}
        },
    )

    # THEN the fire ends NO_ACTION and nothing is sent
    done = stack.wait_record("sealed:role", lambda a: a.status not in ACTIVE, 15)
    assert done.status == Status.NO_ACTION
    assert targets.received(queue, wait=1) == []


def test_a_webhook_to_the_metadata_service_is_refused_without_retries(stack: Stack) -> None:
    """However its address is spelled (the review's trailing dot among them)."""
    urls = {
        "ssrf:imds": "http://169.254.169.254/latest/meta-data/iam/",
        "ssrf:dot": "http://169.254.169.254.:80/latest/meta-data/",
        "ssrf:hex": "http://0xa9fea9fe/latest/meta-data/",
        "ssrf:short": "http://169.254.43518/latest/meta-data/",
        "ssrf:mapped": "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
    }
    for action_id, url in urls.items():
        stack.start({"id": action_id, "at": in_seconds(1), "action": "HTTP_REQUEST",
                     "data": {"url": url, "method": "GET"}})  # fmt: skip
    for action_id in urls:
        failed = stack.wait_record(action_id, lambda a: a.status == Status.FAILED, 15)
        assert "refused" in (failed.last_error or ""), failed.last_error
        assert "169.254.169.254" in (failed.last_error or ""), failed.last_error
        assert failed.history[-1].attempts == 1


def test_a_sent_webhook_verifies_with_the_stack_key_and_fails_once_altered(stack: Stack) -> None:
    receiver = Receiver()
    try:
        stack.start(_webhook("signed:hook", receiver.url, seconds=1))
        stack.wait_record("signed:hook", lambda a: a.status == Status.COMPLETED, 15)
        (request,) = receiver.requests
        key = _secret(stack, "HttpSigningKeyArn")
        header = request["headers"][SIGNATURE_HEADER]
        assert verify_signature(key, header, request["body"], time.time())
        assert not verify_signature(key, header, request["body"].replace(b"10", b"99"), time.time())
    finally:
        receiver.close()
