"""moto's Batch backend (and with it EC2's) is imported when something uses it, not when the
Step Functions interpreter is.

Found: ``moto/stepfunctions/parser/asl/component/state/exec/state_task/service/
state_task_service_batch.py`` imports ``JobStatus`` from ``moto.batch.utils``; importing that
submodule runs ``moto/batch/__init__.py``, which imports ``moto.batch.models`` and through it
all of ``moto.ec2`` (its AMI, instance type and region tables): about a second of CPU at the
start of every local stack process, for a backend the stack never calls.

Replaced: ``moto.batch`` is put in ``sys.modules`` as the package it is (same file, same
``__path__``, so ``moto.batch.utils`` and ``moto.batch.models`` import as usual) whose
``__init__`` runs on the first attribute asked of the package itself (``batch_backends``, as
moto's backend registry asks, or ``__all__`` for ``import *``): the same module, loaded when
used. A thread that asks while another runs ``__init__`` waits for it; one that fails leaves
the package to be loaded by the next ask. Nothing is undone on exit: a
module, once imported, stays.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["batch_imported_when_used"]

_NAME = "moto.batch"


@contextmanager
def batch_imported_when_used() -> Iterator[None]:
    if _NAME not in sys.modules:
        _install_lazy_package()
    yield


def _install_lazy_package() -> None:
    spec = importlib.util.find_spec(_NAME)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return  # not the layout this was written for: moto imports it as it always did
    package = types.ModuleType(_NAME)
    package.__file__ = spec.origin
    package.__path__ = list(spec.submodule_search_locations)
    package.__spec__ = spec
    package.__package__ = _NAME
    loaded = threading.RLock()  # one thread runs __init__; the others wait for it
    loading: list[bool] = []  # non-empty while __init__ runs (its own asks fall through)
    loader = spec.loader
    package.__loader__ = loader

    def load_when_asked(name: str) -> Any:  # PEP 562: asked only for names not held yet
        if name.startswith("__") and name != "__all__":
            raise AttributeError(name)
        with loaded:
            if "__getattr__" in vars(package) and not loading:
                loading.append(True)
                try:
                    loader.exec_module(package)
                finally:
                    loading.clear()
                vars(package).pop("__getattr__", None)  # loaded: a plain module from now on
        if name in vars(package):
            return vars(package)[name]
        raise AttributeError(f"module {_NAME!r} has no attribute {name!r}")

    vars(package)["__getattr__"] = load_when_asked
    sys.modules[_NAME] = package
    import moto

    vars(moto)["batch"] = package
