"""GIVEN a recurrence whose occurrence 3 never reached the receiver WHEN a chaos run scores it
THEN a skip the record calls an overlap of occurrence 2 counts as overlapped (not lost) only
when occurrence 2's history entry (timed by its ending) is not before 3 came due and its last
request came at most OVERLAP_SLACK before; a skip after occurrence 2 ended (its report
recorded late: the bug this guards), by the record's word or the receiver's, stays a lost
fire, and a fire with no skip recorded is lost."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from chaoskit.expectations import Expected
from chaoskit.plan import Kind, PlannedAction
from chaoskit.receiver import Delivery
from chaoskit.report import OVERLAP_SLACK, score

T = 1_800_000_000.0  # occurrence 1's time; a 3 s rate, three fires
ISO = "2027-01-15T08:00:{:06.3f}Z"


def _iso(at: float) -> str:
    return ISO.format(at - T)


def _skip(occurrence: int, scheduled: float, of: int) -> dict[str, Any]:
    return {
        "occurrence": occurrence,
        "scheduledTime": _iso(scheduled),
        "actualTime": _iso(scheduled + 0.2),
        "outcome": "SKIPPED",
        "reason": f"overlap: came due while occurrence {of} was being attempted "
        "(overlapPolicy SKIP)",
    }


def _ended(occurrence: int, at: float, outcome: str = "FIRED") -> dict[str, Any]:
    return {
        "occurrence": occurrence,
        "scheduledTime": _iso(T + 3 * (occurrence - 1)),
        "actualTime": _iso(at),
        "outcome": outcome,
    }


def _scored(last_request_of_2: float, history: list[dict[str, Any]]) -> Any:
    action = PlannedAction("r-1", Kind.NONE, 1, T, interval=3, count=3)
    expected = Expected(action, {(1, 1): T, (1, 2): T + 3, (1, 3): T + 6}, "COMPLETED")
    deliveries = [
        Delivery("r-1", 1, 1, T + 0.1, 200),
        Delivery("r-1", 2, 1, last_request_of_2, 200),
    ]
    return score([expected], deliveries, {"r-1": "COMPLETED"}, T + 100, {"r-1": history})


@pytest.mark.parametrize("outcome", ["FIRED", "FAILED"])
@pytest.mark.parametrize("before_due", [0.0, 0.5, OVERLAP_SLACK - 0.01])
def test_a_skip_while_the_fire_before_was_attempted_is_overlapped(
    before_due: float, outcome: str
) -> None:
    history = [_ended(1, T + 0.1), _ended(2, T + 6.05, outcome), _skip(3, T + 6, of=2)]
    result = _scored(T + 6 - before_due, history)
    assert (result.total.lost, result.total.overlapped) == (0, 1)
    assert not result.total.failed and "r-1" not in result.problems


def test_a_skip_long_after_the_fire_before_ended_is_a_lost_fire() -> None:
    history = [_ended(1, T + 0.1), _ended(2, T + 6.05), _skip(3, T + 6, of=2)]
    result = _scored(T + 3.1, history)  # the receiver: 2 ended ~3 s before 3 came due
    assert (result.total.lost, result.total.overlapped) == (1, 0)
    assert result.total.failed
    (problem,) = result.problems["r-1"]
    assert "recorded SKIPPED as an overlap of occurrence 2" in problem and "2.900s" in problem


def test_a_skip_after_the_fire_before_ended_by_its_own_record_is_a_lost_fire() -> None:
    """Occurrence 2's entry says it ended 1.85 s before 3 came due: within the receiver's slack,
    but the record itself contradicts the skip."""
    history = [_ended(1, T + 0.1), _ended(2, T + 4.15), _skip(3, T + 6, of=2)]
    result = _scored(T + 4.1, history)
    assert (result.total.lost, result.total.overlapped) == (1, 0)
    (problem,) = result.problems["r-1"]
    assert "which ended 1.850s before it came due" in problem


def test_a_fire_with_no_skip_recorded_is_lost() -> None:
    result = _scored(T + 6, [])
    assert (result.total.lost, result.total.overlapped) == (1, 0)
    assert result.problems["r-1"] == [f"v1 occurrence 3 due {T + 6:.3f} never delivered"]
