"""How fast the count function folds the table's stream, per second of its own CPU: the figure
the README's capacity model rests on for the counts.

In one process, over moto: ``--writes`` record writes (creations, then each record written
again as a fire recorded) land on the actions table and its stream; then the count function's
fold (``DynamoDBStreamCounts.fold``) reads them all and adds them to the counters, ``--rounds``
times on fresh writes. This process's CPU during the fold (``resource.getrusage``) holds the
fold's own work (its calls made and their answers parsed by botocore, the records decoded,
their changes added up) and moto's work answering them, which is timed apart (the CPU spent
inside moto's stub) and left out: the fold's own CPU is what a Lambda running it would spend.

    python bench/fold_rate.py --writes 4000

Prints medians; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import boto3  # noqa: E402
from benchkit.stats import median  # noqa: E402
from moto import mock_aws  # noqa: E402

from tickwork.adapters.dynamodb_records import DynamoDBRecords  # noqa: E402
from tickwork.adapters.dynamodb_stream_counts import DynamoDBStreamCounts  # noqa: E402
from tickwork.domain.action import Action, Limits, Occurrence, Status  # noqa: E402
from tickwork.domain.fire import Outcome  # noqa: E402
from tickwork.domain.start_request import parse_start_detail  # noqa: E402
from tickwork_local.template import Template  # noqa: E402

REPO = HERE.parent
NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


_IN_MOTO = [0.0]  # CPU-seconds spent inside moto's answers


def _timing_moto() -> None:
    from moto.core.botocore_stubber import BotocoreStubber

    answer = BotocoreStubber.__call__

    def timed(self: BotocoreStubber, event_name: str, request: object, **kwargs: object) -> object:
        began = time.process_time()
        try:
            return answer(self, event_name, request, **kwargs)  # type: ignore[arg-type]
        finally:
            _IN_MOTO[0] += time.process_time() - began

    BotocoreStubber.__call__ = timed  # type: ignore[method-assign]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _writes(records: DynamoDBRecords, round_: int, count: int) -> None:
    """``count`` record writes: half creations, half fires recorded on them."""
    for n in range(count // 2):
        action_id = f"fold:{round_}:{n}"
        detail = {"id": action_id, "at": (NOW + timedelta(hours=1)).isoformat()}
        if n % 3:
            detail["group"] = f"g{n % 7}"
        request = parse_start_detail(detail, NOW)
        first = request.schedule.first_fire_time(NOW)
        assert first is not None
        action = Action.scheduled(action_id, request, first, NOW, "h", None, Limits())
        records.create(action)
        at = NOW + timedelta(seconds=n % 600)
        fired = Occurrence(1, at, at, 1, Outcome.FIRED, late_ms=0)
        done = replace(
            action,
            status=Status.COMPLETED,
            version=action.version + 1,
            ttl=int((NOW + timedelta(days=30)).timestamp()),
            history=(fired,),
        )
        records.save(done, action.version, recorded=fired)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=4000, help="record writes a round (4000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (3)")
    args = parser.parse_args()
    for key, value in {
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
    }.items():
        os.environ.setdefault(key, value)
    rates: list[float] = []
    _timing_moto()
    with mock_aws():
        name = Template(REPO / "template.yaml").create_table(
            boto3.client("dynamodb"), "ActionsTable"
        )
        records = DynamoDBRecords(name)
        counts = DynamoDBStreamCounts(name)
        counts.fold()
        for round_ in range(args.rounds):
            _writes(records, round_, args.writes)
            cpu, moto = _cpu(), _IN_MOTO[0]
            folded = counts.fold()
            cpu, moto = _cpu() - cpu, _IN_MOTO[0] - moto
            own = max(cpu - moto, 1e-9)
            rates.append(folded.records / own)
            print(
                f"round {round_ + 1}: {folded.records} records folded in {folded.folds} fold(s), "
                f"{folded.counters} counter ADDs, {own:.2f} CPU-s of the fold's own "
                f"(+ {moto:.2f} in moto)"
            )
    print(f"median: {median(rates):,.0f} records folded per CPU-second of the fold's own")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
