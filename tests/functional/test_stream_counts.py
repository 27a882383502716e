"""GIVEN records written, replaced and purged in any order, and folds of the table's stream
that die after any number of their counter ADDs WHEN the next fold runs THEN the counts equal
what the records add up to and every recorded fire is in the fire totals once: a fold that
died is done again from its intent, and no counter gets a fold's ADD twice.
docs/protocol.md, "Counts and fire totals"."""

from __future__ import annotations

import contextlib
import itertools
import time
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.fakes import FakeClock
from tickwork.adapters.dynamodb_queries import DynamoDBQueries
from tickwork.adapters.dynamodb_records import DynamoDBRecords
from tickwork.adapters.dynamodb_stream_counts import DynamoDBStreamCounts
from tickwork.adapters.dynamodb_tallies import DynamoDBFireTallies
from tickwork.domain.action import Action, Limits, Occurrence, Status
from tickwork.domain.fire import Outcome
from tickwork.domain.selection import Selection
from tickwork.domain.start_request import parse_start_detail
from tickwork.domain.times import to_epoch_ms

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
_RUNS = itertools.count()
_COUNTED = [str(s) for s in Status if s != Status.IN_PROGRESS]  # (claims: counted as PENDING)


class _Died(Exception):
    """The fold's function was killed here."""


class _DyingTable:
    """The table as a fold sees it, killed after ``adds`` counter ADDs (None: never)."""

    def __init__(self, table: Any, adds: int | None) -> None:
        self._table = table
        self._left = adds

    def update_item(self, **kwargs: Any) -> Any:
        if self._left is not None:
            if self._left == 0:
                raise _Died()
            self._left -= 1
        return self._table.update_item(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)


def _new(action_id: str, clock: FakeClock, group: str) -> Action:
    detail = {"id": action_id, "at": (clock.now() + timedelta(minutes=10)).isoformat()}
    if group != "default":
        detail["group"] = group
    request = parse_start_detail(detail, clock.now())
    first = request.schedule.first_fire_time(clock.now())
    assert first is not None
    return Action.scheduled(action_id, request, first, clock.now(), "h", None, Limits())


# One step: ("create" | "fire" | "fail" | "pause" | "purge", action number) or ("fold", adds
# before it dies, or None: it runs to its end).
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["create", "fire", "fail", "pause", "purge"]), st.integers(0, 4)),
        st.tuples(st.just("fold"), st.one_of(st.none(), st.integers(0, 6))),
    ),
    max_size=16,
)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=_STEPS,
    groups=st.lists(st.sampled_from(["default", "g", "g.0", "default-0"]), min_size=5, max_size=5),
)
def test_folds_that_die_anywhere_leave_counts_and_totals_that_add_up(
    table_name: str, steps: list[tuple[str, Any]], groups: list[str]
) -> None:
    table = boto3.resource("dynamodb").Table(table_name)
    # Each example on the same table and stream: its own ids, and its own minute for the fire
    # totals; the counts compared as they moved from what the examples before left.
    run = next(_RUNS)
    clock = FakeClock(NOW + timedelta(minutes=run))
    assert DynamoDBStreamCounts(table_name).fold().caught_up
    queries = DynamoDBQueries(table_name, clock=clock)
    before = queries.count(Selection())
    records = DynamoDBRecords(table_name)
    fired: Counter[str] = Counter()  # kind -> fires recorded
    for step, n in steps:
        action_id = f"a{run}:{n}" if step != "fold" else ""
        current = records.get(action_id) if action_id else None
        if step == "create" and current is None:
            records.create(_new(action_id, clock, groups[n]))
        elif step == "fire" and current is not None and current.status == Status.PENDING:
            _record(records, current, clock, Outcome.FIRED)
            fired["onTime"] += 1
        elif step == "fail" and current is not None and current.status == Status.PENDING:
            _record(records, current, clock, Outcome.FAILED)
            fired["failed"] += 1
        elif step == "pause" and current is not None and current.status == Status.PENDING:
            records.save(
                replace(current, status=Status.PAUSED, version=current.version + 1), current.version
            )
        elif step == "purge" and current is not None:
            records.delete(action_id)
        elif step == "fold":
            counts = DynamoDBStreamCounts(table_name, table=_DyingTable(table, n))  # type: ignore[arg-type]
            with contextlib.suppress(_Died):
                counts.fold()

    assert DynamoDBStreamCounts(table_name).fold().caught_up

    after = queries.count(Selection())
    mine = [i for i in table.scan()["Items"] if str(i["id"]).startswith(f"a{run}:")]
    stored = Counter(str(item["status"]) for item in mine)
    assert {s: after[s] - before[s] for s in _COUNTED} == {s: stored[s] for s in _COUNTED}
    minute = to_epoch_ms(clock.now()) // 60_000
    read = DynamoDBFireTallies(table_name).read(None, False, minute, minute)
    assert read.get(minute, {}) == {kind: n for kind, n in fired.items() if n}


def _record(records: DynamoDBRecords, action: Action, clock: FakeClock, outcome: Outcome) -> None:
    assert action.execution_time is not None
    occurrence = Occurrence(1, clock.now(), clock.now(), 1, outcome, late_ms=0)
    done = replace(
        action,
        status=Status.COMPLETED if outcome is Outcome.FIRED else Status.FAILED,
        version=action.version + 1,
        ttl=int((clock.now() + timedelta(days=10)).timestamp()),
        history=(occurrence,),
    )
    records.save(done, action.version, recorded=occurrence)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    fires=st.lists(
        st.tuples(
            # minutes from an hour's start, those at the hours' edges among them
            st.one_of(st.sampled_from([0, 59, 60, 61, 119, 120, 179]), st.integers(0, 179)),
            st.integers(0, 59),  # the second of the minute
            st.sampled_from(["onTime", "late", "failed"]),
            st.sampled_from(["default", "g", "h1"]),  # a group shaped like an hour item
        ),
        min_size=1,
        max_size=12,
    ),
    folds=st.sets(st.integers(0, 11), max_size=3),
)
def test_fire_totals_read_back_by_minute_and_hour_from_one_item_an_hour(
    table_name: str, fires: list[tuple[int, int, str, str]], folds: set[int]
) -> None:
    from tests.fire_totals import record_fires
    from tickwork.domain.fire_tally import FireKind

    run = next(_RUNS)
    start = NOW + timedelta(days=run)  # each example its own hours
    hour = to_epoch_ms(start) // 3_600_000
    records = DynamoDBRecords(table_name)
    counts = DynamoDBStreamCounts(table_name)
    expected: dict[str | None, Counter[tuple[int, str]]] = {}
    for n, (minute, second, kind, group) in enumerate(fires):
        at = start + timedelta(minutes=minute, seconds=second)
        record_fires(records, group, [(at, FireKind(kind))], action_id=f"r{run}:{n}")
        for scope in (None, group):
            expected.setdefault(scope, Counter())[(hour * 60 + minute, kind)] += 1
        if n in folds:
            counts.fold()
    assert counts.fold().caught_up

    tallies = DynamoDBFireTallies(table_name)
    first, last = hour * 60, hour * 60 + 179
    for scope, fired in expected.items():
        by_minute: dict[int, dict[str, int]] = {}
        by_hour: dict[int, dict[str, int]] = {}
        for (minute, kind), n in fired.items():
            by_minute.setdefault(minute, Counter())[kind] += n  # type: ignore[index]
            by_hour.setdefault(minute // 60, Counter())[kind] += n  # type: ignore[index]
        assert tallies.read(scope, False, first, last) == {
            m: dict(c) for m, c in sorted(by_minute.items())
        }
        assert tallies.read(scope, True, hour, hour + 2) == {
            h: dict(c) for h, c in sorted(by_hour.items())
        }
        # a window cut inside an hour reads only its own minutes
        assert tallies.read(scope, False, first + 30, first + 89) == {
            m: dict(c) for m, c in sorted(by_minute.items()) if first + 30 <= m <= first + 89
        }
    # one item an hour a scope: the fold wrote no minute item
    table = boto3.resource("dynamodb").Table(table_name)
    ids = [str(item["id"]) for item in table.scan()["Items"]]
    assert not [i for i in ids if i.startswith("#fires#") and "#m" in i]
    written = {
        i for i in ids if i.startswith("#fires#") and int(i.rpartition("#h")[2]) // 24 == hour // 24
    }
    hours = {(scope, m // 60) for scope, fired in expected.items() for m, _ in fired}
    assert written == {
        f"#fires#{'*' if scope is None else 'g:' + scope}#h{h}" for scope, h in hours
    }


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    # each step: records written (0: none), then a fold run that many seconds after the first
    # write still waiting; the lag at the lag's edges among others
    steps=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from([0.0, 59.9, 60.0, 61.0, 300.0])),
        min_size=1,
        max_size=8,
    ),
    at_once=st.sampled_from([2, 5, 1000]),
)
def test_writes_younger_than_the_lag_wait_for_a_later_fold_and_are_then_counted_once(
    table_name: str,
    steps: list[tuple[int, float]],
    at_once: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CountLagSeconds: a run folds nothing while the oldest write waiting is younger than the
    lag and fewer than FOLD_AT_ONCE wait; else it folds them all. Whatever the runs, every
    write is counted once when the lag has passed (or a run asks for lag 0)."""
    import tickwork.adapters.dynamodb_stream_counts as stream_counts

    monkeypatch.setattr(stream_counts, "FOLD_AT_ONCE", at_once)
    lag = 60.0
    run = next(_RUNS)
    clock = FakeClock(NOW + timedelta(minutes=run))
    counts = DynamoDBStreamCounts(table_name)
    assert counts.fold().caught_up
    queries = DynamoDBQueries(table_name, clock=clock)
    before = queries.count(Selection())[Status.PENDING]
    records = DynamoDBRecords(table_name)
    created = 0
    first_waiting: float | None = None
    for n, (writes, after) in enumerate(steps):
        for k in range(writes):
            records.create(_new(f"l{run}:{n}:{k}", clock, "default"))
            created += 1
            first_waiting = time.time() if first_waiting is None else first_waiting
        waiting = created - (queries.count(Selection())[Status.PENDING] - before)
        moment = (first_waiting or time.time()) + after
        folded = counts.fold(lag=lag, now=moment)
        counted = queries.count(Selection())[Status.PENDING] - before
        if waiting and after < lag and waiting < at_once:
            assert folded.waiting == waiting and counted == created - waiting, folded
        else:
            assert folded.waiting == 0 and counted == created, folded
            first_waiting = None
    assert counts.fold(lag=lag, now=time.time() + lag).caught_up
    assert queries.count(Selection())[Status.PENDING] - before == created
