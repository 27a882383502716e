"""What AWS bills beside the calls: Lambda's own log lines, X-Ray traces at the template's
setting, and the table storage (with its continuous backups) a fire leaves behind.

- Logs: each invocation's standard output as measured (benchkit/recorder.py) plus Lambda's
  START, END and REPORT lines (the text format, sized from the lines below, as Lambda writes
  them), each line a log event that CloudWatch Logs ingests with 26 bytes of its own.
- Traces: none unless the template traces (``Tracing: Active``); then each invocation and
  execution is a trace, as X-Ray's default sampling rule takes them: the first each second and
  5 % of the rest.
- Storage: an item's attributes plus 100 bytes, and an entry in each index it is in, for as long
  as it is kept: a one-off's record for the 30 days after its fire (``ttl``), a recurring
  action's for the time between its fires.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchkit import prices
from benchkit.indexes import ENTRY_OVERHEAD, IndexSpec
from benchkit.recorder import Invocation
from tickwork.adapters.dynamodb_sizes import item_size
from tickwork_local.template import load_yaml

__all__ = ["PLATFORM_LINES", "Tracing", "ingested_log_bytes", "stored_bytes", "tracing"]

_REQUEST = "6bc28136-xmpl-4365-b021-0ce6b2e64ab0"
PLATFORM_LINES = (
    f"START RequestId: {_REQUEST} Version: $LATEST\n",
    f"END RequestId: {_REQUEST}\n",
    f"REPORT RequestId: {_REQUEST}\tDuration: 24.52 ms\tBilled Duration: 25 ms\t"
    "Memory Size: 256 MB\tMax Memory Used: 84 MB\t\n",
)
XRAY_LINE = (
    "XRAY TraceId: 1-5e34a614-10bdxmplf1fb44f07bc535a1\tSegmentId: 3913xmpl20999446\t"
    "Sampled: true\n"
)
DAYS_KEPT = 30  # usecases' finished_ttl: a finished record is kept 30 days
SECONDS_A_MONTH = 30.44 * 86_400


def ingested_log_bytes(
    invocation: Invocation, traced: bool = False, system_lines: bool = True
) -> int:
    """What CloudWatch Logs ingests for one invocation: what it wrote, and Lambda's own lines
    when its system log level lets them through (``system_lines``: INFO, the text format's
    only level; at WARN a successful invocation has none)."""
    lines = [*PLATFORM_LINES, *([XRAY_LINE] if traced else [])] if system_lines else []
    platform = sum(len(line.encode()) for line in lines)
    events = len(lines) + invocation.log_events
    return invocation.log_bytes + platform + events * prices.CLOUDWATCH_LOG_EVENT_OVERHEAD


@dataclass(frozen=True)
class Tracing:
    functions: bool  # Lambda's Tracing: Active
    machines: bool  # the state machines' Tracing
    # Lambda writes its START/END/REPORT lines: the text log format, or a LoggingConfig whose
    # SystemLogLevel is INFO or DEBUG (its Globals')
    system_lines: bool = True

    @staticmethod
    def sampled(count: int, seconds: float) -> float:
        """Traces X-Ray's default rule keeps of ``count`` over ``seconds``: one a second, then
        5 % of the rest."""
        if count <= 0:
            return 0.0
        reservoir = min(count, max(1.0, seconds))
        return reservoir + 0.05 * (count - reservoir)


def tracing(template_path: Any, parameters: dict[str, str]) -> Tracing:
    """Whether the template, with these parameters, traces its functions and machines."""
    template = load_yaml(template_path)
    defaults = {k: str(v.get("Default", "")) for k, v in template["Parameters"].items()}
    given = {**defaults, **parameters}

    conditions = template.get("Conditions", {})

    def value(node: Any) -> Any:
        if isinstance(node, dict) and "Ref" in node:
            return given.get(node["Ref"], "")
        if isinstance(node, dict) and "Fn::Equals" in node:
            left, right = node["Fn::Equals"]
            return str(value(left)) == str(value(right))
        if isinstance(node, dict) and "Fn::If" in node:
            condition, then, otherwise = node["Fn::If"]
            return value(then) if value(conditions[condition]) else value(otherwise)
        return node

    globals_ = template["Globals"]["Function"]
    functions = value(globals_.get("Tracing", "PassThrough"))
    logging_config = globals_.get("LoggingConfig", {})
    system_lines = value(logging_config.get("LogFormat", "Text")) != "JSON" or value(
        logging_config.get("SystemLogLevel", "INFO")
    ) in ("INFO", "DEBUG")
    machines = any(
        str(value(resource["Properties"].get("Tracing", {}).get("Enabled", False))).lower()
        == "true"
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::Serverless::StateMachine"
    )
    return Tracing(functions == "Active", machines, system_lines)


def stored_bytes(item: dict[str, Any], indexes: tuple[IndexSpec, ...]) -> int:
    """What DynamoDB stores for an item: it, its overhead, and its entry in each index."""
    total = item_size(item) + prices.DYNAMODB_ITEM_OVERHEAD
    for spec in indexes:
        entry = spec.entry(item, ("id",))
        if entry:
            total += item_size(entry) + ENTRY_OVERHEAD
    return total


def gb_months(stored: float, seconds: float) -> float:
    return stored / prices.GB * seconds / SECONDS_A_MONTH
