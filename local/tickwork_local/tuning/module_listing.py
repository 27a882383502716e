"""The server lists moto's modules once, not for every request it serves.

Found: ``moto/backends.py``, ``list_of_moto_modules``, lists moto's package directory; the
server calls it for every request from outside to find the service it is for.

Replaced: it answers the listing it read the first time (the installed package does not change
while the stack runs). Upstreamable as is (an ``lru_cache``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

__all__ = ["moto_modules_listed_once"]


@contextmanager
def moto_modules_listed_once() -> Iterator[None]:
    from moto import backends

    listed = tuple(backends.list_of_moto_modules())
    with mock.patch.object(backends, "list_of_moto_modules", lambda: listed):
        yield
