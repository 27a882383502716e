"""On the template's schedule (CountSchedule) → fold what the actions table's stream took since
the last run into the counts and fire totals, each write once (docs/protocol.md, "Counts and
fire totals")."""

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
    # Stop folding with a margin before the timeout: the next run goes on from there.
    left = context.get_remaining_time_in_millis() / 1000 - _MARGIN_SECONDS
    folded = counts.fold(deadline=time.monotonic() + max(left, 0.0))
    entry.count("writes_counted", folded.counted)
    return folded.as_dict()
