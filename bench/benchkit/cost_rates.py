"""Cost per fire by how many fires fall due together, counted on the real definitions (the fire
machine and the batch machine) in an in-process stack, as benchkit/cost.py counts.

Scenarios: lone fires (one a second: each its own execution), 10 a second, 100 a second, and
1,000 due in the same second; each for one-offs (creation included: the Start, the record, the
pump's launch, the fire, its record) and for the fires of recurring actions (creation shared
over their fires: the difference between actions with three fires and the same with one,
divided by the two fires more — what each further fire costs, in steady state). Fires are
created further away than the horizon, so the pump launches them (and batches them), as it
does every fire created more than ``LaunchAheadSeconds`` ahead; a recurring action's next
fires go on in chained batches.

A recurring action's record is sized for its writes and reads as it stands once its history
and transitions are full (benchkit/units.py, ``aged_size``): a run of three fires never gets
there, and a busy record's size is most of what its fires cost in DynamoDB.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from moto import mock_aws

from benchkit import billing, prices
from benchkit.cost import PARAMETERS as COST_PARAMETERS
from benchkit.cost import PUBLISHER, _billed_transitions
from benchkit.indexes import TEMPLATE, table_indexes
from benchkit.recorder import Call, Recorder
from benchkit.stats import median
from benchkit.units import Units, aged_size, call_units, item_size, units_of
from tickwork.adapters.dynamodb_sizes import as_typed
from tickwork.adapters.record_keys import PARK_INDEX_SECONDS
from tickwork.config import Settings
from tickwork.domain.events import ESSENTIAL, INBOUND, DetailType
from tickwork.domain.times import iso
from tickwork_local.server import EMULATOR_CONFIG
from tickwork_local.stack import LocalStack
from tickwork_local.template import Template

__all__ = ["RATE_SCENARIOS", "RateUsage", "measure_rate_costs"]

HORIZON_SECONDS = 12  # fires further away are parked and pumped; chains need next ≥ 10 s
INTERVAL_SECONDS = 11  # a recurring action's fires: each next one is chained
# The default path: each next fire parked, then pumped. Far beyond the horizon: a batch of
# 100 takes many seconds in the one emulator process (about one on AWS), and a fire recorded
# within the horizon of its next would launch that one alone, not the path measured.
PARKED_INTERVAL_SECONDS = 60
PARAMETERS = {  # the logs at the template's default level: they are billed as they are
    **{name: value for name, value in COST_PARAMETERS.items() if name != "LogLevel"},
    "LaunchAheadSeconds": str(HORIZON_SECONDS),
    "PumpSchedule": "rate(1 second)",
    "CountSchedule": "rate(1 minute)",  # the deployed default: a run a minute is billed
    # the deployed default (the local stack's is 0): a fold once the oldest write is this old
    "CountLagSeconds": Template(TEMPLATE).parameters["CountLagSeconds"],
}
# In-process Starts run ~15-30 a second beside the rest: room to spare, and checked (a fire
# created within the horizon is launched alone at once: not the path measured).
_CREATE_SECONDS_PER_ACTION = 0.15
_DEFAULT_WINDOW = int(Settings.batch_window.total_seconds())


@dataclass(frozen=True)
class RateScenario:
    name: str
    per_second: int  # fires due in each second with fires
    seconds: int  # seconds with fires
    spacing: int = 1  # seconds from one of them to the next
    interval: int = PARKED_INTERVAL_SECONDS  # a recurring action's period


RATE_SCENARIOS = (
    # nothing within reach to share with: one fire each 37 s, a recurring one every 111 s;
    # nine of them, the fires of one CountLagSeconds (300 s): the count function's fold of their
    # writes is shared by them as in a steady stream of lone fires, not by three alone
    RateScenario("lone (nothing to share with)", 1, 9, spacing=37, interval=111),
    RateScenario("1 a second", 1, 20),
    RateScenario("10 a second", 10, 3),
    RateScenario("100 a second", 100, 3),
    # Chained batches (a period within the horizon) at 10 a second: at 100 a second the one
    # emulator process, with every write read back around it for the bill, runs its batch
    # tasks past their 90 s timeout, so the run measures the emulator, not the stack.
    RateScenario("10 a second, period within the horizon", 10, 3, interval=INTERVAL_SECONDS),
)


def _interval(scenario: RateScenario) -> int:
    return scenario.interval


@dataclass
class RateUsage:
    scenario: str
    kind: str  # "one-off" or "recurring"
    fires: int
    transitions: float = 0.0
    invocations: Counter[str] = field(default_factory=Counter)
    gb_seconds: float = 0.0
    read_units: float = 0.0
    write_units: float = 0.0
    events: float = 0.0
    record_bytes: int = 0  # the record as its writes were sized
    batches: int = 0
    breakdown: dict[str, tuple[float, float]] = field(default_factory=dict)  # who: (RRU, WRU)
    fixed: FixedRun | None = None  # the pump's run with nothing to do, billed by the month
    events_by_type: Counter[str] = field(default_factory=Counter)
    index_units: Counter[str] = field(default_factory=Counter)  # write units by index
    log_bytes: float = 0.0  # ingested by CloudWatch Logs
    traces: float = 0.0  # X-Ray traces recorded
    stored_gb_months: float = 0.0  # table storage (and its backups) the fires leave
    stream_reads: float = 0.0  # GetRecords calls on the table's stream (the count function's)
    # Why the run is not the layout it measures (fires meant to share executions ran alone,
    # Starts refused): no price is reported for it. None: as intended.
    degraded: str | None = None

    @property
    def index_write_units(self) -> float:
        return float(sum(self.index_units.values()))

    def essential(self) -> RateUsage:
        """The same run's bill with only the events ``LifecycleEvents=essential`` sends (and
        the Starts, which users publish)."""
        kept = Counter(
            {t: n for t, n in self.events_by_type.items() if t in ESSENTIAL or t in INBOUND}
        )
        return replace(self, events=float(sum(kept.values())), events_by_type=kept)

    def each(self, value: float) -> float:
        return value / self.fires

    def dollars(self) -> dict[str, float]:
        return prices.per_million(
            self.fires,
            transitions=self.transitions,
            requests=sum(self.invocations.values()),
            gb_seconds=self.gb_seconds,
            read_units=self.read_units,
            write_units=self.write_units,
            events=self.events,
            index_write_units=self.index_write_units,
            stored_gb_months=self.stored_gb_months,
            log_bytes=self.log_bytes,
            traces=self.traces,
            stream_reads=self.stream_reads,
        )

    @property
    def per_million(self) -> float:
        return sum(self.dollars().values())

    def minus(self, other: RateUsage, fires: int) -> RateUsage:
        """What this run cost beyond ``other``, over ``fires`` fires."""
        return RateUsage(
            self.scenario,
            self.kind,
            fires,
            self.transitions - other.transitions,
            self.invocations - other.invocations,
            max(0.0, self.gb_seconds - other.gb_seconds),
            self.read_units - other.read_units,
            self.write_units - other.write_units,
            self.events - other.events,
            self.record_bytes,
            self.batches - other.batches,
            {
                who: (
                    r - other.breakdown.get(who, (0.0, 0.0))[0],
                    w - other.breakdown.get(who, (0.0, 0.0))[1],
                )
                for who, (r, w) in self.breakdown.items()
            },
            fixed=self.fixed,
            events_by_type=self.events_by_type - other.events_by_type,
            index_units=self.index_units - other.index_units,
            log_bytes=max(0.0, self.log_bytes - other.log_bytes),
            traces=max(0.0, self.traces - other.traces),
            stored_gb_months=max(0.0, self.stored_gb_months - other.stored_gb_months),
            stream_reads=self.stream_reads - other.stream_reads,
            degraded=self.degraded or other.degraded,
        )


def measure_rate_costs(
    progress: Callable[[str], None], parameters: dict[str, str] | None = None
) -> list[RateUsage]:
    """Each scenario for one-offs and for recurring fires; a fresh stack each run."""
    usages: list[RateUsage] = []
    for scenario in RATE_SCENARIOS:
        progress(f"cost by rate: {scenario.name}, one-offs ...")
        once = _run(scenario, fires_each=0, progress=progress, parameters=parameters)
        usages.append(once)
        progress(f"cost by rate: {scenario.name}, recurring (1 and 3 fires each) ...")
        one = _run(scenario, fires_each=1, progress=progress, parameters=parameters)
        three = _run(scenario, fires_each=3, progress=progress, parameters=parameters)
        actions = scenario.per_second * scenario.seconds
        steady = three.minus(one, fires=2 * actions)
        steady.kind = "recurring"
        usages.append(steady)
        progress(f"  one-off {_price(once)}, recurring {_price(steady)} per million")
    return usages


def _price(usage: RateUsage) -> str:
    if usage.degraded:
        return f"no price (degraded: {usage.degraded})"
    return f"${usage.per_million:.2f}"


def _run(
    scenario: RateScenario,
    fires_each: int,
    progress: Callable[[str], None],
    parameters: dict[str, str] | None,
) -> RateUsage:
    """One run: ``fires_each`` 0 makes one-offs, else recurring actions of that many fires."""
    recorder = Recorder()
    actions = scenario.per_second * scenario.seconds
    given = {**PARAMETERS, **(parameters or {})}
    with mock_aws(config=EMULATOR_CONFIG):
        stack = LocalStack.from_repo(parameters=given)
        names = {spec.name: spec.logical_id for spec in stack.functions}
        memory = {spec.name: spec.memory_mb for spec in stack.functions}
        with stack.running() as local, recorder.installed(names, memory):
            # Metrics as deployed: their lines are logs CloudWatch ingests (a function with
            # none to publish warns on stderr, which is not what it logs: hushed).
            os.environ["POWERTOOLS_METRICS_DISABLED"] = "false"
            warnings.filterwarnings("ignore", message="No application metrics to publish")
            # Beyond the horizon by more than PARK_INDEX_SECONDS, as a fire created further
            # ahead than the horizon is (the default path: found by its fire time, no Parked
            # entry); a fire parked to launch sooner would be in the Parked index.
            lead = HORIZON_SECONDS + PARK_INDEX_SECONDS + 5 + actions * _CREATE_SECONDS_PER_ACTION
            # From the start of a batch window: a steady rate fills every window, and a short
            # run must not measure the half-empty windows at its own start and end.
            window = int(given.get("BatchWindowSeconds", _DEFAULT_WINDOW))
            soon = math.ceil(datetime.now(UTC).timestamp() + lead)
            first = datetime.fromtimestamp(soon + (-soon) % window, UTC)
            ids = []
            with recorder.calling_as(PUBLISHER):
                for second in range(scenario.seconds):
                    for n in range(scenario.per_second):
                        # spread over the second's milliseconds, each fire at its own
                        ms = (n * 997 + second * 379) % 1000
                        offset = timedelta(seconds=second * scenario.spacing, milliseconds=ms)
                        action_id = f"rate-{second}-{n}"
                        detail = _detail(action_id, first + offset, fires_each, scenario)
                        local.publish(DetailType.START, detail)
                        ids.append(action_id)
            created = datetime.now(UTC)
            if first - created <= timedelta(seconds=HORIZON_SECONDS + PARK_INDEX_SECONDS):
                raise RuntimeError(
                    f"creating {len(ids)} actions took until {created:%H:%M:%S}, within the "
                    f"horizon (and PARK_INDEX_SECONDS) of the first fire at {first:%H:%M:%S}: "
                    "some were launched alone or parked due soon; raise "
                    "_CREATE_SECONDS_PER_ACTION"
                )
            patience = fires_each * scenario.interval + scenario.seconds * scenario.spacing
            _wait_all(local, recorder, ids, first, patience)
            _wait_folded(local)  # the count function's folds of these writes are billed too
            with recorder.unrecorded():
                local.wait_idle(timeout=120)
                return _usage(scenario, fires_each, local, recorder, actions, parameters)


def _detail(
    action_id: str, at: datetime, fires_each: int, scenario: RateScenario
) -> dict[str, Any]:
    if not fires_each:
        return {"id": action_id, "at": iso(at)}
    return {
        "id": action_id,
        "rate": f"rate({scenario.interval} seconds)",
        "startTime": iso(at),  # a rate's first fire: the actions' fires stay aligned
        "repeat": True,
        "executionRemainder": fires_each,
    }


def _wait_all(
    local: LocalStack, recorder: Recorder, ids: list[str], first: datetime, patience: float
) -> None:
    """Until every action is COMPLETED (its last fire recorded)."""
    ddb = local.client("dynamodb")
    table = local.outputs["ActionsTableName"]
    deadline = time.monotonic() + (first - datetime.now(UTC)).total_seconds() + patience + 180
    with recorder.unrecorded():
        while time.monotonic() < deadline:
            pages = ddb.get_paginator("scan").paginate(
                TableName=table,
                ProjectionExpression="id, #s",
                ExpressionAttributeNames={"#s": "status"},
            )
            done = sum(
                1
                for page in pages
                for item in page["Items"]
                if not item["id"]["S"].startswith("#") and item["status"]["S"] == "COMPLETED"
            )
            if done >= len(ids):
                return
            time.sleep(0.5)
    raise TimeoutError(f"only some of {len(ids)} actions completed")


def _wait_folded(local: LocalStack, timeout: float = 180) -> None:
    """Until the count function has folded every action's write. The writes still waiting
    for ``CountLagSeconds`` are folded now, by a run of the function asked for by hand: the
    fold the scheduled run would make once the lag has passed (nothing else writes), billed
    as that run would be, without the wait."""
    if local.unfolded():
        local.fold_now()
    deadline = time.monotonic() + timeout
    while local.unfolded():
        if time.monotonic() > deadline:
            raise TimeoutError("the count function did not fold the run's writes")
        time.sleep(0.5)


def _usage(
    scenario: RateScenario,
    fires_each: int,
    local: LocalStack,
    recorder: Recorder,
    actions: int,
    parameters: dict[str, str] | None = None,
) -> RateUsage:
    kind = "one-off" if not fires_each else f"recurring x{fires_each}"
    usage = RateUsage(scenario.name, kind, actions * max(1, fires_each))
    given = {**PARAMETERS, **(parameters or {})}
    traced = billing.tracing(TEMPLATE, given)
    span = max(1.0, scenario.seconds * scenario.spacing + (fires_each - 1) * scenario.interval)
    sfn = local.client("stepfunctions")
    executions = 0
    for machine in local.machines:
        pages = sfn.get_paginator("list_executions").paginate(stateMachineArn=machine)
        for page in pages:
            for execution in page["executions"]:
                arn = execution["executionArn"]
                history = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
                usage.transitions += _billed_transitions(history)
                usage.batches += machine == local.outputs.get("BatchStateMachineArn")
                executions += 1
    usage.degraded = _degraded(scenario, fires_each, usage.fires, executions - usage.batches)
    if traced.machines:
        usage.traces += billing.Tracing.sampled(executions, span)
    recurring = bool(fires_each)
    sizer = _Sizer(recurring, _limits(parameters))
    table = local.outputs["ActionsTableName"]
    table_keys, indexes = table_indexes()
    sizes = _sizes(local, recurring=recurring, limits=_limits(parameters))
    records = [size for item_id, size in sizes.items() if not item_id.startswith("#")]
    usage.record_bytes = max(records) if records else 0
    usage.stored_gb_months = _stored(local, sizer, indexes, fires_each, scenario)
    units = Units(table, sizes)
    by_invocation: dict[int, list[Call]] = defaultdict(list)
    for call in recorder.calls:
        by_invocation[call.invocation].append(call)
    runs = _scheduled_runs(recorder, by_invocation, units)
    usage.fixed = runs.fixed
    invoked: Counter[str] = Counter()
    for invocation in recorder.invocations:
        run = runs.by_index.get(invocation.index)
        if run is not None and not run.worked:
            continue  # an idle scheduled run: the stack's fixed cost, not the fires'
        usage.invocations[invocation.function] += 1 if run is None else 0
        invoked[invocation.function] += 1
        billed = math.ceil(invocation.wall_seconds * 1000) / 1000
        gb_seconds = billed * invocation.memory_mb / 1024
        usage.gb_seconds += gb_seconds if run is None else max(0.0, gb_seconds - runs.fixed.gb_s)
        usage.log_bytes += billing.ingested_log_bytes(
            invocation, traced.functions, traced.system_lines
        )
    if traced.functions:
        usage.traces += sum(billing.Tracing.sampled(n, span) for n in invoked.values())
    for call in recorder.calls:
        run = runs.by_index.get(call.invocation)
        if run is not None and not run.worked:
            continue
        if call.service == "dynamodb":
            reads, writes, by_index = call_units(call, table, indexes, sizer, table_keys)
            if run is not None and call.operation in ("Query", "Scan"):
                # A run's index pages: the first unit of each is the run's fixed cost.
                reads = max(0.0, reads - units_of(call.operation, call.params, "", {})[0])
            key = f"{call.caller} {call.operation}"
            was = usage.breakdown.get(key, (0.0, 0.0))
            spent = writes + sum(by_index.values())
            usage.breakdown[key] = (was[0] + reads, was[1] + spent)
            usage.read_units += reads
            usage.write_units += writes
            usage.index_units.update(by_index)
        elif call.service == "dynamodbstreams" and call.operation == "GetRecords":
            usage.stream_reads += 1
        elif call.service == "events" and call.operation == "PutEvents":
            entries = call.params.get("Entries", [])
            # each 64 KB of an entry is an event billed
            usage.events += sum(max(1, math.ceil(_entry_size(e) / 65_536)) for e in entries)
            usage.events_by_type.update(entry.get("DetailType", "") for entry in entries)
    usage.degraded = usage.degraded or _refused_starts(usage)
    return usage


def _degraded(scenario: RateScenario, fires_each: int, fires: int, lone: int) -> str | None:
    """Why a run is not the layout it measures, or None. Fires due a second apart or closer
    are meant to share executions (the batch window): a run where more than a tenth of them
    ran alone measured lone fires, whatever made them so (a slow emulator, a Start
    created within the horizon)."""
    if scenario.spacing > 1 or scenario.per_second * _DEFAULT_WINDOW < 2:
        return None  # lone by design
    if lone > max(2, fires // 10):
        return f"{lone} of {fires} fires ran in executions of their own, meant to share"
    return None


def _refused_starts(usage: RateUsage) -> str | None:
    refused = usage.events_by_type.get(str(DetailType.REJECTED), 0)
    return f"{refused} Start(s) refused" if refused else None


def _entry_size(entry: dict[str, Any]) -> int:
    """A PutEvents entry's size as EventBridge bills it: its text fields, 14 bytes of time."""
    fields = ("Source", "DetailType", "Detail")
    size = sum(len(str(entry.get(name, "")).encode()) for name in fields)
    return size + 14 + sum(len(r.encode()) for r in entry.get("Resources", []))


class _Sizer:
    """An item's size as its writes and reads bill it: a recurring record's once its history
    and transitions are full (``aged_size``), anything else as stored."""

    def __init__(self, recurring: bool, limits: tuple[int, int]) -> None:
        self._recurring = recurring
        self._limits = limits
        self._aged: dict[tuple[str, int], int] = {}

    def __call__(self, item: dict[str, Any]) -> int:
        size = item_size(item)
        if not self._recurring or "schedule" not in item:
            return size
        typed = {name: as_typed(value) for name, value in item.items()}  # a read's are plain
        key = (str(typed["id"].get("S", "")), size)
        if key not in self._aged:
            self._aged[key] = aged_size(typed, *self._limits)
        return self._aged[key]


def _stored(
    local: LocalStack,
    sizer: _Sizer,
    indexes: tuple[Any, ...],
    fires_each: int,
    scenario: RateScenario,
) -> float:
    """GB-months of table storage the run's records take: a one-off's for the 30 days it is
    kept after its fire, a recurring action's for the time its fires span."""
    ddb = local.client("dynamodb")
    total = 0.0
    kept = billing.DAYS_KEPT * 86_400 if not fires_each else fires_each * _interval(scenario)
    for page in ddb.get_paginator("scan").paginate(TableName=local.outputs["ActionsTableName"]):
        for item in page["Items"]:
            if "schedule" not in item:
                continue
            stored = billing.stored_bytes(item, indexes) - item_size(item) + sizer(item)
            total += billing.gb_months(stored, kept)
    return total


@dataclass(frozen=True)
class FixedRun:
    """What one scheduled run (the pump's, the reconciler's) costs with nothing to do."""

    function: str
    runs: int
    read_units: float
    gb_s: float

    def per_month(self, runs_per_month: int) -> float:
        return runs_per_month * (
            prices.LAMBDA_PER_REQUEST
            + self.gb_s * prices.LAMBDA_PER_GB_SECOND
            + self.read_units * prices.DYNAMODB_PER_READ_REQUEST_UNIT
        )


@dataclass(frozen=True)
class _Run:
    worked: bool


@dataclass(frozen=True)
class _Runs:
    by_index: dict[int, _Run]
    fixed: FixedRun


SCHEDULED = ("PumpFunction", "ReconcilerFunction")


def _scheduled_runs(
    recorder: Recorder, by_invocation: dict[int, list[Call]], units: Units
) -> _Runs:
    """The pump's and the reconciler's runs: a run that started nothing and wrote no record is
    idle; the median idle pump run is the fixed cost of every run (a production pump runs once
    a minute whatever the load, and its fires' share of a run is the rest). A new stack's
    first run writes its watermarks into being (``#pump``): once a stack, not a fire's."""
    by_index: dict[int, _Run] = {}
    idle_reads: list[float] = []
    idle_gb: list[float] = []
    for invocation in recorder.invocations:
        if invocation.function not in SCHEDULED:
            continue
        calls = by_invocation.get(invocation.index, [])
        worked = invocation.function == "PumpFunction" and any(
            call.operation == "StartExecution" or _writes_a_record(call) for call in calls
        )
        by_index[invocation.index] = _Run(worked)
        if not worked and invocation.function == "PumpFunction":
            idle_reads.append(
                sum(
                    units_of(c.operation, c.params, units.table, units.sizes, c.items_read)[0]
                    for c in calls
                    if c.service == "dynamodb"
                )
            )
            billed = math.ceil(invocation.wall_seconds * 1000) / 1000
            idle_gb.append(billed * invocation.memory_mb / 1024)
    fixed = FixedRun(
        "PumpFunction",
        len(idle_reads),
        median(idle_reads) if idle_reads else 0.0,
        median(idle_gb) if idle_gb else 0.0,
    )
    return _Runs(by_index, fixed)


def _writes_a_record(call: Call) -> bool:
    """A write of an action's record (not of the stack's own items, ids starting with #)."""
    if call.service != "dynamodb":
        return False
    if call.operation == "TransactWriteItems":
        return True
    if call.operation not in ("PutItem", "UpdateItem", "DeleteItem"):
        return False
    key = call.params.get("Key") or call.params.get("Item") or {}
    found = key.get("id")
    value = found.get("S") if isinstance(found, dict) else found
    return not str(value or "#").startswith("#")


def _limits(parameters: dict[str, str] | None) -> tuple[int, int]:
    """The stack's HistoryLimit and TransitionLimit: given, or the defaults."""
    given = {**PARAMETERS, **(parameters or {})}
    return (
        int(given.get("HistoryLimit", Settings.history_limit)),
        int(given.get("TransitionLimit", Settings.transition_limit)),
    )


def _sizes(local: LocalStack, recurring: bool, limits: tuple[int, int]) -> dict[str, int]:
    """Each item's size at the end of the run; a recurring record's once it is full."""
    ddb = local.client("dynamodb")
    sizes: dict[str, int] = {}
    for page in ddb.get_paginator("scan").paginate(TableName=local.outputs["ActionsTableName"]):
        for item in page["Items"]:
            item_id = item["id"]["S"]
            is_record = not item_id.startswith("#")
            aged = recurring and is_record
            sizes[item_id] = aged_size(item, *limits) if aged else item_size(item)
    return sizes


def per_fire_table(usages: list[RateUsage]) -> list[str]:
    """The Markdown rows of the figures, one per scenario and kind."""
    rows = []
    for usage in usages:
        dollars = usage.dollars()
        calls = ", ".join(
            f"{name.removesuffix('Function')} {usage.each(n):.3f}"
            for name, n in sorted(usage.invocations.items())
            if usage.each(n) >= 0.0005
        )
        rows.append(
            f"| {usage.scenario} | {usage.kind} | {usage.each(usage.transitions):.3f} | {calls} | "
            f"{usage.each(usage.gb_seconds):.4f} | {usage.each(usage.read_units):.2f} | "
            f"{usage.each(usage.write_units):.2f} | {usage.each(usage.index_write_units):.2f} | "
            f"{usage.each(usage.events):.2f} | {usage.each(usage.log_bytes) / 1024:.1f} | "
            f"{usage.each(usage.traces):.2f} | {usage.record_bytes / 1024:.1f} | "
            + " | ".join(f"{value:.2f}" for value in dollars.values())
            + (
                f" | **no price: degraded run** ({usage.degraded}) |"
                if usage.degraded
                else f" | **{usage.per_million:.2f}** |"
            )
        )
    return rows


PUMP_RUNS_PER_MONTH = 60 * 24 * 30  # the template's PumpSchedule, rate(1 minute)


def rates_section(usages: list[RateUsage], essential: list[RateUsage]) -> list[str]:
    """RESULTS.md's section: the table for every event, and for the essential ones."""
    header = [
        "| fires due together | kind | transitions | Lambda invocations | GB-s | RRU | WRU "
        "| index WRU | events | log KB | traces | record KB | $ Step Functions | $ Lambda "
        "| $ DynamoDB | $ EventBridge | $ CloudWatch Logs | $ X-Ray | **$ per million** |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines = [
        "## 3. Cost per fire by how many fall due together (batches)",
        "",
        "Counted on the real definitions (the fire machine, the batch machine) in an in-process "
        "stack (bench/benchkit/cost_rates.py), on the path a user gets by default: fires "
        "created beyond the horizon at arbitrary milliseconds, so the pump launches them and "
        "those due together share a batch; a recurring action's period beyond the horizon, "
        "so each next fire is parked and pumped (one row keeps the period within it: chained "
        "batches). Everything AWS bills for a fire is counted from the calls the stack made: "
        "each DynamoDB write on the larger of its item before and after (read back around "
        "it), twice in a transaction, and its writes on each index by DynamoDB's rules "
        "(bench/benchkit/indexes.py); reads on the items returned; Lambda at the arm64 rate; "
        "events per 64 KB; the logs each invocation wrote at the default level plus Lambda's "
        "own lines; X-Ray at the template's tracing; the table storage and backups a fire "
        "leaves (bench/benchkit/billing.py). **one-off**: creation included (the Start, the "
        "record, the launch, the fire, its record). **recurring**: what each further fire of "
        "a recurring action costs, creation shared — (actions with three fires - the same "
        "with one) ÷ the two fires more; their record is sized as it stands once its history "
        "and transitions are full. Per fire:",
        "",
        *header,
        *per_fire_table(usages),
        "",
        "With `LifecycleEvents=essential` (the Tick, Failed, Rejected, Skipped, Tampered and "
        "Reconciled events only; the Starts users publish still count) — the same runs, "
        "billed without the events that setting does not send:",
        "",
        *header,
        *per_fire_table(essential or [u.essential() for u in usages]),
        "",
    ]
    fixed = next((u.fixed for u in usages if u.fixed is not None and u.fixed.runs), None)
    if fixed is not None:
        lines += [
            f"Left out of the figures: the pump's run itself, whatever it launches — one "
            f"invocation, {fixed.read_units:.1f} read units of index pages and "
            f"{fixed.gb_s:.4f} GB-s (median of {fixed.runs} runs that launched nothing): "
            f"${fixed.per_month(PUMP_RUNS_PER_MONTH):.2f} a month at the template's "
            "rate(1 minute), however many fires it launches. The reconciler's runs are the "
            "same kind of fixed cost.",
            "",
        ]
    lines += _writes(usages)
    return lines


def _writes(usages: list[RateUsage]) -> list[str]:
    """Where the write units of a fire go, for the busiest scenarios."""
    lines = ["Read and write units per fire by caller and call:", ""]
    for usage in usages:
        if usage.scenario not in ("100 a second",):
            continue
        parts = sorted(usage.breakdown.items(), key=lambda kv: -(kv[1][0] + kv[1][1]))
        shown = ", ".join(
            f"{who} {usage.each(r):.2f} R / {usage.each(w):.2f} W"
            for who, (r, w) in parts
            if usage.each(r) + usage.each(w) >= 0.01
        )
        lines.append(f"- {usage.scenario}, {usage.kind}: {shown}.")
    return [*lines, ""]
