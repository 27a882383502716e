"""GIVEN actions whose execution was lost, or whose outcome was never recorded, WHEN the
reconciler runs THEN each gets exactly the repair it needs, once, and actions that are fine are
left alone."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.unit.fakes import attempt, fake_dependencies
from tests.unit.machine import fulfill_fire
from tickwork.dependencies import Dependencies
from tickwork.domain.action import Status
from tickwork.domain.errors import RepairsIncomplete
from tickwork.domain.fire import Outcome
from tickwork.domain.naming import execution_name
from tickwork.fire.reconcile import reconcile
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
NOTHING = {
    "restarted": [], "recorded": [], "failed": [], "released": [], "settled": [], "missed": []
}  # fmt: skip


def _start(deps, action_id: str, delay: str, **detail) -> None:
    start_action(StartCommand({"id": action_id, "delay": delay, **detail}, f"ev-{action_id}"), deps)


def _claimed(deps: Dependencies, action_id: str) -> dict:
    """Start a one-minute action and run its fire up to the tick it returns, as on the wire."""
    _start(deps, action_id, "1m")
    deps.clock.current = NOW + timedelta(minutes=1)
    return fulfill_fire(attempt(action_id, 1, "2026-03-07T12:01:00.000Z"), deps).to_wire()


@pytest.fixture
def deps() -> Dependencies:
    return fake_dependencies(NOW)


def test_a_due_action_whose_start_was_lost_is_started_once(deps) -> None:
    _start(deps, "lost", "5m")
    _start(deps, "fine", "6m")
    _start(deps, "far", "2h")
    deps.executions.started.pop(execution_name("lost", 1, 1, key=None))  # the start never happened

    first = reconcile(deps)
    second = reconcile(deps)

    assert first == {**NOTHING, "restarted": ["lost"]}
    assert second == NOTHING
    assert execution_name("lost", 1, 1, key=None) in deps.executions.started
    assert (
        execution_name("far", 1, 1, key=None) in deps.executions.started
    )  # untouched, not restarted
    (event,) = deps.publisher.of_type("Schedule Reconciled")
    assert event["restarted"] == ["lost"]


def test_a_waiting_execution_that_ended_without_firing_gets_a_repair_execution(deps) -> None:
    # GIVEN a PENDING action whose execution was stopped by hand in the console
    _start(deps, "stopped", "5m")
    deps.executions.end(execution_name("stopped", 1, 1, key=None), "ABORTED")

    first = reconcile(deps)
    second = reconcile(deps)

    # THEN a numbered repair execution is started (the name can't be reused), once
    repair = execution_name("stopped", 1, 1, repair=1, key=None)
    assert first["restarted"] == ["stopped"] and second == NOTHING
    assert deps.executions.started[repair].to_wire()["repair"] == 1
    assert deps.records.get("stopped").execution_arn.endswith(repair)


def test_a_repair_that_fails_never_stops_the_others_and_is_named_at_the_end(deps) -> None:
    # GIVEN two actions whose executions were stopped; every name the first could be repaired
    # under is used up (a name can be used once), and the second sorts after it
    _start(deps, "a-used-up", "5m")
    _start(deps, "b-stopped", "5m")
    for repair in range(51):
        name = execution_name("a-used-up", 1, 1, repair=repair, key=None)
        deps.executions.started.setdefault(name, deps.executions.started[_own("a-used-up")])
        deps.executions.end(name, "ABORTED")
    deps.executions.end(_own("b-stopped"), "ABORTED")

    # WHEN the reconciler runs
    with pytest.raises(RepairsIncomplete) as incomplete:
        reconcile(deps)

    # THEN the second is repaired all the same, announced, and the first is named
    assert incomplete.value.subjects == ["a-used-up"]
    assert incomplete.value.repaired["restarted"] == ["b-stopped"]  # for the local stack's start
    [event] = deps.publisher.of_type("Schedule Reconciled")
    assert event["restarted"] == ["b-stopped"]
    assert execution_name("b-stopped", 1, 1, repair=1, key=None) in deps.executions.started


def _own(action_id: str) -> str:
    return execution_name(action_id, 1, 1, key=None)


def test_a_fire_whose_tick_was_lost_is_recorded_from_the_execution_output(deps) -> None:
    # GIVEN a fire that ran and succeeded, but whose Schedule Tick never got recorded
    tick = _claimed(deps, "ticked")
    deps.executions.end(execution_name("ticked", 1, 1, key=None), "SUCCEEDED", output=tick)
    deps.clock.advance(minutes=20)

    result = reconcile(deps)

    # THEN the occurrence is recorded from the output: completed, and nothing fires again
    assert result == {**NOTHING, "recorded": ["ticked"]}
    action = deps.records.get("ticked")
    assert action.status == Status.COMPLETED
    assert [h.outcome for h in action.history] == ["FIRED"]
    assert not any("-r" in name for name in deps.executions.started)


def test_a_fire_whose_failure_report_was_lost_is_recorded_failed(deps) -> None:
    _claimed(deps, "broken")
    deps.executions.end(
        execution_name("broken", 1, 1, key=None),
        "FAILED",
        error="FireFailed",
        cause="past its retries",
    )
    deps.clock.advance(minutes=20)

    result = reconcile(deps)

    assert result == {**NOTHING, "failed": ["broken"]}
    action = deps.records.get("broken")
    assert action.status == Status.FAILED and action.history[-1].outcome == "FAILED"
    assert "FireFailed" in action.history[-1].error


def test_a_fire_whose_tick_the_bus_refused_is_put_on_the_bus_then_recorded(deps) -> None:
    # GIVEN a fire that ran, but whose tick the bus kept refusing past Emit tick's retries: the
    # execution succeeded through "Tick undelivered", the tick and why it was refused its output
    tick = _claimed(deps, "refused")
    refusal = {"Error": "EventBridge.FailedEntry", "Cause": "throttled"}
    deps.executions.end(
        execution_name("refused", 1, 1, key=None),
        "SUCCEEDED",
        output={**tick, "undelivered": refusal},
    )
    deps.clock.advance(minutes=20)

    result = reconcile(deps)
    again = reconcile(deps)

    # THEN the tick is put on the bus as the fire made it (its proof with it), and recorded once
    assert result == {**NOTHING, "recorded": ["refused"]} and again == NOTHING
    assert deps.publisher.of_type("Schedule Tick") == [tick]
    assert deps.records.get("refused").status == Status.COMPLETED
    assert not any("-r" in name for name in deps.executions.started)


def test_a_fire_whose_report_the_bus_refused_is_recorded_failed_from_the_report(deps) -> None:
    # GIVEN a fire that failed past its retries whose report the bus refused: the execution
    # ended in FireFailed with the proved report as its cause
    _claimed(deps, "unreported")
    name = execution_name("unreported", 1, 1, key=None)
    report = {
        "id": "unreported", "generation": 1, "occurrence": 1, "manual": 0,
        "trigger": "SCHEDULED", "scheduledTime": "2026-03-07T12:01:00.000Z",
        "executionName": name, "error": "PermanentFulfillmentError",
        "cause": '{"errorMessage": "POST https://x.test answered 400"}', "proof": "v1=00",
        "undelivered": {"Error": "EventBridge.FailedEntry", "Cause": "throttled"},
    }  # fmt: skip
    deps.executions.end(name, "FAILED", error="FireFailed", cause=json.dumps(report))
    deps.clock.advance(minutes=20)

    result = reconcile(deps)

    # THEN it is recorded FAILED from the report, the report is put on the bus, and the fire
    # is never run again
    assert result == {**NOTHING, "failed": ["unreported"]}
    action = deps.records.get("unreported")
    assert action.status == Status.FAILED
    assert action.history[-1].error == "PermanentFulfillmentError: POST https://x.test answered 400"
    (published,) = deps.publisher.of_type("Schedule Failed")
    assert published["proof"] == "v1=00" and "undelivered" not in published
    assert not any("-r" in name for name in deps.executions.started)


@pytest.mark.parametrize(
    "ending",
    [
        {"status": "ABORTED"},
        {"status": "TIMED_OUT"},
        {"status": "FAILED", "error": "States.Runtime", "cause": "Invalid path '$.Payload'"},
        {"status": "FAILED", "error": "EventBridge.FailedEntry", "cause": "an older definition"},
        None,
    ],
    ids=["aborted", "timed-out", "runtime-error", "uncaught-error", "gone"],
)
def test_a_claim_whose_execution_ended_unreported_is_recorded_failed_not_run_again(
    deps, ending
) -> None:
    # GIVEN a claimed fire whose execution ended without a tick or a failure report: the
    # target may or may not have been reached
    _claimed(deps, "stuck")
    name = execution_name("stuck", 1, 1, key=None)
    if ending is None:
        deps.executions.started.pop(name)  # lost with the emulator
    else:
        deps.executions.end(name, **ending)

    early = reconcile(deps)  # not stuck long enough yet
    deps.clock.advance(minutes=20)
    late = reconcile(deps)
    again = reconcile(deps)

    # THEN (onUnknownOutcome FAIL, the default) it is recorded failed as an unknown outcome,
    # needs attention and can be retried by hand; nothing runs it again
    assert early == NOTHING and late == {**NOTHING, "failed": ["stuck"]} and again == NOTHING
    action = deps.records.get("stuck")
    assert action.status == Status.FAILED and action.needs_attention
    assert action.history[-1].error.startswith("FireOutcomeUnknown: ")
    assert not any("-r" in started for started in deps.executions.started)


@pytest.mark.parametrize(
    ("stopped_after", "timed_by"),
    [(timedelta(seconds=3), "its end"), (timedelta(minutes=-5), "the recording")],
    ids=["stopped-after-its-fire", "stopped-on-another-clock"],
)
def test_a_fire_whose_execution_ended_unreported_is_timed_by_its_end(
    deps, stopped_after: timedelta, timed_by: str
) -> None:
    """The reconciler records it 20 minutes later: the failed entry (and the overlap window)
    ends when the execution ended, unless that moment is before the fire's own time (an
    emulator may time its executions on another clock): then at the recording, as before."""
    _claimed(deps, "stuck")
    fire_at = NOW + timedelta(minutes=1)
    name = execution_name("stuck", 1, 1, key=None)
    deps.executions.end(name, "ABORTED", stopped_at=fire_at + stopped_after)
    deps.clock.advance(minutes=20)

    assert reconcile(deps)["failed"] == ["stuck"]

    ended = deps.records.get("stuck").history[-1].actual_time
    assert ended == (fire_at + stopped_after if timed_by == "its end" else deps.clock.now())


def test_a_claim_whose_execution_died_is_released_and_fired_again_under_retry(deps) -> None:
    _start(deps, "stuck", "1m", onUnknownOutcome="RETRY")
    deps.clock.current = NOW + timedelta(minutes=1)
    fulfill_fire(attempt("stuck", 1, "2026-03-07T12:01:00.000Z"), deps)
    name = execution_name("stuck", 1, 1, key=None)
    deps.executions.stop(deps.executions.execution_arn(name), "died")

    early = reconcile(deps)  # not stuck long enough yet
    deps.clock.advance(minutes=20)
    late = reconcile(deps)
    again = reconcile(deps)

    # (released at 12:21, its 12:01 fire is past the watchdog's grace: the next run notes it
    # missed, once)
    assert early == NOTHING and late == {**NOTHING, "released": ["stuck"]}
    assert again == {**NOTHING, "missed": ["stuck"]}
    assert deps.records.get("stuck").status == Status.PENDING
    repair = execution_name("stuck", 1, 1, repair=1, key=None)
    assert repair in deps.executions.started
    # AND the repair execution may claim and fire it
    fire = attempt("stuck", 1, "2026-03-07T12:01:00.000Z", repair, repair=1)
    assert fulfill_fire(fire, deps).outcome is Outcome.FIRED


def test_a_claim_still_running_is_left_alone_however_long(deps) -> None:
    _claimed(deps, "slow")  # e.g. retrying with backoff, or waiting for a concurrency slot
    deps.clock.advance(hours=2)

    assert reconcile(deps) == NOTHING
    assert deps.records.get("slow").status == Status.IN_PROGRESS


def test_a_run_out_of_time_stops_looking_names_what_it_left_and_the_next_run_repairs_it(
    deps, monkeypatch
) -> None:
    # GIVEN five fires whose starts were lost, and a describe that takes a second each
    for n in range(5):
        _start(deps, f"lost{n}", f"{n + 1}m")
        deps.executions.started.pop(execution_name(f"lost{n}", 1, 1, key=None))
    describe = type(deps.executions).describe

    def slow(self, name):  # type: ignore[no-untyped-def]
        deps.clock.advance(seconds=1)
        return describe(self, name)

    monkeypatch.setattr(type(deps.executions), "describe", slow)

    # WHEN a run may look for 4 seconds
    first = reconcile(deps, deadline=NOW + timedelta(seconds=4))

    # THEN it repairs what it reached, nearest first, and names every part it did not finish
    reached = first["restarted"]
    assert 1 <= len(reached) < 5 and reached == [f"lost{n}" for n in range(len(reached))]
    assert first["unfinished"] == ["pending", "claims", "manual", "tabs"]
    # AND the next run, with time, repairs the rest, once each
    second = reconcile(deps)
    assert second == {**NOTHING, "restarted": [f"lost{n}" for n in range(len(reached), 5)]}
    started = deps.executions.started
    assert all(execution_name(f"lost{n}", 1, 1, key=None) in started for n in range(5))
