"""A model-based test of the fire protocol (docs/protocol.md): hypothesis drives the stack's own
use cases over the in-memory stores through random interleavings, and every invariant of the
protocol is checked after every step.

Steps: starts and replacements (one-offs and recurrences, under either unknown-outcome policy,
with a retry policy and a lock of their own or the stack's), updates inside and outside the
lock, cancels, pauses (also landing between a task's read of a record and its claim), resumes,
run now, retries by hand, targets that fail for a while or always, pump
runs, lone and batch executions played as their definitions say (targets that fail for a while
or for good, functions that die right after a write and are retried), ticks delivered, delivered
twice or lost, reconciler runs, clock advances — and executions the stack did not issue (an
early fire time, a replayed order under another name, a batch listing a fire twice, a batch
named like a lone execution). Ids are drawn to collide with the stack's own names.

Invariants: never early; at most once per occurrence (again only with the same idempotency key,
after an execution ended without a word under onUnknownOutcome RETRY); nothing fires after a
cancel or a pause, which win until the claim (refused or deferred only for a fire claimed); no
fire attempted more often than its retry policy allows or retried past its event age; no
execution the stack did not issue calls a target; every ending is
recorded once; counts and fire totals equal the records, counting what open tabs carry.

``make test`` runs a bounded number of examples; ``make model`` many more
(``MODEL_EXAMPLES``, ``MODEL_STEPS``). A failure prints the steps as code to paste into a test.
"""

from __future__ import annotations

import os
from collections import Counter
from contextlib import suppress
from dataclasses import replace
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests.model.world import MODEL_TYPE, RETRIES, LambdaDied, World
from tests.unit.fakes.stores import _changes
from tickwork.answers import Done
from tickwork.domain.action import ACTIVE, Status
from tickwork.domain.batch import BatchOrder, Member
from tickwork.domain.errors import FireUnderWay, ForgedOrder, TickworkError
from tickwork.domain.execution import Machine
from tickwork.domain.fire import CaughtFailure, FireOrder, Outcome
from tickwork.domain.fire_policy import OverlapPolicy
from tickwork.domain.times import iso
from tickwork.fire.proofs import prove_failure
from tickwork.fire.pump import pump
from tickwork.fire.reconcile import reconcile
from tickwork.integrity.order_proof import order_proof, order_proof_key
from tickwork.steering.pause import pause_action, resume_action
from tickwork.steering.retry import retry_action
from tickwork.steering.run_now import run_now
from tickwork.steering.start import StartCommand, start_action
from tickwork.steering.stop import cancel_action

# Ids a user may give that look like the stack's own names: a batch's (b-<second>-<hex>, with a
# repair), a lone execution's (<id>-<8 hex>-g1-o1), and plain ones.
IDS = st.sampled_from(
    ["a-42", "b-42", "b-1764230000-0123456789ab", "b-1-0123456789ab-r1", "x-1a2b3c4d-g1-o1"]
)
EXAMPLES = int(os.environ.get("MODEL_EXAMPLES", "100"))
STEPS = int(os.environ.get("MODEL_STEPS", "50"))


class Protocol(RuleBasedStateMachine):
    """The stack, driven; and what a user of it would see, checked."""

    @initialize()
    def start_world(self) -> None:
        self.world = World()
        self.events = 0
        self.cancelled: dict[str, int] = {}  # id -> calls noted when its cancel applied
        self.paused: dict[str, int] = {}  # id -> calls noted when its pause applied
        self.releases: Counter[str] = Counter()  # id -> claims released (RETRY)
        self.manual_keys: set[str] = set()  # idempotency keys of fires asked for by hand
        self.fire_times: dict[str, object] = {}  # idempotency key -> the record's fire time
        self.recorded: dict[str, Counter[tuple[int, int, int]]] = {}  # id -> endings seen
        self.history_seen: dict[str, tuple[int, int]] = {}  # id -> (generation, history length)
        self.calls_checked = 0
        self.retries: dict[str, int] = {}  # id -> the most retries a policy it had allows
        self.ages: dict[str, timedelta] = {}  # id -> the longest event age a policy allowed
        self.under_way: dict[str, set[str]] = {}  # id -> keys of fires handed on, at its stop

    @property
    def deps(self) -> Any:
        return self.world.deps

    def _event(self) -> str:
        self.events += 1
        return f"ev-{self.events}"

    # --- what users do -----------------------------------------------------------------------
    @rule(
        action_id=IDS,
        tens=st.integers(min_value=0, max_value=6),
        every=st.sampled_from([None, 10, 20, 60]),
        count=st.integers(min_value=2, max_value=5),
        overlap=st.sampled_from(
            [None, "SKIP", "BUFFER_ONE", "BUFFER_ALL", "ALLOW_ALL", "ALLOW_ALL", "ALLOW_ALL"]
        ),
        unknown=st.sampled_from(["FAIL", "RETRY"]),
        policy=st.fixed_dictionaries(
            {"maximumRetryAttempts": st.sampled_from([0, 1, 185])},
            optional={
                "maximumEventAgeSeconds": st.sampled_from([60, 86_400]),
                "lockSeconds": st.sampled_from([0, 30]),
                "catchUpOnResume": st.sampled_from(["SKIP", "LAST", "ALL"]),
            },
        ).map(
            lambda p: (
                p
                if p["maximumRetryAttempts"] != 185
                else {  # 185: the stack's
                    k: v for k, v in p.items() if k != "maximumRetryAttempts"
                }
            )
        ),
    )
    def start(
        self,
        action_id: str,
        tens: int,
        every: int | None,
        count: int,
        overlap: str | None,
        unknown: str,
        policy: dict[str, int],
    ) -> None:
        """A Start: a one-off or a recurrence, new or replacing the action of that id, due on
        one of the next whole ten seconds (so that fires fall due together and share a batch),
        with a retry policy and a lock of its own or the stack's."""
        now = self.deps.clock.now()
        due = now.replace(microsecond=0) + timedelta(seconds=10 * tens + 10 - now.second % 10)
        at = iso(due)
        detail: dict[str, Any] = {"id": action_id, "action": MODEL_TYPE, "data": {}, **policy}
        detail["onUnknownOutcome"] = unknown
        if every is None:
            detail["at"] = at
        else:
            detail.update(rate=f"rate({every} seconds)", startTime=at, executionRemainder=count)
            if overlap is not None:
                detail["overlapPolicy"] = overlap
        try:
            start_action(StartCommand(detail, self._event()), self.deps)
        except TickworkError:
            return  # refused (inside a one-off's lock): nothing written
        retries = policy.get("maximumRetryAttempts", RETRIES)
        self.retries[action_id] = max(self.retries.get(action_id, 0), retries)
        age = timedelta(seconds=policy.get("maximumEventAgeSeconds", 86_400))
        self.ages[action_id] = max(self.ages.get(action_id, age), age)
        self.cancelled.pop(action_id, None)
        self.paused.pop(action_id, None)

    @rule(
        action_id=IDS,
        how=st.sampled_from(
            [
                "cancel",
                "pause",
                "resume",
                "run now",
                "retry",
                "fails for a while",
                "fails for good",
                "fails always",
                "recovers",
            ]
        ),
    )
    def user_steers(self, action_id: str, how: str) -> None:
        """A cancel, a pause, a resume, a run now or a retry by hand — or the action's target
        starts to fail (its next call answers 503, or 400; or every call 503, until it
        recovers)."""
        if how == "fails always":
            self.world.failing_always.add(action_id)
            return
        if how == "recovers":
            self.world.failing_always.discard(action_id)
            return
        if how.startswith("fails"):
            self.world.failing[action_id] = "transient" if how.endswith("while") else "permanent"
            return
        before = self.world.store.items.get(action_id)
        try:
            if how == "cancel":
                answer = cancel_action(action_id, self.deps)
            elif how == "pause":
                answer = pause_action(action_id, "model", self.deps)
            elif how == "resume":
                answer = resume_action(action_id, None, self.deps)
            elif how == "run now":
                answer = run_now(action_id, self.deps, request_id=self._event())
            else:
                answer = retry_action(action_id, self.deps)
        except FireUnderWay:
            # THEN a cancel or pause is refused only once the fire is claimed: under way
            assert before is not None and before.status == Status.IN_PROGRESS, before
            return
        except TickworkError:
            return  # refused (unknown id, finished, inside a one-off's lock...): nothing written
        if how in ("cancel", "pause") and answer.outcome is Done.DEFERRED:
            # THEN it waits for the fire only if that fire was already claimed
            assert before is not None and before.status == Status.IN_PROGRESS, before
        if answer.outcome in (Done.CANCELLED, Done.PAUSED) and before is not None:
            # a fire handed on (ALLOW_ALL) was claimed: under way, it goes on
            self.under_way[action_id] = {
                m.idempotency_key for m in before.manual.in_flight if m.trigger == "SCHEDULED"
            }
        if answer.outcome is Done.CANCELLED:
            self.cancelled[action_id] = len(self.world.calls)
        elif answer.outcome is Done.PAUSED:
            self.paused[action_id] = len(self.world.calls)
        elif how == "resume" or (how == "run now" and not answer.manual):
            self.paused.pop(action_id, None)  # a one-off run now fires now: paused no more
        elif how == "retry":
            # A failed fire retried by hand runs again with its own key (it may have reached its
            # target before it failed, or before its outcome was lost): at least once, by choice.
            self.releases[action_id] += 1
        if answer.idempotency_key and answer.manual:
            self.manual_keys.add(answer.idempotency_key)

    @rule(action_id=IDS, how=st.sampled_from(["cancel", "pause"]))
    def steers_at_the_claim(self, action_id: str, how: str) -> None:
        """A cancel or a pause that lands between a running task's read of the record and its
        claim of the fire (the next one made for that action): the claim is the one point that
        decides, so the fire never runs."""
        self.world.interject = (action_id, lambda: self.user_steers(action_id, how))

    # --- time and the stack's own runs -------------------------------------------------------
    @rule(seconds=st.sampled_from([1, 3, 10, 30, 120]))
    def time_passes(self, seconds: int) -> None:
        self.deps.clock.advance(seconds=seconds)

    @rule()
    def next_moment_comes(self) -> None:
        """The clock moves to the next moment something is due: a Wait's end, a parked fire's
        launch (then the pump runs), or a few seconds on."""
        world = self.world
        now = self.deps.clock.now()
        moments = [
            order.wait_until if isinstance(order, FireOrder) else order.second
            for starter in (world.fires, world.batches)
            for name, order in starter.started.items()
            if name not in starter.ended
        ]
        moments += [a.launch_at for a in world.store.items.values() if a.launch_at is not None]
        later = [m for m in moments if m > now]
        self.deps.clock.current = (
            min(later) + timedelta(milliseconds=1) if later else now + timedelta(seconds=5)
        )
        with suppress(LambdaDied):
            pump(self.deps, workers=1)

    @rule(crash_after=st.integers(min_value=0, max_value=6))
    def everything_due_runs(self, crash_after: int) -> None:
        """Every execution whose Wait has ended tries its task once (the first may die right
        after one of its writes), then the tick rule delivers what is on the bus."""
        for n, arn in enumerate(self.world.runnable()):
            self.world.crash_in = crash_after if n == 0 and crash_after < 6 else None
            self.world.play(arn)
        while self.world.inbox:
            self.world.deliver(0, again=False)

    @rule(crash_after=st.integers(min_value=0, max_value=3))
    def pump_runs(self, crash_after: int) -> None:
        self.world.crash_in = crash_after if crash_after < 3 else None
        try:
            pump(self.deps, workers=1)
        except LambdaDied:
            pass  # the next run goes on from what this one wrote
        finally:
            self.world.crash_in = None

    @rule(restart=st.booleans())
    def reconciler_runs(self, restart: bool) -> None:
        """Every few minutes; or, as after an outage that lost every execution, looking at
        every waiting fire and every claim at once."""
        kept = {i: a.fire_key for i, a in self.world.store.items.items()}
        if restart:
            repaired = reconcile(self.deps, horizon=None, stuck_after=timedelta(0), workers=1)
        else:
            repaired = reconcile(self.deps, workers=1)
        for action_id in repaired["released"]:
            self.releases[action_id] += 1
        assert set(repaired["released"]) <= set(kept)
        self.world.collect_bus()
        # THEN no tab is left open whose batch has stopped running: its changes were added
        batches = self.world.batches
        for tab, state in self.world.store.tabs.items():
            batch = tab.rpartition("#")[0]
            ended = batch in batches.ended or batch not in batches.started
            assert not (state.open and ended), f"tab {tab} left open"

    @rule()
    def stack_restarts(self) -> None:
        """The local stack killed and started again: every execution and every event in
        flight is gone with the emulator, the table survives; at start, the reconciler looks at
        every waiting fire, every claim and every open tab at once."""
        self.world.lose_executions()
        self.reconciler_runs(restart=True)

    @precondition(lambda self: bool(self.world.runnable()))
    @rule(data=st.data(), crash_after=st.integers(min_value=0, max_value=4))
    def execution_runs(self, data: st.DataObject, crash_after: int) -> None:
        """One try of a due execution's task: lone or batch; its function may die right after
        one of its writes."""
        arn = data.draw(st.sampled_from(self.world.runnable()), label="execution")
        self.world.crash_in = crash_after if crash_after < 4 else None
        self.world.play(arn)

    @precondition(lambda self: bool(self.world.inbox))
    @rule(data=st.data(), how=st.sampled_from(["once", "twice", "lost"]))
    def tick_rule_delivers(self, data: st.DataObject, how: str) -> None:
        index = data.draw(st.integers(0, len(self.world.inbox) - 1), label="event")
        if how == "lost":
            del self.world.inbox[index]
            return
        self.world.crash_in = data.draw(st.sampled_from([None, 0]), label="crash after write")
        self.world.deliver(index, again=how == "twice")

    # --- executions the stack did not issue --------------------------------------------------
    def _waiting(self) -> list[Any]:
        return [a for a in self.world.store.items.values() if a.execution_time is not None]

    @precondition(lambda self: bool(self._waiting()))
    @rule(data=st.data(), how=st.sampled_from(["early", "replayed", "twice", "twin", "report"]))
    def forged_execution(self, data: st.DataObject, how: str) -> None:
        """Started by anyone allowed states:StartExecution: an order 60 s early with no proof;
        a real order replayed under another name; a batch listing a fire twice (even proved:
        the stack never issues one); a batch named like the fire's lone execution. Or the
        fulfill function invoked by hand with a made-up failure report: it proves none."""
        action = data.draw(st.sampled_from(self._waiting()), label="action")
        now = self.deps.clock.now()
        fire_at = action.execution_time
        n = self.events = self.events + 1
        if how == "report":
            order = FireOrder(action.id, action.generation, action.occurrence, fire_at, fire_at)
            report = CaughtFailure(order, "X", "made up")
            arn = action.execution_arn or self.world.fires.execution_arn("made-up")
            try:
                prove_failure(report, arn, self.deps)
            except ForgedOrder:
                return
            raise AssertionError("a failure report was proved for an order the stack never issued")
        if how == "early":
            order = FireOrder(
                action.id,
                action.generation,
                action.occurrence,
                fire_at - timedelta(seconds=60),
                now,
            )
            name = f"forged-{n}"
            self.world.fires.started[name] = order
            self.world.forged.add(self.world.fires.execution_arn(name))
        elif how == "replayed":
            real = [o for o in self.world.fires.started.values() if o.proof]
            if not real:
                return
            name = f"replayed-{n}"
            self.world.fires.started[name] = data.draw(st.sampled_from(real), label="order")
            self.world.forged.add(self.world.fires.execution_arn(name))
        else:
            member = Member(action.id, action.generation, action.occurrence, fire_at)
            members = (member, member) if how == "twice" else (member,)
            name = (
                f"b-twice-{n}"
                if how == "twice"
                else (action.execution_arn or "x:x").rpartition(":")[2]
            )
            order = BatchOrder(fire_at.replace(microsecond=0), members)
            if how == "twice":  # proved as the stack would, had it a bug: refused all the same
                key = order_proof_key(b"the model's seal key")
                order = replace(order, proof=order_proof(key, Machine.BATCH, name, order.to_wire()))
            if self.world.ever_started(self.world.batches.execution_arn(name)):
                return  # a name is used once (a real execution's, or one that was)
            self.world.batches.started[name] = order
            self.world.forged.add(self.world.batches.execution_arn(name))

    # --- the invariants ----------------------------------------------------------------------
    @invariant()
    def never_early(self) -> None:
        """Every call at or after its fire's time, and that time the record's (as it was when
        the call was made: a resumed or retried fire keeps its key, at a new time)."""
        if not hasattr(self, "world"):
            return
        for call in self.world.calls[self.calls_checked :]:
            assert call.at >= call.scheduled, f"called before its time: {call}"
            if call.key in self.fire_times and call.key not in self.manual_keys:
                assert call.scheduled == self.fire_times[call.key], f"not the record's time: {call}"
        self.calls_checked = len(self.world.calls)
        for action in self.world.store.items.values():
            if action.execution_time is not None and action.status in ACTIVE:
                self.fire_times[action.key_of(action.occurrence)] = action.execution_time

    @invariant()
    def at_most_once(self) -> None:
        if not hasattr(self, "world"):
            return
        ok = Counter(c.key for c in self.world.calls if c.ok)
        ids = {c.key: c.action_id for c in self.world.calls}
        for key, times in ok.items():
            allowed = 1 + self.releases[ids[key]]
            assert times <= allowed, f"fire {key} of {ids[key]} called {times} times"
        by_execution: dict[str, set[str]] = {}
        for call in self.world.calls:
            by_execution.setdefault(call.key, set()).add(call.execution)
        for key, executions in by_execution.items():
            # one execution at a time: its own, the batch that handed it over, a repair
            assert len(executions) <= 2 + self.releases[ids[key]] + 1, (key, executions)

    @invariant()
    def retries_within_the_policy(self) -> None:
        """No fire is attempted more often than its action's retry policy allows (again after
        a claim released or a retry by hand), and no retry starts past its event age."""
        if not hasattr(self, "world"):
            return
        attempts = Counter(c.key for c in self.world.calls if c.key not in self.manual_keys)
        ids = {c.key: c.action_id for c in self.world.calls}
        for key, times in attempts.items():
            action_id = ids[key]
            allowed = (1 + self.retries.get(action_id, RETRIES)) * (1 + self.releases[action_id])
            assert times <= allowed, f"{key} of {action_id} attempted {times} times"
        for call in self.world.calls:
            # (a fire asked for — a catch-up's, a backfill's — counts its age from the asking)
            if (
                call.attempt > 1
                and call.key not in self.manual_keys
                and call.trigger == "SCHEDULED"
            ):
                age = self.ages.get(call.action_id, timedelta(days=1))
                assert call.at < call.scheduled + age, f"retried past its event age: {call}"

    @invariant()
    def nothing_forged_fires(self) -> None:
        if not hasattr(self, "world"):
            return
        forged = [c for c in self.world.calls if c.execution in self.world.forged]
        assert forged == [], f"an execution the stack did not issue called a target: {forged}"

    @invariant()
    def nothing_after_a_cancel_or_a_pause(self) -> None:
        if not hasattr(self, "world"):
            return
        for marks, what in ((self.cancelled, "cancel"), (self.paused, "pause")):
            for action_id, seen in marks.items():
                after = [
                    c
                    for c in self.world.calls[seen:]
                    if c.action_id == action_id
                    and (what == "cancel" or c.key not in self.manual_keys)
                    and c.key not in self.under_way.get(action_id, set())
                ]
                assert after == [], f"{action_id} called after its {what}: {after}"

    @invariant()
    def one_fire_at_a_time_unless_allowed_all(self) -> None:
        """Under every overlap policy but ALLOW_ALL, no scheduled occurrence is called while an
        earlier one of the same schedule (its lineage: the keys it gives) is still being
        attempted: the occurrences called, in call order, never go back. Under ALLOW_ALL they
        may."""
        if not hasattr(self, "world"):
            return
        for action in self.world.store.items.values():
            if action.policy.overlap is OverlapPolicy.ALLOW_ALL:
                continue
            numbers = [
                c.occurrence
                for c in self.world.calls
                if c.action_id == action.id
                and c.trigger == "SCHEDULED"
                and c.key == action.key_of(c.occurrence)
            ]
            assert numbers == sorted(numbers), f"{action.id}: occurrences overlapped: {numbers}"

    @invariant()
    def each_scheduled_occurrence_recorded_once(self) -> None:
        """A scheduled occurrence is recorded once — fired, failed or skipped (by request, its
        catch-up, or its overlap policy) — whether on the schedule or handed on beside it. (A
        replace makes a new schedule: its occurrence 1 is another fire than the one before's,
        though both may be due at one instant — an update deferred behind an imminent fire.)"""
        if not hasattr(self, "world"):
            return
        for action in self.world.store.items.values():
            seen = Counter(
                (self.world.generation_of(action.id, h.execution), h.occurrence, h.scheduled_time)
                for h in action.history
                if h.trigger == "SCHEDULED"
            )
            twice = [fire for fire, n in seen.items() if n > 1]
            assert twice == [], f"{action.id}: {twice} recorded twice"

    @invariant()
    def every_ending_recorded_once(self) -> None:
        if not hasattr(self, "world"):
            return
        for action in self.world.store.items.values():
            generation, length = self.history_seen.get(action.id, (action.generation, 0))
            if len(action.history) < length:  # purged and made again
                length = 0
            endings = self.recorded.setdefault(action.id, Counter())
            for entry in action.history[length:]:
                fire = (generation, entry.occurrence, entry.manual)  # manual numbers restart
                endings[fire] += 1
                assert endings[fire] == 1, f"{action.id}: {fire} recorded twice"
            self.history_seen[action.id] = (action.generation, len(action.history))

    @invariant()
    def counts_and_totals_add_up(self) -> None:
        """The counters and fire totals, with what the open tabs still carry, are the records."""
        if not hasattr(self, "world"):
            return
        store = self.world.store
        carried: Counter[tuple[object, ...]] = Counter()
        for tabs in store.carried.values():
            for tab, changes in tabs.items():
                if store.open_tab(tab) is not None:
                    carried.update(changes)
        expected = Counter()
        for action in store.items.values():
            expected.update(_changes(None, action, None))
        for (scope, name), count in store.counters.items():
            total = count + carried[("count", scope, name)]
            assert total == expected[("count", scope, name)], (scope, name, count, expected)
        recorded = sum(
            1
            for a in store.items.values()
            for h in a.history
            if h.outcome in (Outcome.FIRED, Outcome.FAILED)
        )
        fires = sum(
            n
            for (scope, hourly, _), kinds in store.fires.items()
            if scope is None and not hourly
            for n in kinds.values()
        )
        carried_fires = sum(
            n for key, n in carried.items() if key[0] == "fire" and key[1] is None and not key[2]
        )
        assert fires + carried_fires == recorded, (fires, carried_fires, recorded)


Protocol.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=STEPS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestProtocol = Protocol.TestCase
