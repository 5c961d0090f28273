"""The night: your card, the Night action button and its private menus, the mafia room's picker, the best move.

Everyone alive presses the public Night action button, so nobody can tell who acts; each gets a
private answer, and those who act a menu of exactly the seats the engine accepts. The mafia picks
its target in its own room, with the menu the presenter posts there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from cogs._cog import MafiaCog
from cogs._common import private, replace
from cogs._routing import Button, Control, Select, private_menu, seat_of, seats_of, submit, table_of, template
from engine import (
    Act,
    Check,
    Heal,
    MakeBestMove,
    ManiacShoot,
    Phase,
    Role,
    Shoot,
    Team,
    legal_targets,
    require_playing,
)
from engine import events as ev
from mafiabot.core.runtime import Table, TableError
from mafiabot.host.i18n import t
from mafiabot.host.presenter import custom_id, role_name, seat_label, seat_list

if TYPE_CHECKING:
    from mafiabot.host.bot import MafiaBot

PRIVATE_ACTS = (Act.CHECK, Act.HEAL, Act.MANIAC)
"""The night actions chosen in a private menu (the mafia shoots in its room)."""


class CardButton(Control[Button], template=template("card")):
    """Your card: the clicker's role, and a black player's team."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Show the card privately."""
        table = table_of(bot, self.target, interaction)
        seat = seat_of(table, interaction)
        role = table.role_at(seat)
        lines = [t(table.language, "card.yours", seat=seat, role=role_name(table, role))]
        if role.team is Team.BLACK:
            lines.append(t(table.language, "card.team", seats=seat_list(table, table.black_seats())))
        await private(interaction, "\n".join(lines))


class ActButton(Control[Button], template=template("act")):
    """The public Night action button."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Offer the clicker's night action, or say there is none for them."""
        table = table_of(bot, self.target, interaction)
        seat = seat_of(table, interaction)
        state, lang = table.game.state, table.language
        if state.phase is not Phase.NIGHT or not state.is_alive(seat):
            await private(interaction, t(lang, "night.not_now"))
            return
        require_playing(state)  # a paused night answers everyone alike, as the engine refuses every act
        role = table.role_at(seat)
        # The private menu offers exactly the seats the engine accepts.
        offered = [(action, targets) for action in PRIVATE_ACTS
                   if (targets := legal_targets(state, table.ruleset, action, seat))]
        if not offered:
            shooter = role is Role.MAFIA and legal_targets(state, table.ruleset, Act.SHOOT, seat)
            await private(interaction, t(lang, "night.mafia_in_thread" if shooter else "night.sleep"))
            return
        action, targets = offered[0]
        options = [(seat_label(table, s), str(s)) for s in targets]
        if action is Act.MANIAC:
            options.append((t(lang, "night.maniac_pass"), "0"))
        check = f"night.don_check.{table.ruleset.checker}" if role is Role.DON else "night.sheriff_check"
        prompt = {Act.CHECK: check, Act.HEAL: "night.heal", Act.MANIAC: "night.maniac"}[action]
        await private(interaction, t(lang, prompt),
                      private_menu(lang, "select.target", custom_id(action.value, table.id), options))


def check_text(table: Table, seat: int, events: tuple[ev.Event, ...]) -> str:
    """What a check showed the checker (``night.done`` if the events hold no answer for them)."""
    lang = table.language
    text = t(lang, "night.done")
    for event in events:
        if isinstance(event, ev.DonChecked) and event.seat == seat:
            text = t(lang, "check.don_yes" if event.sheriff else "check.don_no", target=f"#{event.target}",
                     role=role_name(table, Role.SHERIFF))
        elif isinstance(event, ev.SheriffChecked) and event.seat == seat:
            text = t(lang, f"check.{table.ruleset.check_result(black=event.black)}", target=f"#{event.target}")
    return text


class CheckMenu(Control[Select], template=template("check")):
    """The sheriff's or the don's check."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Check the picked seat; the answer replaces the menu."""
        table = table_of(bot, self.target, interaction)
        seat = seat_of(table, interaction)
        (target,) = seats_of(interaction)
        events = await submit(bot, interaction, table, Check(seat=seat, target=target), private=False)
        await replace(interaction, check_text(table, seat, events))


class HealMenu(Control[Select], template=template("heal")):
    """The doctor's heal."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Heal the picked seat."""
        table = table_of(bot, self.target, interaction)
        (target,) = seats_of(interaction)
        await submit(bot, interaction, table, Heal(seat=seat_of(table, interaction), target=target), private=False)
        await replace(interaction, t(table.language, "night.healed", target=f"#{target}"))


class ManiacMenu(Control[Select], template=template("maniac")):
    """The maniac's shot, or a pass (``0``)."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Shoot the picked seat, or pass."""
        table = table_of(bot, self.target, interaction)
        target = seats_of(interaction)[0] or None
        await submit(bot, interaction, table, ManiacShoot(seat=seat_of(table, interaction), target=target),
                     private=False)
        text = t(table.language, "night.maniac_fired", target=f"#{target}") if target else t(
            table.language, "night.maniac_passed")
        await replace(interaction, text)


class ShootMenu(Control[Select], template=template("shoot")):
    """The mafia room's picker: each black player's shot."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Record the clicker's shot; only they hear that it was taken."""
        table = table_of(bot, self.target, interaction)
        (target,) = seats_of(interaction)
        await submit(bot, interaction, table, Shoot(seat=seat_of(table, interaction), target=target), private=True)
        await private(interaction, t(table.language, "night.shot_taken", target=f"#{target}"))


class BestMoveButton(Control[Button], template=template("bestmove")):
    """The first night's victim's best move: the button that opens the menu."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Offer the three seats to name, if the clicker may name them."""
        table = table_of(bot, self.target, interaction)
        seat = seat_of(table, interaction)
        state = table.game.state
        targets = legal_targets(state, table.ruleset, Act.BEST_MOVE, seat)
        if not targets:
            if state.paused:
                require_playing(state)
            raise TableError("table.not_your_best_move")
        others = [(seat_label(table, s), str(s)) for s in targets]
        await private(interaction, t(table.language, "best_move.prompt"),
                      private_menu(table.language, "select.three", custom_id("bestpick", table.id), others, count=3))


class BestPickMenu(Control[Select], template=template("bestpick")):
    """The best move's menu of three seats."""

    async def clicked(self, interaction: discord.Interaction, bot: MafiaBot) -> None:
        """Name the three seats."""
        table = table_of(bot, self.target, interaction)
        targets = tuple(sorted(seats_of(interaction, 3)))
        await submit(bot, interaction, table, MakeBestMove(seat=seat_of(table, interaction), targets=targets),
                     private=False)
        await replace(interaction, t(table.language, "best_move.thanks"))


class NightCog(MafiaCog):
    """The night's controls; the night has no slash command."""

    controls = (CardButton, ActButton, CheckMenu, HealMenu, ManiacMenu, ShootMenu, BestMoveButton, BestPickMenu)


async def setup(bot: MafiaBot) -> None:
    """Load the cog (``override``: see ``MafiaCog``)."""
    await bot.add_cog(NightCog(bot), override=True)
