"""On the template's schedule (PumpSchedule) → start the execution of every parked fire that
comes within LaunchAheadSeconds, and mark it launched; past PumpShareFires due, hand each shard
out to the pump's workers (``worker``: PumpWorkerFunction, the same code)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from tickwork import bootstrap
from tickwork.adapters.clients import AwsClients
from tickwork.adapters.lambda_pump_workers import LambdaPumpWorkers
from tickwork.entry import Entry
from tickwork.fire.pump import launch_share, pump, pump_shard

entry = Entry()
clients = AwsClients()
workers = LambdaPumpWorkers.from_environment(clients)  # the pump's
more_workers = LambdaPumpWorkers.from_environment(clients, own=True)  # a busy shard's shares


@entry
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return _counted(pump(bootstrap.from_environment(), fan_out=workers))


@entry
def worker(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """One shard of a busy pump run (``{"shard": k}``), or a share of a busy shard's fires
    (``{"ids": [...]}``), launched as the pump launches them."""
    deps = bootstrap.from_environment()
    if "shard" in event:
        return _counted(pump_shard(deps, int(event["shard"]), fan_out=more_workers))
    ids = [str(action_id) for action_id in event.get("ids", [])]
    return _counted(launch_share(ids, deps.clock.now(), deps).as_dict())


def _counted(run: dict[str, Any]) -> dict[str, Any]:
    # Only the kinds that happened: a metric with no data is none (the alarm on pump_refused
    # treats missing data as fine), and a run a minute of zeros would be logs billed for
    # nothing.
    for kind, ids in run.items():
        if ids:
            entry.count(f"pump_{kind}", len(ids))
    sizes = {kind: len(ids) for kind, ids in run.items()}
    entry.logged("pumped", sizes, notable=bool(run.get("refused") or run.get("failed")))
    return run
