"""GIVEN a stack log written by many threads WHEN the chaos run reads its fault lines THEN a line
written whole is read wherever it lands, and a garbled one is named (its number and text),
never fatal to the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tickwork_local.process import LocalProcess

MARKER = "chaos-fault "
REPO = Path(__file__).resolve().parents[2]


def _reader(tmp_path: Path, text: str) -> LocalProcess:
    log = tmp_path / "stack.log"
    log.write_text(text)
    return LocalProcess(tmp_path / "state", log_path=log)


def test_fault_lines_are_read_and_a_garbled_one_is_named(tmp_path: Path) -> None:
    one, two = {"kind": "tick-crash", "id": "a"}, {"kind": "bus-down", "id": "b"}
    text = "\n".join(
        [
            "starting",
            MARKER + json.dumps(one),
            'half a log line without its newlinechaos-fault {"kind": "pump-down", "id": "c"}',
            MARKER + json.dumps(two) + MARKER + json.dumps(one),  # two writes on one line
            MARKER + '{"kind": "start-refu',
        ]
    )

    read, unreadable = _reader(tmp_path, text).fault_lines(MARKER)

    kinds = [line["kind"] for line in read]
    assert kinds == ["tick-crash", "pump-down", "bus-down", "tick-crash"]
    (garbled,) = unreadable
    assert garbled.startswith("line 5 of ") and garbled.endswith('{"kind": "start-refu')


def test_the_planted_faults_write_each_line_whole_from_many_threads(tmp_path: Path) -> None:
    # GIVEN 8 threads each writing 200 fault lines (and print()s beside them) to one pipe
    script = textwrap.dedent(
        """
        import sys, threading
        sys.path.insert(0, sys.argv[1])
        from chaoskit.faulty_stack import _fault
        def work(n):
            for k in range(200):
                _fault("bus-down", "Schedule Tick", f"busdown-{n}", k)
                print("other output", n, k)
        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        """
    )
    log = tmp_path / "stack.log"
    with log.open("wb") as out:
        subprocess.run(
            [sys.executable, "-c", script, str(REPO / "bench")],
            stdout=out,
            stderr=subprocess.STDOUT,
            check=True,
            env={**os.environ, "PYTHONUNBUFFERED": "0"},
            timeout=120,
        )
    # WHEN the chaos run reads them THEN every one is read, none garbled
    read, unreadable = LocalProcess(tmp_path / "state", log_path=log).fault_lines(MARKER)
    assert unreadable == []
    assert len(read) == 8 * 200
