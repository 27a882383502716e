"""GIVEN an indexed action WHEN the control, fulfill and tick functions get their events/ files
THEN the record moves as the contract says, and repeats change nothing."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from moto import mock_aws

from tickwork.domain.action import Status
from tickwork.domain.times import iso, parse_iso
from tickwork_local.stack import LocalStack


def test_stop_cancels_and_aborts_the_execution(stack, invoke, event) -> None:
    invoke("StartFunction", event("start/duration-5m"))

    result, error = invoke("ControlFunction", event("control/cancel"))

    assert error is None and result["outcome"] == "cancelled"
    action = stack.record("test:duration-5m")
    assert action.status == Status.CANCELLED and action.generation == 2
    assert [e["status"] for e in stack.executions()] == ["ABORTED"]
    again, _ = invoke("ControlFunction", event("control/cancel"))
    assert again["outcome"] == "unchanged"


def test_stop_of_an_unknown_id_is_rejected(stack, invoke, event) -> None:
    result, error = invoke("ControlFunction", event("control/unknown-id"))

    assert error is None and result["outcome"] == "rejected"
    assert result["reason"] == "ActionNotFound"


def _start_soon(invoke, event) -> None:
    """events/start/duration-5m, due in a second: its fire can be fulfilled now."""
    start = event("start/duration-5m")
    start["detail"]["duration"] = "1s"
    invoke("StartFunction", start)


def _fire(stack) -> dict:
    """What the Fulfill task invokes the fulfill function with for the execution the record
    names: its input as the stack started it (its order, proved), its name and ARN."""
    arn = stack.record("test:duration-5m").execution_arn
    described = stack.local.client("stepfunctions").describe_execution(executionArn=arn)
    return {
        "input": json.loads(described["input"]),
        "executionName": described["name"],
        "executionArn": arn,
        "retryCount": 0,
    }


def test_the_fulfill_event_file_is_an_order_no_execution_was_started_with(
    stack, invoke, event
) -> None:
    """events/fulfill/fire.json shows the payload's shape; its input carries no proof, so the
    fulfill step refuses it (ForgedOrder), fires nothing and says so on the bus."""
    invoke("StartFunction", event("start/duration-5m"))
    before = stack.record("test:duration-5m")

    payload, error = invoke("FulfillFunction", event("fulfill/fire"))

    assert error == "ForgedOrder" and "carries no proof" in payload["errorMessage"]
    assert stack.record("test:duration-5m").version == before.version
    tampered = stack.lifecycle.wait_for(
        lambda evs: any(e["detail-type"] == "Schedule Tampered" for e in evs), timeout=5
    )
    [detail] = [e["detail"] for e in tampered if e["detail-type"] == "Schedule Tampered"]
    assert detail["id"] == "test:duration-5m" and "carries no proof" in detail["reason"]
    assert detail["executionArn"].endswith(":test_duration-5m-f165be39-g1-o1")


def test_a_failure_report_is_proved_only_for_an_order_the_stack_issued(
    stack, invoke, event
) -> None:
    """Invoked directly with a made-up input and error, the fulfill step makes no report: a
    proved report would have the tick function record the fire FAILED though it never ran."""
    _start_soon(invoke, event)
    made_up = {**event("fulfill/fire")["input"], "error": {"Error": "X", "Cause": "made up"}}
    name = "test_duration-5m-f165be39-g1-o1"

    report, error = invoke("FulfillFunction", {"report": made_up, "executionName": name})

    assert error == "ForgedOrder" and "proof" not in report
    assert stack.record("test:duration-5m").status == Status.PENDING


def test_fulfill_records_a_one_off_before_its_tick_which_the_tick_function_leaves(
    stack, invoke, event
) -> None:
    _start_soon(invoke, event)

    tick, error = invoke("FulfillFunction", _fire(stack))

    assert error is None
    assert tick["outcome"] == "FIRED" and tick["occurrence"] == 1 and tick["attempts"] == 1
    assert tick["recorded"] is True  # the record held the fire before the tick went out
    assert tick["proof"].startswith("v1=")  # made by the fulfill step, under the stack's key
    action = stack.record("test:duration-5m")
    assert action.status == Status.COMPLETED
    assert [(h.occurrence, h.outcome) for h in action.history] == [(1, "FIRED")]
    # Were it delivered to the tick function (the tick rule leaves a recorded tick out), it
    # would change nothing.
    envelope = {**event("tick/tick"), "detail": tick}
    repeat, error = invoke("TickFunction", envelope)
    assert error is None and repeat["outcome"] == "ignored"
    assert stack.record("test:duration-5m").version == action.version


def _proved_failure(stack, invoke, event) -> dict:
    """The Schedule Failed detail the state machine's Catch has the fulfill step make."""
    fire, shown = _fire(stack), event("tick/failed")["detail"]
    caught = {**fire["input"], "error": {"Error": shown["error"], "Cause": shown["cause"]}}
    report, error = invoke(
        "FulfillFunction",
        {
            "report": caught,
            "executionName": fire["executionName"],
            "executionArn": fire["executionArn"],
        },
    )
    assert error is None, report
    return report


@pytest.mark.parametrize("name", ["tick/tick", "tick/failed"])
def test_a_report_no_fire_of_this_stack_made_is_rejected_as_forged(
    stack, invoke, event, name
) -> None:
    """events/tick/* show the shapes; put on the bus by anyone but a fire of this stack (no
    proof, or one that does not match), the tick function refuses them and writes nothing."""
    _start_soon(invoke, event)
    invoke("FulfillFunction", _fire(stack))
    before = stack.record("test:duration-5m")

    forged, error = invoke("TickFunction", event(name))
    made_up = event(name)
    made_up["detail"]["proof"] = "v1=" + "0" * 64
    also, _ = invoke("TickFunction", made_up)

    assert error is None and forged["outcome"] == also["outcome"] == "rejected"
    assert forged["reason"] == also["reason"] == "ForgedReport"
    assert stack.record("test:duration-5m").version == before.version
    events = stack.lifecycle.wait_for(
        lambda evs: sum(e["detail-type"] == "Schedule Rejected" for e in evs) >= 2, timeout=2
    )
    rejected = [e["detail"] for e in events if e["detail-type"] == "Schedule Rejected"]
    assert [r["reason"] for r in rejected] == ["ForgedReport", "ForgedReport"]


def test_fulfill_of_a_superseded_execution_raises_by_name(stack, invoke, event) -> None:
    invoke("StartFunction", event("start/duration-5m"))
    fire = _fire(stack)
    invoke("ControlFunction", event("control/cancel"))

    payload, error = invoke("FulfillFunction", fire)

    assert error == "ActionSuperseded"
    assert payload["errorType"] == "ActionSuperseded"


def test_failed_event_records_failed_with_the_error(stack, invoke, event) -> None:
    _start_soon(invoke, event)  # the record names the execution whose failure is reported
    failed = {**event("tick/failed"), "detail": _proved_failure(stack, invoke, event)}

    result, error = invoke("TickFunction", failed)

    assert error is None and result["status"] == "FAILED"
    action = stack.record("test:duration-5m")
    assert action.status == Status.FAILED
    assert (
        action.last_error == "PermanentFulfillmentError: HTTP 404 from https://billing.example.com/"
    )
    assert action.ttl is not None


def test_a_report_of_another_shape_is_rejected_and_records_nothing(stack, invoke, event) -> None:
    # GIVEN a fire the record names, and a failure report in the shape of an earlier state
    # machine
    _start_soon(invoke, event)
    before = stack.record("test:duration-5m")
    earlier = {**event("tick/failed"), "detail": _proved_failure(stack, invoke, event)}
    earlier["detail"]["fireAt"] = earlier["detail"].pop("scheduledTime")

    # WHEN the tick function gets it
    result, error = invoke("TickFunction", earlier)

    # THEN it is refused by field, published as Schedule Rejected, not retried, nothing written
    assert error is None and result["outcome"] == "rejected"
    assert result["request"] == "Schedule Failed" and result["reason"] == "MalformedFire"
    assert [p["field"] for p in result["problems"]] == ["detail.scheduledTime"]
    assert stack.record("test:duration-5m").version == before.version
    rejected = stack.lifecycle.wait_for(
        lambda events: any(e["detail-type"] == "Schedule Rejected" for e in events), timeout=5
    )
    assert [e["detail"]["reason"] for e in rejected if e["detail-type"] == "Schedule Rejected"] == [
        "MalformedFire"
    ]


def test_the_reconciler_runs_on_its_template_schedule() -> None:
    # GIVEN the stack with the reconciler's schedule set to every second
    parameters = {"ReconcileSchedule": "rate(1 second)"}
    stack = LocalStack.from_repo(parameters=parameters)
    stack.lean_runs = False  # every run made, as on AWS (the suite leaves idle ones out)
    with mock_aws(), stack.running() as local:
        (runner,) = [r for r in local.schedules if r.function == "ReconcilerFunction"]
        assert runner.interval == 1.0

        # WHEN a few seconds pass
        deadline = time.monotonic() + 15
        while runner.runs < 2 and time.monotonic() < deadline:
            time.sleep(0.1)

        # THEN the reconciler function was invoked on that schedule, successfully
        runs = [i for i in local.runtime.invocations if i.function.endswith("ReconcilerFunction")]
        assert runner.interval == 1.0
        assert len(runs) >= 2 and all(i.error_type is None for i in runs)


def test_pause_then_resume_from_the_events_files(stack, invoke, event) -> None:
    invoke("StartFunction", event("start/duration-5m"))

    paused, error = invoke("ControlFunction", event("control/pause"))

    assert error is None and paused["outcome"] == "paused", paused
    action = stack.record("test:duration-5m")
    assert (
        action.status == Status.PAUSED
        and action.pause is not None
        and action.pause.note == "billing migration"
    )
    assert [e["status"] for e in stack.executions()] == ["ABORTED"]
    resumed, error = invoke("ControlFunction", event("control/resume"))
    assert error is None and resumed["outcome"] == "resumed", resumed
    assert stack.record("test:duration-5m").status == Status.PENDING
    assert sorted(e["status"] for e in stack.executions()) == ["ABORTED", "RUNNING"]


def test_run_now_from_its_events_file_fires_once_per_request(stack, invoke, event) -> None:
    invoke("StartFunction", event("start/cron"))

    first, error = invoke("ControlFunction", event("control/run-now"))
    again, _ = invoke("ControlFunction", event("control/run-now"))  # the same event again

    assert error is None and first["outcome"] == "triggered", first
    assert again["outcome"] == "unchanged" and again["manual"] == first["manual"]
    manual = [e for e in stack.executions() if e["name"].endswith(f"-m{first['manual']}")]
    assert len(manual) == 1


def test_a_control_event_with_an_unknown_field_is_rejected_naming_it(stack, invoke, event) -> None:
    invoke("StartFunction", event("start/duration-5m"))
    bad = event("control/pause")
    bad["detail"]["until"] = "tomorrow"

    result, error = invoke("ControlFunction", bad)

    assert error is None and result["outcome"] == "rejected"
    assert [p["field"] for p in result["problems"]] == ["until"]
    assert stack.record("test:duration-5m").status == Status.PENDING


def test_the_pump_launches_a_parked_fire_from_its_events_file(stack, invoke, event) -> None:
    # GIVEN a fire parked again, due for launch now (as after a refused start)
    invoke("StartFunction", event("start/cron"))
    parked = stack.record("test:schedule")
    now = datetime.now(UTC)
    stack.records.save(
        replace(parked.parked_again(now, now), version=parked.version + 1), parked.version
    )

    # WHEN the pump runs on its schedule (sam local invoke PumpFunction -e events/pump/...)
    result, error = invoke("PumpFunction", event("pump/scheduled"))

    # THEN it starts that fire's execution and marks it launched
    assert error is None and result == {
        "launched": ["test:schedule"],
        "moved": [],
        "refused": [],
        "batches": [],
        "failed": [],
        "handed_out": [],
        "waiting": [],
    }
    launched = stack.record("test:schedule")
    assert launched.launch_at is None and launched.execution_arn is not None


def test_the_count_function_folds_on_its_schedule_and_when_asked_from_its_events_files(
    stack, invoke, event
) -> None:
    # GIVEN a Start's writes waiting in the table's stream
    invoke("StartFunction", event("start/cron"))
    assert stack.local.unfolded()

    # WHEN the count function runs on its schedule, then as asked by hand (lag 0)
    scheduled, error = invoke("CountFunction", event("count/scheduled"))
    assert error is None, scheduled
    now, error = invoke("CountFunction", event("count/now"))

    # THEN the writes are folded (on the local stack the schedule's lag is 0 as well)
    assert error is None and now["waiting"] == 0 and now["caughtUp"], now
    assert scheduled["folds"] + now["folds"] >= 1 and not stack.local.unfolded()


def test_a_pump_worker_launches_its_share_and_its_shard_from_their_events_files(
    stack, invoke, event
) -> None:
    # GIVEN a fire parked again, due for launch now, and another parked far ahead
    invoke("StartFunction", event("start/cron"))
    parked = stack.record("test:schedule")
    now = datetime.now(UTC)
    stack.records.save(
        replace(parked.parked_again(now, now), version=parked.version + 1), parked.version
    )

    # WHEN a worker is handed a share naming it (sam local invoke PumpWorkerFunction -e ...)
    result, error = invoke("PumpWorkerFunction", event("pump-worker/share"))

    # THEN it launches it as the pump would; a second hand-out of it finds it launched
    assert error is None and result["launched"] == ["test:schedule"], result
    assert stack.record("test:schedule").execution_arn is not None
    again, error = invoke("PumpWorkerFunction", event("pump-worker/share"))
    assert error is None and again["launched"] == [] and again["moved"] == ["test:schedule"]
    # and a worker handed a shard with nothing due there launches nothing
    shard, error = invoke("PumpWorkerFunction", event("pump-worker/shard"))
    assert error is None and shard["launched"] == [] and shard["failed"] == [], shard


def test_the_reconciler_restarts_a_lost_execution_from_its_events_file(
    stack, invoke, event
) -> None:
    # GIVEN an action due soon whose execution was stopped by hand
    invoke("StartFunction", event("start/duration-5m"))
    arn = stack.record("test:duration-5m").execution_arn
    stack.local.client("stepfunctions").stop_execution(executionArn=arn, cause="by hand")

    # WHEN the reconciler runs on its schedule (events/reconcile/scheduled.json)
    result, error = invoke("ReconcilerFunction", event("reconcile/scheduled"))

    # THEN it starts a repair execution for it, and reports the repair
    assert error is None and result["restarted"] == ["test:duration-5m"], result
    assert stack.record("test:duration-5m").execution_arn.endswith("-r1")


def test_skip_move_and_restore_one_occurrence_from_the_events_files(stack, invoke, event) -> None:
    invoke("StartFunction", event("start/cron"))  # 30 * * * *: hourly at half past
    waiting = stack.record("test:schedule")

    skipped, error = invoke("ControlFunction", event("control/skip-occurrence"))

    assert error is None and skipped["outcome"] == "skipped" and skipped["occurrence"] == 2
    second = parse_iso(skipped["scheduledTime"])
    (change,) = stack.record("test:schedule").occurrence_changes
    assert change.scheduled == second and change.to is None and change.note == "bank holiday"
    restored, error = invoke("ControlFunction", event("control/restore-occurrence"))
    assert error is None and restored["outcome"] == "restored"
    assert stack.record("test:schedule").occurrence_changes == ()
    # the file's "to" is an example: a move lands between the occurrences around it
    move = event("control/move-occurrence")
    move["detail"]["to"] = iso(second + timedelta(minutes=15))
    moved, error = invoke("ControlFunction", move)
    assert error is None and moved["outcome"] == "moved", moved
    assert moved["firesAt"] == iso(second + timedelta(minutes=15))
    again, _ = invoke("ControlFunction", move)  # the same event delivered again
    assert again["outcome"] == "unchanged"
    far = event("control/move-occurrence")  # as the file has it: not between its neighbours
    far["id"] = "5a1e9c0e-0000-4000-8000-000000000099"  # another request
    refused, error = invoke("ControlFunction", far)
    assert error is None and refused["outcome"] == "rejected"
    assert [p["field"] for p in refused["problems"]] == ["to"]
    # the fire the record is at, and its execution, are untouched
    after = stack.record("test:schedule")
    assert after.generation == waiting.generation
    assert after.execution_arn == waiting.execution_arn


def test_a_backfill_from_the_events_file_runs_its_first_occurrences(stack, invoke, event) -> None:
    invoke("StartFunction", event("start/cron"))  # 30 * * * *: hourly at half past
    envelope = event("control/backfill")  # the 24 occurrences of 2026-11-21, before creation

    answer, error = invoke("ControlFunction", envelope)

    assert error is None and answer["outcome"] == "backfilling", answer
    assert answer["occurrences"] == 24 and answer["remaining"] == 19
    assert [f["scheduledTime"] for f in answer["launched"]][:2] == [
        "2026-11-21T00:30:00.000Z",
        "2026-11-21T01:30:00.000Z",
    ]
    record = stack.record("test:schedule")
    assert record.backfill is not None and record.backfill.note == "the report job was down"
    assert [m.trigger for m in record.manual.in_flight] == ["BACKFILL"] * 5
    again, error = invoke("ControlFunction", envelope)  # delivered again: nothing runs twice
    assert error is None and again["launched"] == [] and again["alreadyBackfilled"] == 5


@pytest.mark.parametrize("name", ["fulfill/batch", "fulfill/report"])
def test_the_batch_and_report_event_files_are_orders_no_execution_was_started_with(
    stack, invoke, event, name: str
) -> None:
    """events/fulfill/batch.json and report.json show those payloads' shapes; neither carries
    a proof, so the fulfill function refuses each (ForgedOrder) and fires nothing."""
    invoke("StartFunction", event("start/duration-5m"))
    before = stack.record("test:duration-5m")

    payload, error = invoke("FulfillFunction", event(name))

    assert error == "ForgedOrder" and "carries no proof" in payload["errorMessage"]
    assert stack.record("test:duration-5m").version == before.version
