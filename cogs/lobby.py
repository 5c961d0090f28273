"""The lobby: ``/mafia new``, its Join and Leave buttons, ``/mafia start`` and ``/mafia cancel``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import discord
from discord import app_commands
from discord.app_commands import locale_str as _

from cogs._ack import in_time
from cogs._autocomplete import ruleset_autocomplete
from cogs._cog import MafiaCog
from cogs._common import answer, language_of, respond, voice_channel_id
from cogs._judging import is_staff
from cogs._routing import Button, Control, template
from cogs._tournament import link_lobby, tournament_place
from cogs.texts.lobby import lobby_text, lobby_view
from engine.errors import RefusalError
from mafiabot.core.runtime import TableError
from mafiabot.core.tables import Seated
from mafiabot.core.tournaments import TournamentError
from mafiabot.host.i18n import ruleset_name, t
from mafiabot.host.places import check_place, table_powers

if TYPE_CHECKING:
    from mafiabot.core.runtime import Lobby, Table
    from mafiabot.host.bot import MafiaBot

log = logging.getLogger(__name__)


class JoinButton(Control[Button], template=template("join")):
    """Join: take the next seat of the lobby."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Seat the clicker, with what Discord lets them do in the table's channels."""
        lobby = bot.tables.lobby(self.target)
        if interaction.channel_id != lobby.channel_id:
            raise TableError("control.unknown")  # a join button lives on the lobby's own message
        guild = interaction.guild
        # Discord computed the clicker's permissions in the lobby's channel, overwrites included.
        voice = guild.get_channel(lobby.voice_channel_id) if guild is not None else None
        player = Seated(interaction.user.id, interaction.user.display_name, voice_channel_id(interaction.user),
                        powers=table_powers(interaction.user, interaction.permissions, voice))
        lobby = bot.tables.join(self.target, player)
        await interaction.response.edit_message(content=lobby_text(lobby), view=lobby_view(lobby),
                                                allowed_mentions=discord.AllowedMentions.none())


class LeaveButton(Control[Button], template=template("leave")):
    """Leave: give the seat back."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Unseat the clicker."""
        lobby = bot.tables.leave(self.target, interaction.user.id)
        await interaction.response.edit_message(content=lobby_text(lobby), view=lobby_view(lobby),
                                                allowed_mentions=discord.AllowedMentions.none())


class LobbyCog(MafiaCog):
    """Opening a table, taking seats, dealing the cards, or calling it off."""

    controls = (JoinButton, LeaveButton)

    @app_commands.command(name=_("new", key="cmd.new.name"),
                          description=_("Open a table in this channel", key="cmd.new.desc"))
    @app_commands.describe(
        ruleset=_("Ruleset: a preset or one of this server's", key="cmd.new.ruleset"),
        voice=_("Voice channel of the table (default: yours)", key="cmd.new.voice"),
        seats=_("Number of players", key="cmd.new.seats"),
    )
    @app_commands.rename(ruleset=_("ruleset", key="option.ruleset"), voice=_("voice", key="option.voice"),
                         seats=_("seats", key="option.seats"))
    @app_commands.autocomplete(ruleset=ruleset_autocomplete)
    async def new(
        self, interaction: discord.Interaction, ruleset: str | None = None,
        voice: discord.VoiceChannel | None = None, seats: app_commands.Range[int, 6, 12] | None = None,
    ) -> None:
        """Open a lobby; its creator is the judge. A tournament table's lobby comes with its schedule."""
        # The lobby is read and written before it is shown: a slow store must not fail the command.
        lobby = await in_time(self.bot, interaction, self._open(interaction, ruleset, voice, seats), private=False)
        lobby.message_id = await respond(interaction, lobby_text(lobby), ephemeral=False, view=lobby_view(lobby))

    async def _open(
        self, interaction: discord.Interaction, ruleset: str | None, voice: discord.VoiceChannel | None,
        seats: int | None,
    ) -> Lobby:
        """Open the lobby ``/mafia new`` asks for, linked to its tournament table if the channel is one."""
        assert interaction.guild is not None  # noqa: S101  (guild_only)
        judge = Seated(interaction.user.id, interaction.user.display_name, voice_channel_id(interaction.user))
        place = await tournament_place(self.bot, interaction)
        voice_id = place.voice_channel_id if place is not None else voice.id if voice else None
        target = interaction.guild.get_channel(voice_id or judge.voice_channel_id or 0)
        user = interaction.user
        manage = isinstance(user, discord.Member) and target is not None and target.permissions_for(
            user).manage_channels
        check_place(interaction.channel, target)
        lobby = await self.bot.tables.open_lobby(
            guild_id=interaction.guild.id, channel_id=interaction.channel_id or 0,
            voice_channel_id=voice_id, judge=judge, ruleset_name=ruleset, seats=seats, manage_channels=manage,
            fixed=place.fixed if place is not None else None, ruleset=place.ruleset if place is not None else None,
        )
        if place is not None and not await link_lobby(self.bot, place, lobby.id, judge.user_id):
            await self.bot.tables.cancel(lobby.channel_id, judge.user_id, admin=True)
            raise TournamentError("tournament.table_played", table=place.fixed.table, round=place.fixed.round)
        return lobby

    @app_commands.command(name=_("start", key="cmd.start.name"),
                          description=_("Deal the cards and start the game (judge)", key="cmd.start.desc"))
    async def start(self, interaction: discord.Interaction) -> None:
        """Start the lobby of this channel."""
        async def starting() -> Table:
            admin = await is_staff(self.bot, interaction)
            return await self.bot.tables.start(interaction.channel_id or 0, interaction.user.id, admin=admin)

        # The staff check reads the settings, and dealing writes the game, its seats and its first
        # command: a slow store must not fail the command.
        table = await in_time(self.bot, interaction, starting(), private=True)
        lang = table.language
        await answer(interaction, t(lang, "lobby.starting", ruleset=ruleset_name(lang, table.ruleset)))

    @app_commands.command(name=_("cancel", key="cmd.cancel.name"),
                          description=_("Cancel the lobby or abandon the game (judge)", key="cmd.cancel.desc"))
    async def cancel(self, interaction: discord.Interaction) -> None:
        """Cancel this channel's lobby, or abandon its game without statistics."""
        language = await language_of(self.bot, interaction)
        try:
            what = await self.bot.tables.cancel(
                interaction.channel_id or 0, interaction.user.id, admin=await is_staff(self.bot, interaction)
            )
        except RefusalError:
            raise
        except Exception:
            # Whatever else went wrong, the judge must hear that the table is still there.
            log.exception("cancel failed in channel %s", interaction.channel_id)
            await answer(interaction, t(language, "error.cancel_failed",
                                        **self.bot.commands_text(interaction.guild_id)))
            return
        await answer(interaction, t(language, f"lobby.cancelled.{what}"), ephemeral=False)


async def setup(bot: MafiaBot) -> None:
    """Load the cog (``override``: see ``MafiaCog``)."""
    await bot.add_cog(LobbyCog(bot), override=True)
