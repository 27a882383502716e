"""GIVEN the README, docs/contracts.md, the handlers' docstrings and events/ WHEN they are read
beside the code and template.yaml THEN each says what the code does: the README's layout names
every part of src/tickwork and every module of the two wings (and nothing that is not there),
its Deploy section every Output; contracts.md gives the publisher client's signatures as the
code has them; each handler's docstring names every detail-type its rule routes to it; and
events/ holds a file, valid for its function, for every payload each function takes."""

from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tickwork.bus_event import bus_event
from tickwork.domain.control_events import DETAILS
from tickwork.domain.events import CONTROL, INBOUND, DetailType, meant_detail_type
from tickwork.domain.task_call import TaskCall
from tickwork_client import TickworkClient
from tickwork_local.template import Template, load_yaml

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
SRC = REPO / "src" / "tickwork"
TEMPLATE = Template(
    REPO / "template.yaml", stack_name="t", parameters={"RequireSignedStarts": "true"}
)
FUNCTIONS = {spec.logical_id: spec for spec in TEMPLATE.functions()}


def _section(text: str, heading: str) -> str:
    return text.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def _layout() -> str:
    return _section(README, "## Layout")


def _entry(layout: str, name: str) -> str:
    """The text of one entry of the layout block: its line and the lines that continue it."""
    lines = layout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(name + " "))
    indent = len(lines[start]) - len(lines[start].lstrip())
    text = [lines[start]]
    for line in lines[start + 1 :]:
        stripped = line.lstrip()
        if not stripped or len(line) - len(stripped) <= indent + len(name):
            break
        text.append(line)
    return " ".join(text)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z_][a-z0-9_]*", text))


def test_the_layout_names_every_part_of_the_package_and_nothing_else() -> None:
    named = set(re.findall(r"^      ([a-z_]+(?:/|\.py))\s", _layout(), re.M))
    present = {
        f"{path.name}/" if path.is_dir() else path.name
        for path in SRC.iterdir()
        if path.name not in ("__init__.py", "py.typed", "__pycache__")
    }
    assert named == present


@pytest.mark.parametrize("wing", ["fire", "steering"])
def test_the_layout_names_every_module_of_each_wing_and_only_those(wing: str) -> None:
    entry = _words(_entry(_layout(), f"{wing}/"))
    modules = {p.stem for p in (SRC / wing).glob("*.py") if p.stem != "__init__"}
    assert modules <= entry, f"not named in the README's {wing}/ entry: {modules - entry}"
    others = {p.stem for p in (SRC / ("steering" if wing == "fire" else "fire")).glob("*.py")}
    misplaced = (entry & others) - modules - {"needs", "start", "backfill", "calendars"}
    assert not misplaced, f"named under {wing}/ but in the other wing: {misplaced}"


def test_the_layout_names_every_function() -> None:
    entry = _words(_entry(_layout(), "functions/"))
    handlers = {p.name for p in (REPO / "functions").iterdir() if (p / "app.py").exists()}
    assert handlers <= entry


def test_the_deploy_section_names_every_output_and_only_outputs_and_parameters() -> None:
    deploy = _section(README, "## Deploy")
    outputs = set(load_yaml(REPO / "template.yaml")["Outputs"])
    parameters = set(load_yaml(REPO / "template.yaml")["Parameters"])
    named = set(re.findall(r"`([A-Z][A-Za-z]+)`", deploy))
    assert outputs <= named, f"Outputs the README leaves out: {sorted(outputs - named)}"
    assert named <= outputs | parameters, sorted(named - outputs - parameters)


def _documented_signatures() -> dict[str, ast.arguments]:
    contracts = (REPO / "docs" / "contracts.md").read_text()
    block = contracts.split("<!-- client-signatures -->", 1)[1].split(
        "<!-- /client-signatures -->"
    )[0]
    found: dict[str, ast.arguments] = {}
    for line in block.strip().strip("`").removeprefix("python").strip().splitlines():
        name, _, params = line.partition("(")
        tree = ast.parse(f"def f({params}: pass")
        function = tree.body[0]
        assert isinstance(function, ast.FunctionDef)
        found[name.strip()] = function.args
    return found


def _same_default(documented: ast.expr | None, actual: Any) -> bool:
    if documented is None:
        return actual is inspect.Parameter.empty
    try:
        return bool(ast.literal_eval(documented) == actual)
    except ValueError:  # a name, such as time.sleep
        return ast.unparse(documented).rpartition(".")[2] == getattr(actual, "__name__", None)


def _check(name: str, args: ast.arguments, actual: inspect.Signature) -> None:
    params = [p for p in actual.parameters.values() if p.name != "self"]
    positional = args.posonlyargs + args.args
    documented = [(a.arg, "positional") for a in positional] + [
        (a.arg, "keyword") for a in args.kwonlyargs
    ]
    if args.kwarg is not None:
        documented.append((args.kwarg.arg, "var"))
    kinds = {
        inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
        inspect.Parameter.POSITIONAL_ONLY: "positional",
        inspect.Parameter.KEYWORD_ONLY: "keyword",
        inspect.Parameter.VAR_KEYWORD: "var",
    }
    assert documented == [(p.name, kinds[p.kind]) for p in params], name
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for param, default in zip(params, defaults + list(args.kw_defaults), strict=False):
        if param.kind is not inspect.Parameter.VAR_KEYWORD:
            assert _same_default(default, param.default), f"{name}: {param.name}"


def test_contracts_give_the_publisher_clients_signatures_as_the_code_has_them() -> None:
    documented = _documented_signatures()
    public = {
        name
        for name, member in vars(TickworkClient).items()
        if not name.startswith("_")
        and (inspect.isfunction(member) or isinstance(member, classmethod))
    }
    assert public | {"TickworkClient"} == {n.rpartition(".")[2] for n in documented}
    for name, args in documented.items():
        method = name.rpartition(".")[2]
        target = (
            TickworkClient.__init__
            if method == "TickworkClient"
            else getattr(TickworkClient, method)
        )
        _check(name, args, inspect.signature(target))


def _routed(spec: Any) -> set[str]:
    """The detail-types a function's rules name (an ``anything-but`` list is not routed)."""
    return {
        detail_type
        for rule in spec.rules
        for detail_type in rule.pattern.get("detail-type", [])
        if isinstance(detail_type, str)
    }


def _left_to_near_misses(spec: Any) -> set[str] | None:
    """The detail-types a rule of ``anything-but`` leaves out (None: the function has none)."""
    for rule in spec.rules:
        for match in rule.pattern.get("detail-type", []):
            if isinstance(match, dict) and "anything-but" in match:
                return set(match["anything-but"])
    return None


def test_the_near_miss_rule_takes_every_detail_type_but_those_the_stack_takes() -> None:
    assert _left_to_near_misses(FUNCTIONS["StartFunction"]) == {str(t) for t in INBOUND}


@pytest.mark.parametrize("function", ["StartFunction", "ControlFunction", "TickFunction"])
def test_each_handlers_docstring_names_every_event_its_rule_routes_to_it(function: str) -> None:
    spec = FUNCTIONS[function]
    tree = ast.parse((spec.code_dir / "app.py").read_text())
    docstring = " ".join((ast.get_docstring(tree) or "").split())
    routed = _routed(spec)
    assert routed, "the rule routes it events"
    missing = [t for t in routed if t.removeprefix("Schedule ") not in docstring]
    assert missing == []


def test_the_control_function_takes_every_steering_event_the_stack_declares() -> None:
    assert _routed(FUNCTIONS["ControlFunction"]) == {str(kind) for kind in DETAILS}
    assert set(DETAILS) == CONTROL


def _events(function: str) -> dict[str, dict[str, Any]]:
    folder = REPO / "events" / function
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


@pytest.mark.parametrize("function", ["start", "control", "tick"])
def test_every_bus_event_file_is_an_event_its_function_reads(function: str) -> None:
    events = _events(function)
    assert events
    routed = _routed(FUNCTIONS[f"{function.capitalize()}Function"])
    for name, event in events.items():
        envelope = bus_event(event)
        near_miss = function == "start" and meant_detail_type(envelope.detail_type) is not None
        assert envelope.detail_type in routed or near_miss, f"events/{function}/{name}.json"


@pytest.mark.parametrize("function", ["start", "control", "tick"])
def test_events_hold_a_file_for_every_event_each_bus_function_takes(function: str) -> None:
    given = {event["detail-type"] for event in _events(function).values()}
    assert _routed(FUNCTIONS[f"{function.capitalize()}Function"]) <= given


def test_events_hold_a_file_for_each_payload_the_fulfill_function_takes() -> None:
    kinds = set()
    for name, payload in _events("fulfill").items():
        call = TaskCall.from_wire(payload)
        kinds |= {kind for kind in ("attempt", "batch", "report") if getattr(call, kind)}
        assert name
    assert kinds == {"attempt", "batch", "report"}


def test_the_detail_types_the_stack_takes_are_the_ones_it_declares() -> None:
    taken = {t for spec in FUNCTIONS.values() for t in _routed(spec)}
    assert taken <= {str(t) for t in DetailType}
