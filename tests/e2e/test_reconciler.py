"""GIVEN a record whose execution start was lost WHEN the scheduled reconciler runs THEN the
action fires once, through the real definition."""

from __future__ import annotations

from dataclasses import replace

from tests.e2e.support import Stack, assert_never_early, in_seconds
from tickwork.domain.action import Status
from tickwork.fire.sealing import seal_of
from tickwork.fire.start_record import check_start


def test_lost_start_is_restarted_by_the_reconciler_and_fires_once(stack: Stack) -> None:
    # GIVEN a PENDING record written without its execution (a crash between write and start)
    deps = stack.deps
    detail = {"id": "lost:start", "at": in_seconds(2)}
    checked = check_start(detail, "ev-lost", deps.clock.now(), deps)
    stack.start({"id": "template:record", "at": in_seconds(60)})
    template = stack.wait_record("template:record", lambda a: a.status == Status.PENDING)
    orphan = replace(
        template,
        id="lost:start",
        execution_time=checked.first_fire,
        schedule=checked.request.schedule,
        execution_arn=None,
        launch_at=None,  # the template's fire a minute away is parked: this one is not
        version=1,
    )
    deps.records.create(replace(orphan, seal=seal_of(orphan, deps)))  # as tickwork writes
    assert [e for e in stack.executions() if e["name"].startswith("lost_start")] == []

    # WHEN the reconciler's schedule fires it (twice: the second run must change nothing)
    reconciler = next(f.name for f in stack.local.functions if f.logical_id == "ReconcilerFunction")
    first, _ = stack.local.runtime.invoke(reconciler, {"source": "aws.events", "detail": {}})
    second, _ = stack.local.runtime.invoke(reconciler, {"source": "aws.events", "detail": {}})

    # THEN it is started once and fires once, not early
    assert first["restarted"] == ["lost:start"] and second["restarted"] == []
    stack.wait_record("lost:start", lambda a: a.status == Status.COMPLETED)
    ticks = stack.ticks_for("lost:start", count=1, timeout=2)
    assert len(ticks) == 1
    assert_never_early(ticks)
