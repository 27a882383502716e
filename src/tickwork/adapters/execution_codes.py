"""The execution that ran a fire, as a record's history keeps it: as short as it can be told
back (``b:<hex>`` for a batch of the fire's second, ``~<digest>g<generation>[...]`` for the
fire's own execution, whose name follows from the id, the digest and the fire;
``~g<generation>[...]`` for a name made before names were keyed), else the name itself."""

from __future__ import annotations

import re

from tickwork.domain.action import Occurrence
from tickwork.domain.naming import DIGEST_DIGITS, legacy_execution_name, name_with_digest

__all__ = ["execution_code", "execution_of"]


def execution_code(occurrence: Occurrence, action_id: str) -> str | None:
    """The name of the execution that ran a fire, as short as it can be told back: ``b:<hex>``
    for a batch of the fire's second, ``~<digest>g<generation>[...]`` for the fire's own
    execution (its name follows from the id, the digest and the fire; ``~g<generation>[...]``
    for a name made before names were keyed), else the name itself."""
    name = occurrence.execution
    if name is None:
        return None
    batch = re.fullmatch(r"b-(\d+)-([0-9a-f]{16}|[0-9a-f]{12})", name)
    if batch and int(batch[1]) == int(occurrence.scheduled_time.timestamp()):
        return f"b:{batch[2]}"
    tail = rf"-g(\d+)-o{occurrence.occurrence}((?:-[mlr]\d+)*)"
    own = re.fullmatch(rf".*-([0-9a-f]{{{DIGEST_DIGITS}}}){tail}", name)
    legacy = re.fullmatch(rf".*{tail}", name)
    for code in (
        f"~{own[1]}g{own[2]}{own[3]}" if own else None,
        f"~g{legacy[1]}{legacy[2]}" if legacy else None,
    ):
        if code is not None and execution_of(code, occurrence, action_id) == name:
            return code
    return name


def execution_of(code: str | None, occurrence: Occurrence, action_id: str) -> str | None:
    if code is None:
        return None
    if code.startswith("b:"):
        return f"b-{int(occurrence.scheduled_time.timestamp())}-{code[2:]}"
    own = re.fullmatch(r"~([0-9a-f]*)g(\d+)((?:-[mlr]\d+)*)", code)
    if own is None:
        return code
    parts = {part[0]: int(part[1:]) for part in own[3].split("-") if part}
    numbers = (
        int(own[2]),
        occurrence.occurrence,
        parts.get("l", 0),
        parts.get("r", 0),
        parts.get("m", 0),
    )
    if not own[1]:
        return legacy_execution_name(action_id, *numbers)
    return name_with_digest(action_id, own[1], *numbers)
