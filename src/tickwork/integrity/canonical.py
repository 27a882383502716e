"""One JSON text per value, for what is signed or sealed: keys sorted, no spaces, UTF-8, and
numbers as DynamoDB and JSON round-trips leave them (2.0 and 2 are one number)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["canonical_json", "plain"]


def plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def canonical_json(value: Any) -> bytes:
    return json.dumps(
        plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode()
