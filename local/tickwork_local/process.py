"""``tickwork local`` as a child process, driven from outside the way a developer drives it:
the CLI, the AWS CLI and boto3 with an endpoint URL. The end-to-end tests, ``make chaos`` and
``make bench`` all run the stack through this one harness.

Ports are chosen once and kept across restarts, so the endpoint, the API and the queue URLs
stay valid; so is the state directory, which is what a restart restores from.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import boto3
import requests

from tickwork_local.server import LOCAL_CREDENTIALS, free_port

__all__ = ["FAST_PARAMETERS", "LocalProcess", "StackStartFailed"]

BIN = Path(sys.executable).parent
# Seconds, not minutes: a horizon of seconds (fires further away are parked) and a pump run
# every second, a short lock and fast retries, for the tests, the chaos run and the
# bench (each may override one). The in-process stack of the e2e tests uses the same set.
FAST_PARAMETERS = {
    "LaunchAheadSeconds": "5",
    "PumpSchedule": "rate(1 second)",
    "LockSeconds": "1",
    "RetryIntervalSeconds": "1",
    "RetryMaxAttempts": "2",
    "RetryMaxDelaySeconds": "2",
}
_QUIET = {"LogLevel": "WARNING"}
_RESTORED = re.compile(r"restored (\d+) action record.*restarted (\d+) waiting")
_CLIENT_CREDENTIALS = {
    "aws_access_key_id": LOCAL_CREDENTIALS["AWS_ACCESS_KEY_ID"],
    "aws_secret_access_key": LOCAL_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
}


class StackStartFailed(RuntimeError):
    pass


_PORT_ATTEMPTS = 3


class LocalProcess:
    """One local stack process. ``program`` replaces ``tickwork --state-dir D local`` with
    another entry point taking the same options (the chaos run's stack with a planted fault).
    ``cli_in_process``: ``cli`` runs the command line's code in this process (click's runner)
    instead of starting ``tickwork`` anew, which spends about a second importing it: the same
    commands, exit codes and output, for the tests that make many calls."""

    def __init__(
        self,
        state_dir: Path,
        parameters: dict[str, str] | None = None,
        log_path: Path | None = None,
        program: Sequence[str] | None = None,
        cli_in_process: bool = False,
    ) -> None:
        self.cli_in_process = cli_in_process
        self.state_dir = state_dir
        self.parameters = {**FAST_PARAMETERS, **_QUIET, **(parameters or {})}
        self.port = free_port()
        self.api_port = free_port()
        self.log_path = log_path or state_dir.parent / f"local-{self.port}.log"
        self.program = list(program or [str(BIN / "tickwork"), "--state-dir", str(state_dir)])
        if program is None:
            self.program.append("local")
        self.process: subprocess.Popen[bytes] | None = None
        self.api = requests.Session()
        self._state: dict[str, Any] = {}
        self._clients: dict[str, Any] = {}
        self._queues: dict[str, str] = {}
        self._lock = threading.Lock()
        self.up = threading.Event()  # set while the stack is ready, cleared across a kill

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self, fresh: bool = False, timeout: float = 300.0) -> float:
        """Start the stack and wait until it is ready; the seconds that took. A first start
        whose ports another process took meanwhile (a free port is only free when it is asked
        for) is tried again on new ones; a restart keeps its ports, as its clients do."""
        for attempt in range(_PORT_ATTEMPTS):
            try:
                return self._start(fresh, timeout)
            except StackStartFailed as failed:
                if self._state or "is in use" not in str(failed) or attempt == _PORT_ATTEMPTS - 1:
                    raise
                self.port, self.api_port = free_port(), free_port()
        raise AssertionError("the loop returns or raises")

    def _start(self, fresh: bool, timeout: float) -> float:
        began = time.monotonic()
        ready = self.state_dir / "local.json"
        ready.unlink(missing_ok=True)
        args = [*self.program, "--port", str(self.port), "--api-port", str(self.api_port)]
        for key, value in self.parameters.items():
            args += ["--parameter", f"{key}={value}"]
        if fresh:
            args.append("--fresh")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        while not ready.exists():
            if self.process.poll() is not None or time.monotonic() - began > timeout:
                raise StackStartFailed(f"the stack did not start:\n{self.log_text()[-3000:]}")
            time.sleep(0.1)
        self._state = json.loads(ready.read_text())
        self.api.headers.update(self.api_headers)
        self.up.set()
        return time.monotonic() - began

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """SIGKILL by default: no shutdown code runs; only the journaled table survives."""
        assert self.process is not None
        self.up.clear()
        self.process.send_signal(sig)
        self.process.wait(timeout=30)

    def stop(self, grace: float = 20.0) -> None:
        """SIGTERM, as Ctrl-C; a stack that ignores it is killed (its state is journaled) and
        the failure is raised with the threads' stacks from its log."""
        self.up.clear()
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGUSR1)  # its threads' stacks, into the log
            time.sleep(1)
            self.kill()
            raise AssertionError(
                f"tickwork local ignored SIGTERM:\n{self.log_text()[-12000:]}"
            ) from None

    # --- what it wrote -----------------------------------------------------------------------
    @property
    def state(self) -> dict[str, Any]:
        """local.json: the endpoint, region, outputs, parameters and API token."""
        return dict(self._state) or json.loads((self.state_dir / "local.json").read_text())

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def api_headers(self) -> dict[str, str]:
        """The local API's bearer token (it is in local.json)."""
        token = self._state.get("apiToken")
        return {"Authorization": f"Bearer {token}"} if token else {}

    @property
    def bus(self) -> str:
        return str(self.state["outputs"]["EventBusName"])

    @property
    def lock_seconds(self) -> float:
        return float(self.state["parameters"]["LockSeconds"])

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def fault_lines(self, marker: str) -> tuple[list[dict[str, Any]], list[str]]:
        """The JSON after ``marker`` on each line of its output that holds it, and each such line
        that could not be read ("line N: text"), so a garbled line is named, not fatal. The
        marker is looked for anywhere in a line: a line another thread left unfinished may
        come before it."""
        read: list[dict[str, Any]] = []
        unreadable: list[str] = []
        for number, line in enumerate(self.log_text().splitlines(), start=1):
            for part in line.split(marker)[1:]:  # two lines run together are both read
                try:
                    value = json.loads(part)
                except ValueError:
                    value = None
                if isinstance(value, dict):
                    read.append(value)
                else:
                    unreadable.append(f"line {number} of {self.log_path}: {line[:200]}")
        return read, unreadable

    def restored_counts(self) -> tuple[int, int] | None:
        """(records restored, executions restarted) from the last start's banner."""
        found = _RESTORED.findall(self.log_text())
        return (int(found[-1][0]), int(found[-1][1])) if found else None

    # --- talking to it -----------------------------------------------------------------------
    def client(self, service: str) -> Any:
        """One client per service, shared by the caller's threads (the endpoint never moves)."""
        with self._lock:
            if service not in self._clients:
                self._clients[service] = boto3.session.Session().client(
                    service,  # type: ignore[call-overload]
                    endpoint_url=self.state["endpoint"],
                    region_name=self.state["region"],
                    **_CLIENT_CREDENTIALS,
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
        return str(matches[0])

    def subscribe(self, detail_types: list[str]) -> str:
        """A worker's subscription: an SQS queue and a bus rule for these detail types."""
        sqs, events = self.client("sqs"), self.client("events")
        stamp = time.monotonic_ns()
        url = str(sqs.create_queue(QueueName=f"worker-{stamp}")["QueueUrl"])
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        rule = f"worker-{stamp}"[:64]
        events.put_rule(
            Name=rule, EventBusName=self.bus, EventPattern=json.dumps({"detail-type": detail_types})
        )
        events.put_targets(Rule=rule, EventBusName=self.bus, Targets=[{"Id": "worker", "Arn": arn}])
        return url

    def receive(self, queue_url: str, count: int, timeout: float) -> list[dict[str, Any]]:
        """Up to ``count`` event details from a subscription, waiting at most ``timeout``."""
        sqs, got = self.client("sqs"), list[dict[str, Any]]()
        deadline = time.monotonic() + timeout
        while len(got) < count and time.monotonic() < deadline:
            for message in sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get(
                "Messages", []
            ):
                got.append(json.loads(message["Body"])["detail"])
                sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
            time.sleep(0.2)
        return got

    # --- the command lines a developer types -------------------------------------------------
    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``tickwork --state-dir D ARGS``; with ``check``, a failure raises with its output."""
        command = [str(BIN / "tickwork"), "--state-dir", str(self.state_dir), *args]
        if self.cli_in_process:
            run = _in_process(command)
        else:
            run = subprocess.run(command, capture_output=True, text=True, timeout=60)
        if check and run.returncode != 0:
            raise AssertionError(f"tickwork {' '.join(args)} failed:\n{run.stdout}\n{run.stderr}")
        return run

    def cli_json(self, *args: str) -> Any:
        return json.loads(self.cli(*args, "--json").stdout)

    def aws(self, *args: str) -> Any:
        """``aws --endpoint-url <the stack> ARGS`` (the AWS CLI), its JSON answer."""
        env = {**os.environ, **LOCAL_CREDENTIALS, "AWS_DEFAULT_REGION": self.state["region"]}
        run = subprocess.run(
            [str(BIN / "aws"), "--endpoint-url", self.state["endpoint"], "--output", "json", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        if run.returncode != 0:
            raise AssertionError(f"aws {' '.join(args)} failed:\n{run.stderr}")
        return json.loads(run.stdout) if run.stdout.strip() else None


def _in_process(command: list[str]) -> subprocess.CompletedProcess[str]:
    """``command`` (``tickwork ARGS``) run by click's test runner in this process: its exit
    code, standard output and standard error as a process would give them."""
    from click.testing import CliRunner

    from tickwork_cli.main import cli

    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg,unused-ignore]
    except TypeError:  # click 8.2 keeps the two apart always
        runner = CliRunner()
    result = runner.invoke(cli, command[1:], prog_name="tickwork", catch_exceptions=False)
    return subprocess.CompletedProcess(command, result.exit_code, result.stdout, result.stderr)
