"""Test helpers: a ready-made guild on a running emulator, and a discord.py client run against it.

Usage in a test module or conftest::

    async with emulated_guild(members=4) as table:
        bot = MyBot(...)
        async with running(bot, table):
            reply = await table.members[0].run_command(table.text, "mafia new")
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .ratelimit import Clock
from .server import Emulator, EmulatorConfig, connect_discord_py, disconnect_discord_py
from .spec import SpecValidator, default_spec_path
from .state import BOT_PERMISSIONS, Application, Channel, ChannelType, Guild, Member
from .users import ScriptedUser

if TYPE_CHECKING:
    import discord

__all__ = [
    "BOT_PERMISSIONS",
    "REQUIRE_SPEC_ENV",
    "Table",
    "assert_no_spec_violations",
    "emulated_guild",
    "require_spec",
    "running",
]

REQUIRE_SPEC_ENV = "MAFIABOT_REQUIRE_SPEC"
"""With this set to ``1`` (CI sets it) a test that checks requests against the OpenAPI spec fails
when the spec cannot be read; otherwise it is skipped with the reason. Never a vacuous pass."""


@functools.cache
def _default_spec_unreadable(path: Path) -> str | None:
    return SpecValidator(path).skip_reason


def require_spec(spec: SpecValidator | None = None) -> None:
    """Make the calling test fail (``MAFIABOT_REQUIRE_SPEC=1``) or skip unless the spec was read.

    ``spec`` is an emulator's validator; without it, the one every default emulator reads.
    """
    reason = _default_spec_unreadable(default_spec_path()) if spec is None else spec.skip_reason
    if reason is None:
        return
    import pytest

    if os.environ.get(REQUIRE_SPEC_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_SPEC_ENV}=1: the spec check is mandatory)", pytrace=False)
    pytest.skip(reason)


def assert_no_spec_violations(emu: Emulator) -> None:
    """Assert that the spec was read (see `require_spec`) and rejected none of ``emu``'s requests."""
    require_spec(emu.spec)
    if emu.violations:
        listed = "\n".join(f"  {v.method} {v.path}: {v.reason}" for v in emu.violations)
        raise AssertionError(f"requests the Discord OpenAPI spec rejects:\n{listed}")


@dataclasses.dataclass
class Table:
    """A guild ready for a game: a text and a voice channel, members, and the bot invited."""

    emu: Emulator
    app: Application
    guild: Guild
    text: Channel
    voice: Channel
    members: list[ScriptedUser]
    bot_member: Member

    @property
    def token(self) -> str:
        """The bot's token."""
        return self.app.token


@contextlib.asynccontextmanager
async def emulated_guild(
    members: int = 4,
    *,
    config: EmulatorConfig | None = None,
    clock: Clock | None = None,
    bot_permissions: int = BOT_PERMISSIONS,
    require_mfa: bool = False,
    owner_mfa: bool = True,
) -> AsyncIterator[Table]:
    """Start an emulator with one guild, ``members`` scripted users and a bot application.

    ``require_mfa`` turns on the guild's server-wide 2FA and ``owner_mfa=False`` gives the bot an
    owner without 2FA: together, the bot's elevated permissions answer 403/60003 (see
    `Emulator.require_mfa`).
    """
    emu = Emulator(config, clock=clock)
    await emu.start()
    try:
        app = emu.create_application("mafiabot")
        app.owner_mfa = owner_mfa
        guild = emu.create_guild("Mafia Club")
        if require_mfa:
            emu.require_mfa(guild)
        text = emu.create_channel(guild, "table")
        voice = emu.create_channel(guild, "Table voice", ChannelType.GUILD_VOICE)
        people = [emu.create_scripted_user(f"player{i + 1}", guild) for i in range(members)]
        bot_member = emu.add_bot(guild, app, bot_permissions)
        yield Table(emu, app, guild, text, voice, people, bot_member)
    finally:
        await emu.close()


def _wake_on_dispatch(client: discord.Client, emu: Emulator) -> None:
    """Wake the emulator's waiters after each gateway event the client has taken in.

    A test may wait on the client's own view (its cache after a GUILD_UPDATE, a thread it now sees
    archived), which changes when the client reads an event, not when the emulator's world changes:
    without this, such a wait slept until its timeout and then passed on its last look.
    """
    if getattr(client.dispatch, "wakes_emulator", None) is emu:
        return  # the same client run again: one wake per event is enough
    dispatch = client.dispatch

    def dispatch_and_wake(event_name: str, /, *args: Any, **kwargs: Any) -> None:
        dispatch(event_name, *args, **kwargs)
        emu.changed()  # looked up on each call: a harness may chain the emulator's change hook

    dispatch_and_wake.wakes_emulator = emu  # type: ignore[attr-defined]
    client.dispatch = dispatch_and_wake  # type: ignore[method-assign]


@contextlib.asynccontextmanager
async def running(
    client: discord.Client,
    table: Table | Emulator,
    token: str | None = None,
    *,
    skip_identify_wait: bool = True,
) -> AsyncIterator[None]:
    """Log a discord.py client in to the emulator and keep it connected; wait for READY and guilds.

    Pass ``guild_ready_timeout`` small (e.g. 0.05) to the client so ``on_ready`` is not delayed.
    ``skip_identify_wait`` drops discord.py's 5 s pause before a non-first IDENTIFY (extra shards,
    re-IDENTIFY after an invalid session): the emulator has no IDENTIFY concurrency limit.
    """
    emu = table.emu if isinstance(table, Table) else table
    token = token or (table.token if isinstance(table, Table) else None)
    if token is None:
        raise ValueError("a token is needed when running against a bare Emulator")
    connect_discord_py(emu.url)
    app = emu.world.app_by_token(token)
    _wake_on_dispatch(client, emu)
    if skip_identify_wait:

        async def identify_now(shard_id: int | None, *, initial: bool = False) -> None:
            return None

        client.before_identify_hook = identify_now  # type: ignore[method-assign]
    try:
        await client.login(token)
        task = asyncio.create_task(client.connect(reconnect=True))
        try:
            waiter = asyncio.create_task(client.wait_until_ready())
            done, _ = await asyncio.wait({waiter, task}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
            if waiter not in done:
                waiter.cancel()
                if task in done:
                    task.result()
                raise TimeoutError("the client did not become ready")
            await emu.wait_for(lambda: bool(emu.gateway.connected(app)))
            yield
        finally:
            await client.close()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    finally:
        disconnect_discord_py()
