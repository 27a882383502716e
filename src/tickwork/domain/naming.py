"""Deterministic, valid Step Functions execution names per (action, generation, occurrence, leg,
repair).

A name is 1-80 characters with none of: whitespace < > { } [ ] ? * " # % \\ ^ | ~ ` $ & , ; : /
and no control characters. The readable part is the action id with each refused character
replaced by ``_``; a hash of the full id keeps two ids that read alike apart.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["MAX_NAME_LENGTH", "execution_name", "is_valid_execution_name"]

MAX_NAME_LENGTH = 80
_REFUSED = re.compile(r"[\s<>{}\[\]?*\"#%\\^|~`$&,;:/\x00-\x1f\x7f-\x9f]")


def execution_name(
    action_id: str,
    generation: int,
    occurrence: int,
    leg: int = 0,
    repair: int = 0,
    manual: int = 0,
) -> str:
    """``repair`` numbers the executions the reconciler starts for a fire whose own execution
    ended without firing (a name can be used once per 90 days); ``manual`` is the number of a
    fire asked for by hand (run now, retry)."""
    digest = hashlib.sha256(action_id.encode()).hexdigest()[:8]
    suffix = (
        f"-{digest}-g{generation}-o{occurrence}"
        + (f"-m{manual}" if manual else "")
        + (f"-l{leg}" if leg else "")
        + (f"-r{repair}" if repair else "")
    )
    readable = _REFUSED.sub("_", action_id)[: MAX_NAME_LENGTH - len(suffix)]
    return f"{readable}{suffix}"


def is_valid_execution_name(name: str) -> bool:
    return 0 < len(name) <= MAX_NAME_LENGTH and not _REFUSED.search(name)
