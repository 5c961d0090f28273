"""Drive the local Discord emulator and a real discord.py bot from a test, as the project's own tests do.

Shipped on purpose, as the emulator is: ``harness()`` starts the emulator with a guild of scripted
people, a store and the real bot; ``Driver`` plays a whole table through Discord for the players;
``ScriptedClock`` is the table clock that moves only when the test or the driver moves it. See
docs/emulator.md, "Testing a bot against the emulator".
"""

from mafiabot.testing.clock import EVENING, ScriptedClock
from mafiabot.testing.driver import END_TIMEOUT, UPDATE_MESSAGE, Driver
from mafiabot.testing.hands import EnginePlayer, Hands, Menu, Strategy, Where, seeded
from mafiabot.testing.harness import (
    SPEC_VIOLATIONS,
    STEP_TIMEOUT,
    Harness,
    harness,
    has_component,
    migrated_sqlite,
    muted_by_bot,
    open_table,
    readable,
)

__all__ = [
    "END_TIMEOUT", "EVENING", "SPEC_VIOLATIONS", "STEP_TIMEOUT", "UPDATE_MESSAGE", "Driver", "EnginePlayer", "Hands",
    "Harness", "Menu", "ScriptedClock", "Strategy", "Where", "harness", "has_component", "migrated_sqlite",
    "muted_by_bot", "open_table", "readable", "seeded",
]
