"""The key execution names are made under (``domain.naming``): derived from the seal key for
this purpose alone, so a name tells nothing of the keys that seal records or prove orders.

Pure: the seal key is passed in.
"""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["name_key"]

_PURPOSE = b"tickwork execution names v1"


def name_key(seal_key: bytes) -> bytes:
    return hmac.new(seal_key, _PURPOSE, hashlib.sha256).digest()
