"""ConcurrencySlots over DynamoDB: a counting semaphore of leased slot items.

A limit of N for a key is N possible items ``<key>#0`` … ``<key>#N-1``. Taking a slot is one
conditional PutItem that succeeds only if the item is absent, its lease has expired, or this
holder already has it; giving it back is a DeleteItem conditioned on the holder. So at most N
holders exist at any moment, and a holder that crashed gives its slot back when its lease ends
(a TTL attribute also lets DynamoDB clear old items).

A holder probes from a slot chosen by its own name, so a retry of the same fire finds the slot
it already holds and different fires spread over the slots.

A holder that finds every slot taken has the wait counted on its own item, ``waits#<holder>``
(an ADD, expiring with the lease's TTL): a fire reports its slot waits apart from its attempts,
since the state machine's retry count counts both.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from botocore.exceptions import ClientError

from tickwork.adapters.clients import OnTable

__all__ = ["DynamoDBSlots"]

_PROBES = 5
_WAITS_KEPT = timedelta(days=2)  # a fire's slot waits, kept past any execution's retries


def _waits_of(holder: str) -> str:
    return f"waits#{holder}"


class DynamoDBSlots(OnTable):
    def acquire(
        self, key: str, limit: int, holder: str, now: datetime, lease: timedelta
    ) -> str | None:
        first = int(hashlib.sha256(holder.encode()).hexdigest()[:8], 16) % limit
        for step in range(min(limit, _PROBES)):
            slot = f"{key}#{(first + step) % limit}"
            try:
                self._table.put_item(
                    Item={
                        "slot": slot,
                        "holder": holder,
                        "expiresAt": int((now + lease).timestamp()),
                    },
                    ConditionExpression=(
                        "attribute_not_exists(slot) OR expiresAt < :now OR holder = :holder"
                    ),
                    ExpressionAttributeValues={":now": int(now.timestamp()), ":holder": holder},
                )
            except ClientError as error:
                if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
                continue
            return slot
        self._table.update_item(
            Key={"slot": _waits_of(holder)},
            UpdateExpression="ADD waits :one SET expiresAt = :expires",
            ExpressionAttributeValues={":one": 1, ":expires": int((now + _WAITS_KEPT).timestamp())},
        )
        return None

    def waits(self, holder: str) -> int:
        item = self._table.get_item(Key={"slot": _waits_of(holder)}, ConsistentRead=True)
        return int(str(item.get("Item", {}).get("waits", 0)))

    def release(self, slot: str, holder: str) -> None:
        try:
            self._table.delete_item(
                Key={"slot": slot},
                ConditionExpression="holder = :holder",
                ExpressionAttributeValues={":holder": holder},
            )
        except ClientError as error:
            # Already expired and taken by another holder: it is theirs now.
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
