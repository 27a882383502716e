"""The emulator's memory over a long run, with Python's default collector thresholds and with
the emulator's (``local/tickwork_local/tuning/collector.py``), each in a fresh interpreter.

A benchmark, not a test: it asserts nothing. Each run starts an in-process local stack on
virtual time (the emulator ``tickwork local --virtual-time`` runs), schedules ``--actions``
actions on rate(1 minute), and advances the clock ``--hours`` hours, one hour at a time. After
each hour it reads the process's resident memory (``/proc/self/statm``), its CPU seconds and
the fires so far. It prints a table for each set of thresholds, then both side by side:

    .venv/bin/python bench/collector_memory.py [--hours 6] [--actions 20]

A run that only grows with the default thresholds' frequent passes but keeps growing with the
emulator's would show cycles that pile up between the rarer passes.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

THRESHOLDS = ("default", "emulator")
_MARK = "collector-memory: "  # a figure's line among the stack's own output


def _resident_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _one_run(thresholds: str, hours: int, actions: int) -> None:
    """In this interpreter: the stack, the actions, the hours; a JSON line per hour on stdout."""
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        os.environ.setdefault(key, "testing")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    from moto import mock_aws

    from tickwork_local.stack import LocalStack
    from tickwork_local.tuning.collector import EMULATOR_THRESHOLDS
    from tickwork_local.virtual_clock import LocalClock

    if thresholds == "emulator":
        gc.set_threshold(*EMULATOR_THRESHOLDS)
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        stack = LocalStack.from_repo(clock=LocalClock(virtual=True, flowing=False))
        with stack.running() as local:
            for n in range(actions):
                local.publish("Schedule Start", {"id": f"mem:{n}", "rate": "rate(1 minute)"})
            ticks = local.tap(["Schedule Tick"])
            fired = 0
            for hour in range(hours + 1):
                if hour:
                    local.time.advance(3600)
                fired += len(ticks.drain())
                ticks.events.clear()  # counted: not kept, or the bench would hold them all
                line = {
                    "hour": hour,
                    "rss_mb": round(_resident_mb(), 1),
                    "cpu_s": round(time.process_time(), 1),
                    "fired": fired,
                    "collections": [s["collections"] for s in gc.get_stats()],
                }
                print(_MARK + json.dumps(line), flush=True)


def _measure(thresholds: str, hours: int, actions: int) -> list[dict[str, Any]]:
    command = [sys.executable, __file__, "--child", thresholds, f"--hours={hours}"]
    command.append(f"--actions={actions}")
    rows: list[dict[str, Any]] = []
    quiet = {**os.environ, "PYTHONWARNINGS": "ignore"}  # Powertools warns on every fire
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=quiet) as child:
        assert child.stdout is not None
        for text in child.stdout:
            if not text.startswith(_MARK):
                continue
            row = json.loads(text.removeprefix(_MARK))
            rows.append(row)
            print(
                f"  {thresholds:8} hour {row['hour']:>3}: {row['rss_mb']:7.1f} MB resident, "
                f"{row['cpu_s']:6.1f} CPU-s, {row['fired']:>6} fired, "
                f"collector passes by generation {row['collections']}",
                file=sys.stderr,
                flush=True,
            )
    if child.returncode:
        raise SystemExit(f"the {thresholds} run failed (exit {child.returncode})")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hours", type=int, default=6, help="virtual hours to advance (6)")
    parser.add_argument("--actions", type=int, default=20, help="rate(1 minute) actions (20)")
    parser.add_argument("--child", choices=THRESHOLDS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.hours < 1 or args.actions < 1:
        parser.error("--hours and --actions: give 1 or more")
    if args.child:
        _one_run(args.child, args.hours, args.actions)
        return 0
    runs = {name: _measure(name, args.hours, args.actions) for name in THRESHOLDS}
    print(f"\n{args.actions} actions on rate(1 minute), {args.hours} virtual hours")
    print("| hour | fired | resident MB: default | emulator | CPU-s: default | emulator |")
    print("|---:|---:|---:|---:|---:|---:|")
    for default, emulator in zip(runs["default"], runs["emulator"], strict=True):
        print(
            f"| {default['hour']} | {default['fired']} | {default['rss_mb']:.1f} | "
            f"{emulator['rss_mb']:.1f} | {default['cpu_s']:.1f} | {emulator['cpu_s']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
