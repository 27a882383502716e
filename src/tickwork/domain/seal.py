"""The seal on an action record: an HMAC over the fields that decide what runs.

Written by tickwork when it creates or replaces an action, checked by the fulfill step before
anything runs. A record altered outside tickwork (a console edit, a stolen write credential)
no longer matches its seal, and its fire ends as NO_ACTION. The seal binds the id, so fields
copied from another action do not match either.

Pure: the key is passed in.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

__all__ = ["SEAL_VERSION", "compute_seal", "seal_matches"]

SEAL_VERSION = "v1"


def _canonical(
    action_id: str, action: str, data: Any, metadata: Any, schedule: dict[str, Any]
) -> bytes:
    sealed = {
        "id": action_id,
        "action": action,
        "data": data,
        "metadata": metadata,
        "schedule": schedule,
    }
    return json.dumps(
        _plain(sealed), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode()


def _plain(value: Any) -> Any:
    """2.0 and 2 are one number to DynamoDB: seal them alike."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def compute_seal(
    key: bytes, action_id: str, action: str, data: Any, metadata: Any, schedule: dict[str, Any]
) -> str:
    digest = hmac.new(
        key, _canonical(action_id, action, data, metadata, schedule), hashlib.sha256
    ).hexdigest()
    return f"{SEAL_VERSION}={digest}"


def seal_matches(
    key: bytes,
    seal: str | None,
    action_id: str,
    action: str,
    data: Any,
    metadata: Any,
    schedule: dict[str, Any],
) -> bool:
    if not seal:
        return False
    expected = compute_seal(key, action_id, action, data, metadata, schedule)
    return hmac.compare_digest(seal, expected)
