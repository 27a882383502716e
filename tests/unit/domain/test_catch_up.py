"""GIVEN a catch-up policy WHEN a fire is found late THEN it runs, or is skipped, as the policy
says, and the chain resumes where the policy says."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tickwork.domain.catch_up import CatchUp, CatchUpPolicy
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.schedule import Schedule

T = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
ONCE, SKIP, ALL = CatchUpPolicy.ONCE, CatchUpPolicy.SKIP, CatchUpPolicy.ALL


@pytest.mark.parametrize(
    ("policy", "late", "runs"),
    [
        (ONCE, timedelta(seconds=59), True),
        (ONCE, timedelta(hours=5), True),
        (SKIP, timedelta(seconds=60), True),  # at the threshold: not missed
        (SKIP, timedelta(seconds=61), False),
        (ALL, timedelta(minutes=30), True),  # inside the 1 h window
        (ALL, timedelta(minutes=61), False),
    ],
)
def test_runs_decides_by_policy_and_lateness(policy, late, runs) -> None:
    catch_up = CatchUp(policy, window=timedelta(hours=1))
    assert catch_up.runs(T, T + late) is runs


def test_resume_from_is_the_threshold_or_the_window_back() -> None:
    assert CatchUp(ONCE).resume_from(T) == T - timedelta(seconds=60)
    assert CatchUp(SKIP, threshold=timedelta(seconds=5)).resume_from(T) == T - timedelta(seconds=5)
    assert CatchUp(ALL, window=timedelta(hours=2)).resume_from(T) == T - timedelta(hours=2)


def test_next_fire_time_passes_over_fires_before_not_before() -> None:
    # GIVEN an every-minute schedule whose fire at 12:00 ran 10 minutes late
    schedule = Schedule.of_rate("rate(1 minute)", T)
    # WHEN the next fire is asked for, resuming from 12:09:30
    following = schedule.next_fire_time(T, 1, not_before=T + timedelta(minutes=9, seconds=30))
    # THEN 12:01 … 12:09 are passed over
    assert following == T + timedelta(minutes=10)


def test_skipped_fires_do_not_count_toward_the_total() -> None:
    schedule = Schedule.of_rate("rate(1 minute)", T, max_occurrences=2)
    assert schedule.next_fire_time(T, 1, not_before=T + timedelta(hours=1)) == T + timedelta(
        hours=1
    )
    assert schedule.next_fire_time(T + timedelta(hours=1), 2) is None


def test_round_trips_through_its_stored_form() -> None:
    kinds = (CatchUp(), CatchUp(SKIP, timedelta(seconds=5)), CatchUp(ALL, window=timedelta(1)))
    for catch_up in kinds:
        assert CatchUp.from_dict(catch_up.to_dict()) == catch_up
    assert CatchUp.from_dict(None) == CatchUp()


def test_a_window_shorter_than_the_threshold_is_refused() -> None:
    with pytest.raises(ValidationFailed, match="catchUpWindow"):
        CatchUp(ALL, threshold=timedelta(minutes=5), window=timedelta(minutes=1))
