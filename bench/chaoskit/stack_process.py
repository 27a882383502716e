"""The local stack (with its planted tick crash) as a child process: start, kill -9, restart.

Ports are chosen once and kept across restarts, so the endpoint, the API and the queue URLs
stay valid; the state dir is kept too, which is what a restart restores from.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import boto3
import requests

from tickwork_local.server import free_port

__all__ = ["StackProcess", "StackStartFailed", "stack_parameters"]

FAULTY_STACK = Path(__file__).with_name("faulty_stack.py")
FAST_PARAMETERS = {
    "RetryIntervalSeconds": "1",
    "RetryMaxDelaySeconds": "2",
    "RetryMaxAttempts": "3",
    "LogLevel": "WARNING",
    "AllowPrivateTargets": "true",  # the receiver listens on loopback
}
_CREDENTIALS = {"aws_access_key_id": "chaos", "aws_secret_access_key": "chaos"}
_RESTORED = re.compile(r"restored (\d+) action record.*restarted (\d+) waiting")


class StackStartFailed(RuntimeError):
    pass


def stack_parameters(overrides: dict[str, str]) -> dict[str, str]:
    """Template parameters for a quick run: short retries, quiet logs, loopback webhooks."""
    return {**FAST_PARAMETERS, **overrides}


class StackProcess:
    def __init__(self, state_dir: Path, log_path: Path, parameters: dict[str, str]) -> None:
        self.state_dir = state_dir
        self.log_path = log_path
        self.parameters = parameters
        self.port = free_port()
        self.api_port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.api = requests.Session()
        self._state: dict[str, Any] = {}
        self._clients: dict[str, Any] = {}
        self._queues: dict[str, str] = {}
        self._lock = threading.Lock()
        self.up = threading.Event()  # set while the stack is ready, cleared across a kill

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self, fresh: bool = False, timeout: float = 300.0) -> float:
        """Start the stack and wait until it is ready; the seconds that took."""
        began = time.monotonic()
        (self.state_dir / "local.json").unlink(missing_ok=True)
        args = [
            sys.executable,
            str(FAULTY_STACK),
            "--state-dir",
            str(self.state_dir),
            "--port",
            str(self.port),
            "--api-port",
            str(self.api_port),
        ]
        args += [
            arg
            for key, value in self.parameters.items()
            for arg in ("--parameter", f"{key}={value}")
        ]
        if fresh:
            args.append("--fresh")
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        ready = self.state_dir / "local.json"
        while not ready.exists():
            if self.process.poll() is not None or time.monotonic() - began > timeout:
                raise StackStartFailed(f"the stack did not start; see {self.log_path}")
            time.sleep(0.1)
        self._state = json.loads(ready.read_text())
        self.api.headers.update(self.api_headers)
        self.up.set()
        return time.monotonic() - began

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs; only the journaled table survives."""
        assert self.process is not None
        self.up.clear()
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        self.up.clear()
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()

    # --- talking to it -----------------------------------------------------------------------
    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def api_headers(self) -> dict[str, str]:
        """The local API's bearer token, where the stack has one (it is in local.json)."""
        token = self._state.get("apiToken")
        return {"Authorization": f"Bearer {token}"} if token else {}

    @property
    def bus(self) -> str:
        return str(self._state["outputs"]["EventBusName"])

    @property
    def lock_seconds(self) -> float:
        return float(self._state["parameters"]["LockSeconds"])

    def client(self, service: str) -> Any:
        """One client per service, shared by the driver's threads (the endpoint never moves)."""
        with self._lock:
            if service not in self._clients:
                self._clients[service] = boto3.session.Session().client(
                    service,
                    endpoint_url=self._state["endpoint"],
                    region_name=self._state["region"],
                    **_CREDENTIALS,
                )
            return self._clients[service]

    def put_event(self, detail_type: str, source: str, detail: dict[str, Any]) -> bool:
        """Publish one event on the stack's bus; False if the bus refused it."""
        answer = self.client("events").put_events(
            Entries=[
                {
                    "EventBusName": self.bus,
                    "Source": source,
                    "DetailType": detail_type,
                    "Detail": json.dumps(detail),
                }
            ]
        )
        return not answer.get("FailedEntryCount")

    def queue_url(self, suffix: str) -> str:
        """The delivery queue of a function's rule, e.g. ``-StartRule`` (see stack.py)."""
        with self._lock:
            if suffix in self._queues:
                return self._queues[suffix]
        urls = self.client("sqs").list_queues().get("QueueUrls", [])
        matches = [url for url in urls if url.endswith(suffix)]
        if len(matches) != 1:
            raise LookupError(f"no single queue ends with {suffix!r}: {urls}")
        with self._lock:
            self._queues[suffix] = matches[0]
        return matches[0]

    # --- what it printed ---------------------------------------------------------------------
    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def fault_lines(self, marker: str) -> list[dict[str, Any]]:
        return [
            json.loads(line.split(marker, 1)[1])
            for line in self.log_text().splitlines()
            if line.startswith(marker)
        ]

    def restored_counts(self) -> tuple[int, int] | None:
        """(records restored, executions restarted) from the last start's banner."""
        found = _RESTORED.findall(self.log_text())
        return (int(found[-1][0]), int(found[-1][1])) if found else None
