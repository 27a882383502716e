"""botocore's service models are read from disk once per process, not once per session.

Found: ``botocore/session.py``, ``Session._register_data_loader``, gives each new session a
``Loader`` of its own (``botocore.loaders.create_loader``), whose caches live on that loader:
every session reads, decompresses and decodes again the JSON model of each service it makes a
client of, after listing the data directories to find it. The local stack makes a session per
stack: with a stack per test, JSON decoding and directory listing were a sixth of the
functional tests' time.

Replaced: one loader per search path (``AWS_DATA_PATH``) for the process, given to the stack's
session (``session_sharing_models``) and to any session made while the stack runs
(``models_loaded_once``). A loader's answers depend only on the files under its search path,
which nothing here writes; its caches hand every caller the same documents, as one session's
loader does to its clients already. boto3 adds its own data folder to its session's loader:
a folder already searched is not added twice.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["models_loaded_once", "session_sharing_models", "shared_loader"]

_loaders: dict[str | None, Any] = {}
_lock = threading.Lock()


class _Folders(list[str]):
    """A loader's search path: boto3 appends its data folder once per session."""

    def append(self, folder: str) -> None:
        if folder not in self:
            super().append(folder)


def shared_loader(search_path_string: str | None = None) -> Any:
    """The process's loader for this search path (botocore's ``create_loader`` answers)."""
    from botocore.loaders import create_loader

    with _lock:
        loader = _loaders.get(search_path_string)
        if loader is None:
            loader = create_loader(search_path_string)
            loader._search_paths = _Folders(loader._search_paths)
            _loaders[search_path_string] = loader
        return loader


def session_sharing_models() -> Any:
    """A new botocore session whose service models come from the process's loader."""
    import botocore.session

    session = botocore.session.get_session()
    session.register_component(
        "data_loader", shared_loader(session.get_config_variable("data_path"))
    )
    return session


@contextmanager
def models_loaded_once() -> Iterator[None]:
    import botocore.session

    with mock.patch.object(botocore.session, "create_loader", shared_loader):
        yield
