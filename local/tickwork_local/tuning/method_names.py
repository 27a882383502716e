"""A response class's method names are listed once, not for every request it answers.

Found: ``moto/core/responses.py``, ``BaseResponse.call_action``, calls
``method_names_from_class(self.__class__)`` — an ``inspect.getmembers`` over the whole class,
hundreds of attributes — for every request, to check the action is one it implements; about a
fifth of an in-process DynamoDB call's cost in the emulator.

Replaced: the list is kept per class (a class's methods do not change while the stack runs).
Upstreamable as is (a cache on the function).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from unittest import mock

__all__ = ["method_names_listed_once"]


_LISTED: dict[Callable[[type], list[str]], Callable[[type], list[str]]] = {}  # per process


@contextmanager
def method_names_listed_once() -> Iterator[None]:
    from moto.core import responses

    original = responses.method_names_from_class
    original = getattr(original, "__wrapped__", original)  # a stack started inside another's
    # One cache for every stack the process starts (a test's stack each): kept per stack, it
    # listed each service's class again for each.
    listed = _LISTED.setdefault(original, functools.cache(original))
    with mock.patch.object(responses, "method_names_from_class", listed):
        yield
