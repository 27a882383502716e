"""Figures as text: printed by ``make bench`` and written to bench/RESULTS.md."""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from datetime import UTC, datetime

from benchkit import prices
from benchkit.accuracy import Accuracy
from benchkit.coldstart import ColdStart
from benchkit.cost import Usage, polling_design_per_million
from benchkit.cost_rates import RateUsage, rates_section
from benchkit.pending import Pending
from benchkit.recorder import Invocation
from benchkit.stats import median
from benchkit.throughput import Throughput

__all__ = ["Results", "render"]


@dataclass
class Results:
    command: str
    accuracy: list[Accuracy] = field(default_factory=list)
    histogram: str | None = None
    costs: list[Usage] = field(default_factory=list)
    warm: list[Invocation] = field(default_factory=list)
    bare: ColdStart | None = None
    xray: ColdStart | None = None
    cold: list[ColdStart] = field(default_factory=list)
    rates: list[RateUsage] = field(default_factory=list)
    rates_essential: list[RateUsage] = field(default_factory=list)
    throughput: Throughput | None = None
    pending: Pending | None = None
    targets: list[tuple[str, str, bool]] = field(default_factory=list)  # target, measured, met


def render(results: Results) -> str:
    cpus = _cpus()
    lines = [
        "# tickwork benchmark results",
        "",
        f"Produced by `{results.command}` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{platform.python_implementation()} {platform.python_version()}, {cpus} CPUs. "
        "Benchmarks assert nothing; these machines are noisy, so read medians and ratios.",
        "",
    ]
    if results.targets:
        lines += ["## Targets", "", "| target | measured | met |", "|---|---|---|"]
        lines += [f"| {t} | {m} | {'yes' if ok else '**no**'} |" for t, m, ok in results.targets]
        lines.append("")
    if results.accuracy:
        lines += _accuracy(results)
    if results.costs:
        lines += _costs(results.costs)
    if results.rates:
        lines += rates_section(results.rates, results.rates_essential)
    if results.cold and results.bare:
        lines += _cold(results.bare, results.cold, results.warm, results.xray)
    if results.throughput:
        lines += _throughput(results.throughput)
    if results.pending:
        lines += _pending(results.pending)
    return "\n".join(lines) + "\n"


def _accuracy(results: Results) -> list[str]:
    lines = [
        "## 1. Fire accuracy on the local stack",
        "",
        "Lateness = when the fulfillment ran minus the scheduled time (the tick's `lateMs`). "
        "The fires are created a minute or more ahead, so they are parked and the pump "
        "launches them (the local stack's horizon is 5 s, its pump runs every second): fires "
        "due in one second share a batch execution, except in the run with FireBatching=false, "
        "where each fire has its own.",
        "",
        "| run | actions | fired | p50 s | p95 s | p99 s | max s | early | created in s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in results.accuracy:
        lines.append(
            f"| {run.name}: due within {run.window_seconds:.0f} s | {run.actions} | "
            f"{len(run.lateness_ms)} | "
            f"{run.pct(50):.3f} | {run.pct(95):.3f} | {run.pct(99):.3f} | {run.pct(100):.3f} | "
            f"{run.early} | {run.created_seconds:.1f} |"
        )
    if results.histogram:
        lines += ["", f"![lateness histogram]({results.histogram})"]
    return [*lines, ""]


def _costs(usages: list[Usage]) -> list[str]:
    lines = [
        "## 2. Cost per fire",
        "",
        "Counted on the real definition in the emulated stack (bench/benchkit/cost.py); "
        "prices in bench/benchkit/prices.py. Per fire, creation included (per action for a "
        "cancelled one).",
        "",
        "| scenario | transitions | Lambda invocations | GB-s | DynamoDB RRU | WRU | index WRU "
        "| events | $ Step Functions | $ Lambda | $ DynamoDB | $ EventBridge | $ CloudWatch Logs "
        "| $ X-Ray | **$ per million** |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for usage in usages:
        dollars = usage.dollars()
        invocations = ", ".join(
            f"{name.removesuffix('Function')} {usage.each(n):.2f}"
            for name, n in sorted(usage.invocations.items())
        )
        lines.append(
            f"| {usage.scenario} | {usage.each(usage.transitions):.2f} | {invocations} | "
            f"{usage.each(usage.gb_seconds):.3f} | {usage.each(usage.read_units):.1f} | "
            f"{usage.each(usage.write_units):.1f} | {usage.each(usage.index_write_units):.1f} | "
            f"{usage.each(usage.events):.1f} | "
            + " | ".join(f"{value:.2f}" for value in dollars.values())
            + f" | **{sum(dollars.values()):.2f}** |"
        )
    polling = polling_design_per_million()
    lines += [
        "",
        "For comparison, per million fires:",
        "",
        "- EventBridge Scheduler: "
        f"${prices.EVENTBRIDGE_SCHEDULER_PER_INVOCATION * prices.MILLION:.2f}"
        " (its invocations; fires within a 60-second window, or at the minute without one).",
        f"- A polling design (a Lambda every minute querying a table), at a million fires a "
        f"month: ${polling['fixed'] + polling['per fire']:.2f} (${polling['fixed']:.2f} of "
        f"fixed polling, ${polling['per fire']:.2f} of reads, writes and the delivery event); "
        "fires up to 60 s late.",
        "",
    ]
    return lines


def _cold(
    bare: ColdStart, cold: list[ColdStart], warm: list[Invocation], xray: ColdStart | None
) -> list[str]:
    lines = [
        "## 4. Cold start and warm cost per function",
        "",
        "Cold = a fresh interpreter importing the handler, building its dependencies and its "
        "first AWS client; "
        f"baseline `{bare.function}` = {bare.median * 1000:.0f} ms (median of "
        f"{len(bare.seconds)}, run alternately with the functions). Warm CPU = the handler "
        "thread's CPU per event after the first, AWS calls served by moto in process.",
        "",
        "| function | cold ms | x baseline | warm CPU ms/event | heaviest imports (ms) |",
        "|---|---|---|---|---|",
    ]
    for function in cold:
        cpu = [i.cpu_seconds for i in warm if i.function == function.function][1:]
        warm_ms = f"{median(cpu) * 1000:.1f}" if cpu else "-"
        heavy = ", ".join(f"{name} {ms:.0f}" for name, ms in function.heaviest)
        lines.append(
            f"| {function.function} | {function.median * 1000:.0f} | "
            f"{function.median / bare.median:.2f} | {warm_ms} | {heavy} |"
        )
    if xray:
        lines += [
            "",
            f"With X-Ray tracing on (the template's default), a function's first invocation "
            f"also loads the X-Ray SDK and Powertools' Tracer: {xray.median * 1000:.0f} ms "
            f"more (median of {len(xray.seconds)}), "
            f"{xray.median / bare.median:.2f} x baseline. Tracing off "
            "(`POWERTOOLS_TRACE_DISABLED=true`) never loads it.",
        ]
    return [*lines, ""]


def _throughput(result: Throughput) -> list[str]:
    return [
        "## 5. Local throughput",
        "",
        f"- {result.starts} Starts published (PutEvents batches of 10, 4 publishers): accepted "
        f"by the bus in {result.accept_seconds:.1f} s = **{result.accepted_per_second:.0f} "
        "Starts/s**.",
        f"- All {result.starts} scheduled (record written, execution waiting) after "
        f"**{result.schedule_seconds:.0f} s** = {result.scheduled_per_second:.1f} actions/s.",
        "",
    ]


def _pending(result: Pending) -> list[str]:
    total = result.far + result.near
    return [
        "## 6. Pending actions at scale",
        "",
        f"{result.far} one-offs spread over the next 90 days and {result.near} due within two "
        "minutes, published through the bus, on the local stack (LaunchAheadSeconds 60, a pump "
        "every 5 s):",
        "",
        "| | figure |",
        "|---|---|",
        f"| scheduled end to end (record written; parked, or execution started) | "
        f"{total} in {result.schedule_seconds:.0f} s = **{result.scheduled_per_second:.0f}/s** "
        f"(accepted by the bus in {result.accept_seconds:.1f} s) |",
        f"| open executions / fires due within the horizon, at the end | "
        f"{result.open_executions} / {result.due_within_horizon} |",
        f"| `GET /stats`, median of {len(result.stats_ms)} | {median(result.stats_ms):.0f} ms |",
        f"| `GET /actions?status=PENDING&limit=50`, median of {len(result.page_ms)} | "
        f"{median(result.page_ms):.0f} ms |",
        f"| one pump run from outside (boto3 over the emulator's port), median of "
        f"{len(result.pump_ms)} | {median(result.pump_ms):.0f} ms |",
        f"| the stack's resident memory | {result.rss_mb:.0f} MB |",
        f"| near fires: lateness p50 / p99 | {result.late(50):.2f} s / {result.late(99):.2f} s |",
        f"| near fires: early, lost | {result.early}, {result.lost} |",
        "",
    ]


def _cpus() -> int:
    import os

    return os.cpu_count() or 1
