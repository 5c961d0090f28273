"""``MafiaBot``: the discord.py client that hosts the tables."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import aiohttp
import discord
import discord.http
from discord.ext import commands

from mafiabot.core.clock import LoopClock, TableClock
from mafiabot.core.records import GuildSettings
from mafiabot.core.voice import EditBudget, NotInVoiceError
from mafiabot.host.i18n import MafiaTranslator, command_mention
from mafiabot.host.presenter import Presenter
from mafiabot.host.ratelimit import GlobalLimit, global_limit_trace, retry_seconds
from mafiabot.host.tables import TableManager
from mafiabot.store.rulesets import RulesetCatalog

if TYPE_CHECKING:
    from mafiabot.host.settings import Config
    from mafiabot.store import Store

log = logging.getLogger(__name__)

INITIAL_EXTENSIONS = ("cogs.lobby", "cogs.day", "cogs.night", "cogs.voting", "cogs.voice", "cogs.judge",
                      "cogs.history", "cogs.settings", "cogs.strays")
"""Any order: each cog adds its subcommands to ``/mafia`` in the order users see (``cogs._group.ORDER``)."""
NOT_CONNECTED_TO_VOICE = 40032
HTTP_TOO_MANY = 429


class MemberEditError(discord.DiscordException):
    """Discord refused a member edit for a reason other than the member being out of voice."""

    def __init__(self, status: int, code: int, message: str) -> None:
        self.status = status
        self.code = code
        super().__init__(f"{status} (code {code}): {message}")


Number = TypeVar("Number", int, float)


def _header(headers: Mapping[str, str], name: str, kind: Callable[[str], Number]) -> Number | None:
    """A numeric header, or None when it is absent or malformed."""
    value = headers.get(name)
    try:
        return kind(value) if value is not None else None
    except ValueError:
        return None


class DiscordMemberEditor:
    """Server mutes through the bot's own token and every helper token (the reconciler's ``MemberEditor``).

    Each token has its own member-edit bucket per guild (5 per 5 s observed). The editor reads
    each answer's ``X-RateLimit-*`` headers into an ``EditBudget`` and sends every edit with the
    token that has budget left, so the edits of a mass mute go out together instead of one
    window after another. It speaks ``PATCH /guilds/{guild}/members/{user}`` itself (with
    discord.py's base URL and user agent) because discord.py keeps the headers to itself and
    sleeps out a 429 inside the call; here a 429 only moves the edit to another token. Each
    token's requests also wait for its ``GlobalLimit`` (the bot's own shared with discord.py),
    ahead of any queued message, since a floor change is what the table waits for.
    """

    def __init__(
        self, bot: discord.Client, helper_tokens: Sequence[str] = (), *, global_limit: GlobalLimit | None = None,
        global_rate: int = 50,
    ) -> None:
        self.bot = bot
        self.helper_tokens = list(helper_tokens)
        self.budget = EditBudget(1 + len(self.helper_tokens))
        self.global_limits = [global_limit or GlobalLimit(global_rate)]
        self.global_limits += [GlobalLimit(global_rate) for _ in self.helper_tokens]
        """Each token's global limit; the bot's own is shared with discord.py's requests."""
        self.sent = 0
        """Member edits sent, retries after a 429 included."""
        self.sent_by_token = [0] * self.budget.tokens
        self.rate_limited = 0
        """429 answers to member edits (each cost a retry, on another token if one had room)."""
        self.waited = 0.0
        """Seconds edits spent waiting because no token had budget left."""
        self._session: aiohttp.ClientSession | None = None

    def _token(self, index: int) -> str:
        if index == 0:
            token = self.bot.http.token
            if token is None:
                raise RuntimeError("the bot is not logged in")
            return token
        return self.helper_tokens[index - 1]

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0), cookie_jar=aiohttp.DummyCookieJar()
            )
        return self._session

    async def close(self) -> None:
        """Close the editor's HTTP connections."""
        if self._session is not None:
            await self._session.close()

    async def set_mute(
        self, guild_id: int, user_id: int, *, mute: bool, still_wanted: Callable[[], bool] | None = None
    ) -> bool:
        """PATCH the member with whichever token has budget; Discord's 40032 becomes ``NotInVoiceError``.

        An edit that had to wait for budget is dropped (False) if ``still_wanted`` says the state moved on.

        Raises:
            NotInVoiceError: the member is not connected to voice.
            MemberEditError: Discord refused the edit with every token that may edit this guild.
        """
        loop = asyncio.get_running_loop()
        url = f"{discord.http.Route.BASE}/guilds/{guild_id}/members/{user_id}"
        body = json.dumps({"mute": mute})
        while True:
            choice = self.budget.pick(guild_id, loop.time())
            if isinstance(choice, float):
                self.waited += choice
                await asyncio.sleep(choice)
                if still_wanted is not None and not still_wanted():
                    return False
                continue
            token = choice
            await self.global_limits[token].acquire(urgent=True)
            if still_wanted is not None and not still_wanted():
                self.budget.answered(token, guild_id, loop.time(), limit=None, remaining=None, reset_after=None)
                return False
            headers = {
                "Authorization": f"Bot {self._token(token)}",
                "User-Agent": self.bot.http.user_agent,
                "Content-Type": "application/json",
            }
            self.sent += 1
            self.sent_by_token[token] += 1
            try:
                async with self._http().patch(url, data=body, headers=headers) as response:
                    status, answer = response.status, response.headers
                    data = await response.json(content_type=None) if status >= 300 else None
            except BaseException:
                self.budget.answered(token, guild_id, loop.time(), limit=None, remaining=None, reset_after=None)
                raise
            if status == HTTP_TOO_MANY and answer.get("X-RateLimit-Global", "").lower() == "true":
                self.rate_limited += 1
                self.global_limits[token].hold(retry_seconds(answer))
                self.budget.answered(token, guild_id, loop.time(), limit=None, remaining=None, reset_after=None)
                continue
            reset_after = _header(answer, "X-RateLimit-Reset-After", float)
            if status == HTTP_TOO_MANY and reset_after is None:
                reset_after = _header(answer, "Retry-After", float)
            self.budget.answered(
                token, guild_id, loop.time(), limit=_header(answer, "X-RateLimit-Limit", int),
                remaining=0 if status == HTTP_TOO_MANY else _header(answer, "X-RateLimit-Remaining", int),
                reset_after=reset_after,
            )
            if status < 300:
                return True
            code = int(data.get("code", 0)) if isinstance(data, dict) else 0
            message = str(data.get("message", "")) if isinstance(data, dict) else ""
            if status == HTTP_TOO_MANY:
                self.rate_limited += 1
                continue
            if code == NOT_CONNECTED_TO_VOICE:
                raise NotInVoiceError(user_id)
            if token > 0 and status in (401, 403, 404):
                log.warning("helper token %d cannot edit members of guild %s: %s", token, guild_id, message)
                self.budget.bar(token, guild_id)
                continue
            raise MemberEditError(status, code, message)

    def voice_mute(self, guild_id: int, user_id: int) -> bool | None:
        """The member's server mute from the gateway's voice states; None when out of voice."""
        guild = self.bot.get_guild(guild_id)
        member = guild.get_member(user_id) if guild else None
        if member is None or member.voice is None or member.voice.channel is None:
            return None
        return member.voice.mute


class MafiaBot(commands.Bot):
    """The bot: loads the cogs, owns the tables, the store and the presenter."""

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
        self.presenter = Presenter(self)
        self.editor = DiscordMemberEditor(
            self, config.voice.helper_tokens, global_limit=self.global_limit,
            global_rate=config.discord.global_rate_limit,
        )
        self.tables = TableManager(self)
        self.sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
        """The clock of the bot's own short waits (deferring a slow interaction); tests hand another."""
        self.table_clock: Callable[[], TableClock] = LoopClock
        """Makes each new table's clock; the demo hands in a scripted one, so a seed replays exactly."""
        self.rulesets = RulesetCatalog.from_folder(store, config.game.rulesets_dir)
        """Presets, the host's ``rulesets_dir`` (read once, here) and each server's uploads."""
        self.command_ids: dict[int | None, dict[str, int]] = {}
        """Top-level command ids by name, per guild (None: the global commands), for command mentions."""

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
        game = self.config.game
        default = GuildSettings(0, language=game.language, default_ruleset=game.default_ruleset)
        return await self.store.get_settings(guild_id, default=default)

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
    try:
        async with bot:
            await bot.start(config.token)
    finally:
        await store.close()
