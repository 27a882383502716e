"""``make bench``: fire accuracy, cost per fire, cold starts and local throughput, measured.

A benchmark, not a test: it asserts nothing about time. It prints each figure as it goes and
writes them all, with the command that produced them, to bench/RESULTS.md (and the lateness
histogram to bench/lateness.png). Parts:

  accuracy     the local stack (a child process): --accuracy-actions TICK actions due within
               10 s, then as many spread over a minute (parked and pumped: fires due in one
               second share a batch execution), then the burst again with FireBatching=false
               (an execution each); lateness p50/p95/p99/max, early fires
  cost         an in-process stack: one-off, recurring, one-retry and cancelled actions;
               billed transitions, Lambda invocations and GB-s, DynamoDB units, events per
               fire, in dollars per million fires (prices in benchkit/prices.py)
  rates        an in-process stack: lone fires (one a second), 10 a second, 100 a second and
               1,000 due in one second, for one-offs and for recurring fires, with every
               event and billed as LifecycleEvents=essential; per fire: transitions, invocations,
               GB-s, read and write units by caller, events, the record's size, $ per million
  coldstart    every function's import + dependencies in a fresh interpreter, beside a bare
               `import boto3` + one client; the heaviest imports; warm CPU per event
  throughput   the local stack: --starts Starts published; accepted per second, and the
               wall time until all are scheduled
  pending      the local stack: --pending-actions one-offs over 90 days (parked) and
               --near-actions due within two minutes; scheduled per second, open executions
               against fires due within the horizon, /stats and a filtered page's latency,
               a pump run, the stack's memory, the near ones' lateness, early and lost
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from benchkit.accuracy import measure_accuracy
from benchkit.coldstart import measure_cold_starts
from benchkit.cost import measure_costs
from benchkit.cost_rates import RateUsage, measure_rate_costs
from benchkit.histogram import write_histogram
from benchkit.local_stack import local_stack
from benchkit.pending import PARAMETERS as PENDING_PARAMETERS
from benchkit.pending import measure_pending
from benchkit.results import Results, render
from benchkit.stats import median
from benchkit.throughput import measure_throughput

HERE = Path(__file__).resolve().parent
PARTS = ("accuracy", "cost", "rates", "coldstart", "throughput", "pending")
# name, window (s), stack parameters beside the local stack's fast ones
ACCURACY_RUNS: tuple[tuple[str, float, dict[str, str]], ...] = (
    ("burst", 10.0, {}),
    ("minute", 60.0, {}),
    ("burst, no batches", 10.0, {"FireBatching": "false"}),
)
_BEGAN = time.monotonic()


def progress(message: str) -> None:
    print(f"[{time.monotonic() - _BEGAN:7.1f}s] {message}", file=sys.stderr, flush=True)


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", default=",".join(PARTS), help=f"comma-separated parts: {', '.join(PARTS)}"
    )
    parser.add_argument(
        "--accuracy-actions", type=int, default=1000, help="actions per accuracy run (1000)"
    )
    parser.add_argument(
        "--lead", type=float, help="seconds before the first fire (default: from the size)"
    )
    parser.add_argument("--starts", type=int, default=10_000, help="Starts for throughput (10000)")
    parser.add_argument(
        "--pending-actions",
        type=int,
        default=100_000,
        help="far-future actions for pending (100000)",
    )
    parser.add_argument(
        "--near-actions", type=int, default=1000, help="near actions for pending (1000)"
    )
    parser.add_argument("--cold-runs", type=int, default=7, help="cold start runs per function (7)")
    parser.add_argument("--results", type=Path, default=HERE / "RESULTS.md", help="where to write")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = set(parts) - set(PARTS)
    if unknown:
        print(
            f"--only: unknown part(s) {sorted(unknown)}; choose from {', '.join(PARTS)}",
            file=sys.stderr,
        )
        return 2
    given = " ".join(sys.argv[1:] if argv is None else argv)
    results = Results(command=f'make bench BENCH_ARGS="{given}"' if given else "make bench")
    work = Path(tempfile.mkdtemp(prefix="tickwork-bench-"))
    if "accuracy" in parts:
        # Creation runs at ~30 Starts/s here: the first fire waits until all are created.
        lead = args.lead or max(45.0, args.accuracy_actions / 10)
        for name, window, parameters in ACCURACY_RUNS:
            # A fresh stack each: one run's backlog must not delay the next one's creation.
            folder = work / name.replace(" ", "-").replace(",", "")
            with local_stack(folder, folder.with_suffix(".log"), parameters or None) as stack:
                run = measure_accuracy(stack, name, args.accuracy_actions, window, lead, progress)
                results.accuracy.append(run)
                progress(
                    f"  {run.name}: fired {len(run.lateness_ms)}/{run.actions}, "
                    f"p50 {run.pct(50):.3f} s p95 {run.pct(95):.3f} s p99 {run.pct(99):.3f} s "
                    f"max {run.pct(100):.3f} s, early {run.early}"
                )
        histogram = args.results.parent / "lateness.png"
        write_histogram(results.accuracy, histogram)
        results.histogram = histogram.name
    if "cost" in parts:
        results.costs, results.warm = measure_costs(progress)
    if "rates" in parts:
        results.rates = measure_rate_costs(progress)
        # The same runs billed without the events LifecycleEvents=essential does not send.
        results.rates_essential = [usage.essential() for usage in results.rates]
    if "coldstart" in parts:
        results.bare, results.cold, results.xray = measure_cold_starts(args.cold_runs, progress)
    if "throughput" in parts:
        with local_stack(work / "throughput", work / "throughput.log") as stack:
            results.throughput = measure_throughput(stack, args.starts, progress)
    if "pending" in parts:
        with local_stack(work / "pending", work / "pending.log", PENDING_PARAMETERS) as stack:
            results.pending = measure_pending(
                stack, args.pending_actions, args.near_actions, progress
            )
    results.targets = targets(results)
    text = render(results)
    print(text)
    args.results.write_text(text)
    progress(f"written: {args.results}")
    return 0


def targets(results: Results) -> list[tuple[str, str, bool]]:
    found: list[tuple[str, str, bool]] = []
    for run in results.accuracy:
        found.append(
            (
                f"{run.actions} due within {run.window_seconds:.0f} s: p99 ≤ 1.0 s, 0 early",
                f"p99 {run.pct(99):.3f} s, {run.early} early, {run.missing} missing",
                run.pct(99) <= 1.0 and run.early == 0 and run.missing == 0,
            )
        )
    once = next((u for u in results.costs if u.scenario == "one-off"), None)
    if once:
        transitions = once.each(once.transitions)
        found.append(
            ("happy-path billed transitions per fire ≤ 3", f"{transitions:.2f}", transitions <= 3)
        )
        beyond = once.each(once.invocations.get("FulfillFunction", 0))
        found.append(
            (
                "Lambda invocations per fire beyond the tick handler ≤ 1",
                f"{beyond:.2f} (fulfill)",
                beyond <= 1,
            )
        )
    found += _rate_targets(results.rates, results.rates_essential, once)
    if results.bare and results.cold:
        worst = max(results.cold, key=lambda c: c.median)
        ratio = worst.median / results.bare.median
        found.append(
            (
                "cold start of every function ≤ 1.5 x bare boto3 + client",
                f"worst {worst.function} {ratio:.2f} x",
                ratio <= 1.5,
            )
        )
    if results.throughput:
        rate = results.throughput.accepted_per_second
        found.append(("local stack accepts ≥ 200 Starts/s", f"{rate:.0f}/s", rate >= 200))
    pending = results.pending
    if pending:
        total = pending.far + pending.near
        found += [
            (
                f"{total} pending actions scheduled end to end ≥ 200/s",
                f"{pending.scheduled_per_second:.0f}/s",
                pending.scheduled_per_second >= 200,
            ),
            (
                f"GET /stats at {total} actions ≤ 100 ms (median)",
                f"{median(pending.stats_ms):.0f} ms",
                median(pending.stats_ms) <= 100,
            ),
            (
                f"a filtered page at {total} actions ≤ 100 ms (median)",
                f"{median(pending.page_ms):.0f} ms",
                median(pending.page_ms) <= 100,
            ),
            (
                f"{pending.near} near fires: 0 early, 0 lost",
                f"{pending.early} early, {pending.lost} lost",
                pending.early == 0 and pending.lost == 0,
            ),
        ]
    return found


# (scenario, kind, goal $ per million fires): issue 29's, on the default path
RATE_GOALS = (  # issue 51's table
    ("100 a second", "recurring", 5.0),
    ("100 a second", "one-off", 10.0),
    ("1 a second", "recurring", 15.0),
    ("1 a second", "one-off", 25.0),
    ("lone (nothing to share with)", "recurring", 58.0),
    ("lone (nothing to share with)", "one-off", 62.0),
)


def _rate_targets(
    rates: list[RateUsage], essential: list[RateUsage], _lone_today: object = None
) -> list[tuple[str, str, bool]]:
    found: list[tuple[str, str, bool]] = []
    for scenario, kind, goal in RATE_GOALS:
        every = _rate(rates, scenario, kind)
        lean = _rate(essential, scenario, kind)
        if every is None:
            continue
        # The default (template.yaml's LifecycleEvents) is the essential events: the figure a
        # goal is judged on; every event, as LifecycleEvents=all sends them, beside it.
        default = lean or every
        shown = f"${default.per_million:.2f} (default: essential events)" + (
            f", ${every.per_million:.2f} with `LifecycleEvents=all`" if lean else ""
        )
        met = default.per_million <= goal
        if default.degraded:  # not the layout the goal is about: no price for it
            shown, met = f"no price: degraded run ({default.degraded})", False
        found.append((f"{kind} fires, {scenario}: ≤ ${goal:.0f} per million", shown, met))
    return found


def _rate(usages: list[RateUsage], scenario: str, kind: str) -> RateUsage | None:
    return next((u for u in usages if u.scenario == scenario and u.kind == kind), None)


if __name__ == "__main__":
    sys.exit(main())
