"""Settings read once per cold start from the function's environment (set in template.yaml)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

__all__ = [
    "LIFECYCLE_EVENTS",
    "MAX_BATCH_FIRES",
    "MAX_BATCH_WINDOW",
    "MAX_HISTORY",
    "MAX_LAUNCH_AHEAD",
    "MIN_NEAR_PARK",
    "NOTIFICATION_DELIVERIES",
    "TARGET_LISTS",
    "TARGET_PARAMETERS",
    "Settings",
    "parse_limits",
]

MAX_HISTORY = 200
MAX_KEPT_REJECTIONS = 1000  # the KeepRejections parameter's bound
MAX_LAUNCH_AHEAD = timedelta(days=300)
MIN_NEAR_PARK = timedelta(seconds=120)  # two of the pump's shortest periods (rate(1 minute))
# A batch task runs every fire at once (one thread each) and ends well inside its timeout: a
# batch of 500 TICK fires takes about 3 s of a 60 s task on the local stack.
MAX_BATCH_FIRES = 500
# A batch's task sleeps through its window, then a target may take its 30 s: inside the
# fulfill function's 60 s timeout.
MAX_BATCH_WINDOW = timedelta(seconds=20)
# How SEND_NOTIFICATION delivers: "aws" sends (SES, SNS); "log" only logs (a development
# setting, chosen explicitly, never a default).
NOTIFICATION_DELIVERIES = ("aws", "log")
# Which events tickwork puts on its bus: "all", or "essential" (domain.events.ESSENTIAL).
LIFECYCLE_EVENTS = ("all", "essential")
# When a lone fire at a fraction of a second fires (FirePrecision): the next whole second, or
# its millisecond.
FIRE_PRECISIONS = ("second", "millisecond")
# The stack's allow-lists of target ARNs, by IAM service prefix, and their environment names.
TARGET_LISTS = {
    "sqs": "TARGET_ARNS_SQS",
    "sns": "TARGET_ARNS_SNS",
    "events": "TARGET_ARNS_EVENTS",
    "lambda": "TARGET_ARNS_LAMBDA",
    "states": "TARGET_ARNS_STATES",
}
# The template parameters that set them.
TARGET_PARAMETERS = {
    "sqs": "SqsTargetArns",
    "sns": "SnsTargetArns",
    "events": "EventBusTargetArns",
    "lambda": "LambdaTargetArns",
    "states": "StateMachineTargetArns",
}


@dataclass(frozen=True)
class Settings:
    table_name: str
    event_bus_name: str
    state_machine_arn: str
    event_source: str = "tickwork"
    lock: timedelta = timedelta(minutes=2)
    # A fire further away than this waits in the table (parked); the pump starts its execution
    # when it comes this close. Standard executions live at most a year.
    launch_ahead: timedelta = timedelta(minutes=15)
    # A new action's first fire further away than this (and within launch_ahead) is parked due
    # now, for the pump's next run: the near fires of one batch window created between two runs
    # share an execution instead of a StartExecution each. 0: every such fire is started at
    # once (the default: a near fire does not depend on the pump's next run). Keep it above the
    # pump's period, so that a fire is launched before it is due.
    near_park: timedelta = timedelta(0)
    early_tolerance: timedelta = timedelta(seconds=5)
    # FirePrecision: "second" — a lone fire's execution waits to the whole second at or after
    # its fire time (Step Functions' Wait ends on whole seconds), so its task never sleeps;
    # "millisecond" — it waits to the second before and its task sleeps off the milliseconds.
    fire_precision: str = "second"
    past_grace: timedelta = timedelta(seconds=60)
    # A fire not happened by its time plus this is missed: the watchdog (run with the reconciler)
    # announces it (Schedule Missed) and the action needs attention until it fires.
    missed_grace: timedelta = timedelta(minutes=5)
    # Fires a record keeps: 10, as a Temporal schedule keeps its 10 most recent actions. A
    # recurring record then stays under 2 KB, two write units a write (README, "Batches").
    history_limit: int = 5  # HistoryLimit: a recurring record under 1 KB
    keep_rejections: int = 100  # the last rejections kept for `tickwork rejections` (0: none)
    # Status changes a record keeps (a recurring fire makes two: its claim, its return).
    transition_limit: int = 10
    finished_ttl: timedelta = timedelta(days=30)
    slots_table_name: str | None = None
    concurrency_limits: dict[str, int] = field(default_factory=dict)
    slot_lease: timedelta = timedelta(minutes=2)
    seal_secret_id: str | None = None  # the key of record seals; None only in unit tests
    http_secret_id: str | None = None  # signs outbound HTTP fulfillments
    start_secret_id: str | None = None  # when set, every inbound event must be signed
    signatures_table_name: str | None = None  # signatures already used (each is used once)
    allow_private_targets: bool = False  # HTTP fulfillments to private addresses (local stack)
    notification_delivery: str | None = None  # required where notifications are sent
    lifecycle_events: str = "all"
    email_from: str | None = None  # SES identity e-mails are sent from
    email_template_prefix: str = ""  # SES template = prefix + templateType
    text_parameter_path: str = "/tickwork/templates/"  # SSM parameter = path + templateType
    push_topic_arn: str | None = None
    stack_name: str | None = None  # the deployed stack, as the CLI's --stack names it
    text_cache_seconds: int = 300  # SMS and push texts read from SSM are reused this long
    # Targets the fulfill function's own role may reach (fnmatch patterns), by service; an
    # action with a roleArn under target_role_path runs under that role instead.
    target_arns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    target_role_path: str = "/tickwork-targets/"
    # Fires due in the same second share one execution of the batch machine (fire.fire_batch).
    batch_state_machine_arn: str | None = None  # None: no batches (FireBatching=false)
    # The batch machine, batches on or off: records may name its executions either way.
    named_batch_machine_arn: str | None = None
    batch_min_fires: int = 5
    batch_max_fires: int = 100
    # Fires due within one window of this many seconds (from the epoch on) may share a batch;
    # its task sleeps to each member's millisecond.
    batch_window: timedelta = timedelta(seconds=20)
    retry_interval: timedelta = timedelta(seconds=2)  # a fire handed over by a batch waits this
    # A pump run launches this many fires itself; each further share of as many goes to a pump
    # worker (fire.pump, PumpShareFires).
    pump_share: int = 1000
    # Retries after a transient failure (RetryMaxAttempts): a fire gets 1 + this many attempts,
    # lone or batched (a batch's attempts count against its own execution's).
    retry_max_attempts: int = 5

    @property
    def home(self) -> tuple[str, str, str]:
        """(partition, region, account) the stack runs in, read from its state machine's ARN."""
        parts = self.state_machine_arn.split(":")
        return (parts[1], parts[3], parts[4]) if len(parts) > 4 else ("aws", "", "")

    def __post_init__(self) -> None:
        if not 0 <= self.keep_rejections <= MAX_KEPT_REJECTIONS:
            raise ValueError(
                f"KEEP_REJECTIONS={self.keep_rejections} is outside 0-{MAX_KEPT_REJECTIONS}"
            )
        if not 1 <= self.history_limit <= MAX_HISTORY:
            raise ValueError(
                f"HISTORY_LIMIT={self.history_limit} is outside 1-{MAX_HISTORY}: a record keeps "
                "that many occurrences and must stay under DynamoDB's 400 KB item limit"
            )
        if not 1 <= self.transition_limit <= MAX_HISTORY:
            raise ValueError(
                f"TRANSITION_LIMIT={self.transition_limit} is outside 1-{MAX_HISTORY}: a record "
                "keeps that many status changes and must stay under DynamoDB's 400 KB item limit"
            )
        if not timedelta(0) < self.launch_ahead <= MAX_LAUNCH_AHEAD:
            raise ValueError(
                f"LAUNCH_AHEAD_SECONDS={self.launch_ahead.total_seconds():g} is outside "
                f"1-{MAX_LAUNCH_AHEAD.total_seconds():g}: an execution waits at most that long, "
                "and a Standard execution lives at most a year"
            )
        if self.near_park and not MIN_NEAR_PARK <= self.near_park < self.launch_ahead:
            raise ValueError(
                f"NEAR_PARK_SECONDS={self.near_park.total_seconds():g} is outside "
                f"{MIN_NEAR_PARK.total_seconds():g}-{self.launch_ahead.total_seconds():g} "
                "(LAUNCH_AHEAD_SECONDS, excluded): give 0 to start every fire within the horizon "
                "at once, or the seconds from which a new action's first fire waits for the "
                "pump's next run — two of its periods at least (it runs at most once a minute), "
                "and under the horizon (past it, every such fire is parked anyway)"
            )
        if self.concurrency_limits and not self.slots_table_name:
            raise ValueError("CONCURRENCY_LIMITS is set but SLOTS_TABLE_NAME is not: set both")
        if not 2 <= self.batch_min_fires <= self.batch_max_fires <= MAX_BATCH_FIRES:
            raise ValueError(
                f"BATCH_MIN_FIRES={self.batch_min_fires}, BATCH_MAX_FIRES={self.batch_max_fires}: "
                f"give 2 <= BatchMinFires <= BatchMaxFires <= {MAX_BATCH_FIRES}"
            )
        if not timedelta(seconds=1) <= self.batch_window <= MAX_BATCH_WINDOW or (
            self.batch_window.total_seconds() % 1
        ):
            raise ValueError(
                f"BATCH_WINDOW_SECONDS={self.batch_window.total_seconds():g}: give whole "
                f"seconds, 1-{MAX_BATCH_WINDOW.total_seconds():g} (a batch's task sleeps through "
                "its window inside the fulfill function's timeout)"
            )
        if self.fire_precision not in FIRE_PRECISIONS:
            raise ValueError(
                f"FIRE_PRECISION={self.fire_precision!r}: give one of "
                f"{', '.join(FIRE_PRECISIONS)} (second: a fire at a fraction of a second fires "
                "at the next whole second; millisecond: at its millisecond, its task asleep "
                "until then)"
            )
        if self.lifecycle_events not in LIFECYCLE_EVENTS:
            raise ValueError(
                f"LIFECYCLE_EVENTS={self.lifecycle_events!r}: give one of "
                f"{', '.join(LIFECYCLE_EVENTS)}"
            )
        delivery = self.notification_delivery
        if delivery is not None and delivery not in NOTIFICATION_DELIVERIES:
            raise ValueError(
                f"NOTIFICATION_DELIVERY={delivery!r} is not one of "
                f"{', '.join(NOTIFICATION_DELIVERIES)}"
            )

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env

        def seconds(name: str, default: timedelta) -> timedelta:
            return timedelta(seconds=float(env[name])) if env.get(name) else default

        return cls(
            table_name=env["TABLE_NAME"],
            event_bus_name=env["EVENT_BUS_NAME"],
            state_machine_arn=env["STATE_MACHINE_ARN"],
            event_source=env.get("EVENT_SOURCE", "tickwork"),
            lock=seconds("LOCK_SECONDS", cls.lock),
            launch_ahead=seconds("LAUNCH_AHEAD_SECONDS", cls.launch_ahead),
            near_park=seconds("NEAR_PARK_SECONDS", cls.near_park),
            early_tolerance=seconds("EARLY_TOLERANCE_SECONDS", cls.early_tolerance),
            fire_precision=env.get("FIRE_PRECISION") or cls.fire_precision,
            past_grace=seconds("PAST_GRACE_SECONDS", cls.past_grace),
            missed_grace=seconds("MISSED_GRACE_SECONDS", cls.missed_grace),
            history_limit=int(env.get("HISTORY_LIMIT", cls.history_limit)),
            keep_rejections=int(env.get("KEEP_REJECTIONS") or cls.keep_rejections),
            transition_limit=int(env.get("TRANSITION_LIMIT", cls.transition_limit)),
            finished_ttl=timedelta(days=float(env.get("FINISHED_TTL_DAYS", 30))),
            slots_table_name=env.get("SLOTS_TABLE_NAME") or None,
            concurrency_limits=parse_limits(env.get("CONCURRENCY_LIMITS", "")),
            slot_lease=seconds("SLOT_LEASE_SECONDS", cls.slot_lease),
            seal_secret_id=env.get("SEAL_SECRET_ARN") or None,
            http_secret_id=env.get("HTTP_SECRET_ARN") or None,
            start_secret_id=env.get("START_SECRET_ARN") or None,
            signatures_table_name=env.get("SIGNATURES_TABLE_NAME") or None,
            allow_private_targets=env.get("ALLOW_PRIVATE_TARGETS", "").lower() == "true",
            notification_delivery=env.get("NOTIFICATION_DELIVERY") or None,
            lifecycle_events=env.get("LIFECYCLE_EVENTS") or cls.lifecycle_events,
            email_from=env.get("EMAIL_FROM_ADDRESS") or None,
            email_template_prefix=env.get("EMAIL_TEMPLATE_PREFIX", ""),
            text_parameter_path=env.get("TEXT_PARAMETER_PATH") or cls.text_parameter_path,
            push_topic_arn=env.get("PUSH_TOPIC_ARN") or None,
            stack_name=env.get("STACK_NAME") or None,
            text_cache_seconds=int(env.get("TEXT_CACHE_SECONDS") or 300),
            target_arns={
                service: tuple(p.strip() for p in env.get(name, "").split(",") if p.strip())
                for service, name in TARGET_LISTS.items()
            },
            target_role_path=env.get("TARGET_ROLE_PATH") or cls.target_role_path,
            batch_state_machine_arn=(
                env.get("BATCH_STATE_MACHINE_ARN") or None
                if env.get("FIRE_BATCHING", "true").lower() == "true"
                else None
            ),
            named_batch_machine_arn=env.get("BATCH_STATE_MACHINE_ARN") or None,
            batch_min_fires=int(env.get("BATCH_MIN_FIRES", cls.batch_min_fires)),
            batch_max_fires=int(env.get("BATCH_MAX_FIRES", cls.batch_max_fires)),
            batch_window=seconds("BATCH_WINDOW_SECONDS", cls.batch_window),
            retry_interval=seconds("RETRY_INTERVAL_SECONDS", cls.retry_interval),
            pump_share=int(env.get("PUMP_SHARE_FIRES", cls.pump_share)),
            retry_max_attempts=int(env.get("RETRY_MAX_ATTEMPTS", cls.retry_max_attempts)),
        )


def parse_limits(text: str) -> dict[str, int]:
    """ "HTTP_REQUEST=10, SEND_NOTIFICATION=50" → {"HTTP_REQUEST": 10, ...}; "" → no limits."""
    limits: dict[str, int] = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        name, _, value = entry.partition("=")
        if not name.strip() or not value.strip().isdigit() or int(value) < 1:
            raise ValueError(
                f"CONCURRENCY_LIMITS entry {entry!r} is not TYPE=N with N of 1 or more; "
                'write e.g. "HTTP_REQUEST=10,SEND_NOTIFICATION=50"'
            )
        limits[name.strip()] = int(value)
    return limits
