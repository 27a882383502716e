"""GIVEN the protocol page's table of rules and src/tickwork/fire/writes.py WHEN they are read
side by side THEN each row of the table is a rule of the module and each rule a row, each row
names the module's functions that write it (and each of those says so first in its docstring),
and no other code in src/ saves or creates an action record."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from tickwork.fire import writes
from tickwork.fire.writes import Rule

REPO = Path(__file__).resolve().parents[3]
PROTOCOL = REPO / "docs" / "protocol.md"
SRC = REPO / "src" / "tickwork"
WRITES = SRC / "fire" / "writes.py"
# The module's helpers and guards: they write under the rules, they are not rules themselves.
HELPERS = {"update", "decided_again", "order_agrees", "ended_by", "is_due_parked"}


def _rule_rows() -> dict[str, set[str]]:
    """The table under "### The rules": rule -> the functions its row names."""
    text = PROTOCOL.read_text()
    section = text.split("### The rules", 1)[1].split("\n### ", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        match = re.fullmatch(r"\*\*(.+?)\*\*", cells[0]) if len(cells) >= 5 else None
        if match:
            rows[match[1]] = set(re.findall(r"`([a-z_]+)`", cells[1]))
    return rows


def _rule_functions() -> dict[str, set[str]]:
    """rule -> the public functions of writes.py whose docstring opens with it in bold."""
    found: dict[str, set[str]] = {}
    for name, function in inspect.getmembers(writes, inspect.isfunction):
        if function.__module__ != writes.__name__ or name.startswith("_") or name in HELPERS:
            continue
        doc = inspect.getdoc(function) or ""
        match = re.match(r"\*\*(.+?)\*\*", doc)
        assert match, f"writes.{name}: its docstring does not open with the rule it writes"
        found.setdefault(match[1], set()).add(name)
    return found


def test_each_row_of_the_table_is_a_rule_and_each_rule_a_row() -> None:
    rows = _rule_rows()
    assert set(rows) == {str(rule) for rule in Rule}
    assert len(rows) == len(Rule)


def test_each_row_names_the_functions_that_write_its_rule() -> None:
    rows, functions = _rule_rows(), _rule_functions()
    assert set(functions) == {str(rule) for rule in Rule}, "a rule without a function"
    for rule, named in rows.items():
        assert named == functions[rule], (
            f"{rule}: the page names {named}, the module has {functions[rule]}"
        )


def test_every_rule_the_fields_table_names_is_a_rule_of_the_module() -> None:
    text = PROTOCOL.read_text()
    fields = text.split("### The fields", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"\*\*([a-z][a-zA-Z' ]+?)\*\*", fields)) - {"only if the seal holds"}
    assert named <= {str(rule) for rule in Rule}, named - {str(rule) for rule in Rule}


def _writes_of_a_record(path: Path) -> list[str]:
    """Calls of ``save`` or ``create`` on a records store (``deps.records``, ``records``,
    ``self._records``...) in the file."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("save", "create")
            and ast.unparse(node.func.value).split(".")[-1].lstrip("_").endswith("records")
        ):
            found.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_code_but_the_write_rules_saves_or_creates_a_record() -> None:
    # The adapters are the store itself (each implements save and create over DynamoDB).
    adapters = SRC / "adapters"
    places = [SRC, REPO / "functions", REPO / "cli", REPO / "local"]
    files = [f for place in places for f in place.rglob("*.py")]
    outside = [
        write
        for path in files
        if path != WRITES and adapters not in path.parents
        for write in _writes_of_a_record(path)
    ]
    assert outside == []
    assert _writes_of_a_record(WRITES), "the check finds the module's own writes"


@pytest.mark.parametrize(
    "source",
    [
        "deps.records.save(action, expected_version=1)",
        "records.create(action)",
        "self._records.save(a, expected_version=a.version)",
    ],
)
def test_the_check_finds_a_write_however_the_store_is_named(tmp_path: Path, source: str) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(f"def write(deps, records, self, action, a):\n    {source}\n")
    assert len(_writes_of_a_record(planted)) == 1
