"""GIVEN parked fires due in the same second WHEN the pump launches them THEN they share one
execution of the real batch definition, which fires each once, never early, as a lone fire
would: a changed fire stays quiet, a transient failure is retried alone, a permanent one takes
the failure path, a refused batch waits parked, and a lost batch is repaired."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from tests.e2e.support import Stack, advance_to, assert_never_early, now, wait_until
from tickwork.domain.action import Status
from tickwork.domain.selection import Selection
from tickwork.domain.times import iso
from tickwork_local.receiver import Receiver

# The pump runs when a test says (its schedule is an hour): the test writes every fire parked,
# before the second's launch moment, then pumps.
BATCHED = {"PumpSchedule": "rate(1 hour)", "BatchMinFires": "3"}
# 12 s from the launch to the fire (room for a test that acts between the pump and the fire),
# and up to 8 s to start the fires (each must still be parked), however busy the machine.
ROOMY = {**BATCHED, "LaunchAheadSeconds": "12"}
ROOMY_AHEAD = 20


def _second_ahead(seconds: int = 8) -> datetime:
    return now().replace(microsecond=0) + timedelta(seconds=seconds)


def _start_due_together(
    stack: Stack, prefix: str, count: int, second: datetime, **detail: Any
) -> list[str]:
    ids = [f"{prefix}:{n}" for n in range(count)]
    for n, action_id in enumerate(ids):
        at = second + timedelta(milliseconds=150 * n)  # each to its own millisecond
        stack.start({"id": action_id, "at": iso(at), **detail})
    for action_id in ids:
        stack.wait_record(action_id, lambda a: a.is_parked)
    return ids


def _pump(stack: Stack, ids: list[str]) -> dict[str, Any]:
    """Run the pump as its schedule would, once every fire's launch moment has passed."""
    moments = [stack.records.get(i).launch_at for i in ids]
    advance_to(max(m for m in moments if m))
    pump = next(f.name for f in stack.local.functions if f.logical_id == "PumpFunction")
    run, error = stack.local.runtime.invoke(pump, {"source": "aws.events", "detail": {}})
    assert error is None, run
    return dict(run)


def _batches(stack: Stack) -> list[dict[str, Any]]:
    sfn = stack.local.client("stepfunctions")
    machine = stack.local.outputs["BatchStateMachineArn"]
    return list(sfn.list_executions(stateMachineArn=machine)["executions"])


def _output(stack: Stack, arn: str) -> dict[str, Any]:
    sfn = stack.local.client("stepfunctions")
    wait_until(lambda: sfn.describe_execution(executionArn=arn)["status"] != "RUNNING")
    described = sfn.describe_execution(executionArn=arn)
    assert described["status"] == "SUCCEEDED", described
    return dict(json.loads(described["output"]))


def _lone(stack: Stack) -> list[dict[str, Any]]:
    """The fire machine's executions (a batch is one of the batch machine's)."""
    fire_machine = stack.local.outputs["StateMachineArn"]
    return [e for e in stack.executions() if e["stateMachineArn"] == fire_machine]


def test_fires_due_in_one_second_share_one_execution_and_each_fires_once(make_stack) -> None:
    stack: Stack = make_stack(**ROOMY)
    second = _second_ahead(ROOMY_AHEAD)
    ids = _start_due_together(stack, "together", 6, second, data={"n": 1})

    run = _pump(stack, ids)

    assert sorted(run["launched"]) == ids and len(run["batches"]) == 1
    [batch] = _batches(stack)
    assert batch["name"] == run["batches"][0] and _lone(stack) == []
    for action_id in ids:
        done = stack.wait_record(action_id, lambda a: a.status == Status.COMPLETED, timeout=30)
        assert [h.execution for h in done.history] == [batch["name"]]
    output = _output(stack, batch["executionArn"])
    assert [f["outcome"] for f in output["fires"]] == ["FIRED"] * 6
    assert [f["id"] for f in output["fires"]] == ids
    ticks = [t for i in ids for t in stack.ticks_for(i, count=1, timeout=10)]
    assert sorted(t["id"] for t in ticks) == ids  # one each
    assert all(t["executionName"] == batch["name"] and t["proof"] for t in ticks)
    assert all(t["data"] == {"n": 1} for t in ticks)
    assert_never_early(ticks)
    # the batch recorded its fires itself: the tick function saw none of its ticks
    assert stack.invocations("TickFunction") == []
    # and counted them once, for all of them at once
    stack.wait_counted()
    counts = stack.queries.count(Selection(group="default"))
    assert (counts["COMPLETED"], counts["PENDING"], counts["IN_PROGRESS"]) == (6, 0, 0)


def test_a_fire_cancelled_after_its_batch_launched_does_not_fire(make_stack) -> None:
    stack: Stack = make_stack(**ROOMY)
    ids = _start_due_together(stack, "cancel", 4, _second_ahead(ROOMY_AHEAD))
    _pump(stack, ids)

    stack.stop(ids[1])

    for action_id in (ids[0], *ids[2:]):
        stack.wait_record(action_id, lambda a: a.status == Status.COMPLETED, timeout=60)
    [batch] = _batches(stack)
    output = {f["id"]: f for f in _output(stack, batch["executionArn"])["fires"]}
    assert output[ids[1]]["outcome"] == "QUIET"
    assert stack.records.get(ids[1]).status == Status.CANCELLED
    assert stack.ticks_for(ids[1]) == []
    assert len(stack.ticks_for(ids[0], count=1, timeout=5)) == 1


def test_a_transient_failure_is_retried_alone_and_a_permanent_one_fails_it_alone(
    make_stack,
) -> None:
    stack: Stack = make_stack(**ROOMY)
    flaky, gone = Receiver(failures=1), Receiver(status=410)
    try:
        second = _second_ahead(ROOMY_AHEAD)
        ids = _start_due_together(stack, "ok", 3, second)
        for action_id, receiver in (("flaky", flaky), ("gone", gone)):
            http = {"url": receiver.url, "method": "POST", "body": {}}
            stack.start(
                {"id": action_id, "at": iso(second), "action": "HTTP_REQUEST", "data": http}
            )
            stack.wait_record(action_id, lambda a: a.is_parked)

        run = _pump(stack, [*ids, "flaky", "gone"])

        assert len(run["batches"]) == 1
        retried = stack.wait_record("flaky", lambda a: a.status == Status.COMPLETED, timeout=30)
        failed = stack.wait_record("gone", lambda a: a.status == Status.FAILED, timeout=30)
    finally:
        flaky.close()
        gone.close()
    [batch] = _batches(stack)
    output = {f["id"]: f for f in _output(stack, batch["executionArn"])["fires"]}
    # the flaky one: handed to its own execution, found by its id, which sent it again
    own = output["flaky"]["executionName"]
    assert output["flaky"]["outcome"] == "HANDED_OFF" and own.startswith("flaky-")
    assert [e["name"] for e in _lone(stack)] == [own]
    assert len(flaky.requests) == 2 and retried.history[-1].execution == own
    [tick] = stack.ticks_for("flaky", count=1, timeout=5)
    assert tick["attempts"] == 2
    # the gone one: failed once, for good, reported with its proof
    assert output["gone"]["outcome"] == "FAILED" and len(gone.requests) == 1
    assert failed.history[-1].execution == batch["name"]
    reports = [e for e in stack.lifecycle.drain() if e["detail-type"] == "Schedule Failed"]
    assert [r["detail"]["id"] for r in reports] == ["gone"] and reports[0]["detail"]["proof"]
    for action_id in ids:
        stack.wait_record(action_id, lambda a: a.status == Status.COMPLETED, timeout=30)


def test_a_refused_batch_waits_parked_and_the_next_run_launches_it(make_stack) -> None:
    stack: Stack = make_stack(max_open_executions=0, **ROOMY)
    ids = _start_due_together(stack, "refused", 3, _second_ahead(ROOMY_AHEAD))

    refused = _pump(stack, ids)

    assert sorted(refused["refused"]) == ids and _batches(stack) == []
    assert all(stack.records.get(i).is_parked for i in ids)
    stack.local.max_open_executions = None
    again = _pump(stack, ids)
    assert sorted(again["launched"]) == ids and len(again["batches"]) == 1
    for action_id in ids:
        stack.wait_record(action_id, lambda a: a.status == Status.COMPLETED, timeout=30)
    assert len([t for i in ids for t in stack.ticks_for(i, count=1, timeout=5)]) == 3


def test_a_lost_batch_is_repaired_by_the_reconciler_and_each_fire_fires_once(make_stack) -> None:
    stack: Stack = make_stack(**ROOMY)
    ids = _start_due_together(stack, "lost", 3, _second_ahead(ROOMY_AHEAD))
    _pump(stack, ids)
    [batch] = _batches(stack)
    sfn = stack.local.client("stepfunctions")
    sfn.stop_execution(executionArn=batch["executionArn"], cause="lost, as in an outage")

    reconciler = next(f.name for f in stack.local.functions if f.logical_id == "ReconcilerFunction")
    repaired, error = stack.local.runtime.invoke(reconciler, {"source": "aws.events", "detail": {}})

    assert error is None and sorted(repaired["restarted"]) == ids
    for action_id in ids:
        done = stack.wait_record(action_id, lambda a: a.status == Status.COMPLETED, timeout=60)
        assert done.history[-1].execution in {e["name"] for e in _lone(stack)}
    ticks = [t for i in ids for t in stack.ticks_for(i, count=1, timeout=5)]
    assert sorted(t["id"] for t in ticks) == ids
    assert_never_early(ticks)


def test_recurring_fires_that_fired_together_go_on_in_a_chained_batch(make_stack) -> None:
    # GIVEN recurrences 11 s apart whose first fires share a second; a horizon of 12 s
    stack: Stack = make_stack(**ROOMY)
    second = _second_ahead(ROOMY_AHEAD)
    ids = [f"chain:{n}" for n in range(3)]
    for action_id in ids:
        detail = {"rate": "rate(11 seconds)", "startTime": iso(second), "repeat": True}
        stack.start({"id": action_id, **detail, "executionRemainder": 2})
    for action_id in ids:
        stack.wait_record(action_id, lambda a: a.is_parked)

    # WHEN the pump launches the first fires, and they fire
    run = _pump(stack, ids)

    # THEN the batch started the second fires as one batch of its own, which fired them
    assert len(run["batches"]) == 1
    for action_id in ids:
        stack.wait_record(action_id, lambda a: a.status == Status.COMPLETED, timeout=60)
    batches = sorted(_batches(stack), key=lambda b: b["startDate"])
    assert len(batches) == 2 and _lone(stack) == []
    for batch in batches:
        fired = _output(stack, batch["executionArn"])["fires"]
        assert [f["outcome"] for f in fired] == ["FIRED"] * 3
    ticks = [t for i in ids for t in stack.ticks_for(i, count=2, timeout=10)]
    assert sorted((t["id"], t["occurrence"]) for t in ticks) == [
        (i, o) for i in ids for o in (1, 2)
    ]
    assert_never_early(ticks)


def test_a_batch_task_retried_after_its_ticks_went_out_puts_no_tick_twice(
    make_stack: Any, monkeypatch: Any
) -> None:
    """GIVEN a batch whose task dies after its last PutEvents call (a timeout after the call,
    as under load) WHEN the real batch machine retries the task THEN each member is recorded
    once and its Schedule Tick is on the bus once: the retry knows what the first attempt put."""
    from tickwork.fire.bus_sender import BusSender

    died: list[str] = []
    close = BusSender.close

    def dying_close(sender: BusSender) -> None:
        close(sender)
        if not died:
            died.append("after its last call")
            raise TimeoutError("the task died after its last PutEvents call")

    monkeypatch.setattr(BusSender, "close", dying_close)
    stack: Stack = make_stack(**ROOMY)
    second = _second_ahead(ROOMY_AHEAD)
    ids = _start_due_together(stack, "retried", 5, second)

    run = _pump(stack, ids)

    [batch] = _batches(stack)
    assert batch["name"] == run["batches"][0]
    output = _output(stack, batch["executionArn"])  # the retry's
    assert died and [f["outcome"] for f in output["fires"]] == ["FIRED"] * 5
    for action_id in ids:
        done = stack.wait_record(action_id, lambda a: a.status == Status.COMPLETED, timeout=30)
        assert len(done.history) == 1
    for action_id in ids:
        stack.ticks_for(action_id, count=1, timeout=10)
    stack.local.wait_idle()
    ticks = [e["detail"] for e in stack.ticks.drain() if e["detail"]["id"] in ids]
    assert sorted(t["id"] for t in ticks) == ids, "one tick per fire, not one per attempt"
