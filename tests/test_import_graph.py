"""The package imports in one direction: no module of hlsgen imports, however indirectly, a module that
imports it back (issue 30: the layer program's rows live in hlsgen.hw.rows under the mapping, banding,
batching and queues that build them; the fuzzer's spec below its ONNX writer; the CLI hands itself to the
input fuzzer and the guard that runs it). Every `import` and `from ... import` counts, also those inside
functions: a late import hides a circle, it does not remove it."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

import hlsgen

PACKAGE = Path(hlsgen.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> nx.DiGraph:
    """Module -> the hlsgen modules it imports (a name imported from a package is an edge to its submodule
    when one has that name, else to the package)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            else:
                continue
            graph.add_edges_from((name, t) for t in targets if t in modules and t != name)
    return graph


def test_the_graph_sees_relative_absolute_and_late_imports():
    graph = import_graph()
    assert graph.has_edge("hlsgen.hw.mapping", "hlsgen.hw.banding")  # from .banding import ...
    assert graph.has_edge("hlsgen.hw.banding", "hlsgen.hw.rows")
    assert graph.has_edge("hlsgen.__main__", "hlsgen.cli")  # inside a function
    assert graph.has_edge("hlsgen.hw.mapping", "hlsgen.hw.cycles")  # from . import cycles


def test_no_module_imports_itself_back():
    circles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert not circles, f"import circles: {circles}"
