"""Proof that an execution's input is an order the stack issued, for that execution.

Anyone allowed ``states:StartExecution`` can start an execution of either machine with any
input and any name. The stack proves every order it starts (``"proof": "v1=<hex HMAC-SHA256>"``,
under a key derived from the seal key for this purpose alone) over the machine, the execution's
name and the order's canonical JSON (every field but the proof). The fulfill step checks it
before anything fires: an order without one, or proved for another execution or the other
machine, is refused (docs/protocol.md, "What an order must prove").

Pure: the key is passed in.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from tickwork.integrity.canonical import canonical_json

__all__ = ["ORDER_PROOF_FIELD", "order_proof", "order_proof_key", "order_proven"]

ORDER_PROOF_FIELD = "proof"
_PURPOSE = b"tickwork order proof v1"


def order_proof_key(seal_key: bytes) -> bytes:
    """A key of its own for orders, derived from the seal key (never the seal key itself)."""
    return hmac.new(seal_key, _PURPOSE, hashlib.sha256).digest()


def order_proof(key: bytes, machine: str, execution_name: str, wire: dict[str, Any]) -> str:
    covered = {name: value for name, value in wire.items() if name != ORDER_PROOF_FIELD}
    message = f"{machine}\n{execution_name}\n".encode() + canonical_json(covered)
    return "v1=" + hmac.new(key, message, hashlib.sha256).hexdigest()


def order_proven(key: bytes, machine: str, execution_name: str, wire: Any) -> bool:
    """True when ``wire`` carries a proof made for this machine and execution name."""
    if not isinstance(wire, dict):
        return False
    proof = wire.get(ORDER_PROOF_FIELD)
    expected = order_proof(key, machine, execution_name, wire)
    return isinstance(proof, str) and hmac.compare_digest(proof, expected)
