"""``make chaos``: a fault-injection run against the local stack (a script, not a test).

It starts ``tickwork local`` (with faults planted inside it, see ``chaoskit/faulty_stack.py``;
a horizon of 5 s, so most fires are parked and launched by the pump) and a webhook receiver,
creates ``--actions`` HTTP_REQUEST actions — one-offs and ``rate(N seconds)`` recurrences —
and gives each one fault kind:

  none          baseline
  transient     the webhook answers 503 once or twice per occurrence, then 200
  permanent     the webhook answers 400: one delivery, the action ends FAILED
  dup-start     the Start published twice, redelivered with its EventId, POSTed again
  dup-tick      each Schedule Tick published again and redelivered with its EventId
  tick-crash    the tick function crashes after saving the record, before the next start
  cancel-race   DELETE /actions/{id} around the lock boundary: it wins until the claim
  update-race   PATCH /actions/{id} with new data at the lock boundary
  kill-restart  waits through a kill -9 and restart of the stack
  start-refused the first StartExecution of each of its fires fails with ExecutionLimitExceeded
                (the fire is parked again; the pump launches it)
  pump-down     the pump stops for 8 s (longer than the horizon) when the first of its fires is
                due for launch: everything due meanwhile waits in the table

Fires come in two waves; between them the stack is killed with SIGKILL at a moment with no
fire claimed or due within 1.5 s, and restarted on the same state dir and ports; every action
of wave 2 waits through it. Everything is observed at the receiver, outside the stack. Then it
prints, per fault kind and in total: fires expected, observed, lost, duplicated, replayed,
early, wrong, and lateness p50/p99/max (chaoskit/report.py defines each), writes the same as
JSON (--report), and exits 1 if anything was lost, duplicated, early or wrong, or a fault
could not be injected. "replayed" (a fire the kill caught mid-way, fired again after the
restart: at least once, by design) is reported without failing; a quiet kill keeps it at 0.
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from chaoskit.outcome import Outcome, write_json
from chaoskit.report import format_table
from chaoskit.run import ChaosRun, RunSettings

from tickwork_local.process import StackStartFailed

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REPORT = REPO / "test-output" / "chaos-last.json"
PROBLEMS_SHOWN = 25


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--actions", type=int, default=500, help="how many actions (default 500)")
    parser.add_argument("--seed", type=int, help="plan seed (default: random, printed)")
    parser.add_argument(
        "--state-dir", type=Path, help="the stack's state dir, wiped first (default: a temp dir)"
    )
    parser.add_argument(
        "--fire-rate",
        type=float,
        default=3.0,
        help="fires a second the waves are spread for (default 3)",
    )
    parser.add_argument("--report", type=Path, default=DEFAULT_REPORT, help="JSON report path")
    parser.add_argument(
        "--keep", action="store_true", help="keep the temp dir (kept anyway on failure)"
    )
    args = parser.parse_args(argv)
    if args.actions < 9:
        parser.error("--actions must be at least 9 (one per fault kind)")
    return args


def _print_outcome(outcome: Outcome, wall: float) -> None:
    print()
    print(format_table(outcome.score.rows))
    print()
    for name, counts in outcome.faults.items():
        print(f"  {name}: {counts}")
    problems = list(outcome.score.problems.items())
    if problems:
        print(f"\n{len(problems)} action(s) with problems (first {PROBLEMS_SHOWN}):")
        for action_id, found in problems[:PROBLEMS_SHOWN]:
            print(f"  {action_id}: {'; '.join(found)}")
    replayed = outcome.score.total.replayed
    if replayed:
        print(
            f"\n  NOTE (does not fail the run): the kill found no quiet moment; {replayed} fire(s) "
            "it caught mid-way fired again after the restart (at least once across a crash)"
        )
    missing = outcome.lifecycle.get("Schedule Completed missing")
    if missing:
        print(
            f"\n  NOTE (does not fail the run): COMPLETED, no Schedule Completed event: {missing}"
        )
    counted = outcome.totals
    if counted:
        print(
            f"\n  counts and fire totals (GET /stats) against the records: "
            f"{'equal' if not counted['problems'] else 'DIFFERENT'} "
            f"(fired {counted['counted']['fired']}/{counted['recorded']['fired']}, "
            f"failed {counted['counted']['failed']}/{counted['recorded']['failed']})"
        )
    for problem in outcome.run_problems:
        print(f"  run: {problem}")
    verdict = "FAILED" if outcome.failed else "passed"
    print(
        f"\nchaos {verdict}: {len(outcome.plan.actions)} actions, seed {outcome.plan.seed}, "
        f"{wall:.0f}s wall"
    )


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    workdir: Path | None = None
    if args.state_dir is None:
        workdir = Path(tempfile.mkdtemp(prefix="tickwork-chaos-"))
    state_dir: Path = args.state_dir or workdir / "state"
    settings = RunSettings(args.actions, seed, state_dir.resolve(), args.fire_rate)
    print(f"chaos: {args.actions} actions, seed {seed}, state in {state_dir}", flush=True)
    began = time.time()
    run = ChaosRun(settings)
    try:
        outcome = run.execute()
    except StackStartFailed as failure:
        print(f"\nchaos FAILED: {failure}\n{run.stack.log_text()[-3000:]}", file=sys.stderr)
        return 1
    wall = time.time() - began
    _print_outcome(outcome, wall)
    write_json(outcome, args.report, wall)
    print(f"report: {args.report}")
    if workdir and not (args.keep or outcome.failed):
        shutil.rmtree(workdir, ignore_errors=True)
    elif workdir:
        print(f"kept: {workdir}")
    return 1 if outcome.failed else 0


if __name__ == "__main__":
    sys.exit(main())
