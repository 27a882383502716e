"""The stack's keys (seal, signing), read from where they are kept, never logged."""

from __future__ import annotations

from typing import Protocol

__all__ = ["SecretSource"]


class SecretSource(Protocol):
    def get(self, secret_id: str) -> bytes:
        """The secret's current value (cached by the adapter; never logged)."""
