"""`make layout`: the shape of src/tickwork, measured from the code as it stands — lines per layer
(the layers pyproject.toml's import contract names) and per wing, the files over 300 lines, the
import circles (every import counts: at the top, in a function, under TYPE_CHECKING), and the
modules a module reaches through its imports (``--reach tickwork.fire.lone_fire``).

Run from the repository's root: ``python scripts/layout.py [--reach MODULE ...]``.
"""

from __future__ import annotations

import argparse
import ast
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
LONG = 300


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / "tickwork").rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the package that ``path`` imports (a name imported from a package that
    is a module of its own counts as that module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name:
                found.add(name)
    return found


def _graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph = {name: _imports(path, modules) for name, path in modules.items()}
    # a package's face (its __init__) is where its modules are reached from, not a module of
    # its own that imports them back: drop the edges from a package to its own modules
    for name, targets in graph.items():
        graph[name] = {t for t in targets if t != name and not t.startswith(name + ".")}
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = config["tool"]["importlinter"]["contracts"]
    layered = next(c for c in contracts if c["type"] == "layers")
    return [layer.replace(":", "|") for layer in layered["layers"]]


def _owner(module: str, layers: list[str]) -> str:
    for layer in layers:
        for part in (p.strip() for p in layer.split("|")):
            if module == part or module.startswith(part + "."):
                return part
    return module  # a module no layer names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reach", nargs="*", default=[], help="modules to follow the imports of")
    args = parser.parse_args()
    modules = _modules()
    graph = _graph(modules)
    layers = _layers()
    per: dict[str, int] = defaultdict(int)
    for name, path in modules.items():
        per[_owner(name, layers)] += _lines(path)
    print(f"src/tickwork: {sum(per.values()):,} lines in {len(modules)} modules")
    print("lines per layer, from the top (pyproject.toml's import contract):")
    for layer in layers:
        for part in (p.strip() for p in layer.split("|")):
            print(f"  {part:<28} {per.pop(part, 0):>6,}")
    for part, lines in sorted(per.items()):
        print(f"  {part:<28} {lines:>6,}  (no layer names it)")
    long = sorted(((_lines(p), n) for n, p in modules.items() if _lines(p) > LONG), reverse=True)
    print(f"files over {LONG} lines: {len(long)}")
    for lines, name in long:
        print(f"  {lines:>5}  {modules[name].relative_to(ROOT)}")
    circles = _circles(graph)
    print(f"import circles: {len(circles)}")
    for circle in circles:
        print("  " + " <-> ".join(circle))
    for start in args.reach:
        seen, todo = {start}, [start]
        while todo:
            for target in graph.get(todo.pop(), ()):
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        inside = sorted(s for s in seen if s in modules)
        print(f"{start} reaches {len(inside)} modules of the package through its imports")


if __name__ == "__main__":
    main()
