"""JSON text from a caller, read strictly: a key given twice in one object is refused.

``json.loads`` keeps the last of two equal keys, so ``{"id": "a", "id": "b"}`` would create
``b`` while a reader of the request (or a signature over it) sees ``a`` first. The HTTP API and
the CLI read request bodies and event files here and refuse such a text, naming the key. Text
that is not JSON raises ``json.JSONDecodeError`` as ``json.loads`` does; numbers too long to
read and nesting too deep to follow are refused naming ``body``.

Events on the bus are parsed by EventBridge and the Lambda runtime before tickwork sees them:
there a repeated key cannot be told from a single one, and the last one wins (README, "Security").
"""

from __future__ import annotations

import json
from typing import Any

from tickwork.domain.errors import ValidationFailed

__all__ = ["DuplicateKey", "loads_strict"]


class DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"the key {key!r} appears twice in one object")


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKey(key)
        seen[key] = value
    return seen


def loads_strict(text: str | bytes, field: str = "body") -> Any:
    """``text`` parsed, or ``ValidationFailed`` naming the repeated key (or ``field``)."""
    try:
        return json.loads(text, object_pairs_hook=_unique)
    except DuplicateKey as repeated:
        raise ValidationFailed.of(
            repeated.key,
            f"appears twice in one object of the {field}",
            "give each key once: with two, which one counts would be a guess",
        ) from None
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError) as error:  # a number of over 4,300 digits; deep nesting
        raise ValidationFailed.of(
            field, f"cannot be read: {str(error)[:120]}", "send ordinary JSON"
        ) from None
