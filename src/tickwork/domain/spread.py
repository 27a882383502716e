"""Spreading by hash: a share of a span that a key fixes, so that what is spread (a flexible
window's instant, a batch member's retry) lands at the same place on every replay, and many
keys spread evenly — with no random draw a replay could not repeat."""

from __future__ import annotations

import hashlib

__all__ = ["hashed_share"]


def hashed_share(key: str, span: int) -> int:
    """A whole number from 0 to ``span - 1`` (0 when ``span`` is 1) that ``key`` fixes."""
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") * span) >> 64
