"""Counts, recent fires and previews: /stats, /stats/fires and /preview."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Query

from tickwork import bootstrap
from tickwork.api import stats
from tickwork.api.documented import new_router, responses
from tickwork.api.models import FireBuckets, Preview, PreviewRequest, Stats
from tickwork.domain.errors import ValidationFailed
from tickwork.domain.preview import (
    around_dst_change,
    detail_fire_times,
    expression_detail,
    format_fire_times,
)
from tickwork.domain.selection import Selection
from tickwork.domain.times import iso_exact
from tickwork.fire.calendar_reads import named_calendar

__all__ = ["router"]

router = new_router()
_EXTRA_FIELDS = (
    "dstRepeated",
    "dstMissing",
    "flexibleWindow",
    "windowMode",
    "calendar",
    "onExcluded",
    "id",
)
_NOT_WHEN = frozenset({"expression", "count", "after", "first", "timezone", *_EXTRA_FIELDS})


@router.get(
    "/stats",
    summary="Counts by status, and fires over the last hour and day",
    description="Counts of all actions or of a group come from counter items kept with every "
    "status change (a bounded read, however many actions there are); with a prefix, from the "
    "id index. needsAttention counts actions with a failed fire waiting for a retry. Fires come "
    "from fire counters kept as each fire is recorded, by minute and hour (with a prefix: "
    "from the occurrence histories of its records): late = fired more than 1 s after its "
    "time (a part of fired).",
    responses=responses(200, Stats, "Counts", 400),
    tags=["stats"],
)
def get_stats(
    group: Annotated[str | None, Query(description="Only actions of this group.")] = None,
    prefix: Annotated[str | None, Query(description="Only ids that start with this.")] = None,
) -> Stats:
    deps = bootstrap.from_environment()
    selection = Selection(group=group, prefix=prefix or None)
    now = deps.clock.now()
    return Stats.model_validate(stats.stats_of(deps.queries, deps.tallies, selection, now))


@router.get(
    "/stats/fires",
    summary="Recent fires in time buckets (on time, late, failed)",
    description="From the fire counters kept as each fire is recorded (by minute; by hour for "
    "buckets of whole hours), by when each happened.",
    responses=responses(200, FireBuckets, "Buckets, oldest first", 400),
    tags=["stats"],
)
def get_fires(
    minutes: Annotated[int, Query(ge=1, le=10_080, description="How far back.")] = 120,
    bucket: Annotated[int, Query(ge=1, le=1_440, description="Bucket size in minutes.")] = 5,
) -> FireBuckets:
    deps = bootstrap.from_environment()
    buckets = stats.fire_buckets(deps.tallies, deps.clock.now(), minutes, bucket)
    return FireBuckets.model_validate(buckets)


@router.post(
    "/preview",
    summary="The next fire times of a schedule",
    description='The body is the "when" of a Start detail as it is (cron, rate, at, '
    "executionTime, duration, frequency, scheduleExpression, with timezone and bounds), or an "
    "expression as `tickwork next` takes it. Lists the fires strictly after `after` (default "
    "now), each in UTC and in the zone's local time.",
    responses=responses(200, Preview, "Fire times", 400),
    tags=["schedules"],
)
def preview(body: PreviewRequest) -> Preview:
    after = body.after or bootstrap.from_environment().clock.now()
    given = body.model_dump(by_alias=True, exclude_none=True)
    when = {name: value for name, value in given.items() if name not in _NOT_WHEN}
    if body.expression is not None and when:
        raise ValidationFailed.of(
            ", ".join(["expression", *when]),
            "an expression and the fields of a Start detail are both given",
            "give either the expression, or the Start detail's fields",
        )
    if body.expression is None and not when:
        raise ValidationFailed.of(
            "when",
            "no schedule is given",
            'give the "when" of a Start detail (e.g. "cron": "30 * * * *") or an "expression"',
        )
    extra = {name: given[name] for name in _EXTRA_FIELDS if name in given}
    try:
        if body.expression is not None:
            detail = expression_detail(body.expression, body.timezone, body.first, extra)
        else:
            detail = {**when, "timezone": body.timezone, **extra}
        calendar = None
        if body.calendar is not None:
            calendar = named_calendar(body.calendar, bootstrap.from_environment())
        times = detail_fire_times(detail, after, body.count, calendar)
        around = around_dst_change(detail, after) if _wall_clock(detail) else None
    except ValidationFailed as refused:
        if body.first is None:
            raise
        # the schedule knows a frequency's first time as "at"
        problems = [replace(p, field="first") if p.field == "at" else p for p in refused.problems]
        raise ValidationFailed(problems) from refused
    answer: dict[str, Any] = {"times": format_fire_times(times, body.timezone)}
    if around is not None:
        answer["aroundDstChange"] = {
            "change": iso_exact(around.change),
            "before": format_fire_times(around.before, body.timezone),
            "after": format_fire_times(around.after, body.timezone),
        }
    return Preview.model_validate(answer)


def _wall_clock(detail: dict[str, Any]) -> bool:
    """A cron or a frequency: fires on local wall times, which DST repeats or skips."""
    return "cron" in detail or "frequency" in detail
