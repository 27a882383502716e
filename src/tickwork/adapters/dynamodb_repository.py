"""ActionRepository over one DynamoDB table, with version-fenced writes.

Items keep the seed schema's attribute names (id, action, data, metadata, executionTime in
epoch milliseconds, repeat, frequency, executionRemainder, status, retryCount, createdAt,
updatedAt) beside tickwork's own (schedule, timezone, version, generation, occurrence, ...).
``statusShard`` + ``executionTime`` feed the ByStatus index; the shard suffix spreads one
status over several partitions so a million PENDING actions do not share one hot key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from datetime import datetime
from decimal import Decimal
from typing import Any

from botocore.exceptions import ClientError

from tickwork.adapters.clients import OnTable
from tickwork.domain.action import Action, Occurrence, Status, Transition
from tickwork.domain.catch_up import CatchUp
from tickwork.domain.errors import ActionConflict, ValidationFailed
from tickwork.domain.fire import Outcome
from tickwork.domain.schedule import Schedule
from tickwork.domain.times import from_epoch_ms, iso, parse_iso, to_epoch_ms

__all__ = [
    "STATUS_SHARDS",
    "DynamoDBActionRepository",
    "decode_cursor",
    "encode_cursor",
    "status_shard",
]

STATUS_SHARDS = 8


def status_shard(status: str, action_id: str) -> str:
    digest = hashlib.sha256(action_id.encode()).digest()
    return f"{status}#{digest[0] % STATUS_SHARDS}"


class DynamoDBActionRepository(OnTable):
    def get(self, action_id: str) -> Action | None:
        item = self._table.get_item(Key={"id": action_id}, ConsistentRead=True).get("Item")
        return from_item(item) if item else None

    def create(self, action: Action) -> None:
        self._put(action, "attribute_not_exists(id)", {})

    def save(self, action: Action, expected_version: int) -> None:
        self._put(action, "version = :expected", {":expected": expected_version})

    def _put(self, action: Action, condition: str, values: dict[str, Any]) -> None:
        kwargs: dict[str, Any] = {"Item": to_item(action), "ConditionExpression": condition}
        if values:
            kwargs["ExpressionAttributeValues"] = values
        try:
            self._table.put_item(**kwargs)
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise ActionConflict(action.id, "the record changed since it was read") from error
            raise

    def delete(self, action_id: str) -> None:
        self._table.delete_item(Key={"id": action_id})

    def in_fire_order(self, status: Status | None = None, limit: int = 100) -> list[Action]:
        """Actions by next fire time: one status through the ByStatus index (all its shards,
        merged), or every action by a scan."""
        if status is None:
            items = self._scan(limit)
        else:
            shards = (f"{status}#{shard}" for shard in range(STATUS_SHARDS))
            items = [item for shard in shards for item in self._query_after(shard, None, limit)]
        actions = [from_item(item) for item in items]
        actions.sort(key=lambda a: (a.execution_time is None, a.execution_time or 0, a.id))
        return actions[:limit]

    def page(
        self, status: Status | None, limit: int, cursor: str | None = None
    ) -> tuple[list[Action], str | None]:
        """One page and an opaque cursor for the next (None at the end).

        By status: ordered by next fire time, then id, merged over the status's shards; the
        cursor is the last (time, id) returned. All: storage order; the cursor is the last id.
        """
        after = decode_cursor(cursor)
        if status is None:
            kwargs: dict[str, Any] = {"Limit": limit}
            if after:
                kwargs["ExclusiveStartKey"] = {"id": after["id"]}
            page = self._table.scan(**kwargs)
            actions = [from_item(item) for item in page.get("Items", [])]
            more = "LastEvaluatedKey" in page and bool(actions)
            return actions, encode_cursor({"id": actions[-1].id}) if more else None
        items: list[dict[str, Any]] = []
        for shard in range(STATUS_SHARDS):
            items += self._query_after(f"{status}#{shard}", after, limit + 1)
        items.sort(key=_position)
        chosen = [from_item(item) for item in items[:limit]]
        if len(items) <= limit:
            return chosen, None
        time, last_id = _position(items[limit - 1])
        return chosen, encode_cursor({"t": time, "id": last_id})

    def _query_after(
        self, shard: str, after: dict[str, Any] | None, want: int
    ) -> list[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "IndexName": "ByStatus",
            "KeyConditionExpression": "statusShard = :shard",
            "ExpressionAttributeValues": {":shard": shard},
            "Limit": want,
        }
        if after:
            kwargs["KeyConditionExpression"] += " AND executionTime >= :t"
            kwargs["ExpressionAttributeValues"][":t"] = after["t"]
        found: list[dict[str, Any]] = []
        while len(found) < want:
            page = self._table.query(**kwargs)
            for item in page.get("Items", []):
                if not after or _position(item) > (after["t"], after["id"]):
                    found.append(item)
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return found[:want]

    def count_by_status(self) -> dict[str, int]:
        counts = {}
        for status in Status:
            counts[str(status)] = sum(
                self._count(f"{status}#{shard}") for shard in range(STATUS_SHARDS)
            )
        return counts

    def _scan(self, limit: int) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {}
        while len(items) < limit:
            page = self._table.scan(**kwargs)
            items.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return items

    def _count(self, shard: str) -> int:
        total = 0
        kwargs: dict[str, Any] = {
            "IndexName": "ByStatus",
            "KeyConditionExpression": "statusShard = :shard",
            "ExpressionAttributeValues": {":shard": shard},
            "Select": "COUNT",
        }
        while True:
            page = self._table.query(**kwargs)
            total += page["Count"]
            if "LastEvaluatedKey" not in page:
                return total
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _position(item: dict[str, Any]) -> tuple[int, str]:
    """Where an index item stands in fire order: (next fire in epoch ms, id)."""
    return int(str(item.get("executionTime", 0))), str(item["id"])


def encode_cursor(position: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(position, separators=(",", ":")).encode()).decode()


def decode_cursor(cursor: str | None) -> dict[str, Any] | None:
    """The position a cursor names; a cursor that was not made here is refused by name."""
    if not cursor:
        return None
    try:
        position = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        if not isinstance(position, dict) or not isinstance(position.get("id"), str):
            raise ValueError(cursor)
        if "t" in position and not isinstance(position["t"], int):
            raise ValueError(cursor)
        return position
    except (ValueError, binascii.Error) as error:
        raise ValidationFailed.of(
            "cursor",
            "is not a cursor this API returned",
            "pass nextCursor from the previous page as is",
        ) from error


def _epoch_ms(moment: datetime | None) -> int | None:
    return None if moment is None else to_epoch_ms(moment)


def _to_dynamo(value: dict[str, Any]) -> dict[str, Any]:
    """JSON values to DynamoDB-safe ones (floats become Decimals)."""
    converted: dict[str, Any] = json.loads(json.dumps(value), parse_float=Decimal)
    return converted


def _from_dynamo(value: Any) -> Any:
    """DynamoDB values back to plain JSON types."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _from_dynamo(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_dynamo(v) for v in value]
    return value


def _occurrence_item(occurrence: Occurrence) -> dict[str, Any]:
    return _drop_none(
        {
            "occurrence": occurrence.occurrence,
            "scheduledTime": iso(occurrence.scheduled_time),
            "actualTime": iso(occurrence.actual_time),
            "attempts": occurrence.attempts,
            "outcome": str(occurrence.outcome),
            "error": occurrence.error,
            "lateMs": occurrence.late_ms,
        }
    )


def _occurrence(item: dict[str, Any]) -> Occurrence:
    return Occurrence(
        occurrence=item["occurrence"],
        scheduled_time=parse_iso(item["scheduledTime"], "history.scheduledTime"),
        actual_time=parse_iso(item["actualTime"], "history.actualTime"),
        attempts=item["attempts"],
        outcome=Outcome(item["outcome"]),
        error=item.get("error"),
        late_ms=item.get("lateMs"),
    )


def _transition_item(transition: Transition) -> dict[str, Any]:
    return {
        "at": iso(transition.at),
        "fromStatus": transition.from_status and str(transition.from_status),
        "toStatus": str(transition.to_status),
        "reason": transition.reason,
    }


def _transition(item: dict[str, Any]) -> Transition:
    before = item.get("fromStatus")
    return Transition(
        at=parse_iso(item["at"], "transitions.at"),
        from_status=Status(before) if before else None,
        to_status=Status(item["toStatus"]),
        reason=item["reason"],
    )


def _drop_none(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def to_item(action: Action) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": action.id,
        "action": action.action,
        "data": action.data,
        "metadata": action.metadata,
        "executionTime": _epoch_ms(action.execution_time),
        "repeat": action.repeat,
        "frequency": action.frequency,
        "executionRemainder": action.execution_remainder,
        "status": str(action.status),
        "statusShard": status_shard(str(action.status), action.id),
        "retryCount": action.retry_count,
        "createdAt": iso(action.created_at),
        "updatedAt": iso(action.updated_at),
        "schedule": action.schedule.to_dict(),
        "timezone": action.schedule.timezone,
        "version": action.version,
        "generation": action.generation,
        "occurrence": action.occurrence,
        "specHash": action.spec_hash,
        "startEventId": action.start_event_id,
        "executionArn": action.execution_arn,
        "claimedBy": action.claimed_by,
        "lastResult": action.last_result,
        "lastError": action.last_error,
        "history": [_occurrence_item(h) for h in action.history],
        "transitions": [_transition_item(t) for t in action.transitions],
        "ttl": action.ttl,
        "request": action.request,
        "catchUp": action.catch_up.to_dict(),
        "seal": action.seal,
    }
    return _to_dynamo(_drop_none(item))


def from_item(raw: dict[str, Any]) -> Action:
    item = _from_dynamo(raw)
    execution_ms = item.get("executionTime")
    return Action(
        id=item["id"],
        action=item["action"],
        data=item.get("data", {}),
        metadata=item.get("metadata", {}),
        schedule=Schedule.from_dict(item["schedule"]),
        status=Status(item["status"]),
        execution_time=None if execution_ms is None else from_epoch_ms(execution_ms),
        occurrence=item["occurrence"],
        generation=item["generation"],
        version=item["version"],
        created_at=parse_iso(item["createdAt"], "createdAt"),
        updated_at=parse_iso(item["updatedAt"], "updatedAt"),
        spec_hash=item.get("specHash", ""),
        start_event_id=item.get("startEventId"),
        retry_count=item.get("retryCount", 0),
        execution_arn=item.get("executionArn"),
        claimed_by=item.get("claimedBy"),
        last_result=item.get("lastResult"),
        last_error=item.get("lastError"),
        history=tuple(_occurrence(h) for h in item.get("history", [])),
        transitions=tuple(_transition(t) for t in item.get("transitions", [])),
        ttl=item.get("ttl"),
        request=item.get("request"),
        catch_up=CatchUp.from_dict(item.get("catchUp")),
        seal=item.get("seal"),
    )
