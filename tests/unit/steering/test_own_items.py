"""GIVEN ids shaped like anything — the stack's own items (the pump's watermark, the calendars,
a tab, a counter), names shaped like its generated execution names, and any text — WHEN each
arrives as the id of every steering event, and of every steering use case THEN an id of the
stack's own items is refused naming the id and the rule (a Schedule Rejected on the bus, never
an error the bus would deliver again), and the stack's own items are never read or written as
an action."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.fakes import fake_dependencies
from tickwork.answers import Rejection
from tickwork.domain.control_events import DETAILS
from tickwork.domain.errors import TickworkError, ValidationFailed
from tickwork.domain.events import DetailType
from tickwork.steering.intake import accept_control
from tickwork.steering.start import StartCommand, start_action

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
OWN = [
    "#pump",
    "#calendars",
    "#calendar#uk",
    "#tab#b-1764230000-0123456789abcdef#0",
    "#count#*#0#3",
    "#fires#*#m#29437000",
    "#",
]
SHAPED = ["b-1764230000-0123456789abcdef", "a-0123456789abcdef-g1-o1-r1", "pay:42", "b-42"]
IDS = st.one_of(
    st.sampled_from(OWN + SHAPED),
    st.builds(lambda tail: "#" + tail, st.text(max_size=30)),
    st.text(min_size=1, max_size=40),
)
# each steering event's own fields beside its id, well formed
FIELDS = {
    DetailType.STOP: {},
    DetailType.PAUSE: {"note": "why"},
    DetailType.RESUME: {},
    DetailType.RUN_NOW: {"requestId": "r-1"},
    DetailType.SKIP_OCCURRENCE: {"occurrence": 2},
    DetailType.MOVE_OCCURRENCE: {"occurrence": 2, "to": "2026-03-08T13:30:00Z"},
    DetailType.RESTORE_OCCURRENCE: {"occurrence": 2},
    DetailType.BACKFILL: {"startTime": "2026-03-01T00:00:00Z", "endTime": "2026-03-02T00:00:00Z"},
}


def test_every_steering_event_is_driven_here() -> None:
    assert set(FIELDS) == set(DETAILS)


@settings(max_examples=60, deadline=None)
@given(action_id=IDS, kind=st.sampled_from(sorted(FIELDS)))
def test_a_steering_event_naming_the_stacks_own_items_is_rejected_naming_the_id(
    action_id: str, kind: DetailType
) -> None:
    deps = fake_dependencies(NOW)
    start_action(StartCommand({"id": "pay:42", "rate": "rate(1 hour)"}, "e0"), deps)
    before = dict(deps.records.items)

    answer = accept_control(kind, {"id": action_id, **FIELDS[kind]}, "ev", deps)

    if action_id.startswith("#"):
        assert isinstance(answer, Rejection)
        (problem,) = answer.rejected.problems
        assert problem["field"] == "id" and "stack's own items" in problem["problem"]
        assert deps.records.items == before  # nothing written
    assert not any(i.startswith("#") for i in deps.records.items)


@settings(max_examples=40, deadline=None)
@given(action_id=st.sampled_from(OWN))
def test_every_steering_use_case_refuses_an_id_of_the_stacks_own_items(action_id: str) -> None:
    from tickwork.steering.backfill import backfill
    from tickwork.steering.occurrences import (
        Which,
        move_occurrence,
        restore_occurrence,
        skip_occurrence,
    )
    from tickwork.steering.pause import pause_action, resume_action
    from tickwork.steering.retry import retry_action
    from tickwork.steering.run_now import run_now
    from tickwork.steering.stop import cancel_action

    deps = fake_dependencies(NOW)
    which = Which(number=1)
    later = NOW + timedelta(days=1)
    calls = [
        lambda: cancel_action(action_id, deps),
        lambda: pause_action(action_id, None, deps),
        lambda: resume_action(action_id, None, deps),
        lambda: run_now(action_id, deps),
        lambda: retry_action(action_id, deps),
        lambda: skip_occurrence(action_id, which, None, deps),
        lambda: move_occurrence(action_id, which, later, None, deps),
        lambda: restore_occurrence(action_id, which, None, deps),
        lambda: backfill(action_id, NOW - timedelta(days=2), NOW - timedelta(days=1), "SKIP", deps),
    ]
    for call in calls:
        try:
            call()
        except ValidationFailed as refused:
            assert refused.problems[0].field == "id"
            assert "stack's own items" in refused.problems[0].problem
        except TickworkError as other:  # pragma: no cover - the check above must come first
            raise AssertionError(f"refused for another reason: {other}") from other
        else:
            raise AssertionError(f"{action_id!r} was taken for an action")


def test_the_records_store_never_reads_an_own_item_as_an_action() -> None:
    deps = fake_dependencies(NOW)
    for action_id in OWN:
        assert deps.records.get(action_id) is None
