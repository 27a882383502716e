"""The seal on an action record: an HMAC over the fields that decide what a fire does.

Written by tickwork when it creates or replaces an action, checked by the fulfill step before
anything runs. A record altered outside tickwork (a console edit, a stolen write credential)
no longer matches its seal, and its fire ends as NO_ACTION. The seal binds the id, so fields
copied from another action do not match either.

Versions: ``v6`` (written now) is ``v5`` and the action's own fire policy (lock, retry policy,
dead-letter queue). ``v5`` covers the id, the action type, its data (the target), the
metadata, the schedule, the catch-up, failure and unknown-outcome policies, the role the
target is reached with and the occurrences skipped or moved by request, as the HMAC-SHA256 cut
to its first 128 bits (32 hex digits; RFC 2104 section 5 allows a cut to half the hash, and a
forger still faces 2^128 guesses): every write of a record pays for its bytes. ``v4`` is the
same without the skipped and moved occurrences; ``v3`` (written before) is ``v4`` uncut. ``v1`` and
``v2`` covered fewer fields: such a seal is still accepted, but only on a record whose newer
fields are at their defaults, so an old seal cannot vouch for a role or a policy set by hand.

Pure: the key is passed in.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import asdict, dataclass
from typing import Any

from tickwork.integrity.canonical import canonical_json

__all__ = ["SEAL_VERSION", "SealedFields", "compute_seal", "seal_matches"]

SEAL_VERSION = "v6"
# The fields each older seal version did not cover yet: such a seal vouches for a record only
# while they hold their defaults (None).
_NEWER_THAN = {
    "v1": (
        "catch_up",
        "on_failure",
        "role_arn",
        "on_unknown_outcome",
        "occurrence_changes",
        "policy",
    ),
    "v2": ("on_unknown_outcome", "occurrence_changes", "policy"),
    "v3": ("occurrence_changes", "policy"),
    "v4": ("occurrence_changes", "policy"),
    "v5": ("policy",),
    "v6": (),
}
_CUT = {"v4": 32, "v5": 32, "v6": 32}  # hex digits kept of the HMAC; the older versions keep all 64


@dataclass(frozen=True)
class SealedFields:
    """What a seal covers. ``catch_up``, ``on_failure``, ``role_arn`` and ``on_unknown_outcome``
    are None at their defaults (the default catch-up, the type's default failure policy, the
    stack's own role, FAIL)."""

    action_id: str
    action: str
    data: Any
    metadata: Any
    schedule: dict[str, Any]
    catch_up: dict[str, Any] | None = None
    on_failure: str | None = None
    role_arn: str | None = None
    on_unknown_outcome: str | None = None
    # [[scheduled, to or None], ...] in wire form; None while no occurrence is changed
    occurrence_changes: list[list[str | None]] | None = None
    # the action's own lock, retry policy and dead-letter queue; None at the stack's defaults
    policy: dict[str, Any] | None = None

    def covered(self, version: str) -> dict[str, Any] | None:
        """The fields a seal of ``version`` covers; None if such a seal cannot vouch for them."""
        every = asdict(self)
        newer = _NEWER_THAN.get(version)
        if newer is None or any(every[name] is not None for name in newer):
            return None
        return {name: value for name, value in every.items() if name not in newer}


def _canonical(fields: dict[str, Any]) -> bytes:
    named = {("id" if name == "action_id" else name): value for name, value in fields.items()}
    return canonical_json(named)


def _digest(key: bytes, version: str, fields: dict[str, Any]) -> str:
    digest = hmac.new(key, _canonical(fields), hashlib.sha256).hexdigest()
    return f"{version}={digest[: _CUT.get(version, len(digest))]}"


def compute_seal(key: bytes, fields: SealedFields) -> str:
    covered = fields.covered(SEAL_VERSION)
    assert covered is not None  # the current version covers every field
    return _digest(key, SEAL_VERSION, covered)


def seal_matches(key: bytes, seal: str | None, fields: SealedFields) -> bool:
    if not seal or "=" not in seal:
        return False
    version = seal.split("=", 1)[0]
    covered = fields.covered(version)
    if covered is None:
        return False
    return hmac.compare_digest(seal, _digest(key, version, covered))
