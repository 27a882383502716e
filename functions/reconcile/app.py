"""Every few minutes (EventBridge schedule) → give every action that lost its execution one:
restart lost starts, record lost ticks and failures, release dead claims; then the watchdog
announces the fires not happened by their time plus the grace (Schedule Missed)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.entry import Entry
from tickwork.fire.reconcile import reconcile

entry = Entry()
_MARGIN = timedelta(seconds=30)
_NOT_REPAIRS = frozenset({"unfinished", "missed"})


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    deps = bootstrap.from_environment()
    # Stop looking with a margin before the timeout: the next run looks again.
    left = timedelta(milliseconds=context.get_remaining_time_in_millis()) - _MARGIN
    repaired = reconcile(deps, deadline=deps.clock.now() + max(left, timedelta(0)))
    repairs = {kind: ids for kind, ids in repaired.items() if kind not in _NOT_REPAIRS}
    entry.count("reconciler_repairs", sum(len(ids) for ids in repairs.values()))
    for kind, ids in repairs.items():
        entry.count(f"reconciler_{kind}", len(ids))
    missed = repaired.get("missed", [])
    entry.count("fires_missed", len(missed))  # the MissedFiresAlarm's metric
    for action_id in missed:  # and per action, which EventBridge Scheduler's metrics are not
        entry.count_for("fire_missed", "action", action_id)
    entry.count("reconciler_unfinished", len(repaired.get("unfinished", [])))
    entry.logged("reconciled", repaired, notable=any(repairs.values()) or bool(missed))
    return repaired
