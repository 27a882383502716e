"""A refusal made known: the ``Schedule Rejected`` event on the bus, and the same detail kept
in the stack's last rejections (``KeepRejections``), for a publisher that cannot subscribe to
the bus — the AWS CLI, another language's SDK — to read with ``tickwork rejections``,
``GET /rejections`` or the dashboard."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from tickwork.domain.announcements import Rejected

if TYPE_CHECKING:
    from tickwork.fire.needs import Refuses

__all__ = ["announce_rejected"]

_log = logging.getLogger(__name__)


def announce_rejected(rejection: Rejected, deps: Refuses) -> None:
    """Publish it, then keep it. Keeping is a convenience beside the event: a store that
    refuses is logged and never turns the refusal into an error (which would be retried)."""
    deps.publisher.publish(rejection)
    detail = {"detailType": str(rejection.detail_type), **rejection.to_wire()}
    try:
        deps.rejections.keep(detail, deps.clock.now())
    except Exception as error:  # the event above is what a refusal owes its sender
        _log.warning("rejection not kept", extra={"id": rejection.action_id, "error": str(error)})
