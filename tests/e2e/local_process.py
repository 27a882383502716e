"""`tickwork local` as a separate process, driven only from outside: the CLI, the AWS CLI and
boto3 with endpoint_url — the way a developer uses it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import boto3

from tickwork_local.server import free_port

BIN = Path(sys.executable).parent
FAST_PARAMETERS = (
    "LockSeconds=1",
    "RetryIntervalSeconds=1",
    "RetryMaxDelaySeconds=2",
    "LogLevel=WARNING",
)


class LocalProcess:
    def __init__(
        self, state_dir: Path, port: int | None = None, parameters: tuple[str, ...] = ()
    ) -> None:
        self.state_dir = state_dir
        self.parameters = FAST_PARAMETERS + parameters
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.log = state_dir.parent / f"local-{self.port}.log"

    def start(self, timeout: float = 60) -> dict[str, Any]:
        (self.state_dir / "local.json").unlink(missing_ok=True)
        args = [
            str(BIN / "tickwork"),
            "--state-dir",
            str(self.state_dir),
            "local",
            "--port",
            str(self.port),
            "--api-port",
            str(free_port()),
        ]
        for parameter in self.parameters:
            args += ["--parameter", parameter]
        self.process = subprocess.Popen(args, stdout=self.log.open("ab"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not (self.state_dir / "local.json").exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"tickwork local did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.1)
        return self.state

    @property
    def state(self) -> dict[str, Any]:
        return json.loads((self.state_dir / "local.json").read_text())

    def kill(self, sig: int = signal.SIGKILL) -> None:
        assert self.process is not None
        self.process.send_signal(sig)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.send_signal(signal.SIGUSR1)  # its threads' stacks, into the log
            time.sleep(1)
            self.kill()  # its state is journaled: as safe as the kill -9 test
            raise AssertionError(
                f"tickwork local ignored SIGTERM:\n{self.log.read_text()[-12000:]}"
            ) from None

    def cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        run = subprocess.run(
            [str(BIN / "tickwork"), "--state-dir", str(self.state_dir), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if check and run.returncode != 0:
            raise AssertionError(f"tickwork {' '.join(args)} failed:\n{run.stdout}\n{run.stderr}")
        return run

    def cli_json(self, *args: str) -> Any:
        return json.loads(self.cli(*args, "--json").stdout)

    def aws(self, *args: str) -> Any:
        env = {**os.environ, "AWS_DEFAULT_REGION": self.state["region"]}
        run = subprocess.run(
            [str(BIN / "aws"), "--endpoint-url", self.state["endpoint"], "--output", "json", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert run.returncode == 0, run.stderr
        return json.loads(run.stdout) if run.stdout.strip() else None

    def client(self, service: str) -> Any:
        return boto3.client(
            service, endpoint_url=self.state["endpoint"], region_name=self.state["region"]
        )

    def subscribe_ticks(self) -> str:
        """A worker's subscription: an SQS queue and a bus rule for Schedule Tick."""
        sqs, events = self.client("sqs"), self.client("events")
        url = sqs.create_queue(QueueName=f"worker-{time.monotonic_ns()}")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        bus = self.state["outputs"]["EventBusName"]
        rule = f"worker-ticks-{time.monotonic_ns()}"[:64]
        events.put_rule(
            Name=rule, EventBusName=bus, EventPattern=json.dumps({"detail-type": ["Schedule Tick"]})
        )
        events.put_targets(Rule=rule, EventBusName=bus, Targets=[{"Id": "worker", "Arn": arn}])
        return url

    def receive(self, queue_url: str, count: int, timeout: float) -> list[dict[str, Any]]:
        sqs, got = self.client("sqs"), []
        deadline = time.monotonic() + timeout
        while len(got) < count and time.monotonic() < deadline:
            for message in sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get(
                "Messages", []
            ):
                got.append(json.loads(message["Body"])["detail"])
                sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
            time.sleep(0.2)
        return got
