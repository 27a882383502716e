"""``tickwork local``: the whole stack on this machine until Ctrl-C (or SIGTERM).

Start-up order matters for "nothing lost, nothing twice":
1. serve the emulated endpoint and build the stack from template.yaml;
2. put back the action records saved in the state dir (snapshot + write-ahead journal);
3. journal every later write to the table before it is acknowledged (survives kill -9);
4. start again the execution of every PENDING action (names are deterministic, starts are
   idempotent) and release claims whose execution was lost;
5. write ``local.json`` (endpoint + outputs) so the CLI and other tools find the stack.
"""

from __future__ import annotations

import faulthandler
import json
import os
import shutil
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from tickwork import bootstrap
from tickwork.domain.errors import RepairsIncomplete
from tickwork.domain.times import iso
from tickwork.fire.reconcile import reconcile
from tickwork_local.journal import Journal
from tickwork_local.keys import KeyFile, write_private
from tickwork_local.moto_version import require_supported_moto
from tickwork_local.outbox import OUTBOX_FILE, Outbox
from tickwork_local.server import check_port_free, serving
from tickwork_local.stack import LocalStack
from tickwork_local.state_lock import LOCK_FILE, holding_state_dir
from tickwork_local.time_api import (
    latest_change,
    saved_offset,
    saving_offset,
    time_from_records,
)
from tickwork_local.tuning.collector import collect_less_often
from tickwork_local.virtual_clock import LocalClock

__all__ = ["LocalService", "run_local", "running_service"]

LOCAL_FILE = "local.json"


@dataclass(frozen=True)
class LocalService:
    stack: LocalStack
    endpoint: str
    restored: int
    resumed: dict[str, list[str]]  # action ids by repair: restarted, recorded, failed, released
    kept_virtual: bool = False  # virtual time because the state dir's stack ran on it
    clock_note: str | None = None  # virtual time moved on to the records' latest change


@contextmanager
def running_service(
    port: int | None,
    state_dir: Path,
    fresh: bool = False,
    parameters: dict[str, str] | None = None,
    api_port: int | None = None,
    api_auth: str = "token",
    max_open_executions: int | None = None,
    virtual_time: bool = False,
) -> Iterator[LocalService]:
    """With ``virtual_time`` the stack runs on a clock of its own (``tickwork time advance``);
    a state dir whose stack ran on virtual time keeps it (its records are on that time: the
    wall clock would be time going backwards). One stack a state dir: another running on it
    refuses this one (``StateDirInUse``) before anything of its is touched."""
    require_supported_moto()  # before a port is bound or the state dir touched
    with (
        holding_state_dir(state_dir, port, api_port),
        _serving_stack(
            port,
            state_dir,
            fresh,
            parameters,
            api_port,
            api_auth,
            max_open_executions,
            virtual_time,
        ) as service,
    ):
        yield service


@contextmanager
def _serving_stack(
    port: int | None,
    state_dir: Path,
    fresh: bool,
    parameters: dict[str, str] | None,
    api_port: int | None,
    api_auth: str,
    max_open_executions: int | None,
    virtual_time: bool,
) -> Iterator[LocalService]:
    if port:
        check_port_free(port, "the emulated AWS endpoint", "--port")
    if api_port:
        check_port_free(api_port, "the HTTP API and dashboard", "--api-port")
    if fresh:
        _start_over(state_dir)
    state_dir.mkdir(parents=True, exist_ok=True)
    offset = saved_offset(state_dir)
    kept_virtual = offset is not None and not virtual_time
    clock = LocalClock(virtual=True, offset=offset or 0.0) if virtual_time or kept_virtual else None
    # Never before what the records kept here say already happened (a clock file edited back,
    # or gone): settled before the stack is built, so nothing runs at an earlier now.
    kept = Journal(state_dir, set()).load()
    latest = latest_change(item for items in kept.values() for item in items.values())
    clock_note = time_from_records(clock or LocalClock(), latest, state_dir)
    local = LocalStack.from_repo(
        parameters=parameters, secret_value=KeyFile(state_dir).value, clock=clock
    )
    if clock is not None:
        saving_offset(state_dir, clock)
    local.max_open_executions = max_open_executions
    local.outbox = Outbox(state_dir / OUTBOX_FILE)  # for `tickwork outbox`, in another process
    with (
        serving(port) as endpoint,
        local.running() as stack,
        stack.serving_api(api_port, auth=api_auth),
    ):
        table = stack.outputs["ActionsTableName"]
        journal = Journal(state_dir, {table})
        with stack.unstreamed():  # the restored items are no writes to fold
            restored = journal.restore(stack.client("dynamodb"), kept)  # read before the clock
        stack.counts_restored()
        journal.compact()
        with journal.installed():
            # Every execution died with the last process: restart all that should run.
            deps = bootstrap.from_environment()
            try:
                resumed = reconcile(deps, horizon=None, stuck_after=timedelta(0))
            except RepairsIncomplete as incomplete:
                # One subject that cannot be repaired now (logged) stops no one's start: the
                # reconciler's schedule tries it again.
                resumed = incomplete.repaired
            state = {
                "endpoint": endpoint,
                "region": stack.region,
                "outputs": stack.outputs,
                "parameters": stack.template.parameters,
                "pid": os.getpid(),
                "apiToken": stack.api_token,
                "apiAuth": stack.api_auth,
                "virtualTime": stack.clock.virtual,
            }
            local_file = state_dir / LOCAL_FILE
            write_private(local_file, json.dumps(state, indent=2))  # it holds the API token
            try:
                yield LocalService(stack, endpoint, restored, resumed, kept_virtual, clock_note)
            finally:
                local_file.unlink(missing_ok=True)


def _start_over(state_dir: Path) -> None:
    """Everything the state dir holds, gone (--fresh) — but the lock this stack holds on it."""
    for entry in state_dir.iterdir():
        if entry.name == LOCK_FILE:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


SHUTDOWN_GRACE_SECONDS = 10


def run_local(
    port: int,
    state_dir: Path,
    fresh: bool,
    parameters: dict[str, str],
    api_port: int | None = None,
    api_auth: str = "token",
    max_open_executions: int | None = None,
    virtual_time: bool = False,
) -> None:
    require_supported_moto()  # before a signal handler is set
    collect_less_often()  # this process is the emulator's: less CPU (tuning/collector.py)
    stopping = threading.Event()
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # kill -USR1: where is it stuck?
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopping.set())
    with running_service(
        port, state_dir, fresh, parameters, api_port, api_auth, max_open_executions, virtual_time
    ) as service:
        print(_banner(service), flush=True)
        # Wake now and then: a signal the kernel hands to another thread only runs its Python
        # handler once the main thread runs again, and a bare wait() would never return.
        while not stopping.wait(0.5):
            pass
        print("stopping: waiting actions are saved and resume on the next start", flush=True)
        # Every acknowledged write is already in the journal, so a shutdown that hangs (a
        # stuck connection, an emulator thread) may be cut short as safely as a kill -9.
        watchdog = threading.Timer(SHUTDOWN_GRACE_SECONDS, os._exit, args=(0,))
        watchdog.daemon = True
        watchdog.start()


def _api_lines(service: LocalService) -> list[str]:
    url, token = service.stack.outputs["ApiUrl"], service.stack.api_token
    if service.stack.api_auth == "sigv4":
        return [
            f"  API: {url} (loopback only; SigV4 with the local credentials, as on AWS)",
            "  Dashboard and API docs: tickwork dashboard  (signs the page's calls for you)",
            "",
        ]
    return [
        f"  API: {url} (loopback only; every call needs the token below)",
        f"  API token: {token}  (send 'Authorization: Bearer <token>')",
        f"  Dashboard: {url}#token={token}",
        f"  API docs: {url}docs#token={token}",
        "",
    ]


def _time_lines(service: LocalService) -> list[str]:
    clock = service.stack.clock
    if not clock.virtual:
        return []
    why = (
        " (kept: this state dir's stack ran on it; --fresh starts over on the wall clock)"
        if service.kept_virtual
        else ""
    )
    if service.clock_note:
        why += f"; {service.clock_note}"
    return [
        f"  Virtual time: {iso(clock.now())}{why}",
        "  It flows with the wall clock; move it on: tickwork time advance 30d "
        "(or --to 2027-01-01T00:00:00Z)",
        "",
    ]


def _banner(service: LocalService) -> str:
    outputs: dict[str, Any] = service.stack.outputs
    # The local stack takes any credentials: these dummy ones work on a machine with none.
    aws = (
        "AWS_ACCESS_KEY_ID=tickwork-local AWS_SECRET_ACCESS_KEY=tickwork-local "
        f"aws --endpoint-url {service.endpoint} --region {service.stack.region}"
    )
    detail = json.dumps(json.dumps({"id": "hi", "duration": "30s"}))
    entry = f'[{{"EventBusName":"{outputs["EventBusName"]}","Source":"me",'
    entry += f'"DetailType":"Schedule Start","Detail":{detail}}}]'
    return "\n".join(
        [
            f"tickwork local is ready on {service.endpoint} (loopback only)",
            f"  restored {service.restored} action record(s); restarted "
            f"{len(service.resumed['restarted'])} waiting action(s), "
            f"released {len(service.resumed['released'])} lost claim(s)",
            *_api_lines(service),
            *_time_lines(service),
            *(f"  {name}: {value}" for name, value in outputs.items()),
            "",
            'Try it (or first `eval "$(tickwork env)"` and leave out the flags):',
            "  tickwork schedule --id hello --in 10s && tickwork list",
            f"  {aws} events put-events --entries '{entry}'",
            f"  {aws} dynamodb scan --table-name {outputs['ActionsTableName']}",
            "Ctrl-C stops; waiting actions resume on the next start.",
        ]
    )
