"""One local stack per state dir: ``tickwork local`` holds ``<state dir>/local.lock`` (an
exclusive ``flock``) for as long as it runs, and writes in it who holds it (process and ports).

A second stack on a state dir in use is refused at once, naming the running one, before it
touches anything of the first's (its records, journal, clock, ``local.json``). The lock is the
kernel's: a stack killed with ``kill -9`` holds it no longer, so a lock file it left is stale
and the next start takes it.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["LOCK_FILE", "StateDirInUse", "holding_state_dir"]

LOCK_FILE = "local.lock"


class StateDirInUse(Exception):
    """Another local stack runs on this state dir."""

    def __init__(self, state_dir: Path, holder: dict[str, Any]) -> None:
        pid = holder.get("pid", "?")
        ports = ", ".join(
            f"{name} {holder[key]}"
            for key, name in (("port", "port"), ("apiPort", "API port"))
            if holder.get(key)
        )
        super().__init__(
            f"{state_dir} is in use by the local stack of process {pid}"
            + (f" ({ports})" if ports else "")
            + ": stop it first (Ctrl-C where it runs), or give another --state-dir"
        )


@contextmanager
def holding_state_dir(state_dir: Path, port: int | None, api_port: int | None) -> Iterator[None]:
    """Hold the state dir's lock while the block runs; ``StateDirInUse`` if another holds it."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / LOCK_FILE
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as held:
            raise StateDirInUse(state_dir, _holder(path)) from held
        holder = {"pid": os.getpid(), "port": port, "apiPort": api_port}
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, json.dumps(holder).encode(), 0)
        yield
    finally:
        os.close(descriptor)  # the lock goes with it


def _holder(path: Path) -> dict[str, Any]:
    """Who holds the lock, as it wrote itself down (nothing, while it is writing)."""
    try:
        held = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}
    return held if isinstance(held, dict) else {}
