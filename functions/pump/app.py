"""On the template's schedule (PumpSchedule) → start the execution of every parked fire that
comes within LaunchAheadSeconds, and mark it launched."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.entry import Entry
from tickwork.fire.pump import pump

entry = Entry()


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    run = pump(bootstrap.from_environment())
    for kind, ids in run.items():
        entry.count(f"pump_{kind}", len(ids))
    entry.logger.info("pumped", extra={kind: len(ids) for kind, ids in run.items()})
    return run
