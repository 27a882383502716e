"""Which actions a list, a count or a bulk change is about: by status, group, id prefix, or
those that need attention. Each is answered from an index, never a table scan."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tickwork.domain.action import Status
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.steering import check_group

__all__ = ["Selection"]

_PREFIX = re.compile(r"^[A-Za-z0-9:_\-.@+=]{1,200}$")


@dataclass(frozen=True)
class Selection:
    status: Status | None = None
    group: str | None = None
    prefix: str | None = None
    attention: bool = False  # only actions with a failed fire waiting for a retry

    def __post_init__(self) -> None:
        if self.group is not None:
            check_group(self.group)
        if self.prefix is not None and not _PREFIX.match(self.prefix):
            raise ValidationFailed.of(
                "prefix",
                f"{self.prefix[:80]!r} is not the start of an id",
                "give 1-200 of the characters ids use: letters, digits and : _ - . @ + =",
            )

    @property
    def named(self) -> bool:
        """Selected by name (group or id prefix): answered in id order."""
        return self.group is not None or self.prefix is not None

    def matches_id(self, action_id: str) -> bool:
        return self.prefix is None or action_id.startswith(self.prefix)
