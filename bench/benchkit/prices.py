"""AWS list prices, in one place: us-east-1, on-demand, as published in 2026-11.

Change a price here and every figure in bench/RESULTS.md follows on the next ``make bench``.
Lambda is billed at the rate of the architecture the template deploys (arm64).
"""

from __future__ import annotations

STEP_FUNCTIONS_STANDARD_PER_TRANSITION = 0.025 / 1_000
LAMBDA_PER_REQUEST = 0.20 / 1_000_000
LAMBDA_PER_GB_SECOND_X86 = 0.0000166667
LAMBDA_PER_GB_SECOND_ARM64 = 0.0000133334
LAMBDA_PER_GB_SECOND = LAMBDA_PER_GB_SECOND_ARM64  # template.yaml: Architectures [arm64]
DYNAMODB_PER_WRITE_REQUEST_UNIT = 0.625 / 1_000_000  # on-demand, per 1 KB written
DYNAMODB_PER_READ_REQUEST_UNIT = 0.125 / 1_000_000  # on-demand, per 4 KB strongly read
# DynamoDB Streams: a GetRecords call is a streams read request unit (the count function reads
# the stream itself: a Lambda trigger's reads would be free)
DYNAMODB_STREAMS_PER_READ_REQUEST = 0.02 / 100_000
DYNAMODB_STORAGE_PER_GB_MONTH = 0.25
DYNAMODB_PITR_PER_GB_MONTH = 0.20  # continuous backups, on the table's size
DYNAMODB_ITEM_OVERHEAD = 100  # bytes stored (and billed) per item beside its attributes
EVENTBRIDGE_PER_CUSTOM_EVENT = 1.00 / 1_000_000  # PutEvents, per 64 KB entry
EVENTBRIDGE_SCHEDULER_PER_INVOCATION = 1.00 / 1_000_000  # 14 M free a month not counted
CLOUDWATCH_LOGS_PER_GB_INGESTED = 0.50
CLOUDWATCH_LOGS_PER_GB_MONTH_STORED = 0.03
CLOUDWATCH_LOG_EVENT_OVERHEAD = 26  # bytes each log event adds to what is ingested
XRAY_PER_TRACE_RECORDED = 5.00 / 1_000_000
GB = 1024**3

MILLION = 1_000_000


def per_million(
    units: float,
    *,
    transitions: float,
    requests: float,
    gb_seconds: float,
    read_units: float,
    write_units: float,
    events: float,
    index_write_units: float = 0.0,
    stored_gb_months: float = 0.0,
    log_bytes: float = 0.0,
    traces: float = 0.0,
    stream_reads: float = 0.0,
) -> dict[str, float]:
    """What ``units`` fires (or actions) used, in dollars per million of them, by service.
    ``stored_gb_months``: the table's storage the fires leave, billed with its backups;
    ``log_bytes``: what CloudWatch Logs ingests (and keeps a month)."""
    scale = MILLION / units
    return {
        "Step Functions": transitions * STEP_FUNCTIONS_STANDARD_PER_TRANSITION * scale,
        "Lambda": (requests * LAMBDA_PER_REQUEST + gb_seconds * LAMBDA_PER_GB_SECOND) * scale,
        "DynamoDB": (
            read_units * DYNAMODB_PER_READ_REQUEST_UNIT
            + (write_units + index_write_units) * DYNAMODB_PER_WRITE_REQUEST_UNIT
            + stored_gb_months * (DYNAMODB_STORAGE_PER_GB_MONTH + DYNAMODB_PITR_PER_GB_MONTH)
            + stream_reads * DYNAMODB_STREAMS_PER_READ_REQUEST
        )
        * scale,
        "EventBridge": events * EVENTBRIDGE_PER_CUSTOM_EVENT * scale,
        "CloudWatch Logs": log_bytes
        / GB
        * (CLOUDWATCH_LOGS_PER_GB_INGESTED + CLOUDWATCH_LOGS_PER_GB_MONTH_STORED)
        * scale,
        "X-Ray": traces * XRAY_PER_TRACE_RECORDED * scale,
    }
