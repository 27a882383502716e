"""A client's User-Agent header is built once per set of features, not twice per request.

Found: ``botocore/useragent.py``, ``UserAgentString.to_string``, builds the header from a dozen
components (platform, Python, config, features), each sanitized character by character, once
when a request is made and once more when it is signed (``rebuild_and_replace_user_agent_handler``):
about a tenth of an in-process call's cost to the emulator, which never reads the header.

Replaced: ``to_string`` keeps its answer per ``UserAgentString`` object (weakly: a client that
goes away takes its entry with it), keyed on what the answer depends on that can change
between two requests — the client's and the request context's feature ids and the client's
config. The same string, built on the first request of each kind.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["user_agents_built_once"]


@contextmanager
def user_agents_built_once() -> Iterator[None]:
    from botocore.context import get_context
    from botocore.useragent import UserAgentString

    build = UserAgentString.to_string
    built: weakref.WeakKeyDictionary[Any, dict[Any, str]] = weakref.WeakKeyDictionary()

    def to_string(agent: Any) -> str:
        context = get_context()
        key = (
            frozenset(agent._client_features or ()),
            frozenset(() if context is None else context.features),
            id(agent._client_config),
        )
        kept = built.get(agent)
        if kept is None:
            kept = built.setdefault(agent, {})
        answer = kept.get(key)
        if answer is None:
            answer = kept[key] = build(agent)
        return answer

    with mock.patch.object(UserAgentString, "to_string", to_string):
        yield
