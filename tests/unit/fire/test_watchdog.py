"""GIVEN actions WHEN a fire has not happened by its time plus MissedGraceSeconds (its
execution lost or not firing, the pump stopped so a parked fire was never launched) THEN the
watchdog, run with the reconciler, announces Schedule Missed once per fire with the action,
occurrence and cause; the action needs attention (listed with attention=true, counted) until
the fire happens, which then says how late (Schedule Late). A fire within the grace, a paused
action and a fire that happened are left alone."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.unit import machine
from tests.unit.fakes import fake_dependencies
from tickwork.dependencies import Dependencies
from tickwork.domain.events import DetailType
from tickwork.domain.selection import Selection
from tickwork.fire.reconcile import reconcile
from tickwork.steering.pause import pause_action
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
GRACE = timedelta(minutes=5)


def _deps(**settings: object) -> Dependencies:
    deps = fake_dependencies(NOW, **settings)
    for action_id in ("h", "fine", "paused"):
        start_action(StartCommand({"id": action_id, "rate": "rate(1 hour)"}), deps)
    pause_action("paused", None, deps)
    return deps


def _attention(deps: Dependencies) -> list[str]:
    return [a.id for a in deps.queries.page(Selection(attention=True), 50, None)[0]]


def test_a_fire_not_happened_past_the_grace_is_announced_missed_once_until_it_fires() -> None:
    deps = _deps()
    deps.clock.current = NOW + HOUR + GRACE - timedelta(seconds=1)  # type: ignore[attr-defined]
    assert reconcile(deps)["missed"] == []  # within the grace: not yet

    deps.clock.current = NOW + HOUR + GRACE + timedelta(seconds=1)  # type: ignore[attr-defined]
    machine.run(deps, machine.current(deps, "fine"))  # "fine" fired (late), "h" did not
    first = reconcile(deps)
    second = reconcile(deps)

    assert first["missed"] == ["h"] and second["missed"] == []
    (event,) = deps.publisher.of_type(DetailType.MISSED)
    assert event["id"] == "h" and event["occurrence"] == 1 and event["group"] == "default"
    assert event["scheduledTime"] == "2026-03-07T13:00:00.000Z"
    assert event["overdueMs"] == (GRACE + timedelta(seconds=1)).total_seconds() * 1000
    assert "not fired" in event["cause"]
    action = deps.records.get("h")
    assert action is not None and action.needs_attention and action.missing_fire
    assert _attention(deps) == ["h"]
    assert deps.queries.count(Selection())["NEEDS_ATTENTION"] == 1

    # WHEN the fire happens at last: late, announced so; no longer in need of attention
    machine.run(deps, machine.current(deps, "h"))
    action = deps.records.get("h")
    assert action is not None and not action.needs_attention and action.occurrence == 2
    assert _attention(deps) == [] and deps.queries.count(Selection())["NEEDS_ATTENTION"] == 0
    assert [e["id"] for e in deps.publisher.of_type(DetailType.LATE)] == ["fine", "h"]
    assert reconcile(deps)["missed"] == []


def test_a_parked_fire_the_pump_never_launched_is_missed_as_such() -> None:
    deps = _deps(launch_ahead=timedelta(minutes=10))  # parked: the pump (never run) launches
    deps.clock.current = NOW + HOUR + GRACE + timedelta(minutes=1)  # type: ignore[attr-defined]

    result = reconcile(deps)

    assert sorted(result["missed"]) == ["fine", "h"]
    causes = {e["id"]: e["cause"] for e in deps.publisher.of_type(DetailType.MISSED)}
    assert all("never launched" in cause for cause in causes.values()), causes
    assert sorted(result["restarted"]) == ["fine", "h"]  # and the repair launches them
