"""Every few minutes (EventBridge schedule) → give every action that lost its execution one:
restart lost starts, record lost ticks and failures, release dead claims."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.entry import Entry
from tickwork.usecases.reconcile import reconcile

entry = Entry()


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    repaired = reconcile(bootstrap.from_environment())
    entry.count("reconciler_repairs", sum(len(ids) for ids in repaired.values()))
    for kind, ids in repaired.items():
        entry.count(f"reconciler_{kind}", len(ids))
    entry.logger.info("reconciled", extra=repaired)
    return repaired
