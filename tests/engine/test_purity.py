"""The engine stays pure: no Discord, no database, no network, no clock, no files, no bot code."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "engine"

FORBIDDEN = frozenset(
    {
        # Discord, the database and the bot layers.
        "discord",
        "sqlmodel",
        "sqlalchemy",
        "alembic",
        "aiosqlite",
        "mafiabot",
        "cogs",
        # Event loops, network and processes.
        "asyncio",
        "aiohttp",
        "httpx",
        "requests",
        "urllib",
        "http",
        "socket",
        "ssl",
        "select",
        "selectors",
        "subprocess",
        "multiprocessing",
        "threading",
        "concurrent",
        "signal",
        # Clocks.
        "time",
        "datetime",
        "zoneinfo",
        "calendar",
        "sched",
        # Files, the environment and logging sinks.
        "os",
        "sys",
        "io",
        "pathlib",
        "shutil",
        "tempfile",
        "glob",
        "fileinput",
        "sqlite3",
        "pickle",
        "shelve",
        "logging",
        "builtins",
        "importlib",
        "ctypes",
    }
)


def forbidden_imports(source: str, filename: str = "<source>") -> list[str]:
    """Every forbidden module ``source`` imports (top-level package names), and calls to ``open``/``__import__``."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            # A relative import stays inside the engine package.
            modules = [node.module] if node.module and node.level == 0 else []
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("open", "__import__", "exec", "eval", "input", "print"):
                found.append(f"{filename}:{node.lineno}: {node.func.id}()")
            continue
        else:
            continue
        found.extend(f"{filename}:{node.lineno}: {module}" for module in modules if module.split(".")[0] in FORBIDDEN)
    return found


ENGINE_FILES = sorted(ENGINE.rglob("*.py"))


def test_engine_has_sources_to_check() -> None:
    names = {path.name for path in ENGINE_FILES}
    assert {"game.py", "state.py", "ruleset.py", "codec.py", "__init__.py"} <= names


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: p.name)
def test_engine_module_imports_nothing_that_does_io_or_reads_a_clock(path: Path) -> None:
    assert forbidden_imports(path.read_text(encoding="utf-8"), path.name) == []


@pytest.mark.parametrize(
    "source",
    [
        "import discord",
        "import discord.ext.commands",
        "from discord import Interaction",
        "import sqlmodel",
        "from sqlalchemy.orm import Session",
        "import asyncio",
        "import aiohttp",
        "import time",
        "from time import monotonic",
        "import datetime",
        "from datetime import datetime",
        "import socket",
        "import os",
        "from os import path",
        "import os.path",
        "import mafiabot",
        "from mafiabot.core.runtime import Runtime",
        "from cogs import game",
        "import json, logging",
        "def load():\n    from pathlib import Path\n    return Path('x')",
        "class Late:\n    def f(self):\n        import time\n        return time.time()",
        "handle = open('rules.toml')",
        "m = __import__('os')",
    ],
)
def test_purity_check_rejects_a_forbidden_import(source: str) -> None:
    assert forbidden_imports(source) != []


@pytest.mark.parametrize(
    "source",
    [
        "import random",
        "import tomllib",
        "from decimal import Decimal",
        "from dataclasses import dataclass",
        "from engine.ids import Role",
        "from . import ids",
        "from .codec import to_data",
        "import timeit_like_name_is_not_time",
        "from typing import Any",
    ],
)
def test_purity_check_accepts_pure_imports(source: str) -> None:
    assert forbidden_imports(source) == []
