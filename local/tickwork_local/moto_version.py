"""The one moto release the local stack's patches were written for, and the refusal of others.

``atomic_items``, ``execution_quota``, ``journal``, ``runtime`` and every module of
``tuning`` (its ``index_buckets`` among them) replace methods inside moto's backends
(DynamoDB's item operations, queries and transactions, the Step Functions interpreter's waits,
parsing and clients and StartExecution's quota, SQS's bookkeeping, the response serializer,
the server's module listing, Lambda's invoke). They were
read against moto 5.2.5, which pyproject.toml pins; on any other release a patched method may
have moved or changed its meaning, and the stack would degrade quietly — a lost atomicity, a
fire a second early. So it does not start.
"""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, version

__all__ = ["SUPPORTED_MOTO", "UnsupportedMoto", "installed_moto", "require_supported_moto"]

SUPPORTED_MOTO = "5.2.5"


class UnsupportedMoto(RuntimeError):
    def __init__(self, installed: str) -> None:
        self.installed = installed
        super().__init__(
            f"the local stack runs on moto {SUPPORTED_MOTO}, but moto {installed} is installed: "
            "its emulator patches (tickwork_local: atomic_items, execution_quota, journal, "
            "runtime, tuning) reach moto internals written for that release "
            "only. Fix: "
            f"pip install 'moto[server,stepfunctions,dynamodb,events,sqs,ssm]=={SUPPORTED_MOTO}' "
            "(or run `make venv`), or port the patches to the new release and move the pin"
        )


@functools.cache  # read from the package metadata once: every stack's start asks
def installed_moto() -> str:
    try:
        return version("moto")
    except PackageNotFoundError:
        return "none"


def require_supported_moto(installed: str | None = None) -> None:
    found = installed_moto() if installed is None else installed
    if found != SUPPORTED_MOTO:
        raise UnsupportedMoto(found)
