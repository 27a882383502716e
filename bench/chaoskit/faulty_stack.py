"""``tickwork local`` with one fault planted inside it: the tick function crashes after partial
work, the first time it handles a fire of an action whose id starts with ``crash-``.

- recurring: the record is saved at its next occurrence, then starting that occurrence's
  execution raises (``tickwork.usecases.record.launch``);
- one-off: the record is saved COMPLETED, then publishing DetailType.COMPLETED raises.

The tick's delivery then fails, so its message comes back after the queue's visibility
timeout (local/tickwork_local/delivery.py) and the redelivered tick must finish the job. Each
injected crash is printed as a ``chaos-fault`` line to this process's output.

Run as ``python bench/chaoskit/faulty_stack.py --state-dir D --port P --api-port A
--parameter KEY=VALUE ...``; otherwise the same as ``tickwork local``.
"""

from __future__ import annotations

import argparse
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tickwork.adapters.eventbridge import EventBridgePublisher
from tickwork.domain.events import DetailType
from tickwork.usecases import record
from tickwork_local.service import run_local

FAULTY_STACK = Path(__file__)
CRASH_PREFIX = "crash-"
FAULT_LINE = "chaos-fault"


class TickCrashed(RuntimeError):
    """The planted crash: the tick function died after writing the record."""


class _FirstTime:
    """True once per key: each fire crashes only on its first delivery."""

    def __init__(self) -> None:
        self._seen: set[tuple[Any, ...]] = set()
        self._lock = threading.Lock()

    def __call__(self, key: tuple[Any, ...]) -> bool:
        with self._lock:
            if key in self._seen:
                return False
            self._seen.add(key)
            return True


def _crash(where: str, action_id: str, occurrence: int) -> TickCrashed:
    print(
        f"{FAULT_LINE} "
        + json.dumps({"kind": "tick-crash", "where": where, "id": action_id, "occ": occurrence}),
        flush=True,
    )
    return TickCrashed(f"planted crash in {where} for {action_id} occurrence {occurrence}")


def plant_tick_crash() -> None:
    first_time = _FirstTime()
    launch: Callable[..., str] = record.launch
    publish = EventBridgePublisher.publish

    def crashing_launch(action: Any, now: Any, deps: Any, *args: Any, **kwargs: Any) -> str:
        key = ("launch", action.id, action.generation, action.occurrence)
        if action.id.startswith(CRASH_PREFIX) and first_time(key):
            raise _crash("launch of the next occurrence", action.id, action.occurrence - 1)
        return launch(action, now, deps, *args, **kwargs)

    def crashing_publish(self: Any, detail_type: str, detail: dict[str, Any]) -> None:
        action_id = str(detail.get("id", ""))
        key = ("completed", action_id, detail.get("generation"))
        if (
            detail_type == DetailType.COMPLETED
            and action_id.startswith(CRASH_PREFIX)
            and first_time(key)
        ):
            raise _crash("publish of Schedule Completed", action_id, detail.get("occurrences", 0))
        publish(self, detail_type, detail)

    record.launch = crashing_launch  # type: ignore[assignment]
    EventBridgePublisher.publish = crashing_publish  # type: ignore[method-assign]


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state-dir", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--api-port", type=int, required=True)
    parser.add_argument("--parameter", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--fresh", action="store_true")
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    parameters = dict(pair.split("=", 1) for pair in args.parameter)
    plant_tick_crash()
    run_local(args.port, args.state_dir, args.fresh, parameters, args.api_port)


if __name__ == "__main__":
    main()
