"""Valid Step Functions execution names per (action, generation, occurrence, leg, repair,
manual), deterministic for the stack and unforeseeable to anyone else.

A name is 1-80 characters with none of: whitespace < > { } [ ] ? * " # % \\ ^ | ~ ` $ & , ; : /
and no control characters. It reads ``<id>-<digest>-g<generation>-o<occurrence>[-m][-l][-r][-h]``:
the readable part is the action id with each refused character replaced by ``_``, cut to fit;
the digest is 16 hex digits (64 bits) of an HMAC, under the stack's name key, of the whole id
and every number in the name (docs/protocol.md, "How an execution is known").

Why keyed: anyone allowed ``states:StartExecution`` could otherwise work out the name of a fire
to come and start an execution under it first; the stack would take that one for its own and the
fire would never run. Why the whole id and every number: ids that share their first 60
characters, and the next occurrence or repair of a name someone has seen, get names no one can
tell in advance. A start that finds its name taken checks the execution's proof
(``fire.orders``), so a name taken by chance or by anyone holding no key is refused, never
trusted.

``legacy_execution_name`` is the scheme before names were keyed (8 hex digits of the id's
SHA-256), kept to read records written then. Pure: the key is passed in (None only where no seal
key is configured: unit tests).
"""

from __future__ import annotations

import hashlib
import hmac
import re

__all__ = [
    "DIGEST_DIGITS",
    "MAX_NAME_LENGTH",
    "execution_name",
    "is_valid_execution_name",
    "legacy_execution_name",
    "name_digest",
    "name_with_digest",
]

MAX_NAME_LENGTH = 80
DIGEST_DIGITS = 16
_REFUSED = re.compile(r"[\s<>{}\[\]?*\"#%\\^|~`$&,;:/\x00-\x1f\x7f-\x9f]")


def name_digest(key: bytes | None, *parts: object) -> str:
    """16 hex digits naming ``parts``: an HMAC-SHA256 under ``key`` (a plain SHA-256 without
    one). Parts are joined by the unit separator, which ids cannot hold unnoticed."""
    message = "\x1f".join(str(part) for part in parts).encode("utf-8", "surrogatepass")
    if key is None:
        return hashlib.sha256(message).hexdigest()[:DIGEST_DIGITS]
    return hmac.new(key, message, hashlib.sha256).hexdigest()[:DIGEST_DIGITS]


def execution_name(
    action_id: str,
    generation: int,
    occurrence: int,
    leg: int = 0,
    repair: int = 0,
    manual: int = 0,
    *,
    key: bytes | None,
    handed: bool = False,
) -> str:
    """``repair`` numbers the executions the reconciler starts for a fire whose own execution
    ended without firing (a name can be used once per 90 days); ``manual`` is the number of a
    fire asked for by hand (run now, retry); ``handed``: the lone execution a batch hands a
    member over to (``-h``), a name no launch ever takes — a fire parked far may have been
    launched both in a batch and alone, under its own name, by runs that met on it."""
    parts: tuple[object, ...] = ("fire", action_id, generation, occurrence, manual, leg, repair)
    digest = name_digest(key, *parts, *(("handed",) if handed else ()))
    return name_with_digest(
        action_id, digest, generation, occurrence, leg, repair, manual, handed=handed
    )


def name_with_digest(
    action_id: str,
    digest: str,
    generation: int,
    occurrence: int,
    leg: int = 0,
    repair: int = 0,
    manual: int = 0,
    *,
    handed: bool = False,
) -> str:
    """The name ``execution_name`` makes, from its digest (as a record keeps it)."""
    suffix = (
        f"-{digest}-g{generation}-o{occurrence}"
        + (f"-m{manual}" if manual else "")
        + (f"-l{leg}" if leg else "")
        + (f"-r{repair}" if repair else "")
        + ("-h" if handed else "")
    )
    readable = _REFUSED.sub("_", action_id)[: MAX_NAME_LENGTH - len(suffix)]
    return f"{readable}{suffix}"


def legacy_execution_name(
    action_id: str,
    generation: int,
    occurrence: int,
    leg: int = 0,
    repair: int = 0,
    manual: int = 0,
) -> str:
    """A name as the stack made it before names were keyed: read back from old records only."""
    digest = hashlib.sha256(action_id.encode()).hexdigest()[:8]
    return name_with_digest(action_id, digest, generation, occurrence, leg, repair, manual)


def is_valid_execution_name(name: str) -> bool:
    return 0 < len(name) <= MAX_NAME_LENGTH and not _REFUSED.search(name)
