"""GIVEN fires parked at any lead (far past the horizon: found by their fire time in ByStatus,
no Parked entry; due now or soon: in the Parked index), pump runs at any moments, each cut at
any limit and failing any of its launches, WHEN a run that fails nothing comes THEN no fire
whose launch moment has come is still parked: the ByStatus watermarks never pass a fire a run
read and did not finish, nor one parked before its launch moment came (docs/protocol.md, "A
lone fire"; adapters/dynamodb_parked.py)."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import boto3
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from tickwork.adapters.dynamodb_parked import DynamoDBParkedFires
from tickwork.adapters.dynamodb_records import DynamoDBRecords
from tickwork.adapters.record_keys import PARK_INDEX_SECONDS
from tickwork.config import Settings
from tickwork.domain.action import Action, Limits
from tickwork.domain.start_request import parse_start_detail
from tickwork.fire import grouping
from tickwork.fire.pump import PumpRun, held

AHEAD = timedelta(minutes=15)
_CLOCK = [datetime(2026, 12, 5, 12, 0, tzinfo=UTC)]  # moves on across examples: one table
_IDS = itertools.count()


# the grouping rule the stack wires into the adapter (bootstrap), at the default settings
_SETTINGS = Settings(table_name="t", event_bus_name="b", state_machine_arn="arn:aws:states:::m")
assert _SETTINGS.launch_ahead == AHEAD


def _launch_moment(due: datetime) -> datetime:
    return grouping.launch_moment(due, _SETTINGS)


def _first_not_due(until: datetime) -> datetime:
    return grouping.first_not_due(until, _SETTINGS)


class Pumping(RuleBasedStateMachine):
    def __init__(self, table_name: str) -> None:
        super().__init__()
        self.records = DynamoDBRecords(table_name)
        self.parked = DynamoDBParkedFires(
            table_name, launch_moment=_launch_moment, first_not_due=_first_not_due
        )
        _CLOCK[0] += timedelta(days=1)
        self.mine: list[str] = []

    @property
    def now(self) -> datetime:
        return _CLOCK[0]

    @rule(
        # how far past the horizon its fire is, and in which millisecond: a lead at or under
        # PARK_INDEX_SECONDS (its window's launch moment close or come) lands in the Parked
        # index, a longer one is found by its fire time
        lead=st.one_of(
            st.integers(0, 3600 * 1000),
            st.sampled_from(
                [0, 1, 19_999, 20_000, 20_001, (PARK_INDEX_SECONDS + 20) * 1000, 61_000, 125_000]
            ),
        ),
        again=st.booleans(),  # parked again, due now (a refused start): in the Parked index
    )
    def park(self, lead: int, again: bool) -> None:
        action_id = f"f{next(_IDS)}"
        due = self.now + AHEAD + timedelta(milliseconds=1 + lead)
        detail = {"id": action_id, "at": due.isoformat()}
        request = parse_start_detail(detail, self.now)
        action = Action.scheduled(action_id, request, due, self.now, "h", None, Limits())
        launch = self.now if again else _launch_moment(due)
        self.records.create(action.parked(launch, self.now))
        self.mine.append(action_id)

    @rule(pick=st.integers(0, 1000))
    def park_again(self, pick: int) -> None:
        """A launched fire whose start was refused: parked again, due now, whatever its fire
        time (past the watermarks' by now)."""
        launched = [
            a for a in (self.records.get(i) for i in self.mine) if a is not None and not a.is_parked
        ]
        if launched:
            action = launched[pick % len(launched)]
            again = action.parked_again(self.now, self.now)
            self.records.save(again, action.version)

    @rule(seconds=st.sampled_from([1, 19, 20, 45, 59, 60, 61, 130, 300, 3600]))
    def time_passes(self, seconds: int) -> None:
        _CLOCK[0] += timedelta(seconds=seconds)

    @rule(limit=st.integers(1, 6), failing=st.sets(st.integers(0, 5), min_size=1, max_size=3))
    def failing_run(self, limit: int, failing: set[int]) -> None:
        self._run(limit, failing)

    @rule(limit=st.integers(1, 6))
    def pump_run(self, limit: int) -> None:
        self._run(limit, set())

    def _run(self, limit: int, failing: set[int]) -> None:
        due = self.parked.due_moments(self.now, limit)
        run = PumpRun()
        for n, (_, action_id) in enumerate(due):
            action = self.records.get(action_id)
            if action is None or not action.is_parked:
                run.moved.append(action_id)
            elif action.launch_at is not None and action.launch_at > self.now:
                run.waiting.append(action_id)
            elif n in failing:
                run.failed.append(action_id)
            else:
                launched = replace(
                    action, version=action.version + 1, launch_at=None, execution_arn="e"
                )
                self.records.save(launched, action.version)
                run.launched.append(action_id)
        if due:
            self.parked.advance(self.now, held(due, run, cut=len(due) >= limit))

    def teardown(self) -> None:
        """A clean run leaves nothing due for launch parked."""
        for _ in range(50):  # a clean run at a time, each cut at a limit of 50
            self._run(50, set())
            left = [
                a.id
                for a in (self.records.get(i) for i in self.mine)
                if a is not None
                and a.is_parked
                and a.launch_at is not None
                and a.launch_at <= self.now
            ]
            if len(left) == 0:
                return
        raise AssertionError(f"due for launch and never found: {left}")


def test_every_fire_due_for_launch_is_found_whatever_the_runs_before(table_name: str) -> None:
    run_state_machine_as_test(
        lambda: Pumping(table_name),
        settings=settings(
            max_examples=20,
            stateful_step_count=10,
            deadline=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        ),
    )
    boto3.resource("dynamodb")  # (the table outlived every example: one stream of time)


def test_a_fire_found_by_its_fire_time_whose_launch_failed_is_found_again(
    table_name: str,
) -> None:
    machine = Pumping(table_name)
    machine.park(lead=125_000, again=False)  # no Parked entry: found by its fire time
    machine.time_passes(130)
    machine.failing_run(limit=5, failing={0})
    assert machine.records.get(machine.mine[0]).is_parked  # type: ignore[union-attr]
    machine.teardown()  # a clean run finds it
