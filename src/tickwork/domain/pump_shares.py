"""How a pump run that found more due than it launches alone splits the work: shares of the
fires due, in launch order, each for one worker (``fire.pump``).

A share is cut where the launch moment changes, where it can be: the fires of one batch window
share one launch moment (``fire.grouping.launch_moment``), so they still meet in one share and
share a batch. A moment busier than two shares is cut anyway (a batch holds at most
``BatchMaxFires``: the fires of such a window fill several batches wherever it is cut). A
share's ids also stay under ``MAX_SHARE_BYTES`` as JSON, the payload of an asynchronous
Lambda invocation.
"""

from __future__ import annotations

import json

__all__ = ["MAX_SHARE_BYTES", "share_payload", "shares"]

MAX_SHARE_BYTES = 200_000  # under the 256 KB of an asynchronous invocation's payload


def share_payload(ids: list[str]) -> bytes:
    """A share as a worker's event: ``{"ids": [...]}``."""
    return json.dumps({"ids": ids}).encode()


_EMPTY = len(share_payload([]))


def shares(due: list[tuple[int, str]], size: int) -> list[list[str]]:
    """``due`` ((launch moment in ms, id), earliest first) in shares of about ``size``."""
    cut: list[list[str]] = []
    share: list[str] = []
    share_bytes = _EMPTY
    last_moment: int | None = None
    for launch_ms, action_id in due:
        entry_bytes = len(json.dumps(action_id).encode()) + 2  # and ", " before it
        full = len(share) >= size and (launch_ms != last_moment or len(share) >= 2 * size)
        if share and (full or share_bytes + entry_bytes > MAX_SHARE_BYTES):
            cut.append(share)
            share, share_bytes = [], _EMPTY
        share.append(action_id)
        share_bytes += entry_bytes
        last_moment = launch_ms
    if share:
        cut.append(share)
    return cut
