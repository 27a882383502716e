"""A request's camelCase names are turned into snake_case once, not on every request.

Found: ``moto/core/utils.py``, ``camelcase_to_underscores``, walks its argument one character
at a time (two ``istitle`` calls per character) and is called for every request
(``BaseResponse.call_action`` names the handler method from the action) and, in SQS, for every
attribute of a queue each time its attributes are read or set (``Queue.attributes``,
``Queue._set_attributes``): about a twentieth of the emulator's time in the suite.

Replaced: the function, in ``moto.core.utils`` and in every moto module loaded that took the
name, with the same function behind a cache (it is pure: the same string in, the same string
out). A module moto loads later takes the cached one from ``moto.core.utils``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from unittest import mock

__all__ = ["camelcase_names_converted_once"]

_NAME = "camelcase_to_underscores"
_CACHED: dict[Callable[[str], str], Callable[[str], str]] = {}  # one cache per process


@contextmanager
def camelcase_names_converted_once() -> Iterator[None]:
    from moto.core import utils

    original = getattr(utils, _NAME)
    original = getattr(original, "__wrapped__", original)  # a stack started inside another's
    cached = _CACHED.setdefault(original, functools.lru_cache(maxsize=4096)(original))
    with ExitStack() as patches:
        for name, module in list(sys.modules.items()):
            if (name == "moto" or name.startswith("moto.")) and (
                getattr(module, "__dict__", {}).get(_NAME) is original  # no __getattr__
            ):
                patches.enter_context(mock.patch.object(module, _NAME, cached))
        yield
