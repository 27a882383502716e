"""What each stored version of an action counts as, and the counter changes it carries for a
batch's tab: remembered from the items read and written, so a write knows what it moves the
action from without reading it again (``dynamodb_counts``, ``dynamodb_tabs``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tickwork.adapters.dynamodb_counts import Changes, CountedAs, counted_as
from tickwork.adapters.dynamodb_tabs import carried_by

__all__ = ["CountedMemo", "Stored"]


@dataclass(frozen=True)
class Stored:
    """What a write needs of the stored version it replaces: what it counts as, and the counter
    changes it carries for tabs not yet settled (``dynamodb_tabs``)."""

    counted: CountedAs | None
    carried: dict[str, Changes]


class CountedMemo:
    """What each stored version of an action counts as (and carries), remembered from the items
    read and written: a version's item never changes, so a write knows what it moves the action
    from without reading it again. One memo is shared by the records and the queries that load
    them (a page of actions paused in bulk is then written without a read each)."""

    _KEPT = 50_000  # (id, version, createdAt) entries; beyond, the memo starts again

    def __init__(self) -> None:
        self._stored: dict[tuple[str, int, str], Stored] = {}

    def remember(self, item: dict[str, Any]) -> None:
        if len(self._stored) >= self._KEPT:
            self._stored.clear()
        self._stored[_version_of(item)] = Stored(counted_as(item), carried_by(item))

    def recall(self, action_id: str, version: int, created_at: str) -> Stored | None:
        """What that stored version counts as and carries, if it is known."""
        return self._stored.get((action_id, version, created_at))


def _version_of(item: dict[str, Any]) -> tuple[str, int, str]:
    return str(item["id"]), int(str(item["version"])), str(item["createdAt"])
