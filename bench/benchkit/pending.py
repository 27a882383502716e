"""Many pending actions on the local stack: far-future fires parked in the table, near ones
fired on time by executions the pump (or the Start) launched.

``--pending-actions`` one-offs spread over the next 90 days plus ``--near-actions`` due within
the next two minutes, published through the bus. Measured: actions scheduled per second end to
end, open executions against the fires due within the horizon, the latency of ``GET /stats``
and of a filtered page, one pump run, the stack's memory, and for the near ones lateness,
early and lost fires.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchkit.local_stack import EventTap
from benchkit.publish import publish_starts
from benchkit.stats import median, percentile
from tickwork.domain.events import DetailType
from tickwork.domain.times import iso, parse_iso
from tickwork.fire.pump import pump
from tickwork_cli.target import Target
from tickwork_local.process import LocalProcess

__all__ = ["PARAMETERS", "Pending", "measure_pending"]

HORIZON_SECONDS = 60
# A minute's horizon, a pump every 5 s: near fires go through the pump, far ones stay parked.
PARAMETERS = {"LaunchAheadSeconds": str(HORIZON_SECONDS), "PumpSchedule": "rate(5 seconds)"}
NEAR_FROM, NEAR_TO = 60.0, 120.0  # seconds from the start of the run
FAR_DAYS = 90
SAMPLES = 7


@dataclass
class Pending:
    far: int
    near: int
    accept_seconds: float = 0.0
    schedule_seconds: float = 0.0
    open_executions: int = 0
    due_within_horizon: int = 0
    stats_ms: list[float] = field(default_factory=list)
    page_ms: list[float] = field(default_factory=list)
    pump_ms: list[float] = field(default_factory=list)
    rss_mb: float = 0.0
    lateness_s: list[float] = field(default_factory=list)
    early: int = 0
    lost: int = 0

    @property
    def scheduled_per_second(self) -> float:
        return (self.far + self.near) / self.schedule_seconds if self.schedule_seconds else 0.0

    def late(self, pct: float) -> float:
        return percentile(self.lateness_s, pct) if self.lateness_s else float("nan")


def measure_pending(
    stack: LocalProcess, far: int, near: int, progress: Callable[[str], None], seed: int = 7
) -> Pending:
    rng = random.Random(seed)
    result = Pending(far, near)
    began = datetime.now(UTC)
    near_at = {
        f"near-{n}": began + timedelta(seconds=rng.uniform(NEAR_FROM, NEAR_TO)) for n in range(near)
    }
    far_at = [
        began + timedelta(hours=1) + timedelta(seconds=rng.uniform(0, FAR_DAYS * 86_400))
        for _ in range(far)
    ]
    details = [{"id": i, "at": iso(at), "action": "TICK"} for i, at in near_at.items()]
    details += [{"id": f"far-{n}", "at": iso(at)} for n, at in enumerate(far_at)]
    started = EventTap(stack, DetailType.STARTED)
    ticks = EventTap(stack, DetailType.TICK)
    progress(f"pending: publishing {near} near and {far} far Starts")
    clock = time.perf_counter()
    result.accept_seconds = publish_starts(stack, details, progress=progress)
    last = clock
    while len(started.ticks) < len(details):
        if time.perf_counter() - last > 15:
            progress(f"  {len(started.ticks)}/{len(details)} scheduled")
            last = time.perf_counter()
        started.drain()
        time.sleep(0.5)
    result.schedule_seconds = time.perf_counter() - clock
    progress(f"  all scheduled in {result.schedule_seconds:.0f} s")

    # Open executions while the near fires wait, against the fires due within the horizon.
    now = datetime.now(UTC)
    horizon = now + timedelta(seconds=HORIZON_SECONDS)
    result.open_executions = _running(stack)
    result.due_within_horizon = sum(
        1 for at in [*near_at.values(), *far_at] if now <= at <= horizon
    )
    deadline = time.monotonic() + NEAR_TO + 120
    while time.monotonic() < deadline and len(_of(ticks, near_at)) < near:
        time.sleep(1)  # no reads meanwhile: they would slow the fires they measure
    fired = _of(ticks, near_at)
    result.lost = near - len(fired)
    for action_id, tick in fired.items():
        late = (parse_iso(tick["actualTime"]) - near_at[action_id]).total_seconds()
        result.early += late < 0
        result.lateness_s.append(late)
    result.pump_ms = _pump_runs(stack)
    result.rss_mb = _rss_mb(stack)
    while len(result.stats_ms) < SAMPLES:
        _measure_reads(stack, result)
    progress(
        f"  near fired {len(fired)}/{near}, p50 {result.late(50):.2f} s p99 {result.late(99):.2f} "
        f"s, early {result.early}; /stats {median(result.stats_ms):.0f} ms, page "
        f"{median(result.page_ms):.0f} ms, pump {median(result.pump_ms):.0f} ms, "
        f"{result.rss_mb:.0f} MB"
    )
    return result


def _of(ticks: EventTap, near_at: dict[str, datetime]) -> dict[str, dict[str, object]]:
    ticks.drain()
    return {key[0]: tick for key, tick in ticks.ticks.items() if key[0] in near_at}


def _measure_reads(stack: LocalProcess, result: Pending) -> None:
    for path, into in (
        ("stats", result.stats_ms),
        ("actions?status=PENDING&limit=50", result.page_ms),
    ):
        began = time.perf_counter()
        answer = stack.api.get(f"{stack.api_url}/{path}", timeout=300)
        answer.raise_for_status()
        into.append((time.perf_counter() - began) * 1000)


def _running(stack: LocalProcess) -> int:
    sfn = stack.client("stepfunctions")
    machine = stack.state["outputs"]["StateMachineArn"]
    pages = sfn.get_paginator("list_executions").paginate(
        stateMachineArn=machine, statusFilter="RUNNING"
    )
    return sum(len(page["executions"]) for page in pages)


def _pump_runs(stack: LocalProcess) -> list[float]:
    """One pump run's wall time, from outside (boto3 over the emulator's port), a few times."""
    deps = Target.local(stack.state_dir).dependencies()
    runs = []
    for _ in range(3):
        began = time.perf_counter()
        pump(deps)
        runs.append((time.perf_counter() - began) * 1000)
    return runs


def _rss_mb(stack: LocalProcess) -> float:
    assert stack.process is not None
    status = Path(f"/proc/{stack.process.pid}/status")
    if not status.exists():
        return float("nan")
    for line in status.read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")
