"""What a chaos run produced: the score, which faults were injected how often, and the JSON
report. A fault kind with actions but no injection makes the run fail: a chaos run that
injected nothing proves nothing."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chaoskit.duplicates import StartDuplicator, TickDuplicator
from chaoskit.plan import Kind, Plan
from chaoskit.races import Races
from chaoskit.receiver import Delivery
from chaoskit.report import Score

__all__ = [
    "Injectors",
    "KillRecord",
    "Outcome",
    "fault_summary",
    "injected_faults",
    "missing_completed",
    "run_problems",
    "write_json",
]


@dataclass
class KillRecord:
    at: float = 0.0  # epoch seconds of the SIGKILL
    quiet: bool = False  # nothing in flight and no fire due within the window
    restart_seconds: float = 0.0
    restored: tuple[int, int] | None = None  # records restored, executions restarted

    def as_dict(self, began: float) -> dict[str, Any]:
        return {
            "at_seconds_into_run": round(self.at - began, 1),
            "quiet_moment": self.quiet,
            "restart_seconds": round(self.restart_seconds, 1),
            "restored_records_and_restarted_executions": self.restored,
        }


@dataclass
class Outcome:
    plan: Plan
    score: Score
    faults: dict[str, Any]
    run_problems: list[str]
    details: dict[str, Any] = field(default_factory=dict)  # action id -> its record
    races: list[dict[str, Any]] = field(default_factory=list)  # each race, timed to its lock
    lifecycle: dict[str, Any] = field(default_factory=dict)  # reported, not failing the run
    totals: dict[str, Any] = field(default_factory=dict)  # counts and fire totals vs records

    @property
    def failed(self) -> bool:
        return self.score.total.failed or bool(self.run_problems)


@dataclass(frozen=True)
class Injectors:
    starts: StartDuplicator
    ticks: TickDuplicator
    races: Races
    faults: list[dict[str, Any]]  # the planted faults' log lines (crash, refusal, outage)
    unreadable: list[str] = field(default_factory=list)  # fault lines that could not be read

    def planted(self, kind: str) -> list[dict[str, Any]]:
        return [line for line in self.faults if line.get("kind") == kind]


def injected_faults(
    deliveries: list[Delivery], injectors: Injectors, kill: KillRecord
) -> dict[Kind, int]:
    answers = Counter(d.status for d in deliveries)
    return {
        Kind.TRANSIENT: answers[503],
        Kind.PERMANENT: answers[400],
        Kind.DUP_START: injectors.starts.counts["start redelivered (same event id)"],
        Kind.DUP_TICK: injectors.ticks.counts["tick redelivered (same event id)"],
        Kind.TICK_CRASH: len(injectors.planted("tick-crash")),
        Kind.START_REFUSED: len(injectors.planted("start-refused")),
        Kind.PUMP_DOWN: len(injectors.planted("pump-down")),
        Kind.BUS_DOWN: len(injectors.planted("bus-down")),
        Kind.REPORT_LOST: len(injectors.planted("report-lost")),
        Kind.BATCH_CRASH: len(injectors.planted("batch-crash")),
        Kind.CANCEL: injectors.races.answered("cancel"),
        Kind.PAUSE: injectors.races.answered("pause"),
        Kind.UPDATE: injectors.races.answered("update"),
        Kind.RESTART: 1 if kill.at else 0,
    }


def fault_summary(
    deliveries: list[Delivery], injectors: Injectors, kill: KillRecord, began: float
) -> dict[str, Any]:
    answers = Counter(d.status for d in deliveries)
    return {
        "webhook answers": {str(k): v for k, v in sorted(answers.items())},
        "tick crashes planted": dict(
            Counter(line["where"] for line in injectors.planted("tick-crash"))
        ),
        "batches started (fires in all)": [
            len(injectors.planted("batch-started")),
            sum(int(line["occ"]) for line in injectors.planted("batch-started")),
        ],
        "batch tasks crashed part-way": len(injectors.planted("batch-crash")),
        "starts refused (ExecutionLimitExceeded)": len(injectors.planted("start-refused")),
        "pump outages": [line["where"] for line in injectors.planted("pump-down")],
        "ticks refused by the bus (their first 6 puts)": len(injectors.planted("bus-down")),
        "failure reports refused by the bus": len(injectors.planted("report-lost")),
        "unreadable fault lines": injectors.unreadable,
        "Start duplicates": dict(injectors.starts.counts),
        "Tick duplicates": dict(injectors.ticks.counts),
        "races": injectors.races.counts(),
        "kill -9": kill.as_dict(began),
    }


def run_problems(plan: Plan, injected: dict[Kind, int], step_errors: list[str]) -> list[str]:
    kinds = {action.kind for action in plan.actions}
    problems = [
        f"fault {kind} was never injected"
        for kind, count in injected.items()
        if kind in kinds and not count
    ]
    return problems + [f"a fault step failed: {error}" for error in step_errors[:10]]


def missing_completed(
    plan: Plan,
    statuses: dict[str, str],
    deliveries: list[Delivery],
    completed: set[str],
    blind: tuple[float, float],
    caught: set[str],
) -> dict[str, Any]:
    """Actions that ended COMPLETED but never got a "Schedule Completed" event.

    Left out: actions whose last fire fell in ``blind`` (from the kill until the watching
    queue was subscribed again), whose event the watcher could not have seen, and those with
    a fire the kill caught mid-way (``caught``).
    """
    last_fire: dict[str, float] = {}
    for delivery in deliveries:
        if delivery.terminal:
            last_fire[delivery.action_id] = max(
                delivery.received, last_fire.get(delivery.action_id, 0.0)
            )
    missing: dict[str, list[str]] = {}
    for action in plan.actions:
        at = last_fire.get(action.id, 0.0)
        if statuses.get(action.id) != "COMPLETED" or action.id in completed | caught:
            continue
        if not blind[0] <= at <= blind[1]:
            missing.setdefault(str(action.kind), []).append(action.id)
    return {
        "Schedule Completed missing": {kind: len(ids) for kind, ids in missing.items()},
        "ids": missing,
    }


def write_json(outcome: Outcome, path: Path, wall_seconds: float) -> None:
    waves = outcome.plan.waves
    document = {
        "size": len(outcome.plan.actions),
        "seed": outcome.plan.seed,
        "wall_seconds": round(wall_seconds, 1),
        "passed": not outcome.failed,
        "waves": {"wave1": waves.wave1, "kill_at": waves.kill_at, "wave2": waves.wave2},
        "rows": [row.as_dict() for row in outcome.score.rows],
        "faults": outcome.faults,
        "run_problems": outcome.run_problems,
        "problems": outcome.score.problems,
        "lifecycle": outcome.lifecycle,
        "totals": outcome.totals,
        "races": outcome.races,
        "details": outcome.details,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, default=str))
