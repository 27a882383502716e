"""GIVEN src/tickwork as it stands WHEN its imports and sizes are read (scripts/layout.py, which
``make layout`` prints) THEN no two of its modules import each other in a circle, and no domain
module grows past ~400 lines without saying at its top why it is long."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
DOMAIN = REPO / "src" / "tickwork" / "domain"
MOST = 400


def _layout() -> ModuleType:
    spec = importlib.util.spec_from_file_location("layout", REPO / "scripts" / "layout.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_module_of_the_package_is_in_an_import_circle() -> None:
    layout = _layout()
    graph = layout._graph(layout._modules())
    assert layout._circles(graph) == []
    # the check finds one where there is one
    assert layout._circles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]


def test_a_long_domain_module_says_why_at_its_top() -> None:
    long = []
    for path in DOMAIN.rglob("*.py"):
        if len(path.read_text().splitlines()) > MOST:
            doc = ast.get_docstring(ast.parse(path.read_text())) or ""
            if "on purpose" not in doc:
                long.append(str(path.relative_to(REPO)))
    assert long == []
