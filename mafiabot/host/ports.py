"""What the Discord side's components need of the client, as narrow interfaces ``discord.Client`` fills.

Each component is handed the client through the one of these it uses, never the bot: the bot is only
where they are built and wired (``mafiabot.host.bot``).
"""

from __future__ import annotations

from typing import Protocol

import discord


class GuildLookup(Protocol):
    """The guilds the gateway told the client about."""

    def get_guild(self, id: int, /) -> discord.Guild | None:
        """A cached guild."""


class ChannelLookup(GuildLookup, Protocol):
    """Channels by id, as the gateway cached them, and the client's own user."""

    @property
    def user(self) -> discord.ClientUser | None:
        """The bot's own user; None before login."""

    def get_channel(
        self, id: int, /,
    ) -> discord.abc.GuildChannel | discord.Thread | discord.abc.PrivateChannel | None:
        """A cached channel or thread."""

    def get_partial_messageable(
        self, id: int, *, guild_id: int | None = None, type: discord.ChannelType | None = None,
    ) -> discord.PartialMessageable:
        """A channel to send to or edit in without fetching it."""


class UserLookup(Protocol):
    """Users by id: from the cache, or asked of Discord."""

    def get_user(self, id: int, /) -> discord.User | None:
        """A cached user."""

    async def fetch_user(self, user_id: int, /) -> discord.User:
        """The user, from Discord."""


class Client(ChannelLookup, UserLookup, Protocol):
    """Channels, guilds and users: what the table side and the voice cues read of the client."""


class Identity(Protocol):
    """Who the bot is to Discord's REST API (``discord.http.HTTPClient``): its token, once logged in."""

    token: str | None
    user_agent: str


def guild_channel(
    client: GuildLookup, guild_id: int, channel_id: int,
) -> discord.abc.GuildChannel | discord.Thread | None:
    """A cached channel or thread of a known guild.

    ``Client.get_channel`` looks through every guild the bot is in; a table knows its guild, and
    with hundreds of guilds that scan per message was a measurable share of the bot's CPU.
    """
    guild = client.get_guild(guild_id)
    return None if guild is None else guild.get_channel_or_thread(channel_id)
