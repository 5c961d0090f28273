"""The table's buttons and menus, routed by custom id (``mafia:<action>:<id>``).

Routing by custom id, not by a stored view, keeps every control working after a restart. Each
handler turns the click into an engine command for the clicking player's seat; the engine decides
whether it is allowed, and a refusal is answered privately.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord
from discord.ext import commands

from cogs._ack import in_time
from cogs._common import refuse, voice_channel_id
from cogs.mafia import lobby_text, lobby_view
from engine import (
    Act,
    Check,
    Command,
    EndSpeech,
    Heal,
    MakeBestMove,
    ManiacShoot,
    Nominate,
    Phase,
    Role,
    RulesError,
    Shoot,
    Team,
    legal_targets,
    require_playing,
)
from engine import events as ev
from mafiabot.core.runtime import Table, TableError
from mafiabot.core.tables import Seated
from mafiabot.host.i18n import t
from mafiabot.host.places import table_powers
from mafiabot.host.presenter import Reply, custom_id, role_name, seat_label, seat_list

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot


def parse_custom_id(value: str) -> tuple[str, int, str] | None:
    """``mafia:<action>:<id>[:<arg>]`` → (action, id, arg), or None for other components.

    >>> parse_custom_id("mafia:join:42")
    ('join', 42, '')
    >>> parse_custom_id("other:thing") is None
    True
    """
    parts = value.split(":")
    if len(parts) < 3 or parts[0] != "mafia" or not (parts[2].isascii() and parts[2].isdigit()) or len(parts[2]) > 20:
        return None
    return parts[1], int(parts[2]), parts[3] if len(parts) > 3 else ""


def seats_of(values: list[str], count: int = 1) -> list[int]:
    """The seat numbers a menu sent: exactly ``count`` of them, each a small whole number.

    Discord sends the values of the options the bot offered, but a forged or stale click may send
    anything; the engine then judges the seats.

    >>> seats_of(["3"]), seats_of(["1", "4", "9"], 3)
    ([3], [1, 4, 9])

    Raises:
        TableError: ``control.bad_value``.
    """
    if len(values) != count or not all(v.isascii() and v.isdigit() and len(v) <= 2 for v in values):
        raise TableError("control.bad_value")
    return [int(v) for v in values]


def _select(
    lang: str, placeholder: str, cid: str, options: list[tuple[str, str]], *, count: int = 1
) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(discord.ui.Select(
        placeholder=t(lang, placeholder), custom_id=cid, min_values=count, max_values=count,
        options=[discord.SelectOption(label=label[:100], value=value) for label, value in options[:25]],
    ))
    return view


class ControlsCog(commands.Cog):
    """Buttons and menus of lobbies and tables."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    @commands.Cog.listener()
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Route component interactions with a ``mafia:`` custom id."""
        if interaction.type is not discord.InteractionType.component or not isinstance(interaction.data, dict):
            return
        parsed = parse_custom_id(str(interaction.data.get("custom_id", "")))
        handler = getattr(self, f"_on_{parsed[0]}", None) if parsed is not None and parsed[0].isalpha() else None
        if parsed is None or handler is None:
            # Every control the bot makes is routed here (its views are not kept): anything else is
            # stale or forged, and still gets an answer.
            if not interaction.response.is_done():
                await refuse(self.bot, interaction, TableError("control.unknown"))
            return
        _action, target_id, _arg = parsed
        raw = interaction.data.get("values", [])
        values = [str(v) for v in raw] if isinstance(raw, list) else []
        try:
            await handler(interaction, target_id, values)
        except (RulesError, TableError) as exc:
            await refuse(self.bot, interaction, exc)

    # -- lobby -----------------------------------------------------------------------------------

    async def _on_join(self, interaction: discord.Interaction, lobby_id: int, _values: list[str]) -> None:
        lobby = self.bot.tables.lobby(lobby_id)
        if interaction.channel_id != lobby.channel_id:
            raise TableError("control.unknown")  # a join button lives on the lobby's own message
        guild = interaction.guild
        # Discord computed the clicker's permissions in the lobby's channel, overwrites included.
        text = interaction.permissions
        voice = guild.get_channel(lobby.voice_channel_id) if guild is not None else None
        player = Seated(interaction.user.id, interaction.user.display_name, voice_channel_id(interaction.user),
                        powers=table_powers(interaction.user, text, voice))
        lobby = self.bot.tables.join(lobby_id, player)
        await interaction.response.edit_message(content=lobby_text(lobby), view=lobby_view(lobby),
                                                allowed_mentions=discord.AllowedMentions.none())

    async def _on_leave(self, interaction: discord.Interaction, lobby_id: int, _values: list[str]) -> None:
        lobby = self.bot.tables.leave(lobby_id, interaction.user.id)
        await interaction.response.edit_message(content=lobby_text(lobby), view=lobby_view(lobby),
                                                allowed_mentions=discord.AllowedMentions.none())

    # -- the table -------------------------------------------------------------------------------

    def _table(self, table_id: int, interaction: discord.Interaction | None = None) -> Table:
        """The running table of a control; a control of another channel's table is stale or forged."""
        table = self.bot.tables.tables.get(table_id)
        if table is None:
            raise TableError("table.gone")
        if interaction is not None:
            channel = interaction.channel
            parent = channel.parent_id if isinstance(channel, discord.Thread) else None
            if table.channel_id not in (interaction.channel_id, parent):
                raise TableError("table.gone")
        return table

    def _seat(self, table: Table, interaction: discord.Interaction) -> int:
        seat = table.seat_of(interaction.user.id)
        if seat is None:
            raise TableError("table.not_seated")
        return seat

    async def _private(self, interaction: discord.Interaction, text: str, view: discord.ui.View | None = None) -> None:
        kwargs: dict[str, Any] = {"ephemeral": True, "allowed_mentions": discord.AllowedMentions.none()}
        if view is not None:
            kwargs["view"] = view
        if interaction.response.type is discord.InteractionResponseType.deferred_channel_message:
            # Deferred while a slow write ran: the answer takes the place of "thinking…".
            kwargs.pop("ephemeral")
            await interaction.edit_original_response(content=text, **kwargs)
        elif interaction.response.is_done():
            await interaction.followup.send(text, **kwargs)
        else:
            await interaction.response.send_message(text, **kwargs)
        if view is not None:
            view.stop()

    async def _replace(self, interaction: discord.Interaction, text: str) -> None:
        """Put ``text`` in place of the private menu that was used."""
        if interaction.response.is_done():  # deferred while a slow write ran
            await interaction.edit_original_response(content=text, view=None)
        else:
            await interaction.response.edit_message(content=text, view=None)

    async def _apply(
        self, interaction: discord.Interaction, table: Table, command: Command, *, private: bool,
        reply: Reply | None = None,
    ) -> tuple[ev.Event, ...]:
        """Submit for the clicking player, deferring the click if the store is slow."""
        work = table.submit(command, actor=interaction.user.id, reply=reply)
        return await in_time(self.bot, interaction, work, private=private)

    async def _on_card(self, interaction: discord.Interaction, table_id: int, _values: list[str]) -> None:
        table = self._table(table_id, interaction)
        seat = self._seat(table, interaction)
        role = table.role_at(seat)
        lines = [t(table.language, "card.yours", seat=seat, role=role_name(table, role))]
        if role.team is Team.BLACK:
            lines.append(t(table.language, "card.team", seats=seat_list(table, table.black_seats())))
        await self._private(interaction, "\n".join(lines))

    async def _on_thanks(self, interaction: discord.Interaction, table_id: int, _values: list[str]) -> None:
        table = self._table(table_id, interaction)
        await self._public_click(interaction, table, EndSpeech(seat=self._seat(table, interaction)))

    async def _on_nominate(self, interaction: discord.Interaction, table_id: int, values: list[str]) -> None:
        table = self._table(table_id, interaction)
        seat = self._seat(table, interaction)
        (target,) = seats_of(values)
        await self._public_click(interaction, table, Nominate(seat=seat, target=target))

    async def _public_click(self, interaction: discord.Interaction, table: Table, command: Command) -> None:
        """Apply a speaker's public act; the messages it causes go out as the click's follow-ups."""
        reply = Reply.to(interaction)
        try:
            await self._apply(interaction, table, command, private=False, reply=reply)
            if not interaction.response.is_done():
                await interaction.response.defer()
        finally:
            reply.acknowledged.set()

    async def _on_act(self, interaction: discord.Interaction, table_id: int, _values: list[str]) -> None:
        """The public "Night action" button: everyone presses it, so nobody can tell who acts."""
        table = self._table(table_id, interaction)
        seat = self._seat(table, interaction)
        state = table.game.state
        lang = table.language
        if state.phase is not Phase.NIGHT or not state.is_alive(seat):
            await self._private(interaction, t(lang, "night.not_now"))
            return
        require_playing(state)  # a paused night answers everyone alike, as the engine refuses every act
        role = table.role_at(seat)
        # The private menu offers exactly the seats the engine accepts; the mafia shoots in its room.
        for action in (Act.CHECK, Act.HEAL, Act.MANIAC):
            targets = legal_targets(state, table.ruleset, action, seat)
            if targets:
                break
        else:
            shooter = role is Role.MAFIA and legal_targets(state, table.ruleset, Act.SHOOT, seat)
            await self._private(interaction, t(lang, "night.mafia_in_thread" if shooter else "night.sleep"))
            return
        options = [(seat_label(table, s), str(s)) for s in targets]
        if action is Act.CHECK:
            checker = table.ruleset.checker
            prompt = f"night.don_check.{checker}" if role is Role.DON else "night.sheriff_check"
        elif action is Act.HEAL:
            prompt = "night.heal"
        else:
            prompt = "night.maniac"
            options.append((t(lang, "night.maniac_pass"), "0"))
        await self._private(interaction, t(lang, prompt),
                            _select(lang, "select.target", custom_id(action.value, table.id), options))

    async def _on_check(self, interaction: discord.Interaction, table_id: int, values: list[str]) -> None:
        table = self._table(table_id, interaction)
        seat = self._seat(table, interaction)
        (target,) = seats_of(values)
        events = await self._apply(interaction, table, Check(seat=seat, target=target), private=False)
        lang = table.language
        text = t(lang, "night.done")
        for event in events:
            if isinstance(event, ev.DonChecked) and event.seat == seat:
                text = t(lang, "check.don_yes" if event.sheriff else "check.don_no", target=f"#{event.target}",
                         role=role_name(table, Role.SHERIFF))
            elif isinstance(event, ev.SheriffChecked) and event.seat == seat:
                text = t(lang, f"check.{table.ruleset.check_result(black=event.black)}", target=f"#{event.target}")
        await self._replace(interaction, text)

    async def _on_heal(self, interaction: discord.Interaction, table_id: int, values: list[str]) -> None:
        table = self._table(table_id, interaction)
        (target,) = seats_of(values)
        await self._apply(interaction, table, Heal(seat=self._seat(table, interaction), target=target),
                          private=False)
        await self._replace(interaction, t(table.language, "night.healed", target=f"#{target}"))

    async def _on_maniac(self, interaction: discord.Interaction, table_id: int, values: list[str]) -> None:
        table = self._table(table_id, interaction)
        target = seats_of(values)[0] or None
        await self._apply(interaction, table, ManiacShoot(seat=self._seat(table, interaction), target=target),
                          private=False)
        text = t(table.language, "night.maniac_fired", target=f"#{target}") if target else t(
            table.language, "night.maniac_passed")
        await self._replace(interaction, text)

    async def _on_shoot(self, interaction: discord.Interaction, table_id: int, values: list[str]) -> None:
        table = self._table(table_id, interaction)
        (target,) = seats_of(values)
        await self._apply(interaction, table, Shoot(seat=self._seat(table, interaction), target=target), private=True)
        await self._private(interaction, t(table.language, "night.shot_taken", target=f"#{target}"))

    async def _on_bestmove(self, interaction: discord.Interaction, table_id: int, _values: list[str]) -> None:
        table = self._table(table_id, interaction)
        seat = self._seat(table, interaction)
        state = table.game.state
        targets = legal_targets(state, table.ruleset, Act.BEST_MOVE, seat)
        if not targets:
            if state.paused:
                require_playing(state)
            raise TableError("table.not_your_best_move")
        others = [(seat_label(table, s), str(s)) for s in targets]
        await self._private(interaction, t(table.language, "best_move.prompt"),
                            _select(table.language, "select.three", custom_id("bestpick", table.id), others, count=3))

    async def _on_bestpick(self, interaction: discord.Interaction, table_id: int, values: list[str]) -> None:
        table = self._table(table_id, interaction)
        targets = tuple(sorted(seats_of(values, 3)))
        await self._apply(interaction, table, MakeBestMove(seat=self._seat(table, interaction), targets=targets),
                          private=False)
        await self._replace(interaction, t(table.language, "best_move.thanks"))


async def setup(bot: MafiaBot) -> None:
    """Load the cog."""
    await bot.add_cog(ControlsCog(bot))
