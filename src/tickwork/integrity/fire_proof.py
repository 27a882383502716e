"""Proof that a Schedule Tick or Schedule Failed came from a fire of this stack.

Any principal of the account may put an event with tickwork's source on the bus; the tick
handler acts only on one it can verify. The fulfill step — the only code that runs a fire —
adds ``"proof": "v1=<hex HMAC-SHA256>"`` to the tick it returns and to the failure report it
is asked to make, under a key derived from the stack's seal key. The HMAC covers every field
the handler acts on: the fire's key (id, generation, occurrence, manual), trigger, times,
attempts, outcome, error, idempotency key, execution name and result — all but ``data`` and
``metadata`` (the sealed record's own, carried for subscribers) and the derived ``lateMs``.

Pure: the key is passed in.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from tickwork.integrity.canonical import canonical_json

__all__ = ["PROOF_FIELD", "proof_key", "proof_of", "proven"]

PROOF_FIELD = "proof"
_UNCOVERED = frozenset({PROOF_FIELD, "data", "metadata", "lateMs"})
_PURPOSE = b"tickwork fire proof v1"


def proof_key(seal_key: bytes) -> bytes:
    """A key of its own for proofs, derived from the seal key (never the seal key itself)."""
    return hmac.new(seal_key, _PURPOSE, hashlib.sha256).digest()


def proof_of(key: bytes, wire: dict[str, Any]) -> str:
    covered = {name: value for name, value in wire.items() if name not in _UNCOVERED}
    return "v1=" + hmac.new(key, canonical_json(covered), hashlib.sha256).hexdigest()


def proven(key: bytes, wire: Any) -> bool:
    """True when ``wire`` carries a proof that matches it under ``key``."""
    if not isinstance(wire, dict):
        return False
    proof = wire.get(PROOF_FIELD)
    return isinstance(proof, str) and hmac.compare_digest(proof, proof_of(key, wire))
