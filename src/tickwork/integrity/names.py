"""The key execution names are made under (``domain.naming``): derived from the seal key for
this purpose alone, so a name tells nothing of the keys that seal records or prove orders.

Pure: the seal key is passed in.
"""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["life_key", "name_key"]

_PURPOSE = b"tickwork execution names v1"


def name_key(seal_key: bytes) -> bytes:
    return hmac.new(seal_key, _PURPOSE, hashlib.sha256).digest()


def life_key(names_key: bytes, created: str) -> bytes:
    """The key of one life of an action id (``created``: when its record was created, as
    stored). A purged or expired id created again names its executions under another key, so
    it never meets the names of its earlier life, which Step Functions keeps for 90 days."""
    return hmac.new(names_key, b"life\x1f" + created.encode(), hashlib.sha256).digest()
