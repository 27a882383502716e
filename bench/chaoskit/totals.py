"""The stack's counts and fire totals against its records, once a chaos run has settled.

`GET /stats` answers from counter items that the count function adds every record write to,
once, folded from the table's stream (within a second, locally): actions by status, how many
need attention, and the fires recorded in the last day (on time and late, failed). Read back
here from the records themselves — every action's status, and every fired or failed occurrence
in their histories — the two must be equal after any crash the run planted: a difference is a
change lost or added twice. A record keeps its last ``HistoryLimit`` fires only: a history that
long may have dropped some, so the fire totals cannot be read back from it — said as a problem
of its own (the run sets the limit above any action's fires), never taken for a miscount.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

__all__ = ["Totals", "totals"]


class Totals:
    def __init__(
        self, stats: dict[str, Any], records: list[dict[str, Any]], history_limit: int
    ) -> None:
        self.counted = {
            **{str(s): int(n) for s, n in stats.get("byStatus", {}).items()},
            "needsAttention": int(stats.get("needsAttention", 0)),
            "fired": int(stats.get("lastDay", {}).get("fired", 0)),
            "failed": int(stats.get("lastDay", {}).get("failed", 0)),
        }
        outcomes = Counter(
            str(h.get("outcome")) for r in records for h in r.get("history", []) or []
        )
        statuses = Counter(str(r.get("status")) for r in records)
        self.truncated = sorted(
            str(r.get("id")) for r in records if len(r.get("history") or []) >= history_limit
        )
        self.recorded = {
            **{status: statuses.get(status, 0) for status in stats.get("byStatus", {})},
            "needsAttention": sum(bool(r.get("needsAttention")) for r in records),
            "fired": outcomes["FIRED"],
            "failed": outcomes["FAILED"],
        }

    @property
    def agree(self) -> bool:
        """The counts are the records' (or the totals cannot be read back: nothing to wait for)."""
        return bool(self.truncated) or not self.problems

    @property
    def problems(self) -> list[str]:
        if self.truncated:
            return [
                f"fire totals not checked: {len(self.truncated)} record(s) hold "
                f"HistoryLimit fires or more and may have dropped some "
                f"(first: {', '.join(self.truncated[:5])}); raise the run's HistoryLimit"
            ]
        return [
            f"{name}: the stack counts {self.counted[name]}, its records hold "
            f"{self.recorded.get(name, 0)}"
            for name in self.counted
            if self.counted[name] != self.recorded.get(name, 0)
        ]

    def as_dict(self) -> dict[str, Any]:
        return {"counted": self.counted, "recorded": self.recorded, "problems": self.problems}


def totals(stats: dict[str, Any], records: list[dict[str, Any]], history_limit: int) -> Totals:
    return Totals(stats, records, history_limit)
