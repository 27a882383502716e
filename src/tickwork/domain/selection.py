"""Which actions a list, a count or a bulk change is about: by status, group, id prefix, or
those that need attention. Each is answered from an index, never a table scan."""

from __future__ import annotations

from dataclasses import dataclass

from tickwork.domain.action import Status
from tickwork.domain.identifiers import check_group, check_prefix

__all__ = ["Selection"]


@dataclass(frozen=True)
class Selection:
    status: Status | None = None
    group: str | None = None
    prefix: str | None = None
    attention: bool = False  # only those with a failed fire waiting for a retry or a missed one

    def __post_init__(self) -> None:
        if self.group is not None:
            check_group(self.group)
        if self.prefix is not None:
            check_prefix(self.prefix)

    @property
    def named(self) -> bool:
        """Selected by name (group or id prefix): answered in id order."""
        return self.group is not None or self.prefix is not None

    def matches_id(self, action_id: str) -> bool:
        return self.prefix is None or action_id.startswith(self.prefix)
