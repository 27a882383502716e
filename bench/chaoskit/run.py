"""One chaos run, phase by phase: start the stack, create the plan's actions, inject the
faults on their timeline, kill -9 and restart the stack between the waves, let everything
settle, then score what the receiver saw against what tickwork should have done."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chaoskit.creation import Created, create_actions, list_actions, wait_created
from chaoskit.duplicates import StartDuplicator, TickDuplicator
from chaoskit.expectations import Expected, epoch, expected_fires, first_fire_time
from chaoskit.faulty_stack import FAULT_LINE, FAULTY_STACK
from chaoskit.outcome import (
    Injectors,
    KillRecord,
    Outcome,
    fault_summary,
    injected_faults,
    missing_completed,
    run_problems,
)
from chaoskit.plan import Kind, Plan, PlannedAction, make_plan
from chaoskit.races import Races
from chaoskit.receiver import ChaosReceiver
from chaoskit.report import score, straddling
from chaoskit.timeline import Timeline
from chaoskit.totals import Totals, totals
from tickwork.config import MAX_HISTORY
from tickwork_local.process import LocalProcess

__all__ = ["ChaosRun", "RunSettings"]

LOCK_SECONDS = 2
RECONCILE_SCHEDULE = "rate(5 seconds)"
PROGRESS_EVERY = 10.0
CREATE_TIMEOUT = 120.0  # for Starts on the bus to land in the table
QUIET_SECONDS = 6.0  # no delivery for this long (and nothing active) = settled
SETTLE_TIMEOUT = 90.0  # after the last planned fire
FOLD_PATIENCE = 30.0  # for GET /stats to count what the records hold (the count function's folds)
KILL_QUIET_WINDOW = 1.5  # no fire due within this many seconds of the kill
KILL_WAIT_LIMIT = 30.0  # give up waiting for a quiet moment after this long
REPUBLISH_AFTER_FIRST = 0.3  # seconds; a recurrence stays active >= 3 s after its first fire
REPUBLISH_SLACK = 0.5  # a republish running later than this is skipped
DETAILS_KEPT = 50  # records of actions with problems saved in the report
BATCH_MIN_FIRES = 3  # a batch group of the plan (4 fires) is a batch even if one moved on
# Every fire stays in its record's history: the run reads what fired before a race, and the fire
# totals, back from the histories (the default HistoryLimit keeps only the last 5 fires).
HISTORY_LIMIT = MAX_HISTORY
BLIND_MARGIN = 3.0  # seconds around the restart in which lifecycle events may go unseen


@dataclass(frozen=True)
class RunSettings:
    size: int
    seed: int
    state_dir: Path
    fire_rate: float


class ChaosRun:
    def __init__(self, settings: RunSettings) -> None:
        self.settings = settings
        self.began = time.time()
        self._plan: Plan | None = None  # made once the stack is up: fire times are absolute
        self._failures: dict[str, int] = {}
        self.receiver = ChaosReceiver(lambda action_id: self._failures.get(action_id, 0))
        log = settings.state_dir.with_name(f"{settings.state_dir.name}-stack.log")
        # Three retries: a transient receiver fails at most twice, and a kill may cost one more.
        # The reconciler every few seconds: it puts the ticks and reports the bus refused there.
        # Batches from 3 fires due in one second: the plan's batch groups (plan.py).
        parameters = {
            "LockSeconds": str(LOCK_SECONDS),
            "RetryMaxAttempts": "3",
            "ReconcileSchedule": RECONCILE_SCHEDULE,
            "BatchMinFires": str(BATCH_MIN_FIRES),
            "HistoryLimit": str(HISTORY_LIMIT),
        }
        program = [sys.executable, str(FAULTY_STACK), "--state-dir", str(settings.state_dir)]
        self.stack = LocalProcess(settings.state_dir, parameters, log, program)
        self.timeline = Timeline()
        self.races = Races(self.stack, self.receiver.url)
        self.starts = StartDuplicator(self.stack)
        self.ticks = TickDuplicator(self.stack, self.timeline, settings.seed)
        self.kill = KillRecord()
        self.created = Created()
        self.first_fires: dict[str, float] = {}

    def execute(self) -> Outcome:
        with self.receiver:
            try:
                self._say(f"starting the local stack (log: {self.stack.log_path})")
                self.stack.start(fresh=True)
                self._create()
                self._schedule_faults()
                self._wait_until(self.plan.waves.kill_at, "wave 1")
                self._kill_and_restart()
                self._wait_until(self.plan.waves.wave2[1], "wave 2")
                self._settle()
                return self._outcome()
            finally:
                self.ticks.stop()
                self.timeline.close()
                self.stack.stop()

    @property
    def plan(self) -> Plan:
        assert self._plan is not None, "no plan before the stack is up"
        return self._plan

    # --- phases ------------------------------------------------------------------------------
    def _create(self) -> None:
        """Plan from now, create, and read back the first fires."""
        s = self.settings
        self._plan = make_plan(s.size, s.seed, time.time(), s.fire_rate)
        self._failures = {a.id: a.failures for a in self.plan.actions}
        self.ticks.subscribe()
        self.ticks.start()
        started = time.time()
        self.created = create_actions(self.stack, self.plan, self.receiver.url)
        ids = {a.id for a in self.plan.actions}
        listed = wait_created(self.stack, ids, timeout=CREATE_TIMEOUT)
        missing = sorted(ids - listed.keys())
        self._say(
            f"created {len(listed)}/{len(ids)} actions in {time.time() - started:.0f}s "
            f"({self.created.published} Starts on the bus, the rest by POST /actions); "
            f"first fire in {self.plan.waves.wave1[0] - time.time():.0f}s"
            + (f"; MISSING {missing[:5]}" if missing else "")
        )
        for action_id, why in sorted(self.created.refused.items())[:5]:
            self._say(f"creation of {action_id} failed: {why}")
        for action in self.plan.actions:
            self.first_fires[action.id] = first_fire_time(action, listed.get(action.id))

    def _schedule_faults(self) -> None:
        for action in self.plan.actions:
            first = self.first_fires[action.id]
            if action.kind is Kind.DUP_START:
                self._schedule_start_duplicates(action, first)
            elif action.kind in (Kind.CANCEL, Kind.UPDATE, Kind.PAUSE):
                self.races.schedule(self.timeline, action, first)

    def _schedule_start_duplicates(self, action: PlannedAction, first: float) -> None:
        detail = action.start_detail(self.receiver.url)
        self.starts.post_again(detail)
        event_id = self.created.event_ids.get(action.id)
        if event_id:
            self.timeline.at(
                first + action.redeliver_after,
                f"redeliver Start {action.id}",
                lambda: self.starts.redeliver(event_id, detail),
            )
        if action.recurring:  # the same detail again, just after the first fire of a recurrence
            at = first + REPUBLISH_AFTER_FIRST
            self.timeline.at(
                at,
                f"republish Start {action.id}",
                lambda: self.starts.republish(detail, latest=at + REPUBLISH_SLACK),
            )

    def _kill_and_restart(self) -> None:
        # Never once wave 2 begins (its first races come up to LOCK_SECONDS + 0.6 s early).
        latest = self.plan.waves.wave2[0] - LOCK_SECONDS - 1.5
        deadline = min(time.time() + KILL_WAIT_LIMIT, latest)
        while not self._quiet() and time.time() < deadline:
            time.sleep(0.25)
        self.kill.quiet = self._quiet()
        self.ticks.pause()
        self.kill.at = time.time()
        self.stack.kill()
        self._say(f"kill -9 of the stack ({'a quiet moment' if self.kill.quiet else 'NOT QUIET'})")
        self.kill.restart_seconds = self.stack.start()
        self.kill.restored = self.stack.restored_counts()
        self.ticks.subscribe()
        restored = self.kill.restored or ("?", "?")
        self._say(
            f"restarted in {self.kill.restart_seconds:.1f}s: restored {restored[0]} records, "
            f"restarted {restored[1]} waiting executions"
        )

    def _quiet(self) -> bool:
        """Nothing delivered just now, nothing claimed, no fire due within the window."""
        now = time.time()
        if now - self.receiver.last_received() < 1.0:
            return False
        if self._first_of("IN_PROGRESS") is not None:
            return False
        pending = self._first_of("PENDING")
        return pending is None or epoch(pending["executionTime"]) > now + KILL_QUIET_WINDOW

    def _first_of(self, status: str) -> dict[str, Any] | None:
        """The action of this status with the nearest fire (the API lists them in that order)."""
        answer = self.stack.api.get(
            f"{self.stack.api_url}/actions", params={"status": status, "limit": 1}, timeout=60
        )
        answer.raise_for_status()
        items = answer.json()["items"]
        return items[0] if items else None

    def _wait_until(self, moment: float, phase: str) -> None:
        next_report = time.time()
        while time.time() < moment:
            if time.time() >= next_report:
                self._progress(phase)
                next_report += PROGRESS_EVERY
            time.sleep(min(0.5, max(0.0, moment - time.time())))

    def _settle(self) -> None:
        """Until nothing is active, no fault step waits and the receiver has been quiet."""
        deadline = time.time() + SETTLE_TIMEOUT
        next_report = time.time()
        while time.time() < deadline:
            if time.time() >= next_report:
                self._progress("settling")
                next_report += PROGRESS_EVERY
            if (
                time.time() - self.receiver.last_received() >= QUIET_SECONDS
                and self.timeline.pending() == 0
                and self._first_of("PENDING") is None
                and self._first_of("IN_PROGRESS") is None
            ):
                return
            time.sleep(0.5)
        self._say(f"did not settle within {SETTLE_TIMEOUT:.0f}s: scoring what there is")

    def _progress(self, phase: str) -> None:
        deliveries = self.receiver.snapshot()
        fired = len({(d.action_id, d.version, d.occurrence) for d in deliveries if d.terminal})
        planned = sum(a.count for a in self.plan.actions)
        self._say(
            f"{phase}: {fired}/~{planned} fires delivered ({len(deliveries)} requests), "
            f"{self.ticks.ticks_seen} ticks seen"
        )

    # --- scoring -----------------------------------------------------------------------------
    def _outcome(self) -> Outcome:
        statuses = {i: str(summary["status"]) for i, summary in list_actions(self.stack).items()}
        deliveries = self.receiver.snapshot()
        caught = straddling(deliveries, self.kill.at)
        recorded = {i: self._record(i).get("history", []) for i in statuses}
        result = score(self._expectations(), deliveries, statuses, self.kill.at, recorded)
        faults, unreadable = self.stack.fault_lines(f"{FAULT_LINE} ")
        for line in unreadable:
            self._say(f"could not read a fault line, left out of the counts: {line}")
        injectors = Injectors(self.starts, self.ticks, self.races, faults, unreadable)
        injected = injected_faults(deliveries, injectors, self.kill)
        blind = (
            self.kill.at - BLIND_MARGIN,
            self.kill.at + self.kill.restart_seconds + BLIND_MARGIN,
        )
        lifecycle = missing_completed(
            self.plan, statuses, deliveries, self.ticks.completed, blind, caught
        )
        counted = self._totals(statuses)
        return Outcome(
            self.plan,
            result,
            fault_summary(deliveries, injectors, self.kill, self.began),
            self._explained(run_problems(self.plan, injected, self.timeline.errors))
            + counted.problems,
            {i: self._record(i) for i in list(result.problems)[:DETAILS_KEPT]},
            self.races.timings(self.first_fires, self.plan.by_id()),
            lifecycle,
            counted.as_dict(),
        )

    def _totals(self, statuses: dict[str, str]) -> Totals:
        """GET /stats against every record: counts by status and the fire totals. The counts
        follow the writes once the count function has folded them (a second, locally): read
        again until they agree, or ``FOLD_PATIENCE`` has passed — a change lost or added twice
        never comes right, and is what is reported then."""
        records = [self._record(i) for i in sorted(statuses)]
        deadline = time.monotonic() + FOLD_PATIENCE
        while True:
            answer = self.stack.api.get(f"{self.stack.api_url}/stats", timeout=60)
            answer.raise_for_status()
            counted = totals(answer.json(), records, HISTORY_LIMIT)
            if counted.agree or time.monotonic() > deadline:
                return counted
            time.sleep(0.5)

    def _expectations(self) -> list[Expected]:
        records = {
            action_id: self._record(action_id)
            for action_id, race in self.races.outcomes.items()
            if race.accepted or race.deferred
        }
        return [
            expected_fires(
                action,
                self.first_fires[action.id],
                self.races.outcomes.get(action.id),
                records.get(action.id),
                LOCK_SECONDS,
            )
            for action in self.plan.actions
        ]

    def _explained(self, problems: list[str]) -> list[str]:
        """A batch crash never injected: where the batch-crash actions' first fires ran (a
        batch's execution names start ``b-``), for the next reader of the report."""
        never = f"fault {Kind.BATCH_CRASH} was never injected"
        if never not in problems:
            return problems
        ran = {}
        for action in self.plan.actions:
            if action.kind is Kind.BATCH_CRASH:
                history = self._record(action.id).get("history") or [{}]
                ran[action.id] = str(history[0].get("execution", "?")).rpartition(":")[2]
        return [f"{p}: first fires ran in {ran}" if p == never else p for p in problems]

    def _record(self, action_id: str) -> dict[str, Any]:
        answer = self.stack.api.get(f"{self.stack.api_url}/actions/{action_id}", timeout=60)
        return answer.json() if answer.status_code == 200 else {"status": answer.status_code}

    def _say(self, message: str) -> None:
        print(f"[{time.time() - self.began:6.1f}s] {message}", flush=True)
