"""GIVEN actions whose execution was lost WHEN the reconciler runs THEN each gets one again,
and actions that are fine are left alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.unit.fakes import fake_dependencies
from tickwork.domain.action import Status
from tickwork.domain.naming import execution_name
from tickwork.usecases.fulfill import FireInput, fulfill_fire
from tickwork.usecases.reconcile import reconcile
from tickwork.usecases.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)


def _start(deps, action_id: str, delay: str) -> None:
    start_action(StartCommand({"id": action_id, "delay": delay}, f"ev-{action_id}"), deps)


def test_a_due_action_whose_start_was_lost_is_started_once() -> None:
    deps = fake_dependencies(NOW)
    _start(deps, "lost", "5m")
    _start(deps, "fine", "6m")
    _start(deps, "far", "2h")
    deps.executions.started.pop(execution_name("lost", 1, 1))  # the start never happened

    first = reconcile(deps)
    second = reconcile(deps)

    assert first["restarted"] == ["lost"] and first["released"] == []
    assert second == {"restarted": [], "released": []}
    assert execution_name("lost", 1, 1) in deps.executions.started
    assert [t for t, _ in deps.publisher.events].count("Schedule Reconciled") == 1


def test_a_claim_whose_execution_died_is_released_and_fired_again() -> None:
    deps = fake_dependencies(NOW)
    _start(deps, "stuck", "1m")
    name = execution_name("stuck", 1, 1)
    deps.clock.current = NOW + timedelta(minutes=1)
    fulfill_fire(FireInput("stuck", 1, 1, 0, "2026-03-07T12:01:00.000Z", name), deps)
    deps.executions.stop(deps.executions.execution_arn(name), "died")

    early = reconcile(deps)  # not stuck long enough yet
    deps.clock.advance(minutes=20)
    late = reconcile(deps)

    assert early["released"] == [] and late["released"] == ["stuck"]
    assert deps.repository.get("stuck").status == Status.PENDING
