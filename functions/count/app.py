"""On the template's schedule (CountSchedule) → fold what the actions table's stream took since
the last run into the counts and fire totals, each write once (docs/protocol.md, "Counts and
fire totals"). Writes are left for a later run while the oldest is younger than
CountLagSeconds and they are fewer than a thousand: a fold's own writes are then shared by
more of them. ``{"lagSeconds": 0}`` as the event folds whatever is waiting now."""

from __future__ import annotations

import os
import time
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork.adapters.clients import AwsClients
from tickwork.adapters.dynamodb_stream_counts import DynamoDBStreamCounts
from tickwork.entry import Entry

entry = Entry()
counts = DynamoDBStreamCounts(os.environ["TABLE_NAME"], clients=AwsClients())
_MARGIN_SECONDS = 30


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    lag = lag_of(event, os.environ.get("COUNT_LAG_SECONDS", ""))
    # Stop folding with a margin before the timeout: the next run goes on from there.
    left = context.get_remaining_time_in_millis() / 1000 - _MARGIN_SECONDS
    folded = counts.fold(deadline=time.monotonic() + max(left, 0.0), lag=lag)
    entry.count("writes_counted", folded.counted)
    return folded.as_dict()


def lag_of(event: dict[str, Any], configured: str) -> float:
    """The lag this run keeps: the event's ``lagSeconds`` (a run asked for by hand), else
    COUNT_LAG_SECONDS; 0 folds every write waiting."""
    given = event.get("lagSeconds", configured or 0) if isinstance(event, dict) else configured
    try:
        lag = float(given or 0)
    except (TypeError, ValueError):
        raise ValueError(
            f"lagSeconds {given!r} is not a number of seconds: give 0 to fold every write waiting"
        ) from None
    if not 0 <= lag <= 86_400:
        raise ValueError(f"lagSeconds {lag:g} is outside 0-86400 (the stream keeps 24 hours)")
    return lag
