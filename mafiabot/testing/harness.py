"""The emulator, a store and the real bot with a guild of scripted people: one table's world for a test.

``harness()`` starts them; ``Harness`` is what a test reads and acts through. The players act only
through Discord, as people would (``ScriptedUser``); ``Driver`` plays a whole table for them.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import math
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mafiabot.core.clock import TableClock
from mafiabot.core.runtime import Table
from mafiabot.emulator.server import Emulator, EmulatorConfig
from mafiabot.emulator.state import Channel, Message
from mafiabot.emulator.testing import BOT_PERMISSIONS, emulated_guild, running
from mafiabot.emulator.testing import Table as EmuTable
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.bot import MafiaBot
from mafiabot.host.settings import Config
from mafiabot.store import Store, sqlite_url, upgrade
from mafiabot.testing.clock import ScriptedClock

__all__ = [
    "SPEC_VIOLATIONS", "STEP_TIMEOUT", "Harness", "harness", "has_component", "migrated_sqlite", "muted_by_bot",
    "open_table", "readable",
]

STEP_TIMEOUT = 30.0
"""How long a harness waits for what a step should bring before the test fails."""
SPEC_VIOLATIONS: list[str] = []
"""Every OpenAPI violation any harness in this process saw; a test suite fails on one."""


_SCHEMA: list[Path] = []
"""The SQLite file this process migrated once, which ``migrated_sqlite`` copies."""


def migrated_sqlite(path: Path) -> str:
    """The URL of a new SQLite store at ``path``, already at the newest schema.

    A copy of a file this process migrated once: every test wants a store of its own, and
    migrating each from empty took a tenth of a second or more. The migrations have tests of their
    own, on empty databases.

    Raises:
        FileExistsError: ``path`` exists.
    """
    if not _SCHEMA:
        folder = Path(tempfile.mkdtemp(prefix="mafiabot-schema-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        upgrade(sqlite_url(folder / "schema.sqlite3"))
        _SCHEMA.append(folder / "schema.sqlite3")
    if path.exists():
        raise FileExistsError(path)
    shutil.copy(_SCHEMA[0], path)  # with its mode: the store's file is its owner's only
    return sqlite_url(path)


@dataclass
class Harness:
    """The emulator, the bot and the scripted people of one table."""

    env: EmuTable
    bot: MafiaBot
    store: Store
    players: list[ScriptedUser]
    judge: ScriptedUser
    real_time: bool = False
    """Whether the tables' timers run on the event loop's time; by default each runs on its own ``ScriptedClock``."""

    @property
    def emu(self) -> Emulator:
        """The emulator."""
        return self.env.emu

    async def wait(self, predicate: Callable[[], Any], timeout: float = STEP_TIMEOUT) -> Any:  # noqa: ASYNC109
        """Wait until ``predicate()`` holds, woken by the emulator and the bot's tables."""
        return await self.env.emu.wait_for(predicate, timeout)

    def table(self) -> Table | None:
        """The running table of the text channel."""
        return self.bot.tables.table_in(self.env.text.id)

    async def run_timers(self, table: Table, until: Callable[[], bool]) -> None:
        """Fire the table's scripted timers in turn, each once the bot has shown what came before, until ``until()``.

        What the table does on its own once nobody acts (a speech runs out, a vote closes, a
        pause ends) happens at once, at the moment the timer says, however busy the machine is.

        On real time (``harness(real_time=True)``) the timers fire by themselves: this only waits.

        Raises:
            TimeoutError: nothing is scheduled on the table's clock and ``until()`` still does not hold.
        """
        clock = table.clock
        if not isinstance(clock, ScriptedClock):
            await self.wait(until)
            return
        while True:
            await self.wait(lambda: until() or clock.next_at() is not None)
            await settle(self, table)
            if until():
                return
            if clock.next_at() is None:
                continue
            clock.fire_next()
            await settle(self, table)

    def user(self, user_id: int) -> ScriptedUser:
        """The scripted person with ``user_id``."""
        return next(p for p in [*self.players, self.judge] if p.id == user_id)

    def latest(self, channel: Channel, predicate: Callable[[Message], bool]) -> Message | None:
        """The newest message in ``channel`` matching ``predicate``."""
        return next((m for m in reversed(self.emu.messages(channel)) if predicate(m)), None)

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` whenever the emulator's world changes, before anything waiting on it wakes."""
        original = self.emu.changed

        def changed() -> None:
            callback()
            original()

        self.emu.changed = changed  # type: ignore[method-assign]  # the emulator has one change hook; chain it


async def settle(h: Harness, table: Table) -> None:
    """Wait until the table is quiet (``Table.quiet``) and the bot has shown all it did, both at once."""
    presenter = h.bot.presenter
    while True:
        await table.quiet()
        await presenter.drained(table.id)
        if table.idle:  # nothing new began while the messages went out
            return


def has_component(message: Message, cid: str) -> bool:
    """Whether a message carries the control ``cid``."""
    stack = list(message.components)
    while stack:
        component = stack.pop()
        if component.get("custom_id") == cid:
            return True
        stack.extend(component.get("components") or [])
    return False


@contextlib.asynccontextmanager
async def harness(
    players: int, *, time_scale: float = 0.02, database: str | None = None,
    emulator_config: EmulatorConfig | None = None, config: dict[str, Any] | None = None, seed: int | None = None,
    clock: Callable[[], TableClock] | None = None, rate_scale: float | None = None,
    rulesets: Mapping[str, str] | None = None, bot_permissions: int | None = None, real_time: bool = False,
) -> AsyncIterator[Harness]:
    """Start an emulator with a guild of ``players`` + a judge, a store, and the real bot.

    Each table's timers run on a ``ScriptedClock`` of its own (or on ``clock()``'s): they fire only
    when the test or a ``Driver`` moves that clock (``Harness.run_timers``), so no step of a test
    races the machine's speed. ``real_time=True``, for a test about real time, runs them on the
    event loop's time instead, ``1 / time_scale`` times fast. Either way a game second is
    ``time_scale`` seconds of the table (what deadlines and countdowns show), and the table asks for
    up to ``1 / time_scale`` times more requests per second than at full speed: Discord's global
    limit (requests per second, all routes) is scaled by that factor (or ``rate_scale``) on both
    sides, the emulator's and the bot's. The per-route buckets (member edits, reactions) and
    Discord's own deadlines (the 3 s to answer an interaction) stay real.
    ``rulesets`` (file name to TOML) become the bot's ``[game] rulesets_dir``, as a host's folder would.
    ``bot_permissions``: what the bot's role may do, when not what it asks for on invite.
    """
    emulated = dataclasses.replace(emulator_config or EmulatorConfig())
    limit, window = emulated.rate_limits.global_limit
    per_second = math.ceil(limit / window / min(rate_scale or time_scale, 1.0))
    emulated.rate_limits = dataclasses.replace(emulated.rate_limits, global_limit=(per_second, 1.0))
    with tempfile.TemporaryDirectory() as tmp:
        url = database or migrated_sqlite(Path(tmp) / "mafiabot.sqlite3")
        permissions = BOT_PERMISSIONS if bot_permissions is None else bot_permissions
        async with emulated_guild(members=players + 1, config=emulated, bot_permissions=permissions) as env:
            settings: dict[str, Any] = {
                "discord": {"guild_ids": [env.guild.id], "global_rate_limit": per_second},
                "game": {"time_scale": time_scale},
            }
            if seed is not None:
                settings["game"]["seed"] = seed
            if rulesets:
                settings["game"]["rulesets_dir"] = _rulesets_folder(Path(tmp), rulesets)
            for section, values in (config or {}).items():
                settings.setdefault(section, {}).update(values)
            store = await Store.open(url)
            bot = MafiaBot(Config.model_validate(settings), store, guild_ready_timeout=0.05)
            if clock is not None or not real_time:
                bot.table_clock = _waking(clock or ScriptedClock, env.emu)
            try:
                async with running(bot, env):
                    yield Harness(env, bot, store, env.members[:players], env.members[players], real_time)
            finally:
                SPEC_VIOLATIONS.extend(str(v) for v in env.emu.violations)
                await store.close()


def _waking(factory: Callable[[], TableClock], emu: Emulator) -> Callable[[], TableClock]:
    """``factory``, with each scripted clock it makes waking the emulator's waiters when a timer is set."""

    def wake() -> None:
        emu.changed()  # looked up on each call: a harness may chain the emulator's change hook

    def make() -> TableClock:
        made = factory()
        if isinstance(made, ScriptedClock) and wake not in made.on_schedule:
            made.on_schedule.append(wake)
        return made

    return make


def _rulesets_folder(tmp: Path, rulesets: Mapping[str, str]) -> str:
    folder = tmp / "rulesets"
    folder.mkdir()
    for name, text in rulesets.items():
        (folder / name).write_text(text, encoding="utf-8")
    return str(folder)


async def open_table(h: Harness, ruleset: str, seats: int) -> Table:
    """Everyone sits in voice, the judge opens a table, everyone joins, the judge starts."""
    for person in [*h.players, h.judge]:
        person.join_voice(h.env.voice)
    reply = await h.judge.run_command(h.env.text, "mafia new", ruleset=ruleset, seats=seats)
    lobby = reply.message
    if lobby is None:
        raise RuntimeError(f"/mafia new was refused: {reply.content}")
    join = next(c["custom_id"] for row in lobby.components for c in row["components"] if ":join:" in c["custom_id"])
    for person in h.players:
        answer = await person.press(lobby, join)
        if answer.ephemeral:
            raise RuntimeError(f"join refused: {answer.content}")
    start = await h.judge.run_command(h.env.text, "mafia start")
    table = h.table()
    if table is None:
        raise RuntimeError(f"/mafia start was refused: {start.content}")
    h.bot.tables.watch(table, h.emu.changed)
    return table


def readable(h: Harness, text: str) -> str:
    """Discord markup as a terminal shows it: mentions as names, countdowns as times."""
    users = h.emu.world.users
    channels = h.emu.world.channels

    def user(match: re.Match[str]) -> str:
        found = users.get(int(match[1]))
        return f"@{found.name}" if found is not None else match[0]

    def channel(match: re.Match[str]) -> str:
        found = channels.get(int(match[1]))
        return f"#{found.name}" if found is not None else match[0]

    def when(match: re.Match[str]) -> str:
        return datetime.fromtimestamp(int(match[1]), UTC).strftime("%H:%M:%S")

    text = re.sub(r"<@!?(\d+)>", user, text)
    text = re.sub(r"<#(\d+)>", channel, text)
    return re.sub(r"<t:(\d+):[RT]>", when, text)


def muted_by_bot(h: Harness, table: Table) -> list[int]:
    """The table's people who are still server-muted (the sticky flag, in voice or not)."""
    people = set(table.seats) | {p.id for p in h.players} | {h.judge.id}
    return sorted(u for u in people if h.env.guild.members[u].mute)
