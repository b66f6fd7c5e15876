"""The module graph of egmlib: no import circle, no module using another's private names.

Read from the source with ``ast`` (every ``import`` statement, at module level or inside
a function), so a lazy import counts as an edge too.  The one exception is a
deprecated alias resolved by ``importlib`` in a module ``__getattr__`` (listed below,
removed in the next release).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "egmlib"
MODULES = sorted(p.stem for p in ROOT.glob("*.py") if p.stem != "__init__")


def _imports(name: str) -> tuple[set[str], set[tuple[str, str]]]:
    """(egmlib modules imported by ``name``, (module, private name) pairs it uses)."""
    tree = ast.parse((ROOT / f"{name}.py").read_text())
    deps: set[str] = set()
    private: set[tuple[str, str]] = set()
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 1:
                mod = f"egmlib.{mod}" if mod else "egmlib"
            if mod == "egmlib":
                for a in node.names:
                    deps.add(a.name)
                    aliases[a.asname or a.name] = a.name
            elif mod.startswith("egmlib."):
                target = mod.split(".")[1]
                deps.add(target)
                for a in node.names:
                    if a.name.startswith("_") and target != "_validation":
                        private.add((target, a.name))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("egmlib."):
                    deps.add(a.name.split(".")[1])
                    aliases[a.asname or a.name] = a.name.split(".")[1]
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")):
            private.add((aliases[node.value.id], node.attr))
    deps.discard(name)
    return deps & set(MODULES), private


GRAPH = {m: _imports(m)[0] for m in MODULES}


def test_the_graph_is_read():
    """The reader sees the edges it must see (a reader that finds nothing would pass below)."""
    assert {"coinpress", "gchi2", "optimal", "scaling"} <= GRAPH["pipelines"]
    assert "gchi2" in GRAPH["optimal"] and "privacy" in GRAPH["mechanisms"]


def test_no_import_circle():
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(GRAPH[m]):
            if state.get(n) == 1:
                pytest.fail("import circle: " + " -> ".join(path + [m, n]))
            if n not in state:
                visit(n, path + [m])
        state[m] = 2

    for m in MODULES:
        if m not in state:
            visit(m, [])


def test_coinpress_does_not_import_pipelines():
    assert "pipelines" not in GRAPH["coinpress"]
    assert "coinpress" in GRAPH["pipelines"]


@pytest.mark.parametrize("name", MODULES)
def test_no_private_names_of_another_module(name):
    assert _imports(name)[1] == set()


def test_deprecated_coinpress_mean_alias():
    import egmlib.coinpress
    import egmlib.pipelines

    with pytest.warns(DeprecationWarning, match="egmlib.pipelines.coinpress_mean"):
        f = egmlib.coinpress.coinpress_mean
    assert f is egmlib.pipelines.coinpress_mean
    with pytest.raises(AttributeError):
        egmlib.coinpress.no_such_name  # noqa: B018
