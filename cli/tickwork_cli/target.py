"""Which stack a command talks to: the local one (by default) or a deployed one by name.

The local stack writes ``<state dir>/local.json`` when it is ready: its endpoint and the
template's outputs. A deployed stack's outputs come from CloudFormation.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

import boto3

from tickwork import bootstrap
from tickwork.adapters.clients import AwsClients
from tickwork.config import TARGET_LISTS, TARGET_PARAMETERS, Settings
from tickwork.dependencies import Dependencies
from tickwork.domain.times import iso
from tickwork_client.local import LocalStackNotFound, find_local_stack, local_now

__all__ = ["LOCAL_FILE", "StackClock", "Target", "TargetNotFound"]

LOCAL_FILE = "local.json"
REQUIRED_OUTPUTS = ("EventBusName", "ActionsTableName", "StateMachineArn")


class StackClock:
    """A virtual-time local stack's clock, read from its state dir (``local_now``)."""

    def __init__(self, state_dir: Path) -> None:
        self._state_dir = state_dir

    def now(self) -> datetime:
        return local_now(self._state_dir)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class TargetNotFound(Exception):
    """No stack to talk to: says how to start or name one."""


@dataclass(frozen=True)
class Target:
    outputs: dict[str, str]
    region: str
    endpoint_url: str | None = None
    parameters: dict[str, str] | None = None
    api_token: str | None = None  # the local API's bearer token, when it takes one
    local_state: Path | None = None  # a virtual-time local stack's state dir: its clock

    @classmethod
    def local(cls, state_dir: Path) -> Target:
        try:
            found = find_local_stack(state_dir)
        except LocalStackNotFound as missing:
            raise TargetNotFound(
                f"{missing}; or name a deployed stack with --stack NAME (and --region)"
            ) from None
        state = json.loads((state_dir / LOCAL_FILE).read_text())
        return cls(
            state["outputs"],
            found.region,
            found.endpoint,
            state.get("parameters"),
            found.api_token,
            state_dir if found.virtual_time else None,
        )

    @classmethod
    def deployed(cls, stack_name: str, region: str | None = None) -> Target:
        from botocore.exceptions import BotoCoreError, NoCredentialsError, NoRegionError

        try:
            client = boto3.client("cloudformation", region_name=region)
            stack = client.describe_stacks(StackName=stack_name)["Stacks"][0]
        except NoRegionError:
            raise TargetNotFound(
                f"stack {stack_name!r}: no AWS region to look for it in: give --region "
                "(e.g. --region us-east-1), or set AWS_REGION or a profile's region"
            ) from None
        except NoCredentialsError:
            raise TargetNotFound(
                f"stack {stack_name!r}: no AWS credentials to read it with: configure a profile "
                "(aws configure, aws sso login) or set AWS_PROFILE / AWS_ACCESS_KEY_ID. For the "
                "local stack, leave out --stack"
            ) from None
        except BotoCoreError as error:
            raise TargetNotFound(f"stack {stack_name!r}: {error}") from None
        except Exception as error:  # ClientError: the stack does not exist, or access denied
            raise TargetNotFound(f"stack {stack_name!r}: {error}") from None
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
        missing = [name for name in REQUIRED_OUTPUTS if name not in outputs]
        if missing:
            raise TargetNotFound(f"stack {stack_name!r} has no outputs {missing}: is it tickwork?")
        parameters = {
            p["ParameterKey"]: p.get("ParameterValue", "") for p in stack.get("Parameters", [])
        }
        return cls(outputs, client.meta.region_name, None, parameters)

    def _session(self) -> boto3.Session:
        if self.endpoint_url:  # the local emulator: never send real credentials to it
            return boto3.Session(
                aws_access_key_id="tickwork-local",
                aws_secret_access_key="tickwork-local",
                aws_session_token="tickwork-local",
                region_name=self.region,
            )
        return boto3.Session(region_name=self.region)

    @cached_property
    def aws(self) -> AwsClients:
        """This stack's clients: one per service, made at first use with this session."""
        return AwsClients(self._session(), self.endpoint_url)

    def client(self, service: str) -> Any:
        return self.aws.client(service)

    def api_signer(self) -> Any:
        """How a call to this stack's API is authorised: SigV4 with this session's credentials
        (a deployed stack, or a local one serving SigV4), else the local API's token."""
        from tickwork_cli.dashboard import BearerSigner, SigV4Signer

        if self.api_token:
            return BearerSigner(self.api_token)
        credentials = self._session().get_credentials()
        if credentials is None:
            raise TargetNotFound(
                "no AWS credentials to sign the API's calls with: configure a profile "
                "(aws configure) or set AWS_PROFILE / AWS_ACCESS_KEY_ID"
            )
        return SigV4Signer(credentials, self.region)

    def dependencies(self) -> Dependencies:
        """The same ports the functions use, built by the same bootstrap, pointed at this stack
        with this session's credentials. A CLI command validates, reads and steers; it never
        fires, so notifications are set to the log-only delivery it never calls. An execution it
        starts (run now, resume, retry) is proved with the stack's seal key, which an operator's
        credentials may read (SealKeyArn)."""
        parameters = self.parameters or {}
        settings = Settings.from_environment(
            {
                "TABLE_NAME": self.outputs["ActionsTableName"],
                "EVENT_BUS_NAME": self.outputs["EventBusName"],
                "STATE_MACHINE_ARN": self.outputs["StateMachineArn"],
                "BATCH_STATE_MACHINE_ARN": self.outputs.get("BatchStateMachineArn", ""),
                # Executions started by hand (run now, resume, retry) carry a proved order.
                "SEAL_SECRET_ARN": self.outputs.get("SealKeyArn", ""),
                "EVENT_SOURCE": parameters.get("EventSource", "tickwork"),
                "LOCK_SECONDS": parameters.get("LockSeconds", ""),
                "LAUNCH_AHEAD_SECONDS": parameters.get("LaunchAheadSeconds", ""),
                # The fires it parks (resume, run now, retry, a calendar's re-plan) launch when
                # the stack's pump looks for them: the same windows and near parking.
                "BATCH_WINDOW_SECONDS": parameters.get("BatchWindowSeconds", ""),
                "NEAR_PARK_SECONDS": parameters.get("NearParkSeconds", ""),
                # Its executions (run now, resume, retry) wait as the stack's do.
                "FIRE_PRECISION": parameters.get("FirePrecision", ""),
                # Where the stack's last rejections are kept (a ring of this many slots).
                "KEEP_REJECTIONS": parameters.get("KeepRejections", ""),
                "SLOTS_TABLE_NAME": self.outputs.get("SlotsTableName", ""),
                "NOTIFICATION_DELIVERY": "log",
                # The same targets the stack may reach, so the CLI refuses what it would.
                "TARGET_ROLE_PATH": parameters.get("TargetRolePath", ""),
                **{
                    variable: parameters.get(TARGET_PARAMETERS[service], "")
                    for service, variable in TARGET_LISTS.items()
                },
            }
        )
        if self.local_state is not None:  # checks and "now" on the stack's virtual time
            return bootstrap.build(settings, self.aws, clock=StackClock(self.local_state))
        return bootstrap.build(settings, self.aws)

    def now(self) -> datetime:
        """The stack's now: a virtual-time local stack's, else the wall clock."""
        return local_now(self.local_state) if self.local_state else datetime.now(UTC)

    def clock_note(self) -> str | None:
        """For what the CLI shows people: that its times are a local stack's virtual time."""
        if self.local_state is None:
            return None
        return f"times are virtual (tickwork local --virtual-time): its now is {iso(self.now())}"

    def describe(self) -> dict[str, str]:
        described = dict(self.outputs)
        if self.endpoint_url:
            described["AwsEndpointUrl"] = self.endpoint_url
        described["Region"] = self.region
        return described
