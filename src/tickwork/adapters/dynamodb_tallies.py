"""FireTallies over the actions table: how many fires were recorded on time, late or failed,
by minute and by hour, in all and per group, in counter items ``#fires#<scope>#m<minute>`` and
``#fires#<scope>#h<hour>`` (dynamodb_counts), so /stats reads a bounded number of small items.
Adding is best effort: these are statistics, never the record of a fire."""

from __future__ import annotations

import logging
from datetime import datetime

from botocore.exceptions import ClientError

from tickwork.adapters.clients import OnTable
from tickwork.adapters.dynamodb_counts import fire_counter_id, fire_counter_ids
from tickwork.adapters.dynamodb_reads import items_by_id
from tickwork.domain.fire_tally import FireKind
from tickwork.domain.times import to_epoch_ms

__all__ = ["DynamoDBFireTallies"]

log = logging.getLogger("tickwork")


class DynamoDBFireTallies(OnTable):
    def add(self, group: str, at: datetime, kind: FireKind, count: int = 1) -> None:
        minute = to_epoch_ms(at) // 60_000
        for counter in fire_counter_ids(group, minute):
            try:
                self._table.update_item(
                    Key={"id": counter},
                    UpdateExpression="ADD #k :one",
                    ExpressionAttributeNames={"#k": str(kind)},
                    ExpressionAttributeValues={":one": count},
                )
            except ClientError:
                log.warning("fire not tallied in %s", counter, exc_info=True)

    def read(
        self, group: str | None, hourly: bool, first: int, last: int
    ) -> dict[int, dict[str, int]]:
        ids = {fire_counter_id(group, hourly, n): n for n in range(first, last + 1)}
        return {
            ids[str(item["id"])]: {k: int(str(v)) for k, v in item.items() if k != "id"}
            for item in items_by_id(self._table, list(ids))
        }
