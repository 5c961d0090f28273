"""Where a table may live, on Discord: the channel types, the bot's permissions, the players' powers.

The cogs check these before asking the table manager (``mafiabot.core.tables``); the manager asks
``DiscordPlaces`` the rest through its ``Places`` port.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from mafiabot.core.runtime import TableError
from mafiabot.host.ports import guild_channel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mafiabot.host.ports import ChannelLookup

TEXT_PERMISSIONS = (
    "send_messages", "read_message_history", "add_reactions", "manage_messages",
    "create_private_threads", "send_messages_in_threads", "manage_threads",
)
VOICE_PERMISSIONS = ("connect", "mute_members")
READS_MAFIA_ROOM = ("owner", "administrator", "manage_threads")
"""Powers that show a private thread to its holder: the server's owner, Administrator, Manage Threads."""
LIFTS_OWN_MUTE = "mute_members"
POWERS = (*READS_MAFIA_ROOM, LIFTS_OWN_MUTE)
"""Every power ``table_powers`` can name (each has a ``power.<name>`` message)."""


def table_powers(member: discord.abc.User, text: discord.Permissions | None, voice: object) -> tuple[str, ...]:
    """The member's powers that defeat a table's secrecy: reading the mafia's room, or lifting their own mute.

    ``text`` is the member's permissions in the table's text channel (as Discord computed them for
    the click) and ``voice`` the table's voice channel. Discord shows a private thread to the
    server's owner and to whoever has Administrator or Manage Threads in its channel, and Mute
    Members in the voice channel lets a player lift their own server mute.
    """
    if not isinstance(member, discord.Member):
        return ()
    if member.guild.owner_id == member.id:
        return ("owner",)
    found: list[str] = []
    if text is not None:
        if text.administrator:
            return ("administrator",)
        if text.manage_threads:
            found.append("manage_threads")
    if isinstance(voice, discord.abc.GuildChannel) and voice.permissions_for(member).mute_members:
        found.append(LIFTS_OWN_MUTE)
    return tuple(found)


def check_place(channel: object, voice: object) -> None:
    """Where a table may live: a plain text channel, with a voice (not stage) channel.

    Discord creates private threads (the mafia's room) only in plain text channels, so a thread,
    an announcement channel or a voice channel's own chat cannot hold a table.

    Raises:
        TableError: ``lobby.not_text_channel`` or ``lobby.stage_voice``.
    """
    if getattr(channel, "type", None) is not discord.ChannelType.text:
        raise TableError("lobby.not_text_channel")
    if isinstance(voice, discord.StageChannel):
        raise TableError("lobby.stage_voice")


def missing_permissions(guild: discord.Guild, channel_id: int, voice_id: int) -> list[str]:
    """The permissions the bot lacks in the table's channels, by Discord's names."""
    me = guild.me
    text = guild.get_channel(channel_id)
    voice = guild.get_channel(voice_id)
    missing: list[str] = []
    if me is None:
        return missing
    if text is not None:
        perms = text.permissions_for(me)
        missing += [p for p in TEXT_PERMISSIONS if not getattr(perms, p)]
    if voice is not None:
        perms = voice.permissions_for(me)
        missing += [p for p in VOICE_PERMISSIONS if not getattr(perms, p)]
    return missing


class DiscordPlaces:
    """The table manager's ``Places``, read from the client's cache."""

    def __init__(self, client: ChannelLookup) -> None:
        self.client = client

    def missing_permissions(self, guild_id: int, channel_id: int, voice_id: int) -> list[str]:
        """The permissions the bot lacks in a table's channels (none known of a guild not cached)."""
        guild = self.client.get_guild(guild_id)
        return [] if guild is None else missing_permissions(guild, channel_id, voice_id)

    async def powers(
        self, guild_id: int, channel_id: int, voice_id: int, user_ids: Sequence[int],
    ) -> dict[int, tuple[str, ...]]:
        """Each member's powers as Discord holds them now (``table_powers``).

        The members are fetched afresh: without the Server Members intent no gateway event tells the
        bot of a role granted since they joined. The roles and channel overwrites are cached (the
        Guilds intent keeps them current). A member who left the server sees none of its channels.

        Raises:
            TableError: ``lobby.strict_unchecked``, when Discord does not answer for a member: a
                strict table does not start on what the bot cannot check.
        """
        guild = self.client.get_guild(guild_id)
        if guild is None:
            return {}
        text, voice = guild.get_channel(channel_id), guild.get_channel(voice_id)
        found: dict[int, tuple[str, ...]] = {}
        for user_id in user_ids:
            try:
                member = await guild.fetch_member(user_id)
            except discord.NotFound:
                continue
            except discord.HTTPException:
                raise TableError("lobby.strict_unchecked") from None
            perms = text.permissions_for(member) if text is not None else None
            found[user_id] = table_powers(member, perms, voice)
        return found

    def spectators(self, guild_id: int, voice_channel_id: int) -> list[int]:
        """The people in a voice channel; bots (music bots, the bot itself) are never the table's people."""
        channel = guild_channel(self.client, guild_id, voice_channel_id)
        if not isinstance(channel, discord.VoiceChannel | discord.StageChannel):
            return []
        guild = channel.guild
        me = self.client.user
        people = []
        for uid in channel.voice_states:
            member = guild.get_member(uid)
            if member is None or member.bot or (me is not None and uid == me.id):
                continue
            people.append(uid)
        return people


__all__ = [
    "LIFTS_OWN_MUTE", "POWERS", "READS_MAFIA_ROOM", "DiscordPlaces", "check_place", "missing_permissions",
    "table_powers",
]
