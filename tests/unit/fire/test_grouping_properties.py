"""GIVEN any fire times (at a window's edges, on its last millisecond, one second apart) and any
window WHEN the pump groups the due fires THEN every fire is in exactly one batch or alone; a
batch's members all fall in one window, are at least BatchMinFires and at most BatchMaxFires,
and its Wait ends no later than any member's fire (never early) and within the second of its
earliest; and the fires of a window with fewer than the minimum all run alone."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.fakes import fake_dependencies
from tickwork.domain.batch import window_of
from tickwork.fire import grouping
from tickwork.fire.grouping import group
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
BASE = NOW + timedelta(hours=1)  # a whole minute: every window length divides it
AHEAD = timedelta(minutes=15)

# milliseconds from BASE, crowding window edges: 0, 999, 1000, 9_999, 10_000, ...
edges = st.sampled_from([0, 1, 999, 1_000, 1_001, 4_999, 5_000, 9_999, 10_000, 10_001, 19_999])
offsets = st.one_of(edges, st.integers(min_value=0, max_value=40_000))


@settings(max_examples=60, deadline=None)
@given(
    fires=st.lists(offsets, min_size=1, max_size=30),
    window=st.integers(min_value=1, max_value=20),
    least=st.integers(min_value=2, max_value=6),
    most=st.integers(min_value=6, max_value=12),
)
def test_the_due_fires_make_batches_within_one_window_never_waiting_past_a_member(
    fires: list[int], window: int, least: int, most: int
) -> None:
    deps = fake_dependencies(
        NOW,
        launch_ahead=AHEAD,
        batch_window=timedelta(seconds=window),
        batch_min_fires=least,
        batch_max_fires=most,
        batch_state_machine_arn="arn:aws:states:us-east-1:123456789012:stateMachine:batch",
    )
    for n, ms in enumerate(fires):
        at = BASE + timedelta(milliseconds=ms)
        start_action(StartCommand({"id": f"b-{n}", "at": at.isoformat()}, f"e{n}"), deps)
    due = [deps.records.items[f"b-{n}"] for n in range(len(fires))]

    batches, alone = group(due, deps)

    placed = Counter(
        [m.action_id for b in batches for m in b.order.members] + [a.id for a in alone]
    )
    assert placed == Counter(a.id for a in due)  # each exactly once
    length = timedelta(seconds=window)
    for batch in batches:
        members = batch.order.members
        assert least <= len(members) <= most
        assert len({window_of(m.fire_at, length) for m in members}) == 1
        earliest = min(m.fire_at for m in members)
        assert batch.order.second <= earliest < batch.order.second + timedelta(seconds=1)
    per_window = Counter(window_of(a.execution_time, length) for a in due if a.execution_time)
    for action in alone:
        assert action.execution_time is not None
        in_window = per_window[window_of(action.execution_time, length)]
        # alone: its window had too few, or it was a remainder under the minimum
        assert in_window < least or 0 < in_window % most < least


@settings(max_examples=60, deadline=None)
@given(offset=offsets, window=st.integers(min_value=1, max_value=20))
def test_a_parked_fire_is_launched_with_its_window_and_within_reach_of_it(
    offset: int, window: int
) -> None:
    """The launch, the pump and the batch task read one window: a parked fire's launch moment
    is its window's start less the horizon, and a member is due within reach of that start."""
    deps = fake_dependencies(NOW, launch_ahead=AHEAD, batch_window=timedelta(seconds=window))
    due = BASE + timedelta(milliseconds=offset)
    start = grouping.window(due, deps.settings)
    assert start <= due < start + timedelta(seconds=window)
    assert grouping.launch_moment(due, deps.settings) == start - deps.settings.launch_ahead
    assert due - start < grouping.reach(deps.settings)


def test_only_the_grouping_rule_reads_the_batch_settings() -> None:
    """Which fires share an execution, and over which window, is decided in fire/grouping.py
    alone: no other module of the stack reads the batch window or the batch sizes."""
    src = Path(__file__).resolve().parents[3] / "src" / "tickwork"
    allowed = {src / "fire" / "grouping.py", src / "config.py"}
    readers = [
        f"{path.relative_to(src)}:{n}"
        for path in src.rglob("*.py")
        if path not in allowed
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\.batch_(window|min_fires|max_fires)\b", line)
    ]
    assert readers == []
