"""GIVEN a recurrence every 10 s whose target answers 503 for half a minute and more (the
public report: a 10 s cron running a 25 s job) WHEN occurrences come due while its first fire
is still being retried THEN its overlapPolicy decides, on the real state machines in the
emulated stack: SKIP (the default) records each of them SKIPPED with the reason and announces
it; BUFFER_ONE runs the first of them as soon as the fire ends and skips the others; ALLOW_ALL
runs each at its own time, beside the fire still being retried — every occurrence once, with
its own idempotency key."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.e2e.support import Stack, advance, now, wait_until
from tickwork.domain.action import Action, Status
from tickwork.domain.events import DetailType
from tickwork.domain.fire import Outcome, Trigger
from tickwork.domain.times import iso, parse_iso
from tickwork.steering.stop import cancel_action
from tickwork_local.receiver import Receiver

DEPLOYED = {
    "RetryIntervalSeconds": "2",
    "RetryMaxDelaySeconds": "60",
    "RetryMaxAttempts": "100",
    "HistoryLimit": "30",  # what the tests read back from the record: every entry of the run
}
PERIOD = timedelta(seconds=10)


def _every_10s(action_id: str, receiver: Receiver, first: datetime, **more: object) -> dict:
    return {
        "id": action_id,
        "rate": "rate(10 seconds)",
        "startTime": iso(first),
        "repeat": True,
        "action": "HTTP_REQUEST",
        "data": {"url": receiver.url, "method": "POST", "body": {"report": "daily"}},
        "maximumEventAgeSeconds": 3600,
        **more,
    }


def _occurrences(receiver: Receiver) -> list[tuple[int, int, datetime]]:
    """(occurrence, attempt, scheduled time) of each request the target got."""
    return [
        (
            int(r["headers"]["X-Tickwork-Occurrence"]),
            int(r["headers"]["X-Tickwork-Attempt"]),
            parse_iso(r["headers"]["X-Tickwork-Scheduled-Time"]),
        )
        for r in receiver.requests
    ]


def _down_for_35s(stack: Stack, receiver: Receiver, action_id: str, **policy: object) -> datetime:
    """Start it with its target down; once its first fire has been attempted, let 35 s pass
    (three more occurrences come due), then bring the target back. Its first fire time."""
    receiver.failures = 10**6
    first = (now() + timedelta(seconds=20)).replace(microsecond=0)
    stack.start(_every_10s(action_id, receiver, first, **policy))
    wait_until(lambda: len(receiver.requests) >= 1, what="the first attempt")
    advance(35)
    receiver.failures = 0
    return first


def _first_fired(stack: Stack, action_id: str) -> Action:
    return stack.wait_record(
        action_id,
        lambda a: any(h.occurrence == 1 and h.outcome is Outcome.FIRED for h in a.history),
        timeout=120,
    )


def test_skip_records_each_occurrence_that_came_due_during_a_retried_fire(
    make_stack, receiver: Receiver
) -> None:
    stack: Stack = make_stack(**DEPLOYED)
    first = _down_for_35s(stack, receiver, "report:skip")

    record = _first_fired(stack, "report:skip")

    ended = next(h for h in record.history if h.occurrence == 1).actual_time
    came_due = int((ended - first) / PERIOD)  # occurrences at first + 10 s·k, k ≥ 1, by then
    assert came_due >= 3
    # THEN each came due while occurrence 1 was retried, and none of them ran
    assert {o for o, _, _ in _occurrences(receiver)} == {1}
    skipped = [h for h in record.history if h.outcome is Outcome.SKIPPED]
    assert skipped and all(h.reason and h.reason.startswith("overlap") for h in skipped)
    assert "overlapPolicy SKIP" in (skipped[-1].reason or "")
    numbers = [h.occurrence for h in skipped]
    assert numbers == list(range(came_due + 2 - len(numbers), came_due + 2))
    for entry in skipped:
        assert entry.scheduled_time == first + PERIOD * (entry.occurrence - 1) <= ended
    # AND the fires go on at the first occurrence after that fire ended, numbered past them
    assert record.status == Status.PENDING
    assert record.occurrence == came_due + 2
    assert record.execution_time == first + PERIOD * (came_due + 1) > ended
    # AND each skip was announced as skips are
    announced = [
        e["detail"]
        for e in stack.lifecycle.drain()
        if e["detail-type"] == DetailType.SKIPPED and e["detail"]["id"] == "report:skip"
    ]
    assert [a["occurrence"] for a in announced] == numbers
    assert {a["catchUp"] for a in announced} == {"OVERLAP"}

    # AND the next occurrence fires on time, once
    nxt = record.occurrence
    after = stack.wait_record(
        "report:skip", lambda a: any(h.occurrence == nxt for h in a.history), timeout=60
    )
    entry = next(h for h in after.history if h.occurrence == nxt)
    assert entry.outcome is Outcome.FIRED and entry.attempts == 1
    assert entry.scheduled_time == record.execution_time
    cancel_action("report:skip", stack.deps)


def test_buffer_one_runs_the_first_that_came_due_as_soon_as_the_fire_ends(
    make_stack, receiver: Receiver
) -> None:
    stack: Stack = make_stack(**DEPLOYED)
    first = _down_for_35s(stack, receiver, "report:buffer", overlapPolicy="BUFFER_ONE")

    record = _first_fired(stack, "report:buffer")
    ended = next(h for h in record.history if h.occurrence == 1).actual_time

    # THEN occurrence 2 (due at first + 10 s, while 1 was retried) is next, buffered: at once
    buffered = stack.wait_record(
        "report:buffer", lambda a: any(h.occurrence == 2 for h in a.history), timeout=60
    )
    two = next(h for h in buffered.history if h.occurrence == 2)
    assert two.outcome is Outcome.FIRED, two
    assert two.scheduled_time == first + PERIOD
    assert two.actual_time >= ended
    assert [(o, s) for o, _, s in _occurrences(receiver) if o == 2] == [(2, first + PERIOD)]
    # AND the others that came due before it ran were skipped when it was recorded: none ran
    came_due = int((two.actual_time - first) / PERIOD)
    skipped = [h for h in buffered.history if h.outcome is Outcome.SKIPPED]
    assert [h.occurrence for h in skipped] == list(range(3, came_due + 2))[-len(skipped) :]
    assert skipped and all("overlapPolicy BUFFER_ONE" in (h.reason or "") for h in skipped)
    assert {o for o, _, _ in _occurrences(receiver)} == {1, 2}
    assert buffered.occurrence == came_due + 2
    assert buffered.execution_time == first + PERIOD * (came_due + 1)
    cancel_action("report:buffer", stack.deps)


def test_allow_all_runs_each_occurrence_at_its_time_beside_the_retried_fire(
    make_stack, receiver: Receiver
) -> None:
    stack: Stack = make_stack(**DEPLOYED)
    receiver.failures = 10**6
    first = (now() + timedelta(seconds=20)).replace(microsecond=0)
    detail = _every_10s("report:all", receiver, first, overlapPolicy="ALLOW_ALL")
    stack.start(detail)

    # WHEN its target is down for 35 s past its first fire
    wait_until(lambda: len(receiver.requests) >= 1, what="the first attempt")
    advance(35)

    # THEN occurrences 2 to 4 were each attempted at their own time, while 1 was retried
    attempted = _occurrences(receiver)
    firsts = {o: s for o, a, s in attempted if a == 1}
    assert {1, 2, 3, 4} <= set(firsts), attempted
    for number, scheduled in firsts.items():
        assert scheduled == first + PERIOD * (number - 1)
    record = stack.record("report:all")
    in_flight = [m for m in record.manual.in_flight if m.trigger is Trigger.SCHEDULED]
    assert {m.occurrence for m in in_flight} >= {1, 2, 3}
    assert all(m.claimed_by for m in in_flight)

    # WHEN the target is back: each fire in flight ends, recorded once
    receiver.failures = 0
    cancel_action("report:all", stack.deps)  # no new ones; those under way go on
    done = stack.wait_record(
        "report:all", lambda a: not a.manual.in_flight and len(a.history) >= 4, timeout=120
    )
    fired = sorted(h.occurrence for h in done.history if h.outcome is Outcome.FIRED)
    assert fired == sorted(set(fired)) and {1, 2, 3, 4} <= set(fired)
    for entry in done.history:
        assert entry.trigger is Trigger.SCHEDULED
        assert entry.scheduled_time == first + PERIOD * (entry.occurrence - 1)
    # AND each occurrence had one idempotency key over its attempts, none shared
    keys: dict[int, set[str]] = {}
    for r in receiver.requests:
        occurrence = int(r["headers"]["X-Tickwork-Occurrence"])
        keys.setdefault(occurrence, set()).add(r["headers"]["Idempotency-Key"])
    assert all(len(k) == 1 for k in keys.values())
    assert len({next(iter(k)) for k in keys.values()}) == len(keys)
    assert done.status == Status.CANCELLED


def _each_once(stack: Stack, action_id: str, first: datetime, count: int) -> None:
    """Every occurrence of the schedule fired once, at its own scheduled time, by its ticks
    (the record's history is bounded: the bus has each one)."""
    ticks = [t for t in stack.ticks_for(action_id) if t["trigger"] == "SCHEDULED"]
    scheduled = sorted((t["occurrence"], parse_iso(t["scheduledTime"])) for t in ticks)
    assert scheduled == [(n, first + PERIOD * (n - 1)) for n in range(1, count + 1)], scheduled
    assert {t["outcome"] for t in ticks} == {"FIRED"}


def test_allow_all_past_ten_in_flight_runs_every_occurrence_once(
    make_stack, receiver: Receiver
) -> None:
    """More occurrences come due than fires may be in flight beside a schedule (10): those past
    that wait their turn, none passed over, none twice."""
    stack: Stack = make_stack(**DEPLOYED)
    receiver.failures = 10**6
    first = (now() + timedelta(seconds=20)).replace(microsecond=0)
    stack.start(
        _every_10s("report:many", receiver, first, overlapPolicy="ALLOW_ALL", executionRemainder=15)
    )
    wait_until(lambda: len(receiver.requests) >= 1, what="the first attempt")
    advance(150)  # all 15 came due; at most 10 in flight
    receiver.failures = 0

    done = stack.wait_record(
        "report:many",
        lambda a: a.status == Status.COMPLETED and not a.manual.in_flight,
        timeout=120,
    )
    _each_once(stack, "report:many", first, 15)
    assert all(h.outcome is Outcome.FIRED for h in done.history)


def test_a_fire_handed_on_survives_an_update_and_counts_its_own_attempts(
    make_stack, receiver: Receiver
) -> None:
    """An update (or a replace) of a schedule whose fires are retried beside it leaves them
    under way: each is recorded once, its attempts its own, as its dead letter says."""
    stack: Stack = make_stack(**DEPLOYED)
    receiver.failures = 10**6
    first = (now() + timedelta(seconds=20)).replace(microsecond=0)
    detail = _every_10s(
        "report:upd", receiver, first, overlapPolicy="ALLOW_ALL", executionRemainder=3
    )
    detail["maximumEventAgeSeconds"] = 60
    stack.start(detail)
    wait_until(lambda: len(receiver.requests) >= 1, what="the first attempt")
    advance(15)  # occurrence 1 handed on, 2 due
    assert stack.record("report:upd").manual.in_flight

    # WHEN the schedule is updated (its metadata only) while fires are retried beside it
    stack.start({**detail, "metadata": {"note": "a label"}})

    # THEN every fire handed on before still ends — here failed past its age — recorded once,
    # with the attempts its target saw
    ended = stack.wait_record(
        "report:upd",
        lambda a: (
            not a.manual.in_flight
            and sum(h.outcome is Outcome.FAILED for h in a.history) >= 1
            and a.status in (Status.PENDING, Status.COMPLETED)
        ),
        timeout=120,
    )
    failed = [h for h in ended.history if h.outcome is Outcome.FAILED]
    seen: dict[datetime, int] = {}  # the last attempt the target saw of each scheduled time
    for _, attempt, scheduled in _occurrences(receiver):
        seen[scheduled] = max(seen.get(scheduled, 0), attempt)
    assert {h.scheduled_time for h in failed} >= {first, first + PERIOD}  # those handed on
    for entry in failed:
        assert entry.attempts == seen[entry.scheduled_time], entry
    assert len({h.scheduled_time for h in failed}) == len(failed)
