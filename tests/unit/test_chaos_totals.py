"""GIVEN the stack's counts and the records a chaos run read back WHEN the run compares them
THEN a fire counted twice is a problem, equal totals are none, and a record whose history may
have dropped fires (as long as HistoryLimit) is said to leave the totals unchecked — never
taken for a miscount (the default HistoryLimit of 5 once made a correct stack look wrong)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from chaoskit.totals import totals


def _record(action_id: str, status: str, fired: int, failed: int = 0) -> dict[str, Any]:
    history = [{"occurrence": n + 1, "outcome": "FIRED"} for n in range(fired)]
    history += [{"occurrence": fired + n + 1, "outcome": "FAILED"} for n in range(failed)]
    return {"id": action_id, "status": status, "history": history}


def _stats(fired: int, failed: int, completed: int) -> dict[str, Any]:
    return {
        "byStatus": {"COMPLETED": completed, "FAILED": 0},
        "needsAttention": 0,
        "lastDay": {"fired": fired, "failed": failed},
    }


RECORDS = [_record("a", "COMPLETED", 3), _record("b", "COMPLETED", 2, failed=1)]


def test_equal_totals_are_no_problem() -> None:
    assert totals(_stats(5, 1, 2), RECORDS, history_limit=200).problems == []


def test_a_fire_counted_twice_is_named() -> None:
    problems = totals(_stats(6, 1, 2), RECORDS, history_limit=200).problems
    assert problems == ["fired: the stack counts 6, its records hold 5"]


def test_a_history_as_long_as_the_limit_leaves_the_totals_unchecked() -> None:
    checked = totals(_stats(9, 1, 2), RECORDS, history_limit=3)
    assert len(checked.problems) == 1
    assert "not checked" in checked.problems[0] and "a" in checked.problems[0]
    assert "HistoryLimit" in checked.problems[0]
    assert checked.as_dict()["problems"] == checked.problems
