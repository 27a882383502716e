"""The signatures of inbound events already acted on: each is accepted once."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Protocol

__all__ = ["SignatureLedger", "Spent"]


class Spent(StrEnum):
    FIRST = "first"  # never used before: act on it
    AGAIN = "again"  # used by this same event (a redelivery): act on it as before
    REPLAYED = "replayed"  # used by another event: refuse it


class SignatureLedger(Protocol):
    def spend(self, digest: str, event_id: str | None, until: datetime) -> Spent:
        """Record ``digest`` as used by ``event_id`` until ``until``, and say whether this is
        its first use, the same event delivered again, or a use by another event (a replay)."""
        ...

    def advance(self, action_id: str, signed_at: int, until: datetime) -> bool:
        """Note that a request signed at ``signed_at`` changes ``action_id``. False (and
        nothing noted) if a request signed later has changed it already: this one is stale."""
        ...
