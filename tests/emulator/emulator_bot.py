"""A small real discord.py bot that uses what mafiabot will: a command group, a persistent view, raw reactions."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands


class Panel(discord.ui.View):
    """A persistent lobby panel."""

    def __init__(self) -> None:
        super().__init__(timeout=None)

    @discord.ui.button(label="Join", custom_id="mafia:join:1")
    async def join(self, interaction: discord.Interaction, button: discord.ui.Button[Panel]) -> None:
        await interaction.response.send_message(f"{interaction.user.id} joined", ephemeral=True)

    @discord.ui.select(
        custom_id="mafia:seats:1",
        options=[discord.SelectOption(label=str(n), value=str(n)) for n in (8, 10, 12)],
    )
    async def seats(self, interaction: discord.Interaction, select: discord.ui.Select[Panel]) -> None:
        await interaction.response.edit_message(content=f"seats: {select.values[0]}")

    @discord.ui.button(label="Quiet", custom_id="mafia:quiet:1")
    async def quiet(self, interaction: discord.Interaction, button: discord.ui.Button[Panel]) -> None:
        await interaction.response.defer()
        await interaction.followup.send("noted", ephemeral=True)


class Mafia(app_commands.Group):
    """Mafia table commands."""

    host = app_commands.Group(name="host", description="Judge tools")

    @app_commands.command(name="new", description="Open a table")
    @app_commands.describe(seats="How many seats")
    async def new(self, interaction: discord.Interaction, seats: int = 10) -> None:
        await interaction.response.send_message(f"table with {seats} seats", view=Panel())

    @app_commands.command(name="card", description="Your role")
    async def card(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message("you are the sheriff", ephemeral=True)

    @app_commands.command(name="slow", description="Think first")
    async def slow(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True)
        await interaction.edit_original_response(content="thought it over")
        await interaction.followup.send("and one more thing")

    @app_commands.command(name="long", description="Answer too long, then say what Discord said")
    async def long(self, interaction: discord.Interaction) -> None:
        too_long = "x" * 2001
        codes = []
        try:
            await interaction.response.send_message(too_long)
        except discord.HTTPException as exc:
            codes.append(exc.code)
        await interaction.response.defer()
        for attempt in (interaction.edit_original_response(content=too_long), interaction.followup.send(too_long)):
            try:
                await attempt
            except discord.HTTPException as exc:
                codes.append(exc.code)
        await interaction.followup.send(f"refused {codes}")

    @host.command(name="mute", description="Server-mute a player")
    async def mute(self, interaction: discord.Interaction, player: discord.Member) -> None:
        await interaction.response.defer(ephemeral=True)
        await player.edit(mute=True)
        await interaction.followup.send(f"muted {player.id}", ephemeral=True)


class MafiaTestBot(commands.Bot):
    """``commands.Bot`` with default intents, as mafiabot runs."""

    def __init__(self, guild_id: int) -> None:
        super().__init__(command_prefix="!", intents=discord.Intents.default(), guild_ready_timeout=0.05)
        self.guild_id = guild_id

    @property
    def user_id(self) -> int:
        """The bot user's id; it is known once the bot has logged in."""
        assert self.user is not None
        return self.user.id

    def the_guild(self, guild_id: int) -> discord.Guild:
        """A guild the bot is in (its cache has it once ready)."""
        guild = self.get_guild(guild_id)
        assert guild is not None
        return guild

    async def setup_hook(self) -> None:
        guild = discord.Object(self.guild_id)
        self.tree.add_command(Mafia(), guild=guild)
        self.add_view(Panel())
        await self.tree.sync(guild=guild)
