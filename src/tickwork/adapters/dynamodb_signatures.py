"""SignatureLedger over DynamoDB: one item per signature acted on, written with a conditional
PutItem — absent, or written by this same event (a redelivery) — and one per action changed by
a signed request, holding the latest signing time (a conditional PutItem that only moves it
forward). Both are cleared by TTL once no signature they could refuse is still valid."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from tickwork.adapters.clients import OnTable
from tickwork.ports import Spent

__all__ = ["DynamoDBSignatures"]


class DynamoDBSignatures(OnTable):
    def spend(self, digest: str, event_id: str | None, until: datetime) -> Spent:
        item: dict[str, Any] = {"signature": f"sig:{digest}", "expiresAt": int(until.timestamp())}
        if event_id:
            item["eventId"] = event_id
        if self._put(item, "attribute_not_exists(signature)", {}):
            return Spent.FIRST
        if event_id and self._put(item, "eventId = :event", {":event": event_id}):
            return Spent.AGAIN  # the same event delivered again: the same request
        return Spent.REPLAYED

    def advance(self, action_id: str, signed_at: int, until: datetime) -> bool:
        item = {
            "signature": f"action:{action_id}",
            "signedAt": signed_at,
            "expiresAt": int(until.timestamp()),
        }
        return self._put(
            item, "attribute_not_exists(signature) OR signedAt <= :at", {":at": signed_at}
        )

    def _put(self, item: dict[str, Any], condition: str, values: dict[str, Any]) -> bool:
        try:
            if values:
                self._table.put_item(
                    Item=item, ConditionExpression=condition, ExpressionAttributeValues=values
                )
            else:
                self._table.put_item(Item=item, ConditionExpression=condition)
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            return False
        return True
