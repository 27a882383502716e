"""The names a caller gives: action ids, groups and id prefixes, each defined once.

The API, the bus and the CLI check them here (the API's schema takes its patterns from here
too), always against the whole text: a pattern is matched with ``fullmatch``, so a name that
ends in a newline is not a name (``re.match`` with ``$`` lets ``"grp\\n"`` through, and ids that
look alike would then coexist).
"""

from __future__ import annotations

import re
from typing import Any

from tickwork.domain.errors import ValidationFailed

__all__ = [
    "DEFAULT_GROUP",
    "GROUP_PATTERN",
    "GROUP_RULE",
    "ID_PATTERN",
    "ID_RULE",
    "MAX_ID_LENGTH",
    "OWN_ITEM_PREFIX",
    "PREFIX_PATTERN",
    "check_action_id",
    "check_group",
    "check_name",
    "check_prefix",
    "check_steered_id",
    "is_own_item",
]

MAX_ID_LENGTH = 200
# No "/": API Gateway decodes %2F before routing, so such an id could not be addressed at
# /actions/{id}. No "#": tickwork's own items (counters, the pump's watermark) start with it.
ID_PATTERN = re.compile(rf"[A-Za-z0-9][A-Za-z0-9:_\-.@+=]{{0,{MAX_ID_LENGTH - 1}}}")
PREFIX_PATTERN = re.compile(rf"[A-Za-z0-9:_\-.@+=]{{1,{MAX_ID_LENGTH}}}")
DEFAULT_GROUP = "default"
# EventBridge Scheduler's schedule group names: 1-64 of letters, digits, - _ and .
GROUP_PATTERN = re.compile(r"[0-9A-Za-z_.-]{1,64}")
ID_RULE = (
    f"1-{MAX_ID_LENGTH} characters: letters, digits and : _ - . @ + =, "
    "starting with a letter or digit"
)
GROUP_RULE = "1-64 of letters, digits and - _ . (as EventBridge Scheduler's schedule groups)"
_ID_FIX = f"use {ID_RULE}"


def check_name(value: Any, pattern: re.Pattern[str], field: str, what: str, fix: str) -> str:
    """``value`` if it is a string ``pattern`` matches whole; else refused naming ``field``:
    "'<value>' is not <what>", and ``fix``."""
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise ValidationFailed.of(field, f"{str(value)[:80]!r} is not {what}", fix)
    return value


def check_action_id(action_id: Any, field: str = "id") -> str:
    if not isinstance(action_id, str) or not ID_PATTERN.fullmatch(action_id):
        raise ValidationFailed.of(field, f"{str(action_id)[:40]!r} is not a valid id", _ID_FIX)
    return action_id


OWN_ITEM_PREFIX = "#"  # the stack's own items in the table: counters, tabs, calendars, the pump


def is_own_item(item_id: str) -> bool:
    """Whether ``item_id`` names one of the stack's own items, which no action can be."""
    return item_id.startswith(OWN_ITEM_PREFIX)


def check_steered_id(action_id: Any, field: str = "id") -> str:
    """The id of an action a request steers or reads: a text, never one of the stack's own
    items (refused naming the rule; an id that is not an action's is then simply not found)."""
    if not isinstance(action_id, str) or not action_id:
        raise ValidationFailed.of(field, f"{str(action_id)[:40]!r} is not an action id", _ID_FIX)
    if is_own_item(action_id):
        raise ValidationFailed.of(
            field,
            f"{action_id[:40]!r} names one of the stack's own items, not an action",
            f"give an action's id: an action's id never starts with {OWN_ITEM_PREFIX!r} "
            "(`tickwork list` shows them)",
        )
    return action_id


def check_group(group: Any, field: str = "group") -> str:
    return check_name(
        group,
        GROUP_PATTERN,
        field,
        "a group name",
        f'use {GROUP_RULE}, e.g. "subscription-42"; leave it out for "{DEFAULT_GROUP}"',
    )


def check_prefix(prefix: Any, field: str = "prefix") -> str:
    return check_name(
        prefix,
        PREFIX_PATTERN,
        field,
        "the start of an id",
        f"give 1-{MAX_ID_LENGTH} of the characters ids use: letters, digits and : _ - . @ + =",
    )
