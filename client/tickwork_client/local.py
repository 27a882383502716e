"""Finding the local stack (``tickwork local``) from a service: its endpoint, bus, API and
token, read from the ``local.json`` it writes in its state directory when it is ready and
removes when it stops.

    from tickwork_client import TickworkClient
    client = TickworkClient.for_local()            # ./.tickwork, or TICKWORK_STATE_DIR
    client.schedule("reminder:1", "rate(1 hour)")

A ``local.json`` left by a stack that was killed (``kill -9``) names a process that is gone:
it is refused as stale, never answered with a dead endpoint.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

__all__ = [
    "LOCAL_CREDENTIALS",
    "LocalStackInfo",
    "LocalStackNotFound",
    "find_local_stack",
    "local_now",
]

STATE_DIR_VARIABLE = "TICKWORK_STATE_DIR"
DEFAULT_STATE_DIR = ".tickwork"
LOCAL_FILE = "local.json"
CLOCK_FILE = "clock.json"  # a virtual-time stack's offset from the wall clock, kept current
# The local stack takes any credentials: these dummy ones make boto3 sign its calls on a
# machine with no AWS set up (it would otherwise say "Unable to locate credentials").
LOCAL_CREDENTIALS = {
    "aws_access_key_id": "tickwork-local",
    "aws_secret_access_key": "tickwork-local",
}


class LocalStackNotFound(Exception):
    """No running local stack where it was looked for: says where, and how to start one."""


@dataclass(frozen=True)
class LocalStackInfo:
    endpoint: str  # the emulated AWS endpoint (EventBridge, DynamoDB, ...)
    region: str
    bus_name: str  # the EventBusName output
    api_url: str | None  # the local HTTP API (ApiUrl output)
    api_token: str | None  # its bearer token, when it takes one
    pid: int | None  # the process serving it
    state_dir: Path
    virtual_time: bool = False  # on a clock of its own (tickwork local --virtual-time)

    def now(self) -> datetime:
        """The stack's now: the wall clock, or its virtual time (``local_now``)."""
        return local_now(self.state_dir) if self.virtual_time else datetime.now(UTC)


def find_local_stack(state_dir: str | Path | None = None) -> LocalStackInfo:
    """The local stack whose state is in ``state_dir`` (default: ``$TICKWORK_STATE_DIR``, else
    ``./.tickwork``), or ``LocalStackNotFound`` naming the file and the fix."""
    chosen = Path(state_dir or os.environ.get(STATE_DIR_VARIABLE) or DEFAULT_STATE_DIR)
    path = chosen / LOCAL_FILE
    if not path.exists():
        raise LocalStackNotFound(
            f"no local stack found ({path} is missing): start one with `tickwork local` in the "
            f"clone, or point at its state directory (state_dir=, ${STATE_DIR_VARIABLE}, or the "
            "CLI's --state-dir)"
        )
    state = json.loads(path.read_text())
    pid = state.get("pid")
    if isinstance(pid, int) and not process_alive(pid):
        raise LocalStackNotFound(
            f"{path} names process {pid}, which is not running (the stack was killed): start it "
            "again with `tickwork local`"
        )
    outputs = state.get("outputs", {})
    token = state.get("apiToken") if state.get("apiAuth", "token") == "token" else None
    return LocalStackInfo(
        endpoint=state["endpoint"],
        region=state["region"],
        bus_name=outputs["EventBusName"],
        api_url=outputs.get("ApiUrl"),
        api_token=token,
        pid=pid if isinstance(pid, int) else None,
        state_dir=chosen,
        virtual_time=bool(state.get("virtualTime")),
    )


def local_now(state_dir: str | Path | None = None) -> datetime:
    """The now of the local stack in ``state_dir``: on virtual time, the wall clock plus the
    offset it keeps in ``clock.json`` (read again at every call: ``tickwork time advance``
    moves it); else the wall clock."""
    chosen = Path(state_dir or os.environ.get(STATE_DIR_VARIABLE) or DEFAULT_STATE_DIR)
    path = chosen / CLOCK_FILE
    offset = float(json.loads(path.read_text())["offsetSeconds"]) if path.exists() else 0.0
    return datetime.fromtimestamp(time.time() + offset, UTC)


def process_alive(pid: int) -> bool:
    """Whether a process with this id runs (signal 0 checks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it runs, as another user
    return True
