"""Schedule Start (EventBridge) → validate, index the action, start its first fire's execution."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.answers import Done, Rejection
from tickwork.bus_event import bus_event
from tickwork.entry import Entry
from tickwork.steering.intake import accept_start
from tickwork.steering.start import StartCommand

entry = Entry(correlation_id_path="detail.id")


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    envelope = bus_event(event)  # Powertools' parser: the declared envelope
    result = accept_start(
        StartCommand(envelope.detail, envelope.id, source=envelope.source),
        bootstrap.from_environment(),
    )
    if isinstance(result, Rejection) and result.rejected.signature is not None:
        entry.count("rejected_signature")
    scheduled = result.outcome in (Done.CREATED, Done.REPLACED)
    entry.count("scheduled" if scheduled else str(result.outcome))
    answer = result.to_wire()
    entry.logger.info("start handled", extra={"result": answer})
    return answer
