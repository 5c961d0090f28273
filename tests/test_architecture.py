"""The layers hold: import-linter's contracts, no import cycle anywhere, and a checker that can fail.

The contracts live in ``pyproject.toml``; type-only imports count, since a layer that needs a type
from above depends on it just the same.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "mafiabot", "cogs")


def test_the_import_contracts_are_kept() -> None:
    # In a process of its own: import-linter configures logging, which would silence later tests' loggers.
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every set of modules that import each other, directly or not (strongly connected components)."""
    edges = {module: sorted(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, 0)]
        while work:  # Tarjan's algorithm, iteratively: the graph is deeper than the recursion limit cares for
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            targets = edges.get(node, [])
            if child < len(targets):
                work.append((node, child + 1))
                target = targets[child]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_no_module_imports_itself_through_others() -> None:
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False, cache_dir=None)
    assert import_cycles(graph) == []


def _copy_tree(tmp_path: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _lint(where: Path) -> subprocess.CompletedProcess[str]:
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True))"
    return subprocess.run(  # noqa: S603 (our own interpreter, our own code)
        [sys.executable, "-c", code], cwd=where, capture_output=True, text=True, check=False,
        env={"PYTHONPATH": str(where), "PATH": ""},
    )


def test_a_back_edge_breaks_the_layers_contract(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    assert _lint(tree).returncode == 0
    with (tree / "engine" / "__init__.py").open("a", encoding="utf-8") as init:
        init.write("\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import mafiabot.core.runtime\n")
    result = _lint(tree)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout


def test_a_cycle_is_found() -> None:
    def of(*pairs: tuple[str, str]) -> list[list[str]]:
        graph = grimp.ImportGraph()
        for importer, imported in pairs:
            graph.add_import(importer=importer, imported=imported)
        return import_cycles(graph)

    assert of(("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")) == [["a", "b", "c"]]
    assert of(("a", "b"), ("b", "c"), ("d", "a")) == []
    assert of(("a", "b"), ("b", "a"), ("c", "d"), ("d", "c")) == [["a", "b"], ["c", "d"]]


STORE_HANDLE = "store"
"""What the bot calls its store: a cog that names it reaches past the core's services to the rows."""


def store_reaches(source: str) -> list[int]:
    """The lines of ``source`` that touch an attribute called ``store`` (``bot.store``, ``self.bot.store...``)."""
    tree = ast.parse(source)
    return sorted({node.lineno for node in ast.walk(tree)
                   if isinstance(node, ast.Attribute) and node.attr == STORE_HANDLE})


def test_no_cog_reaches_the_store() -> None:
    """The cogs go through the core's services (tournaments, tables) and the host's facades, never the store."""
    found = {str(path.relative_to(ROOT)): lines for path in sorted((ROOT / "cogs").rglob("*.py"))
             if (lines := store_reaches(path.read_text(encoding="utf-8")))}
    assert found == {}


def test_a_store_reach_is_found() -> None:
    assert store_reaches("async def f(bot):\n    await bot.store.get_game(1)\n") == [2]
    assert store_reaches("def f(self):\n    return self.bot.store.tournaments\n") == [2]
    assert store_reaches("def f(bot):\n    return bot.stored, bot.tournaments\n") == []


def test_a_cog_importing_the_store_breaks_its_contract(tmp_path: Path) -> None:
    tree = _copy_tree(tmp_path)
    with (tree / "cogs" / "__init__.py").open("a", encoding="utf-8") as init:
        init.write("\nimport mafiabot.store.tournaments\n")
    result = _lint(tree)
    assert result.returncode != 0
    assert "cogs-without-the-store" in result.stdout or "never reach the store" in result.stdout
