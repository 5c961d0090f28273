"""``MafiaBot``: the discord.py client that hosts the tables."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from mafiabot.i18n import MafiaTranslator
from mafiabot.presenter import Presenter
from mafiabot.tables import TableManager
from mafiabot.voice import NotInVoiceError

if TYPE_CHECKING:
    from mafiabot.config import Config
    from mafiabot.store import Store

log = logging.getLogger(__name__)

INITIAL_EXTENSIONS = ("cogs.mafia", "cogs.controls", "cogs.voting", "cogs.voice")
NOT_CONNECTED_TO_VOICE = 40032


class DiscordMemberEditor:
    """Server mutes through the bot's own token (the ``MemberEditor`` of the voice reconciler)."""

    def __init__(self, bot: discord.Client) -> None:
        self.bot = bot
        self.sent = 0

    async def set_mute(self, guild_id: int, user_id: int, *, mute: bool) -> None:
        """PATCH the member; Discord's 40032 becomes ``NotInVoiceError``."""
        self.sent += 1
        try:
            await self.bot.http.edit_member(guild_id, user_id, mute=mute)
        except discord.HTTPException as exc:
            if exc.code == NOT_CONNECTED_TO_VOICE:
                raise NotInVoiceError(user_id) from exc
            raise

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
        if config.discord.shard_count > 1:
            options.setdefault("shard_count", config.discord.shard_count)
            if config.discord.shard_ids:
                options.setdefault("shard_ids", config.discord.shard_ids)
        super().__init__(command_prefix=commands.when_mentioned, **options)
        self.config = config
        self.store = store
        self.presenter = Presenter(self)
        self.editor = DiscordMemberEditor(self)
        self.tables = TableManager(self)

    async def setup_hook(self) -> None:
        """Load the cogs, localize the commands, sync them, and pick up the games a crash left open."""
        for extension in INITIAL_EXTENSIONS:
            await self.load_extension(extension)
        await self.tree.set_translator(MafiaTranslator())
        if self.config.discord.sync_commands:
            if self.config.discord.guild_ids:
                for guild_id in self.config.discord.guild_ids:
                    guild = discord.Object(id=guild_id)
                    self.tree.copy_global_to(guild=guild)
                    await self.tree.sync(guild=guild)
            else:
                await self.tree.sync()

    async def on_ready(self) -> None:
        """Recover open games once the guilds (and their voice states) are known."""
        await self.tables.recover()

    def owns_guild(self, guild_id: int) -> bool:
        """Whether this process runs the shard that ``guild_id`` belongs to."""
        count = self.shard_count or 1
        shard = (guild_id >> 22) % count
        ids = self.config.discord.shard_ids
        return not ids or shard in ids

    async def close(self) -> None:
        """Stop the presenter and the tables before the connection closes."""
        await self.tables.shutdown()
        await self.presenter.close()
        await super().close()


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
    bot = MafiaBot(config, store)
    try:
        async with bot:
            await bot.start(config.token)
    finally:
        await store.close()
