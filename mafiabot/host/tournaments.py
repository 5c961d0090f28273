"""The Discord side of the tournament service: the channels of its rounds, and a role's holders to register.

``DiscordRoundPlaces`` fills the core's ``RoundPlaces`` port (``mafiabot.core.tournament_service``):
it checks the channels an organiser names, finds the ones the bot made in an earlier round, and
makes, or deletes, the bot's own, turning Discord's refusals into the tournament's.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

import discord

from mafiabot.core.tournaments import TournamentError
from mafiabot.host.i18n import t
from mafiabot.host.places import check_place

if TYPE_CHECKING:
    from mafiabot.core.ports import SettingsLookup
    from mafiabot.core.records import MadeChannels
    from mafiabot.core.tournament_service import MadeTable
    from mafiabot.host.ports import GuildLookup

log = logging.getLogger(__name__)

MEMBER_PAGE = 1000
"""Discord's most members per List Guild Members page."""
CHANNEL_LIMIT = 30013
"""Discord's "Maximum number of guild channels reached (500)"."""
INVALID_FORM = 50035
"""Discord's "Invalid Form Body": under ``parent_id`` when the category already holds its 50 channels."""
TWO_FACTOR = 60003
"""Discord's refusal of a moderation permission (Manage Channels is one) when the bot's owner lacks 2FA."""
CHANNEL_NAME_LIMIT = 100
"""Discord's longest channel name."""


def table_channel_name(lang: str, tournament: str, table: int) -> str:
    """A channel the bot makes for a table: "Table 1 · Autumn Cup", cut to Discord's 100 characters."""
    return f"{t(lang, 'tournament.channel.table', table=table)} · {tournament}"[:CHANNEL_NAME_LIMIT].rstrip(" ·")


class DiscordRoundPlaces:
    """The tournament service's ``RoundPlaces``: a round's channels, from the client's cache or made anew."""

    def __init__(self, client: GuildLookup, settings: SettingsLookup, default_language: str) -> None:
        self._client = client
        self._settings = settings
        self._default_language = default_language

    def _channel(self, guild_id: int, channel_id: int) -> discord.abc.GuildChannel | None:
        guild = self._client.get_guild(guild_id)
        return None if guild is None else guild.get_channel(channel_id)

    def check(self, guild_id: int, text_id: int, voice_id: int) -> None:
        """A plain text channel and a voice (not stage) channel, as any table needs (``check_place``)."""
        check_place(self._channel(guild_id, text_id), self._channel(guild_id, voice_id))

    def kept(self, guild_id: int, made: MadeChannels) -> tuple[int | None, int | None]:
        """The channels made for a table earlier that still exist, each None where it is gone."""
        text, voice = self._channel(guild_id, made.channel_id), self._channel(guild_id, made.voice_channel_id)
        return (text.id if isinstance(text, discord.TextChannel) else None,
                voice.id if isinstance(voice, discord.VoiceChannel) else None)

    def may_make(self, guild_id: int) -> bool:
        """Whether the bot has Manage Channels on the server."""
        guild = self._client.get_guild(guild_id)
        return guild is not None and guild.me.guild_permissions.manage_channels

    async def make(
        self, guild_id: int, near_channel_id: int | None, tournament: str,
        wanted: Sequence[tuple[int, int | None, int | None]],
    ) -> tuple[list[MadeTable], list[int]]:
        """Each wanted table's pair, made under the category of the channel the command was typed in.

        A refusal midway deletes the channels made and says why as a ``TournamentError``.
        """
        guild = self._client.get_guild(guild_id)
        if guild is None:
            raise TournamentError("tournament.no_manage_channels", tables=", ".join(str(n) for n, _, _ in wanted))
        lang = (await self._settings.guild_settings(guild_id)).language or self._default_language
        near = guild.get_channel(near_channel_id) if near_channel_id is not None else None
        category = near.category if isinstance(near, discord.TextChannel | discord.VoiceChannel) else None
        made: list[MadeTable] = []
        fresh: list[discord.abc.GuildChannel] = []
        try:
            for n, text_id, voice_id in wanted:
                name = table_channel_name(lang, tournament, n)
                if text_id is None:
                    text = await guild.create_text_channel(name, category=category)
                    fresh.append(text)
                    text_id = text.id
                if voice_id is None:
                    voice = await guild.create_voice_channel(name, category=category)
                    fresh.append(voice)
                    voice_id = voice.id
                made.append((n, text_id, voice_id))
        except discord.HTTPException as exc:
            await _remove(fresh)
            raise TournamentError(_refusal_of(exc, category), tables=", ".join(str(n) for n, _, _ in wanted),
                                  discord_code=exc.code, category=category.name if category is not None else "",
                                  ) from None
        return made, [c.id for c in fresh]

    async def remove(self, guild_id: int, channel_ids: Sequence[int]) -> None:
        """Delete the channels made for a round that did not open; one Discord keeps is only logged."""
        guild = self._client.get_guild(guild_id)
        await _remove([c for c in (guild.get_channel(i) if guild is not None else None for i in channel_ids)
                       if c is not None])

    async def delete(self, guild_id: int, channel_id: int) -> bool:
        """Delete one channel the bot made; True when it is gone (already, or now)."""
        channel = self._channel(guild_id, channel_id)
        if channel is None:
            return True
        try:
            await channel.delete()
        except discord.NotFound:
            return True
        except discord.HTTPException as exc:
            log.warning("could not delete tournament channel %s: %s", channel_id, exc)
            return False
        return True


async def _remove(channels: Sequence[discord.abc.GuildChannel]) -> None:
    for channel in channels:
        try:
            await channel.delete()
        except discord.HTTPException:
            log.warning("could not delete channel %s made for a round that did not open", channel.id)


def _refusal_of(exc: discord.HTTPException, category: discord.CategoryChannel | None) -> str:
    """The tournament's refusal for Discord's refusal of a channel it was asked to create."""
    if exc.code == CHANNEL_LIMIT:
        return "tournament.channel_limit"
    if exc.code == INVALID_FORM and category is not None and "parent_id" in exc.text:
        return "tournament.category_full"  # Discord gives a full category no code of its own
    if exc.code == TWO_FACTOR:
        return "tournament.channels_mfa"
    if isinstance(exc, discord.Forbidden):
        return "tournament.no_manage_channels"
    return "tournament.channels_refused"


async def role_holders(
    http: discord.http.HTTPClient, guild_id: int, role: discord.Role | None,
) -> AsyncIterator[dict[int, str]]:
    """Every member holding ``role``, bots aside, by their server name: one page of the member list at a time.

    Read from Discord's member list, which needs the Server Members intent enabled for the
    application (Discord: 403/50001 without it); the bot's gateway session asks no privileged intent.
    """
    after: int | None = None
    while role is not None:
        try:
            page = await http.get_members(guild_id, MEMBER_PAGE, after)
        except discord.Forbidden:
            raise TournamentError("tournament.member_list", role=role.mention) from None
        holders: dict[int, str] = {}
        for data in page:
            user = data["user"]
            if str(role.id) in data.get("roles", ()) and not user.get("bot"):
                holders[int(user["id"])] = data.get("nick") or user.get("global_name") or user["username"]
        yield holders
        if len(page) < MEMBER_PAGE:
            return
        after = int(page[-1]["user"]["id"])


__all__ = ["DiscordRoundPlaces", "role_holders", "table_channel_name"]
