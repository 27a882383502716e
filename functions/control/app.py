"""Schedule Stop / Pause / Resume / Run Now / Skip Occurrence / Move Occurrence / Restore
Occurrence / Backfill (EventBridge) → steer a live action: cancel it, pause it, resume it, fire
it once now, skip or move one occurrence or undo that, or run a past range's occurrences."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.answers import Rejection
from tickwork.bus_event import bus_event
from tickwork.entry import Entry
from tickwork.steering.intake import accept_control

entry = Entry(correlation_id_path="detail.id")


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    envelope = bus_event(event)  # Powertools' parser: the declared envelope
    result = accept_control(
        envelope.detail_type,
        envelope.detail,
        envelope.id,
        bootstrap.from_environment(),
        envelope.source,
    )
    if isinstance(result, Rejection) and result.rejected.signature is not None:
        entry.count("rejected_signature")  # unsigned, forged, expired, replayed or stale
    entry.count(str(result.outcome))
    answer = result.to_wire()
    entry.logged("control event handled", answer, notable=isinstance(result, Rejection))
    return answer
