"""The whole tickwork stack in the emulator, built from template.yaml.

Inside an active moto (in-process ``mock_aws`` or a moto server reached through
``AWS_ENDPOINT_URL``) ``LocalStack.running()`` creates the table, bus, queues, functions and the
state machine the template declares, runs the function code in this process when the
emulator invokes it, and delivers bus rule matches to the functions. Tests and the local
command share it.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import secrets
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC
from pathlib import Path
from typing import Any

import boto3
from botocore.exceptions import ClientError

from tickwork.adapters.clients import AwsClients
from tickwork.adapters.dynamodb_stream_counts import TALLY_ITEM_ID
from tickwork.adapters.execution_refs import ExecutionRefs
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.times import iso
from tickwork_local.activity import Activity
from tickwork_local.atomic_items import atomic_items
from tickwork_local.delivery import QueuePoller, ScheduleRunner, as_delivered
from tickwork_local.emulator_clock import emulator_on_clock
from tickwork_local.execution_quota import open_execution_quota
from tickwork_local.moto_version import require_supported_moto
from tickwork_local.outbox import Outbox
from tickwork_local.runtime import InProcessRuntime
from tickwork_local.template import ACCOUNT, FunctionSpec, Template
from tickwork_local.time_api import advance_request, clock_reading
from tickwork_local.time_machine import TimeMachine
from tickwork_local.tuning import tuned_emulator
from tickwork_local.tuning.model_loader import session_sharing_models
from tickwork_local.useful_runs import GLANCED, Glance, glance_at, useful_runs
from tickwork_local.virtual_clock import LocalClock

__all__ = ["LEAN_RUNS_ENV", "EventTap", "LocalStack"]

# Lambda stops a function at its Timeout (60 s), well before its Task state's TimeoutSeconds
# (90 s): a task's retry never overlaps the attempt it retries. This runtime cannot stop a
# function: left at 90 s, the interpreter would time out a task still running on a loaded
# machine and start its retry beside it (a batch's ticks put twice). The task waits for its
# function here instead, as it never needs to on AWS.
_LOCAL_DEFINITION = {"FulfillTimeoutSeconds": 3600}

LEAN_RUNS_ENV = "TICKWORK_LOCAL_LEAN_RUNS"  # "1": ``LocalStack.lean_runs``

REPO_ROOT = Path(__file__).resolve().parents[2]
# Process settings for the in-process functions beside what the template gives them.
_PROCESS_ENV = {
    "POWERTOOLS_TRACE_DISABLED": "true",
    "POWERTOOLS_METRICS_DISABLED": "true",
    "POWERTOOLS_DEV": "false",
    "TZ": "UTC",  # moto's Wait compares a UTC timestamp with naive local time
}


class EventTap:
    """A queue subscribed to the bus with a rule: what a worker would receive."""

    def __init__(self, sqs: Any, url: str) -> None:
        self._sqs = sqs
        self._url = url
        self.events: list[dict[str, Any]] = []

    @classmethod
    def subscribe(
        cls, sqs: Any, events: Any, bus: str, detail_types: list[str], source: str | None = None
    ) -> EventTap:
        """A fresh queue with a rule on ``bus`` for these detail types (and source)."""
        name = f"tap-{uuid.uuid4().hex[:10]}"
        url = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        pattern: dict[str, Any] = {"detail-type": detail_types}
        if source:
            pattern["source"] = [source]
        events.put_rule(Name=name, EventBusName=bus, EventPattern=json.dumps(pattern))
        events.put_targets(Rule=name, EventBusName=bus, Targets=[{"Id": "tap", "Arn": arn}])
        return cls(sqs, url)

    def drain(self) -> list[dict[str, Any]]:
        while True:
            messages = self._sqs.receive_message(QueueUrl=self._url, MaxNumberOfMessages=10).get(
                "Messages", []
            )
            if not messages:
                return self.events
            self.events.extend(as_delivered(m["Body"], ACCOUNT) for m in messages)
            self._sqs.delete_message_batch(
                QueueUrl=self._url,
                Entries=[
                    {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]}
                    for n, m in enumerate(messages)
                ],
            )

    def wait_for(
        self, predicate: Callable[[list[dict[str, Any]]], bool], timeout: float, poll: float = 0.1
    ) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while True:
            events = self.drain()
            if predicate(events) or time.monotonic() > deadline:
                return events
            time.sleep(poll)


log = logging.getLogger(__name__)

# Local webhooks live on loopback; e-mail goes from an address the emulator takes as verified;
# every queue, topic, bus, function and state machine of the emulated account may be a target.
_EVERYTHING = "arn:aws:{}:us-east-1:123456789012:*"
LOCAL_PARAMETERS = {
    # A deployed stack sends the essential events by default (each event is billed); on a
    # developer's machine every lifecycle event is shown (`tickwork watch`, the tests' taps)
    "LifecycleEvents": "all",
    # ... and the counts follow the writes within a second (a deployed stack folds its stream
    # once a minute: each fold is billed)
    "CountSchedule": "rate(1 second)",
    "CountLagSeconds": "0",
    "AllowPrivateTargets": "true",
    "EmailFromAddress": "tickwork@example.com",
    "SqsTargetArns": _EVERYTHING.format("sqs"),
    "SnsTargetArns": _EVERYTHING.format("sns"),
    "EventBusTargetArns": _EVERYTHING.format("events"),
    "LambdaTargetArns": _EVERYTHING.format("lambda"),
    "StateMachineTargetArns": _EVERYTHING.format("states"),
}


def stop_execution(sfn: Any, arn: str, cause: str, attempts: int = 50) -> bool:
    """Stop an execution as StopExecution does; True once stopped.

    moto 5.2.5 raises AttributeError for an execution whose worker has not begun yet (its
    environment is still None; served, the same comes back as an InternalFailure): give it a
    moment, then try again.
    """
    for _ in range(attempts):
        try:
            sfn.stop_execution(executionArn=arn, cause=cause)
            return True
        except (AttributeError, ClientError):
            time.sleep(0.05)
    return False


class LocalStack:
    def __init__(
        self,
        template: Template,
        secret_value: Callable[[str], str] | None = None,
        clock: LocalClock | None = None,
    ) -> None:
        """``secret_value(name)`` gives each generated secret its value (random if None; the
        local service keeps them in its state directory so seals survive restarts). ``clock``
        is the stack's time (default: the wall clock; ``LocalClock(virtual=True)`` for virtual
        time, moved on by ``self.time``)."""
        self.template = template
        self._secret_value = secret_value or (lambda _name: secrets.token_urlsafe(48))
        self.region = template.region
        self.functions: list[FunctionSpec] = template.functions()
        self.clock = clock or LocalClock()
        self.activity = Activity(self.clock)
        self.runtime = InProcessRuntime(
            self.functions,
            lambda name: template.arn("lambda", f"function:{name}"),
            self.activity,
        )
        self.pollers: list[QueuePoller] = []
        self.schedules: list[ScheduleRunner] = []
        self.outputs: dict[str, str] = {}
        self.api_token: str | None = None
        self.api_auth = "token"  # or "sigv4": how serving_api guards the API
        # RUNNING executions Step Functions allows before ExecutionLimitExceeded (None: no quota)
        self.max_open_executions: int | None = None
        # What fires sent (tickwork_local.outbox); ``tickwork local`` keeps it in a file too.
        self.outbox = Outbox()
        self._clients = _emulator_clients(self.region)
        self._saved_env: dict[str, str | None] = {}
        self._glanced: Glance | None = None
        # Scheduled runs that would find nothing left out on the wall clock too (set by the
        # test suite through the environment: a pump every second of every test's stack reads
        # 16 shards for nothing); off by default, so a stack runs its schedules as AWS does.
        self.lean_runs = os.environ.get(LEAN_RUNS_ENV) == "1"
        self.time = TimeMachine(
            self.clock,
            self.activity,
            lambda: [runner for runner in self.schedules if not runner.stopped],
            self._delivery_queues_empty,
            self._forget_glance,
        )

    @classmethod
    def from_repo(
        cls,
        parameters: dict[str, str] | None = None,
        stack_name: str = "tickwork-local",
        secret_value: Callable[[str], str] | None = None,
        clock: LocalClock | None = None,
    ) -> LocalStack:
        chosen = {**LOCAL_PARAMETERS, **(parameters or {})}
        return cls(
            Template(REPO_ROOT / "template.yaml", stack_name=stack_name, parameters=chosen),
            secret_value,
            clock,
        )

    @contextmanager
    def serving_api(
        self, port: int | None = None, token: str | None = None, auth: str = "token"
    ) -> Iterator[str]:
        """The HTTP API function on a loopback port, as API Gateway would call it: behind a
        bearer token (``api_token``: the one given, else a new random one), or, with ``auth``
        "sigv4", behind SigV4 as the deployed API is (signed with the local credentials)."""
        from tickwork_local.http_api import LocalRoute, serving_api
        from tickwork_local.server import LOCAL_CREDENTIALS
        from tickwork_local.sigv4 import SigV4Verifier

        self.api_token = token or secrets.token_urlsafe(24)
        self.api_auth = auth
        function = next(f for f in self.functions if f.http_api)
        invoke = lambda event: self.runtime.invoke(function.name, event)  # noqa: E731
        verifier = None
        if auth == "sigv4":
            local = {
                LOCAL_CREDENTIALS["AWS_ACCESS_KEY_ID"]: LOCAL_CREDENTIALS["AWS_SECRET_ACCESS_KEY"]
            }
            verifier = SigV4Verifier(local, self.region)
        routes: dict[str, LocalRoute] = {
            "GET /local/outbox": self._outbox_route,
            "GET /local/time": lambda _query, _body: clock_reading(self.clock),
            "POST /local/time": lambda _query, body: advance_request(self.time, body),
        }
        with serving_api(
            invoke, port, self.api_token, verifier, routes, self._clock_headers
        ) as url:
            self.outputs["ApiUrl"] = f"{url}/"
            yield url

    @property
    def refs(self) -> ExecutionRefs:
        """The stack's machines, as its records name their executions (``execution_refs``)."""
        return ExecutionRefs(
            self.outputs["StateMachineArn"], self.outputs.get("BatchStateMachineArn")
        )

    def client(self, service: str) -> Any:
        return self._clients.client(service)

    def _clock_headers(self) -> dict[str, str]:
        """Every answer of a virtual-time stack's API says so, and what its now is."""
        if not self.clock.virtual:
            return {}
        return {"X-Tickwork-Clock": f"virtual; now={iso(self.clock.now())}"}

    def _outbox_route(self, query: dict[str, str], _body: Any = None) -> dict[str, Any]:
        """GET /local/outbox[?kind=sms&id=ACTION&limit=N]: what fires sent, newest first.
        A ``limit`` that is not 1 to 1000 in ASCII digits is refused (a 400 naming it)."""
        messages = self.outbox.messages(query.get("kind"), query.get("id"))
        given = query.get("limit", "100")
        if not re.fullmatch(r"[0-9]{1,4}", given) or not 1 <= int(given) <= 1000:
            raise ValidationFailed.of(
                "limit", f"{given[:20]!r} is not a whole number from 1 to 1000", "give e.g. 50"
            )
        answer = {"messages": messages[: int(given)], "total": len(messages)}
        return {**answer, "virtualTime": True} if self.clock.virtual else answer

    def add_function(
        self, name: str, handler: Callable[[dict[str, Any], Any], Any], timeout: int = 30
    ) -> str:
        """A Lambda function of the user's, run in this process when invoked (the emulator has
        no Docker): a target for LAMBDA_INVOKE actions. Returns its ARN."""
        self.runtime.add(name, handler, timeout)
        created = self.client("lambda").create_function(
            FunctionName=name,
            Runtime="python3.12",
            Role=self._role(),
            Handler="inline",
            Code={"ZipFile": _placeholder_zip()},
            Timeout=timeout,
        )
        return str(created["FunctionArn"])

    # --- lifecycle --------------------------------------------------------------------------
    @contextmanager
    def running(self) -> Iterator[LocalStack]:
        require_supported_moto()  # the patches below are written for one moto release
        self._set_env()
        try:
            # The emulator's fixes first: atomic_items then guards what they replaced too (a
            # transaction's own snapshot is taken under the same lock as its writes).
            with (
                self.runtime.installed(),
                tuned_emulator(),
                emulator_on_clock(self.clock, self.activity),
                atomic_items(),
                open_execution_quota(lambda: self.max_open_executions),
                self.outbox.installed(),
            ):
                self._create_resources()
                self.outbox.push_topic_arn = self.outputs.get("PushTopicArn")
                self.outbox.clock = self.clock
                workers: list[QueuePoller | ScheduleRunner] = [*self.pollers, *self.schedules]
                for worker in workers:
                    worker.start()
                try:
                    yield self
                finally:
                    for worker in workers:
                        worker.stop()
                    self._abort_executions()
                    for worker in workers:
                        worker.join(timeout=5)
        finally:
            self._restore_env()

    def _abort_executions(self) -> None:
        """Stop waiting executions, so no interpreter thread outlives the emulator."""
        sfn = self.client("stepfunctions")
        for execution in self.running_arns():
            if not stop_execution(sfn, execution, "local stack stopping"):
                log.warning("could not stop %s: its interpreter never began", execution)

    @property
    def machines(self) -> list[str]:
        """The stack's state machines: the fire machine, and the batch machine."""
        names = ("StateMachineArn", "BatchStateMachineArn")
        return [self.outputs[name] for name in names if name in self.outputs]

    def _set_env(self) -> None:
        env: dict[str, str] = {"AWS_DEFAULT_REGION": self.region, **_PROCESS_ENV}
        for spec in self.functions:
            for key, value in spec.environment.items():
                if env.get(key, value) != value:
                    raise ValueError(f"functions disagree on {key}: in process they share one env")
                env[key] = value
        # The CLI reaches the local stack without --stack: what a fire suggests says none. A
        # text put with `tickwork templates` is what the next fire sends: no cache.
        env["STACK_NAME"] = ""
        env["TEXT_CACHE_SECONDS"] = "0"
        for key, value in env.items():
            self._saved_env[key] = os.environ.get(key)
            os.environ[key] = value
        time.tzset()
        from tickwork import bootstrap  # a new stack is a cold start for every function

        bootstrap.use_clock(self.clock)  # every function's "now" is the stack's

    def _restore_env(self) -> None:
        from tickwork import bootstrap

        bootstrap.use_clock(None)
        for key, value in self._saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        time.tzset()

    # --- resources --------------------------------------------------------------------------
    def _create_resources(self) -> None:
        t = self.template
        for logical in t.of_type("AWS::Events::EventBus"):
            self.client("events").create_event_bus(Name=t.resolve({"Ref": logical}))
        for logical in t.of_type("AWS::DynamoDB::Table"):
            t.create_table(self.client("dynamodb"), logical)
        for logical in t.of_type("AWS::SecretsManager::Secret"):
            name = t.resolve({"Fn::GetAtt": [logical, "Name"]})
            self.client("secretsmanager").create_secret(
                Name=name, SecretString=self._secret_value(name)
            )
        for logical in t.of_type("AWS::SNS::Topic"):
            self.client("sns").create_topic(Name=t.resolve({"Fn::GetAtt": [logical, "TopicName"]}))
        for resource in t.of_type("AWS::SES::EmailIdentity").values():
            address = t.resolve(resource["Properties"]["EmailIdentity"])
            self.client("ses").verify_email_identity(EmailAddress=address)
        sqs = self.client("sqs")
        for logical in t.of_type("AWS::SQS::Queue"):
            name = t.resolve({"Fn::GetAtt": [logical, "QueueName"]})
            t.set_ref(logical, sqs.create_queue(QueueName=name)["QueueUrl"])
        role = self._role()
        lam = self.client("lambda")
        for spec in self.functions:
            lam.create_function(
                FunctionName=spec.name,
                Runtime="python3.12",
                Role=role,
                Handler=spec.handler,
                Code={"ZipFile": _placeholder_zip()},
                Timeout=spec.timeout,
                Environment={"Variables": spec.environment},
            )
            for rule in spec.rules:
                self._deliver_rule(spec, rule.name, rule.bus, rule.pattern)
            for schedule in spec.schedules:
                runner = ScheduleRunner(
                    schedule,
                    self._invoker(spec.name),
                    ACCOUNT,
                    self.clock,
                    self.activity,
                    useful_runs(spec.logical_id, self._glance),
                    lean=self.lean_runs,
                    fresh=self._forget_glance,
                )
                runner.function = spec.logical_id
                self.schedules.append(runner)
        sfn = self.client("stepfunctions")
        for logical, resource in t.of_type("AWS::Serverless::StateMachine").items():
            sfn.create_state_machine(
                name=t.resolve({"Fn::GetAtt": [logical, "Name"]}),
                definition=t.state_machine_definition(logical, _LOCAL_DEFINITION),
                roleArn=role,
                type=resource["Properties"].get("Type", "STANDARD"),
            )
        self.outputs = t.outputs()

    def _role(self) -> str:
        iam = self.client("iam")
        name = f"{self.template.stack_name}-local"
        try:  # created first: a new emulator has none, and a refused call costs twice a call
            created = iam.create_role(RoleName=name, AssumeRolePolicyDocument="{}")
            return str(created["Role"]["Arn"])
        except iam.exceptions.EntityAlreadyExistsException:
            return str(iam.get_role(RoleName=name)["Role"]["Arn"])

    def _queue(self, name: str, visibility: int = 1) -> tuple[str, str]:
        sqs = self.client("sqs")
        url = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": str(visibility)})[
            "QueueUrl"
        ]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        return url, arn

    def _deliver_rule(
        self, spec: FunctionSpec, rule: str, bus: str, pattern: dict[str, Any]
    ) -> None:
        events = self.client("events")
        url, arn = self._queue(rule[:80])
        events.put_rule(Name=rule[:64], EventBusName=bus, EventPattern=json.dumps(pattern))
        events.put_targets(
            Rule=rule[:64], EventBusName=bus, Targets=[{"Id": "function", "Arn": arn}]
        )
        dead_letters = self.template.of_type("AWS::SQS::Queue")
        dlq = self.template.resolve({"Ref": next(iter(dead_letters))}) if dead_letters else None
        self.pollers.append(
            QueuePoller(self.client("sqs"), url, self._invoker(spec.name), dlq, ACCOUNT)
        )

    def _invoker(self, function_name: str) -> Callable[[dict[str, Any]], str | None]:
        """Deliver an event to a function; the error type, or None when it succeeded."""
        return lambda event: self.runtime.invoke(function_name, event)[1]

    # --- driving it ---------------------------------------------------------------------------
    @property
    def bus(self) -> str:
        return self.outputs["EventBusName"]

    def publish(
        self, detail_type: str, detail: dict[str, Any] | str, source: str = "app.orders"
    ) -> str:
        entry = {
            "EventBusName": self.bus,
            "Source": source,
            "DetailType": detail_type,
            "Detail": detail if isinstance(detail, str) else json.dumps(detail),
        }
        response = self.client("events").put_events(Entries=[entry])
        if response.get("FailedEntryCount"):
            raise RuntimeError(f"bus refused the event: {response['Entries']}")
        return str(response["Entries"][0]["EventId"])

    def tap(self, detail_types: list[str], source: str | None = None) -> EventTap:
        """Subscribe a fresh queue to the bus for these detail types (what a worker does)."""
        return EventTap.subscribe(
            self.client("sqs"), self.client("events"), self.bus, detail_types, source
        )

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Wait until no execution runs and every delivery queue is empty."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running_arns() and self._delivery_queues_empty():
                return
            time.sleep(0.1)
        raise TimeoutError("the stack did not go idle")

    def _glance(self) -> Glance:
        """The table as the scheduled runs would find it, read once a step of the time
        machine (``_forget_glance``)."""
        if self._glanced is None:
            self._glanced = glance_at(
                self._actions_items(GLANCED),
                self.running_arns,
                self.refs,
                self.unfolded_since(),
                float(self.template.parameters.get("CountLagSeconds") or 0),
            )
        return self._glanced

    @contextmanager
    def unstreamed(self) -> Iterator[None]:
        """The actions table's writes meanwhile kept off its stream (a restart putting back
        what the last process kept: the count function counted those writes then)."""
        table = self._actions_table()
        shard, table.stream_shard = table.stream_shard, None
        try:
            yield
        finally:
            table.stream_shard = shard

    def counts_restored(self) -> None:
        """After a restart: the folds go on from the stream as it is now (the numbers ``#tally``
        kept were the last process's stream's), and the counts by status are rebuilt from the
        records — a write the last process made and had not folded when it died is in them.
        (A fire such a write recorded is not in the fire totals: a local stack killed within a
        second of recording a fire can miss it there.)"""
        from tickwork.adapters.dynamodb_recount import recount

        table = self._actions_table()
        shard = table.stream_shard
        resource = self._clients.table(self.outputs["ActionsTableName"])
        stored = resource.get_item(Key={"id": TALLY_ITEM_ID}).get("Item") or {}
        done = {}
        if shard is not None and shard.items:
            done[shard.id] = str(shard.starting_sequence_number + len(shard.items) - 1)
        version = int(str(stored.get("version", 0))) + 1
        resource.put_item(Item={"id": TALLY_ITEM_ID, "version": version, "done": done})
        recount(resource)

    def _actions_table(self) -> Any:
        from moto.dynamodb.models import dynamodb_backends

        return dynamodb_backends[ACCOUNT][self.region].tables[self.outputs["ActionsTableName"]]

    def unfolded(self) -> bool:
        """Whether the actions table's stream holds a write of an action after the last one
        the folds read (``#tally``'s ``done``), read from the emulator's own table."""
        return self.unfolded_since() is not None

    def unfolded_since(self) -> float | None:
        """When the oldest write of an action the folds have not read was made (unix seconds,
        as the stream stamps it); 0 for a fold under way, None when there is none."""
        from moto.dynamodb.models.dynamo_type import DynamoType

        table = self._actions_table()
        shard = table.stream_shard
        if shard is None:
            return None
        tally: Any = table.items.get(DynamoType({"S": TALLY_ITEM_ID}))
        done: Any = None
        if tally is not None:
            if "intent" in tally.attrs:
                return 0.0
            known = tally.attrs.get("done")
            done = known.value.get(shard.id) if known is not None else None
        after = shard.starting_sequence_number if done is None else int(done.value) + 1
        for record in shard.items[max(after - shard.starting_sequence_number, 0) :]:
            written = record.record["dynamodb"]
            if not str(written["Keys"]["id"]["S"]).startswith("#"):
                made = written["ApproximateCreationDateTime"]  # moto's: naive, UTC
                return float(made.replace(tzinfo=UTC).timestamp())
        return None

    def fold_now(self) -> None:
        """Run the count function as a run asked for by hand (``{"lagSeconds": 0}``): every
        write waiting folded now, as the scheduled run would once CountLagSeconds passed."""
        count = next(spec.name for spec in self.functions if spec.logical_id == "CountFunction")
        _, error = self.runtime.invoke(count, {"lagSeconds": 0})
        if error is not None:
            raise RuntimeError(f"the count function failed: {error}")

    def running_arns(self) -> set[str]:
        """The executions of the stack's state machines running now, read from the emulator's
        own state machines (the time machine asks at most once a step, when the stack is
        idle), as ListExecutions with ``statusFilter=RUNNING`` answers, every page of it."""
        from moto.stepfunctions.responses import get_backend

        backend = get_backend(ACCOUNT, self.region)  # the backend ListExecutions answers from
        return {
            execution.execution_arn
            for machine in self.machines
            for execution in list(backend.describe_state_machine(machine).executions)
            if execution.status == "RUNNING"  # ListExecutions' statusFilter, unpaged
        }

    def _actions_items(self, names: tuple[str, ...]) -> list[dict[str, str]]:
        """The named attributes of every item of the actions table, read from the emulator's
        own table rather than a Scan through botocore (this is read at every step of the time
        machine, when the stack is idle). A write by a request meanwhile (the HTTP API) that
        resizes the table while it is read makes it read again."""
        from moto.dynamodb.models import dynamodb_backends

        table = dynamodb_backends[ACCOUNT][self.region].tables[self.outputs["ActionsTableName"]]
        while True:
            try:
                items: list[Any] = list(table.items.values())  # hash key only: one item each
                return [{n: i.attrs[n].value for n in names if n in i.attrs} for i in items]
            except RuntimeError:  # dictionary changed size during iteration
                continue

    def _forget_glance(self) -> None:
        self._glanced = None

    def _delivery_queues_empty(self) -> bool:
        """No event waits in, or is being handled from, a function's delivery queue: read
        from the emulator's own queues (this is asked often while time is moved on). A queue
        whose poller was stopped (a test's lost delivery) holds events no one will handle."""
        from moto.sqs.models import sqs_backends

        queues = sqs_backends[ACCOUNT][self.region].queues
        for poller in self.pollers:
            if poller.stopped:
                continue
            queue = queues.get(poller.queue_url.rsplit("/", 1)[-1])
            if queue is None or queue._messages:
                return False
        return True


_CLIENTS: dict[str, AwsClients] = {}


def _emulator_clients(region: str) -> AwsClients:
    """The stack's own clients of the emulator in this process, one per service and region
    for every stack it runs (a stack per test made nine clients each time: a fifth of its
    start). The emulator answers whichever ``mock_aws`` is on when a call is made."""
    if region not in _CLIENTS:
        session = boto3.Session(botocore_session=session_sharing_models(), region_name=region)
        _CLIENTS[region] = AwsClients(session)
    return _CLIENTS[region]


def _placeholder_zip() -> bytes:
    """moto wants a code package; the code that runs is loaded from CodeUri in process."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("README.txt", "tickwork local: the handler runs in process from CodeUri")
    return buffer.getvalue()
