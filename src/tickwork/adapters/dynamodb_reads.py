"""Reading the actions table, shared by the stores over it (records, queries, parked fires,
fire tallies): a Query's pages as they are consumed, and items by key in batches."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.service_resource import Table

__all__ = ["items_by_id", "query_pages"]

_BATCH_GET = 100  # BatchGetItem takes at most 100 keys


def query_pages(table: Table, kwargs: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
    """The items of each page of one Query, a page read only when the one before is done."""
    while True:
        page = table.query(**kwargs)
        yield page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        kwargs = {**kwargs, "ExclusiveStartKey": page["LastEvaluatedKey"]}


def items_by_id(table: Table, ids: list[str]) -> list[dict[str, Any]]:
    """The items of ``ids`` that exist, in no order (consistent reads, 100 keys a call)."""
    found: list[dict[str, Any]] = []
    client = table.meta.client
    for start in range(0, len(ids), _BATCH_GET):
        request: dict[str, Any] = {
            table.name: {
                "Keys": [{"id": i} for i in ids[start : start + _BATCH_GET]],
                "ConsistentRead": True,
            }
        }
        while request:
            answer = client.batch_get_item(RequestItems=request)
            found += answer["Responses"].get(table.name, [])
            request = answer.get("UnprocessedKeys") or {}
    return found
