"""How fast the pump's code reads and launches parked fires, per second of its own CPU: the
figures the README's capacity model rests on for the default (parked) path.

The stack runs as a child process (the emulator, its functions); this process is the pump,
over the emulator's port, as a deployed pump reaches DynamoDB and Step Functions. Its own CPU
(``resource.getrusage``: botocore's requests and answers, the records read, the orders proved,
the writes) is what a Lambda running it would spend; the emulator's time is not counted.

1. ``--fires`` one-offs are created through the bus, each further away than the horizon
   (parked), spread over ``--spread`` seconds at arbitrary milliseconds (so those of a batch
   window share a batch, as on the default path).
2. **Read**: what a pump run does first — every fire due for launch from the Parked index
   (``due_moments``), several times: index entries read per CPU-second.
3. **Launch**: what a run (or a worker, with its share) does — each fire's record read, marked
   launched, its batch or its own execution started, 16 at a time (``launch_due``), in
   ``--rounds`` shares: fires launched per CPU-second and per wall-second.

    python bench/pump_rate.py --fires 1500

Prints medians; asserts nothing.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benchkit.local_stack import local_stack  # noqa: E402
from benchkit.publish import publish_starts  # noqa: E402
from benchkit.stats import median  # noqa: E402

from tickwork.domain.times import iso  # noqa: E402
from tickwork.fire.pump import launch_due  # noqa: E402
from tickwork_cli.target import Target  # noqa: E402

HORIZON_SECONDS = 60
PARAMETERS = {  # the stack's own pump stays out of the way: this process is the pump
    "LaunchAheadSeconds": str(HORIZON_SECONDS),
    "PumpSchedule": "rate(1 day)",
}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fires", type=int, default=1500, help="parked one-offs to launch")
    parser.add_argument("--spread", type=float, default=150, help="seconds their fires span")
    parser.add_argument("--rounds", type=int, default=3, help="shares the launches come in")
    parser.add_argument("--reads", type=int, default=5, help="read passes over the index")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="tickwork-pump-rate-"))
    with local_stack(work / "stack", work / "stack.log", PARAMETERS) as stack:
        began = datetime.now(UTC)
        first = began + timedelta(seconds=HORIZON_SECONDS + 600)
        step = args.spread / args.fires
        details = [
            {"id": f"pump-{n:05d}", "at": iso(first + timedelta(seconds=step * n))}
            for n in range(args.fires)
        ]
        print(f"publishing {args.fires} parked one-offs ...", file=sys.stderr, flush=True)
        publish_starts(stack, details)
        deps = Target.local(stack.state_dir).dependencies()
        until = first + timedelta(seconds=args.spread + 1)
        deadline = time.monotonic() + 900
        due: list[tuple[int, str]] = []
        while time.monotonic() < deadline:
            due = deps.parked.due_moments(until, 10**6)
            if len(due) >= args.fires:
                break
            time.sleep(2)
        if len(due) < args.fires:
            print(f"only {len(due)} of {args.fires} parked", file=sys.stderr)
            return 1

        reads = []
        for _ in range(args.reads):
            cpu = _cpu()
            found = deps.parked.due_moments(until, 10**6)
            reads.append((_cpu() - cpu, len(found)))
        read_rate = median([n / cpu for cpu, n in reads])

        ids = [action_id for _, action_id in due]
        size = -(-len(ids) // args.rounds)
        launches = []
        for share in (ids[i : i + size] for i in range(0, len(ids), size)):
            cpu, wall = _cpu(), time.perf_counter()
            run = launch_due(share, until, deps)
            launches.append((_cpu() - cpu, time.perf_counter() - wall, len(run.launched), run))
        per_cpu = median([n / cpu for cpu, _, n, _ in launches])
        per_wall = median([n / wall for _, wall, n, _ in launches])
        launched = sum(n for _, _, n, _ in launches)
        batches = sum(len(run.batches) for *_, run in launches)
        failed = sum(len(run.failed) + len(run.refused) for *_, run in launches)
    print(
        f"index entries read per CPU-second (a run's read): {read_rate:,.0f} (median of "
        f"{len(reads)} passes over {len(due)})"
    )
    print(
        f"fires launched per CPU-second (a run's or a worker's launch): {per_cpu:,.0f} "
        f"(median of {len(launches)} shares); per wall-second, 16 at a time: {per_wall:,.0f}"
    )
    print(
        f"launched {launched} of {len(ids)} ({batches} batch executions started); "
        f"failed or refused {failed}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
