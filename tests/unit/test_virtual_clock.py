"""The local stack's clock: virtual time never goes backwards, a wait ends exactly when the
clock reaches its instant (never before), and the wall clock cannot be moved."""

from __future__ import annotations

import math
import threading
import time
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tickwork_local.activity import Activity, Token
from tickwork_local.time_machine import StillBusy, TimeMachine
from tickwork_local.virtual_clock import LocalClock, NotVirtual

BASE = 1_800_000_000.0


@given(st.lists(st.floats(min_value=-1e6, max_value=1e7, allow_nan=False), max_size=40))
def test_virtual_time_never_goes_backwards_whatever_it_is_told(moves: list[float]) -> None:
    clock = LocalClock(virtual=True, flowing=False, wall=lambda: BASE)
    seen = clock.timestamp()
    for move in moves:
        clock.jump(BASE + move)
        assert clock.timestamp() >= seen
        assert max(seen, BASE + move) <= clock.timestamp() <= max(seen, BASE + move) + 1e-6
        seen = clock.timestamp()


@settings(deadline=None, max_examples=25)
@given(
    st.lists(st.integers(min_value=1, max_value=10_000), min_size=1, max_size=6),
    st.lists(st.integers(min_value=0, max_value=12_000), min_size=1, max_size=6),
)
def test_a_wait_ends_when_the_clock_reaches_its_instant_and_never_before(
    waits: list[int], jumps: list[int]
) -> None:
    clock = LocalClock(virtual=True, flowing=False, wall=lambda: BASE)
    ended: dict[int, float] = {}
    lock = threading.Lock()

    def waiter(index: int, after: int) -> None:
        clock.wait_until(BASE + after)
        with lock:
            ended[index] = clock.timestamp()

    threads = [
        threading.Thread(target=waiter, args=(i, w), daemon=True) for i, w in enumerate(waits)
    ]
    for thread in threads:
        thread.start()
    while len(clock.waiting()) < len(waits):  # every wait registered: the state the test needs
        time.sleep(0.001)
    for target in sorted(jumps):
        clock.jump(BASE + target)
        due = [i for i, w in enumerate(waits) if w <= target]
        for i in due:
            threads[i].join(timeout=10)
        with lock:
            assert set(ended) == set(due)
            assert all(ended[i] >= BASE + waits[i] for i in ended)  # never early
    clock.jump(BASE + 20_000)
    for thread in threads:
        thread.join(timeout=10)
    assert len(ended) == len(waits)


# Virtual time's whole range: 1970 to where it ends (9000-01-01), where a float's step grows
# from under a nanosecond to about 30 µs.
_END = 221_845_392_000.0


@given(
    st.floats(min_value=0, max_value=_END, allow_nan=False),
    st.integers(min_value=1, max_value=5_000_000),  # microseconds before the fire
)
def test_sleeping_off_the_last_microseconds_before_a_fire_ends_at_it_in_any_year(
    at: float, early_us: int
) -> None:
    """The fulfillment's guard (sleep what is left before the fire, read the clock, again) on a
    clock that stands still, moved to each sleep's instant as the time machine moves it: it
    reaches the fire in a few rounds however far from 1970 the clock is, never spinning on a
    sleep that rounds back to now."""
    clock = LocalClock(virtual=True, flowing=False, wall=lambda: 0.0, offset=at)
    fire_at = clock.now() + timedelta(microseconds=early_us)
    for _ in range(4):
        early = fire_at - clock.now()
        if early <= timedelta(0):
            break
        deadline = clock.deadline_after(early.total_seconds())
        assert deadline > clock.timestamp()
        clock.jump(deadline)
    assert clock.now() >= fire_at


def test_the_wall_clock_cannot_be_moved() -> None:
    clock = LocalClock()
    with pytest.raises(NotVirtual, match="--virtual-time"):
        clock.jump(time.time() + 60)
    with pytest.raises(ValueError):
        LocalClock(offset=5)


def test_work_waiting_on_the_clock_is_idle_and_work_that_runs_is_busy() -> None:
    clock = LocalClock(virtual=True, flowing=False, wall=lambda: BASE)
    activity = Activity(clock)
    started = threading.Event()

    def function() -> None:
        with activity.work("function f"):
            started.set()
            clock.sleep(5)  # a function waiting for its instant, as a fire's guard does

    thread = threading.Thread(target=function, daemon=True)
    asked = activity.hold("execution e")  # asked for, its thread not begun: busy
    thread.start()
    started.wait(5)
    while not clock.waiting():
        time.sleep(0.001)
    assert activity.busy() == ["execution e"]
    activity.release(asked)
    assert activity.busy() == []
    clock.jump(BASE + 5)  # its instant: it works again until it ends
    thread.join(timeout=10)
    assert activity.busy() == []
    assert activity.finished == 2


def test_advancing_until_a_condition_while_work_hangs_answers_false_and_says_what_hangs() -> None:
    clock = LocalClock(virtual=True, flowing=False, wall=lambda: BASE)
    activity = Activity(clock)
    machine = TimeMachine(clock, activity, runners=list, queues_empty=lambda: True)
    hanging = activity.hold("function stuck on its target")  # busy, never waiting on the clock
    try:
        assert machine.advance_until(lambda: False, timeout=0.2) is False
        assert clock.timestamp() == BASE  # the clock was never moved past the hanging work
        with pytest.raises(StillBusy, match="function stuck on its target"):
            machine.settle(timeout=0.1)
    finally:
        activity.release(hanging)
    assert machine.advance_until(lambda: clock.timestamp() >= BASE + 30, limit=BASE + 30) is True


def test_work_that_begins_while_a_move_is_worked_out_keeps_the_clock_where_it_was() -> None:
    # GIVEN an idle stack on a clock standing still, nothing due before BASE + 100
    clock = LocalClock(virtual=True, flowing=False, wall=lambda: BASE)
    activity = Activity(clock)
    arrived: list[Token] = []

    def glance() -> None:  # a request to the API arrives while the move is worked out
        if not arrived:
            arrived.append(activity.hold("function api: POST /actions"))

    machine = TimeMachine(
        clock, activity, runners=list, queues_empty=lambda: True, fresh_glance=glance
    )
    # WHEN a step moves the clock on
    assert machine._move(BASE + 100, machine.settle()) == BASE
    # THEN it gave up: the request is handled at the instant it arrived, not after the move
    assert clock.timestamp() == BASE
    activity.release(arrived[0])
    assert machine.step(BASE + 100) == BASE + 100


@pytest.mark.parametrize(
    "left_its_wait",
    [True, False],
    ids=["left-its-wait", "not-yet-woken"],
)
def test_an_execution_stopped_while_a_move_is_worked_out_keeps_the_clock_where_it_was(
    left_its_wait: bool,
) -> None:
    # GIVEN an execution waiting for BASE + 10 on a clock standing still, holding its token,
    # stopped by hand (its flag set, its wait told to look again, as a stop does) while a move
    # is worked out: it has left its Wait and works on (the emulator records the stop), or its
    # thread has not run since it was woken
    clock = LocalClock(virtual=True, flowing=False, wall=lambda: BASE)
    activity = Activity(clock)
    stopped, may_end = threading.Event(), threading.Event()
    token = activity.hold("execution e")

    def execution() -> None:
        activity.adopt(token)
        clock.wait_until(BASE + 10, interrupted=stopped.is_set)
        may_end.wait(10)  # working, its token still held
        activity.release(token)

    thread = threading.Thread(target=execution, daemon=True)
    thread.start()
    while not clock.waiting():
        time.sleep(0.001)

    def glance() -> None:
        if not stopped.is_set():
            stopped.set()
            clock.wake_all()
            while left_its_wait and clock.next_deadline() != math.inf:
                time.sleep(0.001)

    machine = TimeMachine(
        clock, activity, runners=list, queues_empty=lambda: True, fresh_glance=glance
    )
    # WHEN a step moves the clock on, with nothing else due before BASE + 1000
    moved = machine._move(BASE + 1000, machine.settle())
    # THEN it gave up: the stop is handled at its instant (a reconciler's run due then is not
    # left out), not after a jump past the fire the execution was waiting for
    assert moved == BASE
    assert clock.timestamp() == BASE
    may_end.set()
    thread.join(timeout=10)
    assert machine.step(BASE + 1000) == BASE + 1000


def test_on_a_flowing_clock_a_jump_just_short_of_a_wait_lets_it_end_as_the_clock_flows() -> None:
    # GIVEN a wait for 1000 s ahead on a flowing virtual clock
    clock = LocalClock(virtual=True)
    deadline = clock.timestamp() + 1000
    ended = threading.Event()
    threading.Thread(target=lambda: (clock.wait_until(deadline), ended.set()), daemon=True).start()
    while not clock.waiting():
        time.sleep(0.001)
    # WHEN the clock is moved to a tenth of a second before it
    clock.jump(deadline - 0.1)
    # THEN it ends once the clock has flowed there, not after the 1000 wall seconds it first
    # worked out (an advance waiting for it would hang)
    assert ended.wait(30)
    assert clock.timestamp() >= deadline


def test_two_advances_asked_at_once_move_the_clock_by_both() -> None:
    """`tickwork time advance 3d` and, while it runs, `advance 1h` from another shell: the
    second is counted from where the first left the clock, not from when it was asked."""
    clock = LocalClock(virtual=True, flowing=False, wall=lambda: BASE)
    activity = Activity(clock)
    machine = TimeMachine(clock, activity, runners=list, queues_empty=lambda: True)
    lock, arrived = machine._one_at_a_time, []

    class Watched:
        """The advances' lock, noting each thread that comes to it."""

        def __enter__(self) -> None:
            arrived.append(threading.get_ident())
            lock.acquire()

        def __exit__(self, *_: object) -> None:
            lock.release()

    machine._one_at_a_time = Watched()  # type: ignore[assignment]
    busy = activity.hold("a function running")  # the first advance waits for it, lock held
    first = threading.Thread(target=machine.advance, args=(3 * 86400,), daemon=True)
    second = threading.Thread(target=machine.advance, args=(3600,), daemon=True)
    deadline = time.monotonic() + 60  # for a hang only: each wait is for a state
    first.start()
    while not (arrived and lock.locked()):
        assert time.monotonic() < deadline, "the first advance never took the lock"
        time.sleep(0.001)
    second.start()
    while len(arrived) < 2:  # the second has asked and come to the lock
        assert time.monotonic() < deadline, "the second advance never came to the lock"
        time.sleep(0.001)
    activity.release(busy)
    first.join(timeout=30)
    second.join(timeout=30)
    assert clock.timestamp() == pytest.approx(BASE + 3 * 86400 + 3600)


@pytest.mark.parametrize("seconds", [math.nan, math.inf, -1.0])
def test_an_advance_by_what_is_not_a_duration_is_refused_and_moves_nothing(
    seconds: float,
) -> None:
    clock = LocalClock(virtual=True, flowing=False, wall=lambda: BASE)
    machine = TimeMachine(clock, Activity(clock), runners=list, queues_empty=lambda: True)
    with pytest.raises(ValueError, match="not a duration"):
        machine.advance(seconds)
    with pytest.raises(ValueError, match="not an instant"):
        machine.advance_to(BASE + seconds if seconds != -1.0 else math.nan)
    assert clock.timestamp() == BASE


def test_a_target_refused_once_the_lock_is_taken_leaves_the_clock_where_it_was() -> None:
    clock = LocalClock(virtual=True, flowing=False, wall=lambda: BASE)
    machine = TimeMachine(clock, Activity(clock), runners=list, queues_empty=lambda: True)
    seen: list[float] = []

    def refuse(target: float) -> None:
        seen.append(target)
        raise LookupError("refused")

    with pytest.raises(LookupError):
        machine.advance_to(BASE + 60, check=refuse)
    with pytest.raises(LookupError):
        machine.advance(30, check=refuse)
    assert seen == [BASE + 60, BASE + 30] and clock.timestamp() == BASE
    assert not machine._one_at_a_time.locked()
