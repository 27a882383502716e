"""Schedule Start (EventBridge) → validate, index the action, start its first fire's execution.

An event whose detail-type the stack does not take (the template's NearMissRule: any other
detail-type, not from tickwork) → a Schedule Rejected naming the detail-types the stack takes
when it is a slip of one (Schedule Strat, schedule start); else nothing: it is another
consumer's."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.answers import Done, Rejection
from tickwork.bus_event import bus_event
from tickwork.domain.events import DetailType
from tickwork.entry import Entry
from tickwork.steering.intake import accept_near_miss, accept_start
from tickwork.steering.start import StartCommand

entry = Entry(correlation_id_path="detail.id")


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    envelope = bus_event(event)  # Powertools' parser: the declared envelope
    deps = bootstrap.from_environment()
    if envelope.detail_type != DetailType.START:
        missed = accept_near_miss(
            envelope.detail_type, envelope.detail, envelope.id, envelope.source, deps
        )
        entry.count("near_miss_rejected" if missed is not None else "not_ours")
        if missed is None:
            return {"outcome": "ignored", "detailType": envelope.detail_type}
        answer = missed.to_wire()
        entry.logged("near miss answered", answer, notable=True)
        return answer
    result = accept_start(
        StartCommand(envelope.detail, envelope.id, source=envelope.source),
        deps,
    )
    if isinstance(result, Rejection) and result.rejected.signature is not None:
        entry.count("rejected_signature")
    scheduled = result.outcome in (Done.CREATED, Done.REPLACED)
    entry.count("scheduled" if scheduled else str(result.outcome))
    answer = result.to_wire()
    entry.logged("start handled", answer, notable=isinstance(result, Rejection))
    return answer
