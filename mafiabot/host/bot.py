"""``MafiaBot``: the discord.py client that hosts the tables."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from mafiabot.core.clock import LoopClock, TableClock, loop_time
from mafiabot.core.tables import TableManager
from mafiabot.host.drawing import Charts
from mafiabot.host.i18n import MafiaTranslator, command_mention
from mafiabot.host.members import DiscordMemberEditor
from mafiabot.host.places import DiscordPlaces
from mafiabot.host.presenter import Presenter
from mafiabot.host.ratelimit import GlobalLimit, global_limit_trace
from mafiabot.host.settings import HostedSettings, table_options
from mafiabot.host.tables import DiscordTableSide
from mafiabot.store.rulesets import RulesetCatalog

if TYPE_CHECKING:
    from mafiabot.core.records import GuildSettings
    from mafiabot.host.settings import Config
    from mafiabot.store import Store

log = logging.getLogger(__name__)

COLLECTOR_THRESHOLD = 10_000
"""Container allocations between two young-generation collections (CPython's default is 700).

A bot with hundreds of tables holds a few hundred thousand long-lived objects, and at the default
pace the collector's full passes over them took about a sixth of the bot's CPU at 500 tables;
``docs/performance.md`` has the figures. Cycles are still collected, only in larger batches."""


def tune_collector() -> None:
    """Collect less often, as a long-running server with a large, stable heap should (never more often)."""
    young, middle, old = gc.get_threshold()
    if 0 < young < COLLECTOR_THRESHOLD:
        gc.set_threshold(COLLECTOR_THRESHOLD, middle, old)

INITIAL_EXTENSIONS = ("cogs.lobby", "cogs.day", "cogs.night", "cogs.voting", "cogs.voice", "cogs.judge",
                      "cogs.panel", "cogs.history", "cogs.settings", "cogs.strays", "cogs.fairplay",
                      "cogs.tournament", "cogs.protest")
"""Any order: each cog adds its subcommands to ``/mafia`` in the order users see (``cogs._group.ORDER``)."""


class MafiaBot(commands.Bot):
    """The bot, and where its parts are built: each is handed the ports it uses, never the bot.

    The cogs reach the parts through it (``tables``, ``store``, ``presenter``, ``rulesets``).
    """

    def __init__(self, config: Config, store: Store, **options: Any) -> None:
        options.setdefault("intents", discord.Intents.default())
        options.setdefault("allowed_mentions", discord.AllowedMentions(everyone=False, roles=False, users=True))
        options.setdefault("help_command", None)
        count, ids = config.discord.shard_count, config.discord.shard_ids
        if count > 1:
            options.setdefault("shard_count", count)
            if isinstance(self, commands.AutoShardedBot):
                options.setdefault("shard_ids", ids or None)
            else:
                options.setdefault("shard_id", ids[0])
        self.global_limit = GlobalLimit(config.discord.global_rate_limit)
        options.setdefault("http_trace", global_limit_trace(self.global_limit))
        super().__init__(command_prefix=commands.when_mentioned, **options)
        self.config = config
        self.store = store
        self.settings = HostedSettings(store, config.game)
        self.presenter = Presenter(self)
        self.editor = DiscordMemberEditor(
            self.http, self, config.voice.helper_tokens, global_limit=self.global_limit,
            global_rate=config.discord.global_rate_limit, now=loop_time,
        )
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        """The clock of the bot's own short waits (deferring a slow interaction); tests hand another."""
        self.table_clock: Callable[[], TableClock] = LoopClock
        """Makes each new table's clock; the demo hands in a scripted one, so a seed replays exactly."""
        self.rulesets = RulesetCatalog.from_folder(store, config.game.rulesets_dir)
        """Presets, the host's ``rulesets_dir`` (read once, here) and each server's uploads."""
        self.tables = self.build_tables()
        self.charts = Charts(loop_time)
        """``/mafia top`` and ``/mafia stats`` pictures: one worker of their own and a cooldown per member."""
        self.command_ids: dict[int | None, dict[str, int]] = {}
        """Top-level command ids by name, per guild (None: the global commands), for command mentions."""

    def build_tables(self) -> TableManager:
        """A table manager on this bot's ports; a second one stands for a restarted process in tests."""
        return TableManager(
            records=self.store, game_log=self.store, ledger=self.store, editor=self.editor, settings=self.settings,
            rulesets=self.rulesets, places=DiscordPlaces(self), side=DiscordTableSide(self.presenter, self),
            options=table_options(self.config), clock=LoopClock(), table_clock=lambda: self.table_clock(),
            owns_guild=self.owns_guild, renamer=self.editor, nick_ledger=self.store, liveness=self.store,
        )

    def commands_text(self, guild_id: int | None) -> dict[str, str]:
        """``cmd_<name>`` fields: a mention of each ``/mafia`` subcommand, for messages that name one.

        A subgroup's commands are ``cmd_<group>_<name>``.

        A mention shows each reader the command's name in their own client's language; a guild's own
        copy of the commands has its own ids, and the global ones serve where it has none.
        """
        ids = self.command_ids.get(guild_id) or self.command_ids.get(None) or {}
        group = self.tree.get_command("mafia")
        if not isinstance(group, discord.app_commands.Group):
            return {}
        paths: list[tuple[str, ...]] = []
        for command in group.commands:
            if isinstance(command, discord.app_commands.Group):  # /mafia ruleset upload: cmd_ruleset_upload
                paths += [(command.name, sub.name) for sub in command.commands]
            else:
                paths.append((command.name,))
        return {"cmd_" + "_".join(path): command_mention(ids, " ".join(("mafia", *path))) for path in paths}

    def _remember_commands(self, guild_id: int | None, synced: Sequence[discord.app_commands.AppCommand]) -> None:
        self.command_ids[guild_id] = {c.name: c.id for c in synced}

    async def setup_hook(self) -> None:
        """Load the cogs, localize the commands, sync them, and pick up the games a crash left open."""
        tune_collector()
        try:  # before any interaction can come: only a command for a game still to be resumed will wait
            await self.tables.prepare()
        except Exception as exc:
            log.warning("could not read the open games before connecting (%s); recovery reads them again", exc)
        for extension in INITIAL_EXTENSIONS:
            await self.load_extension(extension)
        await self.tree.set_translator(MafiaTranslator())
        guild_ids = self.config.discord.guild_ids
        if self.config.discord.sync_commands:
            if guild_ids:
                for guild_id in guild_ids:
                    guild = discord.Object(id=guild_id)
                    self.tree.copy_global_to(guild=guild)
                    self._remember_commands(guild_id, await self.tree.sync(guild=guild))
            else:
                self._remember_commands(None, await self.tree.sync())
            return
        # Commands synced earlier: only their ids are needed, and a failure costs plain-text names only.
        scopes: list[int | None] = [*guild_ids] if guild_ids else [None]
        for scope in scopes:
            try:
                fetched = await self.tree.fetch_commands(guild=discord.Object(id=scope) if scope else None)
            except discord.HTTPException as exc:
                log.warning("could not fetch the commands' ids (%s); messages name them as plain text", exc)
                continue
            self._remember_commands(scope, fetched)

    async def on_ready(self) -> None:
        """Recover open games once the guilds (and their voice states) are known."""
        await self.tables.recover()

    async def guild_settings(self, guild_id: int) -> GuildSettings:
        """The server's saved settings; a server that saved none gets the config's language and ruleset."""
        return await self.settings.guild_settings(guild_id)

    def owns_guild(self, guild_id: int) -> bool:
        """Whether this process runs the shard that ``guild_id`` belongs to (Discord's shard formula)."""
        count = self.config.discord.shard_count
        ids = self.config.discord.shard_ids
        return not ids or (guild_id >> 22) % count in ids

    async def close(self) -> None:
        """Stop the presenter and the tables before the connection closes."""
        await self.tables.shutdown()
        await self.presenter.close()
        await self.editor.close()
        self.charts.close()
        await super().close()


class ShardedMafiaBot(MafiaBot, commands.AutoShardedBot):
    """``MafiaBot`` running several gateway shards in one process (``AutoShardedBot``'s connections).

    ``commands.Bot`` adds nothing to ``BotBase`` and ``Client``, so in this class's method order
    ``AutoShardedClient`` comes before ``Client`` and every connection method is the sharded one.
    """


def make_bot(config: Config, store: Store, **options: Any) -> MafiaBot:
    """The bot for ``config``: one connection, or the shards of ``[discord] shard_ids``.

    A process that runs exactly one shard of several uses the plain client with ``shard_id``
    (one gateway connection); more than one shard in a process needs ``AutoShardedBot``.
    """
    count, ids = config.discord.shard_count, config.discord.shard_ids
    if count > 1 and len(ids) != 1:
        return ShardedMafiaBot(config, store, **options)
    return MafiaBot(config, store, **options)


def point_at(api_base: str, gateway_url: str) -> None:
    """Send discord.py to another Discord (a local emulator): REST base and gateway URL."""
    import discord.gateway
    import discord.http
    import yarl

    if api_base:
        discord.http.Route.BASE = api_base.rstrip("/")
    if gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


async def run_bot(config: Config) -> None:
    """Open the store and run the bot until it is stopped."""
    from mafiabot.store import Store

    point_at(config.discord.api_base, config.discord.gateway_url)
    store = await Store.open(config.database.url)
    bot = make_bot(config, store)
    terminated = stop_on_sigterm()
    try:
        async with bot:
            await bot.start(config.token)
    except asyncio.CancelledError:
        if not terminated.is_set():
            raise
        # SIGTERM (``systemctl stop``): the bot closed as after Ctrl-C; the process ends normally.
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()
    finally:
        await store.close()


def stop_on_sigterm() -> asyncio.Event:
    """Make SIGTERM stop the running task as SIGINT does (``asyncio.run`` cancels it); the event says it came.

    A service manager stops with SIGTERM: without this the process dies at once, status 143, and
    the tables do not lift their mutes.
    """
    terminated = asyncio.Event()
    task = asyncio.current_task()
    if task is None:
        return terminated

    def terminate() -> None:
        if not terminated.is_set():  # a second SIGTERM must not cut the polite stop short
            terminated.set()
            task.cancel()

    with contextlib.suppress(NotImplementedError, RuntimeError):  # no signal handlers on this platform or thread
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, terminate)
    return terminated
