"""GIVEN a recurrence whose fire was claimed late or on time and attempted for a while WHEN it
ends THEN its overlap policy decides for exactly the occurrences that came due during the
attempts: the skipped ones are numbered on from the fire, none due before the claim, none at or
after the next fire; a buffered next fire is due already; one due before the claim that its
catch-up still runs goes first; a fire that stops its schedule (onFailure STOP) leaves no
skips a retry by hand would number again — for generated periods, delays and durations."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.fakes.rate_records import T0, waiting_on_a_rate
from tickwork.domain.action import Action, Limits, Occurrence, Status
from tickwork.domain.action.following import MOST_SKIPS_RECORDED, after_fire
from tickwork.domain.fire import Outcome
from tickwork.domain.fire_policy import FirePolicy, OverlapPolicy
from tickwork.domain.steering import FailurePolicy


def _claimed(period: int, number: int, late: float, policy: OverlapPolicy) -> Action:
    pending = waiting_on_a_rate(period, number, policy=FirePolicy(overlap_policy=policy))
    assert pending.execution_time is not None and pending.execution_arn is not None
    claimed_at = pending.execution_time + timedelta(seconds=late)
    return pending.claimed(claimed_at, pending.execution_arn, 20)


# A rate's period, the fire's number, its claim's delay and how long it was attempted (s).
FIRES = {
    "period": st.sampled_from([2, 10, 60, 3600]),
    "number": st.integers(min_value=1, max_value=50),
    "late": st.floats(min_value=0, max_value=200),
    "attempted": st.floats(min_value=0, max_value=2000),
    "policy": st.sampled_from(list(OverlapPolicy)),
}


@settings(max_examples=200, deadline=None)
@given(**FIRES)
def test_the_overlap_policy_decides_for_what_came_due_during_the_attempts(
    period: int, number: int, late: float, attempted: float, policy: OverlapPolicy
) -> None:
    action = _claimed(period, number, late, policy)
    assert action.execution_time is not None and action.claimed_at is not None
    now = action.claimed_at + timedelta(seconds=attempted)

    following, overlap = after_fire(action, action.execution_time, number, now)

    skipped = overlap.skipped
    # numbered on from the fire, consecutively, as many entries as the bound keeps
    assert [s.occurrence for s in skipped] == list(
        range(number + 1 + overlap.passed - len(skipped), number + 1 + overlap.passed)
    )
    assert len(skipped) <= MOST_SKIPS_RECORDED
    for entry in skipped:
        assert entry.outcome is Outcome.SKIPPED and (entry.reason or "").startswith("overlap")
        # each came due during the attempts (a buffered one's wait excepted): after the
        # fire's own time, at or before its ending
        assert action.execution_time < entry.scheduled_time <= now
    assert following is not None  # a rate never ends
    if skipped:
        assert following > skipped[-1].scheduled_time
    if overlap.buffered:
        assert policy is not OverlapPolicy.SKIP
        assert action.claimed_at < following <= now  # came due during the attempts: at once
    elif policy is OverlapPolicy.SKIP and overlap.passed:
        assert following > now  # the first after the ending
    # never a skip of an occurrence due before the claim (the catch-up's), unless buffered
    if not action.buffered:
        assert all(s.scheduled_time > action.claimed_at for s in skipped)


def test_a_late_claim_lets_the_catch_up_run_what_came_due_before_it_first() -> None:
    """Claimed 12 s late, ended at 25 s: the occurrence due at 10 s (before the claim) is the
    catch-up's — it runs next, as before — and 20 s is not skipped on its account."""
    action = _claimed(10, 1, 12, OverlapPolicy.SKIP)
    assert action.execution_time is not None
    following, overlap = after_fire(
        action, action.execution_time, 1, action.execution_time + timedelta(seconds=25)
    )
    assert following == T0 + timedelta(seconds=10)
    assert overlap.skipped == () and not overlap.buffered


def test_a_fire_that_stops_its_schedule_leaves_no_numbers_taken() -> None:
    """onFailure STOP: the record stays at the failed fire (a retry by hand runs it again and
    goes on from the next number): the write records no overlap skips for it."""
    from dataclasses import replace

    action = replace(_claimed(10, 1, 0, OverlapPolicy.SKIP), on_failure=FailurePolicy.STOP)
    assert action.execution_time is not None and action.claimed_at is not None
    failed = Occurrence(1, action.execution_time, action.claimed_at, 3, Outcome.FAILED)
    ended = action.claimed_at + timedelta(seconds=35)
    following, overlap = after_fire(action, action.execution_time, 1, ended)
    assert overlap.passed == 3  # what SKIP would record, were the schedule going on
    stopped = action.failed(ended, failed, following, Limits(), overlap=overlap)
    assert stopped.status == Status.FAILED
    assert [h.occurrence for h in stopped.history] == [1]


@settings(max_examples=200, deadline=None)
@given(**FIRES, recorded_after=st.floats(min_value=0, max_value=2000))
def test_an_ending_recorded_late_overlaps_only_what_came_due_before_it_ended(
    period: int,
    number: int,
    late: float,
    attempted: float,
    recorded_after: float,
    policy: OverlapPolicy,
) -> None:
    """A fire that ended at ``ended`` and was recorded later (a report the bus refused, put by
    the reconciler; a crashed function): its overlap policy decides for what came due during
    the attempts only — nothing due after the ending is skipped or buffered as an overlap (it
    was missed: the catch-up's, judged at the recording, as in any outage)."""
    action = _claimed(period, number, late, policy)
    assert action.execution_time is not None and action.claimed_at is not None
    ended = action.claimed_at + timedelta(seconds=attempted)
    now = ended + timedelta(seconds=recorded_after)

    following, overlap = after_fire(action, action.execution_time, number, now, ended)

    assert all(action.claimed_at < s.scheduled_time <= ended for s in overlap.skipped)
    begun = action.claimed_at.timestamp()
    assert overlap.passed <= int(ended.timestamp() // period) - int(begun // period)
    assert following is not None
    if overlap.buffered:
        assert action.claimed_at < following <= ended  # came due during the attempts
    elif policy is OverlapPolicy.SKIP and overlap.passed:
        assert following > ended  # the first after the ending (or later: the catch-up's)


def test_a_report_recorded_half_a_minute_late_skips_nothing_due_after_the_failure() -> None:
    """A 3 s rate whose fire failed a second after its claim, its report put by the reconciler
    35 s later: the occurrences due meanwhile were missed, not overlapped — the next runs now,
    late, as its catch-up (ONCE, 60 s) says, and none is recorded SKIPPED."""
    action = _claimed(3, 1, 0, OverlapPolicy.SKIP)
    assert action.execution_time is not None and action.claimed_at is not None
    ended = action.claimed_at + timedelta(seconds=1)
    now = ended + timedelta(seconds=35)

    following, overlap = after_fire(action, action.execution_time, 1, now, ended)

    assert overlap.skipped == () and overlap.passed == 0
    assert following is not None and following <= now  # due already: it runs at once, late
    # recorded as it ended, the same fire would have skipped nothing either
    assert after_fire(action, action.execution_time, 1, ended)[1].passed == 0
    # taken as ending when it was recorded, the 12 due in those 36 s would have been skipped
    assert after_fire(action, action.execution_time, 1, now)[1].passed == 12
