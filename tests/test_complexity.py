"""No function above the engine is harder to follow than cyclomatic complexity 15 (radon's measure).

The engine decides the rules and may branch as the rules do; everything above it parses, asks the
engine and passes things on, so a function there that branches more is doing someone else's job.
"""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Function

ROOT = Path(__file__).resolve().parent.parent
ABOVE_THE_ENGINE = ("mafiabot", "cogs")
LIMIT = 15


def complexities() -> list[tuple[int, str]]:
    """Every function and method above the engine, as (complexity, where), largest first."""
    found: list[tuple[int, str]] = []
    for package in ABOVE_THE_ENGINE:
        for path in sorted((ROOT / package).rglob("*.py")):
            for block in cc_visit(path.read_text(encoding="utf-8")):
                if isinstance(block, Function):
                    where = f"{path.relative_to(ROOT)}:{block.lineno} {block.fullname}"
                    found.append((block.complexity, where))
    return sorted(found, reverse=True)


def test_the_largest_function_above_the_engine_stays_within_the_limit() -> None:
    ranked = complexities()
    print(f"largest above the engine: {ranked[0][1]} = {ranked[0][0]}")  # noqa: T201
    over = [f"{where} = {value}" for value, where in ranked if value > LIMIT]
    assert over == []


def test_the_measure_sees_a_tangled_function() -> None:
    branches = "".join(f"    if x == {i}:\n        return {i}\n" for i in range(LIMIT + 1))
    (block,) = cc_visit(f"def f(x):\n{branches}    return -1\n")
    assert block.complexity > LIMIT
