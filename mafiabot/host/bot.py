"""``MafiaBot``: the discord.py client that hosts the tables."""

from __future__ import annotations

import asyncio
import gc
import importlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from mafiabot.core.clock import LoopClock, TableClock, loop_time
from mafiabot.core.rulesets import RulesetCatalog
from mafiabot.core.tables import TableManager
from mafiabot.core.tournament_service import TournamentService
from mafiabot.host.drawing import Charts
from mafiabot.host.i18n import MafiaTranslator, command_mention
from mafiabot.host.members import DiscordMemberEditor
from mafiabot.host.places import DiscordPlaces
from mafiabot.host.presenter import Presenter
from mafiabot.host.ratelimit import Gate, GlobalLimit, gate_trace, global_limit_trace
from mafiabot.host.settings import HostedSettings, table_options
from mafiabot.host.shared_limit import token_limit
from mafiabot.host.tables import DiscordTableSide
from mafiabot.host.tournaments import DiscordRoundPlaces
from mafiabot.host.web.club import ClubPages
from mafiabot.host.web.server import StreamServer

if TYPE_CHECKING:
    from mafiabot.core.ports import History, Protests
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
                      "cogs.tournament", "cogs.broadcast", "cogs.protest")
"""Any order: each cog adds its subcommands to ``/mafia`` in the order users see (``cogs._group.ORDER``)."""


class MafiaBot(commands.Bot):
    """The bot, and where its parts are built: each is handed the ports it uses, never the bot.

    The cogs reach the parts through it (``tables``, ``tournaments``, ``history``, ``settings``, ``presenter``,
    ``rulesets``), never the store itself.
    """

    def __init__(
        self, config: Config, store: Store, *, global_limit: GlobalLimit | None = None,
        gate: Gate | None = None, identify_turn: Callable[[int], Awaitable[None]] | None = None,
        processes: Callable[[], int] | None = None, **options: Any,
    ) -> None:
        """The bot of ``config``'s shards, on ``store``.

        ``global_limit``: the token's limit, shared with the other shards of the process; ``gate``: every
        request of the bot waits for it and is refused if it says False (the shard's lease is lost);
        ``identify_turn``: waited for before each IDENTIFY, with the shard's rate-limit key, so that the
        token's processes together stay within Discord's ``max_concurrency``; ``processes``: how many
        processes share the tokens, for the static share of a global limit kept in Redis while Redis is away.
        """
        options.setdefault("intents", discord.Intents.default())
        options.setdefault("allowed_mentions", discord.AllowedMentions(everyone=False, roles=False, users=True))
        options.setdefault("help_command", None)
        options.setdefault("guild_ready_timeout", config.discord.guild_ready_timeout)
        count, ids = config.discord.shard_count, config.discord.shard_ids
        if count > 1:
            options.setdefault("shard_count", count)
            if isinstance(self, commands.AutoShardedBot):
                options.setdefault("shard_ids", ids or None)
            else:
                options.setdefault("shard_id", ids[0])
        def limit_for(token: str) -> GlobalLimit:
            return token_limit(config.discord, token, processes=processes)

        self._owns_limit = global_limit is None
        """Whether the bot made its global limit (else the process shares it between its shards and closes it)."""
        self.global_limit = global_limit or limit_for(config.token)
        trace = global_limit_trace(self.global_limit)
        traces = []
        if gate is not None:
            gated = gate_trace(gate)
            trace.on_request_start.insert(0, gated.on_request_start[0])
            traces.append(gated)
        options.setdefault("http_trace", trace)
        super().__init__(command_prefix=commands.when_mentioned, **options)
        self.config = config
        self.store = store
        self.settings = HostedSettings(store, config.game)
        self.history: History = store
        self.protests: Protests = store
        """Players' protests and the rulings on them (``/mafia protest``)."""
        self.privacy = store.privacy
        """Forgetting a member's records (``/mafia settings forget_member``)."""
        """Games already played (``/mafia history``, ``game``, ``stats``, ``top``): the cogs' only way to them."""
        self.presenter = Presenter(self)
        self.editor = DiscordMemberEditor(
            self.http, self, config.voice.helper_tokens, global_limit=self.global_limit,
            limit_for=limit_for, now=loop_time, traces=traces,
        )
        self.identify_turn = identify_turn
        self._max_concurrency: int | None = None
        self.handed_over = False
        """Set when the shard's lease went to another process: closing then leaves its games alone."""
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        """The clock of the bot's own short waits (deferring a slow interaction); tests hand another."""
        self.table_clock: Callable[[], TableClock] = LoopClock
        """Makes each new table's clock; the demo hands in a scripted one, so a seed replays exactly."""
        self.rulesets = RulesetCatalog.from_folder(store, config.game.rulesets_dir)
        """Presets, the host's ``rulesets_dir`` (read once, here) and each server's uploads."""
        self.tables = self.build_tables()
        self.tournaments = TournamentService(
            records=store.tournaments, games=store, rulesets=self.rulesets,
            places=DiscordRoundPlaces(self, self.settings, config.game.language), owns_guild=self.owns_guild,
            seed=config.game.seed,
        )
        """Every tournament's life (``/mafia tournament``, and the tables its rounds open)."""
        self.charts = Charts(loop_time)
        """``/mafia top`` and ``/mafia stats`` pictures: one worker of their own and a cooldown per member."""
        self.command_ids: dict[int | None, dict[str, int]] = {}
        """Top-level command ids by name, per guild (None: the global commands), for command mentions."""
        self.stream: StreamServer | None = None
        """The stream server (``[web]``), when enabled; it listens once the bot sets up."""
        if config.web.enabled:
            self.stream = StreamServer(
                store.streams, self.tables, base_url=config.web.base_url,
                per_link=config.web.viewers_per_link, total=config.web.viewers,
                club=ClubPages(store, refresh=config.web.club_refresh) if config.web.club_pages else None,
            )
            self.tables.ended.append(self.stream.ended)

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
        if self.stream is not None:
            port = await self.stream.start(self.config.web.host, self.config.web.port)
            if not self.config.web.public_url:  # port 0 took a free port: the links name the one it took
                self.stream.base_url = f"http://{self.config.web.host}:{port}"
            log.info("stream server listening on %s:%s", self.config.web.host, port)
            if self.stream.club is not None:
                self.stream.club.warm()  # the club's pages read in the background: no first reader waits minutes
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

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """Wait for this shard's turn at IDENTIFY among every process of the token, when they take turns."""
        if self.identify_turn is None:
            await super().before_identify_hook(shard_id, initial=initial)
            return
        if self._max_concurrency is None:
            try:
                _shards, _url, limit = await self.http.get_bot_gateway()
                self._max_concurrency = max(1, int(limit["max_concurrency"]))
            except (discord.HTTPException, discord.GatewayNotFound, KeyError) as exc:
                log.warning("could not read max_concurrency (%s); identifying one shard at a time", exc)
                self._max_concurrency = 1
        await self.identify_turn((shard_id or 0) % self._max_concurrency)

    async def on_ready(self) -> None:
        """Recover open games once the guilds (and their voice states) are known."""
        await self.tables.recover()

    async def on_guild_available(self, _guild: discord.Guild) -> None:
        """Recover as soon as every guild of READY has arrived, not ``guild_ready_timeout`` later.

        discord.py fires READY only after two seconds without a new guild (it cannot tell the last one),
        but READY lists the shard's guilds: once none is unavailable, their voice states are all known.
        """
        if isinstance(self, commands.AutoShardedBot):
            return  # another shard's guilds may not even be listed yet: its READY says when
        if self.guilds and not any(guild.unavailable for guild in self.guilds):
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
        """Stop the presenter and the tables before the connection closes.

        A bot whose shard was handed over stops its tables without a word to Discord: they run elsewhere.
        """
        if self.handed_over:
            self.tables.hand_over()
        else:
            await self.tables.shutdown()
        if self.stream is not None:
            await self.stream.close()
        await self.presenter.close()
        await self.editor.close()
        if self._owns_limit:
            await self.global_limit.close()
        self.charts.close()
        ready = self._connection._ready_task  # discord.py would dispatch READY after the close, to no loop
        if ready is not None:
            ready.cancel()
        await super().close()


class ShardedMafiaBot(MafiaBot, commands.AutoShardedBot):
    """``MafiaBot`` running several gateway shards in one process (``AutoShardedBot``'s connections).

    ``commands.Bot`` adds nothing to ``BotBase`` and ``Client``, so in this class's method order
    ``AutoShardedClient`` comes before ``Client`` and every connection method is the sharded one.
    """


def warm_up() -> None:
    """Import the cogs' modules now, so that the first bot built later loads its cogs without importing.

    ``load_extension`` runs each cog module afresh, but what the modules import stays imported.
    """
    for extension in INITIAL_EXTENSIONS:
        importlib.import_module(extension)


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
