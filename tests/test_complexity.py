"""No function above the engine is harder to follow than cyclomatic complexity 15 (radon's measure).

The engine decides the rules and may branch as the rules do; everything above it parses, asks the
engine and passes things on, so a function there that branches more is doing someone else's job.
A function nested in another, or a method of a class defined inside a function, is measured on its
own too: radon's block list leaves those out, and a tangle does not get easier by being indented.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from radon.visitors import ComplexityVisitor

ROOT = Path(__file__).resolve().parent.parent
ABOVE_THE_ENGINE = ("mafiabot", "cogs")
LIMIT = 15

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def functions(tree: ast.AST, outer: str = "") -> Iterator[tuple[str, FunctionNode]]:
    """Every function under ``tree``, however deeply nested, with its dotted name."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = f"{outer}{node.name}"
            if not isinstance(node, ast.ClassDef):
                yield name, node
            yield from functions(node, f"{name}.")
        else:
            yield from functions(node, outer)


def measure(source: str) -> list[tuple[int, int, str]]:
    """Each function in ``source`` as (complexity, line, dotted name); a nested one's branches count once, in it."""
    found = []
    for name, node in functions(ast.parse(source)):
        (block,) = ComplexityVisitor.from_ast(node).functions
        found.append((block.complexity, node.lineno, name))
    return found


def complexities() -> list[tuple[int, str]]:
    """Every function and method above the engine, as (complexity, where), largest first."""
    found: list[tuple[int, str]] = []
    for package in ABOVE_THE_ENGINE:
        for path in sorted((ROOT / package).rglob("*.py")):
            for value, line, name in measure(path.read_text(encoding="utf-8")):
                found.append((value, f"{path.relative_to(ROOT)}:{line} {name}"))
    return sorted(found, reverse=True)


def test_the_largest_function_above_the_engine_stays_within_the_limit() -> None:
    ranked = complexities()
    print(f"largest above the engine: {ranked[0][1]} = {ranked[0][0]}")  # noqa: T201
    over = [f"{where} = {value}" for value, where in ranked if value > LIMIT]
    assert over == []


def _tangle(indent: str) -> str:
    return "".join(f"{indent}if x == {i}:\n{indent}    return {i}\n" for i in range(LIMIT + 1))


def test_the_measure_sees_a_tangled_function() -> None:
    ((value, _line, name),) = measure(f"def f(x):\n{_tangle('    ')}    return -1\n")
    assert (name, value > LIMIT) == ("f", True)


def test_the_measure_sees_a_tangled_function_inside_another() -> None:
    source = f"def outer():\n    def inner(x):\n{_tangle('        ')}        return -1\n    return inner\n"
    assert {name: value > LIMIT for value, _line, name in measure(source)} == {"outer": False, "outer.inner": True}


def test_the_measure_sees_a_tangled_method_of_a_class_inside_a_function() -> None:
    source = (
        "def outer():\n    class Local:\n        def act(self, x):\n"
        f"{_tangle('            ')}            return -1\n    return Local\n"
    )
    assert {name: value > LIMIT for value, _line, name in measure(source)} == {
        "outer": False,
        "outer.Local.act": True,
    }
