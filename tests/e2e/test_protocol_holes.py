"""The holes an outside review found in exactly once (issue 28), each through the real state
machines in the emulated stack: an id shaped like a batch's name, executions started by hand
with forged, replayed or duplicated orders, a batched fire's attempts held to the same retry
policy as a lone one's, and counts that must add up after a batch died part-way.
docs/protocol.md says why each is closed."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from moto.events.models import EventPattern

from tests.e2e.support import Stack, advance_to, assert_never_early, in_seconds, now, wait_until
from tickwork.domain.action import Status
from tickwork.domain.naming import legacy_execution_name
from tickwork.domain.selection import Selection
from tickwork.domain.times import iso
from tickwork.fire import fire_batch
from tickwork.fire.reconcile import reconcile
from tickwork_local.receiver import Receiver

BATCHED = {"PumpSchedule": "rate(1 hour)", "BatchMinFires": "3"}


def _sfn(stack: Stack) -> Any:
    return stack.local.client("stepfunctions")


def _ended(stack: Stack, arn: str) -> dict[str, Any]:
    wait_until(lambda: _sfn(stack).describe_execution(executionArn=arn)["status"] != "RUNNING")
    return dict(_sfn(stack).describe_execution(executionArn=arn))


def _started(stack: Stack, arn: str) -> dict[str, Any]:
    def described() -> dict[str, Any] | None:
        try:
            return dict(_sfn(stack).describe_execution(executionArn=arn))
        except _sfn(stack).exceptions.ExecutionDoesNotExist:
            return None

    wait_until(lambda: described() is not None, what=f"{arn} started")
    return described() or {}


def _tampered(stack: Stack, action_id: str) -> list[dict[str, Any]]:
    events = stack.lifecycle.wait_for(
        lambda evs: any(
            e["detail-type"] == "Schedule Tampered" and e["detail"]["id"] == action_id for e in evs
        ),
        timeout=15,
    )
    return [
        e["detail"]
        for e in events
        if e["detail-type"] == "Schedule Tampered" and e["detail"]["id"] == action_id
    ]


IDS = [
    "a-42",
    "b-42",
    "b-1764230000-0123456789ab",
    "b-1764230000-0123456789ab-r1",
    "x-1a2b3c4d-g1-o1",
]


def test_any_valid_id_fires_is_recorded_and_ticks_as_a_42_does(stack: Stack) -> None:
    """An id that starts like a batch's name, or is shaped like a generated execution name,
    is an id like any other: its fire is recorded by its Fulfill task before its tick goes
    out, the tick rule leaves that tick out, and nothing is repaired afterwards."""
    at = in_seconds(2)
    for action_id in IDS:
        stack.start({"id": action_id, "at": at})

    for action_id in IDS:
        done = stack.wait_record(
            action_id, lambda a: a.status not in (Status.PENDING, Status.IN_PROGRESS), 20
        )
        assert done.status == Status.COMPLETED, action_id
        assert [(h.occurrence, h.outcome) for h in done.history] == [(1, "FIRED")]
        [tick] = stack.ticks_for(action_id, count=1, timeout=5)
        fire_machine = stack.local.outputs["StateMachineArn"]
        assert tick["executionArn"].startswith(
            fire_machine.replace(":stateMachine:", ":execution:")
        )
        assert_never_early([tick])
        assert tick["recorded"] is True
        # the tick rule leaves a recorded tick out (as the emulated EventBridge matches it)
        events = stack.local.client("events")
        bus = stack.local.outputs["EventBusName"]
        rules = events.list_rules(EventBusName=bus)["Rules"]
        tick_rule = next(r for r in rules if "TickRule" in r["Name"])
        pattern = EventPattern.load(tick_rule["EventPattern"])
        envelope = {"detail-type": "Schedule Tick", "source": "tickwork", "detail": tick}
        unmarked = {k: v for k, v in tick.items() if k != "recorded"}
        assert not pattern.matches_event(envelope)
        assert pattern.matches_event({**envelope, "detail": unmarked})
    assert stack.invocations("TickFunction") == []
    versions = {i: stack.record(i).version for i in IDS}
    repaired = reconcile(stack.deps, horizon=None, stuck_after=timedelta(0))
    assert all(i not in ids for i in IDS for ids in repaired.values()), repaired
    assert {i: stack.record(i).version for i in IDS} == versions


def test_a_lone_execution_started_by_hand_with_an_early_fire_time_fires_nothing(
    stack: Stack, receiver: Receiver
) -> None:
    # GIVEN a webhook due in a minute (parked: the local horizon is 5 s)
    due = now().replace(microsecond=0) + timedelta(seconds=60)
    http = {"url": receiver.url, "method": "POST", "body": {}}
    stack.start({"id": "early", "at": iso(due), "action": "HTTP_REQUEST", "data": http})
    waiting = stack.wait_record("early", lambda a: a.is_parked)

    # WHEN anyone allowed states:StartExecution starts an execution for it, under the name the
    # stack gave such a fire before names were keyed, with an order 60 s early (as the stack
    # writes orders, but without its proof)
    moment = iso(now())
    order = {"id": "early", "generation": 1, "occurrence": 1, "leg": 0, "fireAt": moment,
             "waitUntil": moment, "manual": 0, "trigger": "SCHEDULED"}  # fmt: skip
    name = legacy_execution_name("early", 1, 1)
    arn = _sfn(stack).start_execution(
        stateMachineArn=stack.local.outputs["StateMachineArn"], name=name, input=json.dumps(order)
    )["executionArn"]

    # THEN it is refused: nothing fired, nothing written, and a Schedule Tampered names it
    ended = _ended(stack, arn)
    assert (ended["status"], ended["error"]) == ("FAILED", "ForgedOrder")
    [tampered] = _tampered(stack, "early")
    assert tampered["executionArn"] == arn and "proof" in tampered["reason"]
    assert receiver.requests == []
    assert stack.record("early").version == waiting.version
    assert stack.ticks_for("early") == []


def test_a_real_order_replayed_under_another_name_or_on_the_batch_machine_fires_nothing(
    make_stack, receiver: Receiver
) -> None:
    # GIVEN a webhook 8 s away whose execution the stack started (a horizon of 60 s)
    stack: Stack = make_stack(LaunchAheadSeconds="60")
    http = {"url": receiver.url, "method": "POST", "body": {}}
    stack.start({"id": "replay", "at": in_seconds(8), "action": "HTTP_REQUEST", "data": http})
    waiting = stack.wait_record("replay", lambda a: a.execution_arn is not None)
    real = _started(stack, waiting.execution_arn)  # the record names it before it starts
    order = json.loads(real["input"])
    assert order["proof"].startswith("v1=")

    # WHEN its proved order is replayed, fire time moved to now, under another name; and the
    # same order, unchanged, on the batch machine under the real execution's very name
    moved = {**order, "fireAt": in_seconds(0), "waitUntil": in_seconds(0)}
    other = _sfn(stack).start_execution(
        stateMachineArn=stack.local.outputs["StateMachineArn"],
        name="replay-by-hand",
        input=json.dumps(moved),
    )["executionArn"]
    twin = _sfn(stack).start_execution(
        stateMachineArn=stack.local.outputs["BatchStateMachineArn"],
        name=real["name"],
        input=json.dumps(
            {"waitUntil": order["waitUntil"], "fires": [order], "proof": order["proof"]}
        ),
    )["executionArn"]

    # THEN both are refused and only the real execution fires, once, on time
    assert _ended(stack, other)["error"] == "ForgedOrder"
    assert _ended(stack, twin)["error"] == "ForgedOrder"
    done = stack.wait_record("replay", lambda a: a.status == Status.COMPLETED, timeout=40)
    assert len(receiver.requests) == 1
    assert [h.execution for h in done.history] == [real["name"]]
    [tick] = stack.ticks_for("replay", count=1, timeout=5)
    assert_never_early([tick])


def test_a_batch_listing_one_fire_twice_fires_nothing(stack: Stack, receiver: Receiver) -> None:
    # GIVEN a webhook due in a few seconds
    due = now().replace(microsecond=0) + timedelta(seconds=4)
    http = {"url": receiver.url, "method": "POST", "body": {}}
    stack.start({"id": "twice", "at": iso(due), "action": "HTTP_REQUEST", "data": http})
    stack.wait_record("twice", lambda a: a.execution_arn is not None or a.is_parked)

    # WHEN a batch execution is started by hand listing it twice
    member = {"id": "twice", "generation": 1, "occurrence": 1, "fireAt": iso(due)}
    arn = _sfn(stack).start_execution(
        stateMachineArn=stack.local.outputs["BatchStateMachineArn"],
        name="b-by-hand",
        input=json.dumps({"waitUntil": iso(due), "fires": [member, member]}),
    )["executionArn"]

    # THEN it is refused whole (never retried), and the fire's own execution fires it once
    ended = _ended(stack, arn)
    assert (ended["status"], ended["error"]) == ("FAILED", "ForgedOrder")
    assert "more than once" in ended["cause"]
    done = stack.wait_record("twice", lambda a: a.status == Status.COMPLETED, timeout=20)
    assert len(receiver.requests) == 1 and len(done.history) == 1
    assert "more than once" in _tampered(stack, "twice")[0]["reason"]


def _always_failing_batch(stack: Stack, failing: Receiver) -> tuple[str, datetime]:
    second = now().replace(microsecond=0) + timedelta(seconds=8)
    for n in range(3):
        stack.start({"id": f"parity:{n}", "at": iso(second)})
    http = {"url": failing.url, "method": "POST", "body": {}}
    stack.start({"id": "parity:failing", "at": iso(second), "action": "HTTP_REQUEST", "data": http})
    ids = [*(f"parity:{n}" for n in range(3)), "parity:failing"]
    for action_id in ids:
        stack.wait_record(action_id, lambda a: a.is_parked)
    advance_to(second - timedelta(seconds=5))
    pump = next(f.name for f in stack.local.functions if f.logical_id == "PumpFunction")
    run, error = stack.local.runtime.invoke(pump, {"source": "aws.events", "detail": {}})
    assert error is None and len(run["batches"]) == 1, run
    return "parity:failing", second


@pytest.mark.parametrize("retries", ["2", "0"])
def test_a_batched_fire_gets_as_many_attempts_as_a_lone_one(make_stack, retries: str) -> None:
    """RetryMaxAttempts=2: 3 attempts, lone or batched (1 in the batch, 2 in its own
    execution). RetryMaxAttempts=0: 1 attempt each, and the batch records the failure itself:
    nothing is handed over to be tried again."""
    stack: Stack = make_stack(RetryMaxAttempts=retries, **BATCHED)
    allowed = 1 + int(retries)
    lone_target, batch_target = Receiver(failures=100), Receiver(failures=100)
    try:
        http = {"url": lone_target.url, "method": "POST", "body": {}}
        stack.start(
            {"id": "parity:lone", "at": in_seconds(2), "action": "HTTP_REQUEST", "data": http}
        )
        batched, _ = _always_failing_batch(stack, batch_target)

        lone = stack.wait_record("parity:lone", lambda a: a.status == Status.FAILED, timeout=60)
        done = stack.wait_record(batched, lambda a: a.status == Status.FAILED, timeout=60)
    finally:
        lone_target.close()
        batch_target.close()
    assert len(lone_target.requests) == allowed == lone.history[-1].attempts
    assert len(batch_target.requests) == allowed
    keys = {r["headers"].get("Idempotency-Key") for r in batch_target.requests}
    assert len(keys) == 1  # every attempt the same fire
    if retries == "0":
        assert done.history[-1].execution.startswith("b-")  # recorded by the batch itself


def test_a_batch_that_dies_part_way_leaves_counts_and_totals_that_add_up(
    make_stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its task dies right after recording a member, and is not retried (RetryMaxAttempts=0):
    the members' counter and total changes ride on their records, and the reconciler adds
    them once the batch has ended. Counts and fire totals then equal the records."""
    stack: Stack = make_stack(RetryMaxAttempts="0", **BATCHED)
    second = now().replace(microsecond=0) + timedelta(seconds=8)
    ids = [f"dies:{n}" for n in range(3)]
    for action_id in ids:
        stack.start({"id": action_id, "at": iso(second), "group": "dies"})
    for action_id in ids:
        stack.wait_record(action_id, lambda a: a.is_parked)
    recorded = fire_batch.record_tick

    def dying(tick: Any, deps: Any, *args: Any, **kwargs: Any) -> Any:
        answer = recorded(tick, deps, *args, **kwargs)
        if tick.action_id == "dies:0":
            raise RuntimeError("the batch task died here")
        return answer

    monkeypatch.setattr(fire_batch, "record_tick", dying)
    advance_to(second - timedelta(seconds=5))
    pump = next(f.name for f in stack.local.functions if f.logical_id == "PumpFunction")
    run, error = stack.local.runtime.invoke(pump, {"source": "aws.events", "detail": {}})
    assert error is None and len(run["batches"]) == 1, run
    batch = stack.local.client("stepfunctions").list_executions(
        stateMachineArn=stack.local.outputs["BatchStateMachineArn"]
    )["executions"][0]
    assert _ended(stack, batch["executionArn"])["status"] == "FAILED"
    done = [stack.wait_record(i, lambda a: a.status == Status.COMPLETED, 20) for i in ids]

    reconciler = next(f.name for f in stack.local.functions if f.logical_id == "ReconcilerFunction")
    repaired, error = stack.local.runtime.invoke(reconciler, {"source": "aws.events", "detail": {}})

    # every write was counted as it was made (the fold): no tab is left for it to settle
    assert error is None and repaired["settled"] == [], repaired
    stack.wait_counted()
    counts = stack.queries.count(Selection(group="dies"))
    assert (counts["PENDING"], counts["IN_PROGRESS"], counts["COMPLETED"]) == (0, 0, 3)
    minute = int(done[0].history[0].actual_time.timestamp()) // 60
    fired = stack.tallies.read("dies", False, minute - 1, minute + 1)
    assert sum(kinds.get("onTime", 0) + kinds.get("late", 0) for kinds in fired.values()) == 3


def test_a_fires_name_guessed_and_taken_first_keeps_nothing_from_firing(
    stack: Stack, receiver: Receiver
) -> None:
    """Names were guessable (an unkeyed hash of the id): anyone allowed states:StartExecution
    could start the fire's name first, with an hour's wait, and the stack took that execution
    for its own start: the fire never ran. Names are keyed now: the guess is another name."""
    # GIVEN a webhook due in 10 s, parked (the horizon is 5 s)
    due = now().replace(microsecond=0) + timedelta(seconds=10)
    http = {"url": receiver.url, "method": "POST", "body": {}}
    stack.start({"id": "victim", "at": iso(due), "action": "HTTP_REQUEST", "data": http})
    stack.wait_record("victim", lambda a: a.is_parked)

    # WHEN its name, guessed as it used to be made, is taken first, waiting an hour
    hour = in_seconds(3600)
    forged = {"id": "victim", "generation": 1, "occurrence": 1, "leg": 0, "fireAt": hour,
              "waitUntil": hour, "manual": 0, "trigger": "SCHEDULED"}  # fmt: skip
    squatter = _sfn(stack).start_execution(
        stateMachineArn=stack.local.outputs["StateMachineArn"],
        name=legacy_execution_name("victim", 1, 1),
        input=json.dumps(forged),
    )["executionArn"]

    # THEN the fire runs in its own execution, once, never early
    done = stack.wait_record("victim", lambda a: a.status == Status.COMPLETED, timeout=60)
    assert len(receiver.requests) == 1
    assert [h.execution for h in done.history] != [squatter.rsplit(":", 1)[-1]]
    [tick] = stack.ticks_for("victim", count=1, timeout=5)
    assert_never_early([tick])
    _sfn(stack).stop_execution(executionArn=squatter)


def test_an_id_purged_and_given_again_fires_on_time_in_executions_of_its_own(
    stack: Stack, receiver: Receiver
) -> None:
    """A purge starts the id's numbering over, and Step Functions keeps an execution's name
    for 90 days: the new life's fire and run now must not be taken for the old ones."""
    # GIVEN a webhook that fired and a recurrence run now by hand, both then purged
    http = {"url": receiver.url, "method": "POST", "body": {}}
    once = {"id": "again", "action": "HTTP_REQUEST", "data": http}
    daily = {"id": "again:rn", "rate": "rate(1 day)", "action": "HTTP_REQUEST", "data": http}
    stack.start({**once, "at": in_seconds(2)})
    stack.start(daily)
    stack.wait_record("again:rn", lambda a: a.status == Status.PENDING)
    stack.local.publish("Schedule Run Now", {"id": "again:rn"})
    fired = stack.wait_record("again", lambda a: a.status == Status.COMPLETED, timeout=30)
    ran = stack.wait_record("again:rn", lambda a: len(a.history) == 1, timeout=30)
    earlier = {fired.history[0].execution, ran.history[0].execution}
    for action_id in ("again", "again:rn"):
        stack.records.delete(action_id)  # as DELETE /actions/{id}?purge=true

    # WHEN each id is given again, and the recurrence run now again
    stack.start({**once, "at": in_seconds(3)})
    stack.start(daily)
    stack.wait_record("again:rn", lambda a: a.status == Status.PENDING)
    stack.local.publish("Schedule Run Now", {"id": "again:rn"})

    # THEN both run, in executions the earlier lives never had, the fire on time
    fired = stack.wait_record("again", lambda a: a.status == Status.COMPLETED, timeout=40)
    ran = stack.wait_record("again:rn", lambda a: len(a.history) == 1, timeout=40)
    assert len(receiver.requests) == 4
    assert not earlier & {fired.history[0].execution, ran.history[0].execution}
    assert_never_early(stack.ticks_for("again", count=2, timeout=5))
