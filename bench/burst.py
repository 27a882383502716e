"""``make burst``: one tick per fire, checked under a burst on a loaded machine (a script, not a
test: it takes a minute or two and loads every core).

It starts ``tickwork local`` (wall clock, batches on: the fires of a second share a batch
execution), subscribes a queue to the bus's ``Schedule Tick`` events as a consumer would, starts
``--hogs`` processes that each keep a core busy, then publishes ``--one-offs`` Starts of one-offs
due within the same ``--spread`` seconds (and ``--recurring`` rate(5 seconds) schedules beside
them). It waits until every one-off has fired and no tick has come for a while, then counts, by
idempotency key: fires, ticks received, fires with no tick, fires whose tick came more than
once. It exits 1 if any fire's tick is missing or doubled. Progress is printed as it goes.

  make burst BURST_ARGS="--one-offs 300 --recurring 30 --hogs 2"
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tickwork_local.process import LocalProcess

SETTLE_SECONDS = 15.0  # no tick for this long once every one-off fired: settled
LEAD_SECONDS = 25.0  # the one-offs are due this long after they are published


def _hog() -> None:
    while True:
        pass


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--one-offs", type=int, default=300, help="one-offs due together")
    parser.add_argument("--recurring", type=int, default=30, help="rate(5 seconds) schedules")
    parser.add_argument("--spread", type=float, default=3.0, help="seconds the one-offs span")
    parser.add_argument("--hogs", type=int, default=2, help="processes keeping a core busy")
    parser.add_argument("--timeout", type=float, default=600.0, help="give up after (seconds)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    work = Path(tempfile.mkdtemp(prefix="tickwork-burst-"))
    stack = LocalProcess(work / "state", {"LaunchAheadSeconds": "10"}, work / "stack.log")
    hogs: list[multiprocessing.Process] = []
    try:
        print(f"starting the local stack ({work})", flush=True)
        stack.start(fresh=True)
        ticks_queue = stack.subscribe(["Schedule Tick"])
        hogs = [multiprocessing.Process(target=_hog, daemon=True) for _ in range(args.hogs)]
        for hog in hogs:
            hog.start()
        print(f"{args.hogs} hog(s) keep cores busy beside it", flush=True)
        due = datetime.now(UTC) + timedelta(seconds=LEAD_SECONDS)
        one_offs = [f"burst:{n:04d}" for n in range(args.one_offs)]
        for n, action_id in enumerate(one_offs):
            at = due + timedelta(seconds=args.spread * n / max(1, args.one_offs))
            stack.put_event("Schedule Start", "burst", {"id": action_id, "at": at.isoformat()})
        for n in range(args.recurring):
            stack.put_event(
                "Schedule Start", "burst", {"id": f"burst:r{n:03d}", "rate": "rate(5 seconds)"}
            )
        print(f"{args.one_offs} one-offs due from {due:%H:%M:%S} over {args.spread} s", flush=True)
        ticks = _collect(stack, ticks_queue, set(one_offs), args.timeout)
    finally:
        for hog in hogs:
            hog.terminate()
        stack.stop()
    return _report(ticks, set(one_offs), work)


def _collect(
    stack: LocalProcess, queue: str, one_offs: set[str], timeout: float
) -> list[dict[str, Any]]:
    """Every tick that comes until each one-off has one and none of theirs came for a while
    (a late repeat would come meanwhile)."""
    ticks: list[dict[str, Any]] = []
    began = last = time.monotonic()
    shown = 0.0
    while time.monotonic() - began < timeout:
        got = stack.receive(queue, 100, 1.0)
        now = time.monotonic()
        ticks += got
        if any(t["id"] in one_offs for t in got):
            last = now  # the recurring schedules tick on: only the one-offs' ticks count here
        fired = one_offs & {t["id"] for t in ticks}
        if now - shown >= 5:
            print(f"  {len(fired)}/{len(one_offs)} one-offs fired, {len(ticks)} ticks", flush=True)
            shown = now
        if fired == one_offs and now - last >= SETTLE_SECONDS:
            break
    return ticks


def _report(ticks: list[dict[str, Any]], one_offs: set[str], work: Path) -> int:
    by_key = Counter(t["idempotencyKey"] for t in ticks)
    fires = len(by_key)
    doubled = {key: n for key, n in by_key.items() if n > 1}
    missing = sorted(one_offs - {t["id"] for t in ticks})
    print(f"fires: {fires} (one-offs {len(one_offs)})")
    print(f"ticks received: {len(ticks)}")
    print(f"fires whose tick came more than once: {len(doubled)}")
    print(f"one-offs with no tick: {len(missing)}")
    for key, n in list(doubled.items())[:10]:
        print(f"  doubled: {key} x{n}")
    for action_id in missing[:10]:
        print(f"  missing: {action_id}")
    if doubled or missing:
        print(f"the stack's log is kept in {work}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
