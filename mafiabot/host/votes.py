"""Vote intake by reaction: a ✋ becomes the engine's vote, or comes off the message with its author told why.

The voting cog feeds live reactions here, and the presenter feeds the reactions it finds on the
round's messages after a restart, so both go through the same rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import discord

from engine import CastLiftVote, CastVote, Phase, RulesError
from mafiabot.core.meta import LIFT
from mafiabot.core.runtime import Table, TableError
from mafiabot.host.refusals import Action, error_text
from mafiabot.host.render import round_votes, vote_round
from mafiabot.host.sender import VOTE_EMOJI

if TYPE_CHECKING:
    from discord.http import HTTPClient

    from engine.view import GameView


class Refusals(Protocol):
    """Who tells the judge of a refused Discord call."""

    async def refused(self, table: Table, action: Action, exc: discord.HTTPException) -> None:
        """Tell the judge, once per kind of refusal and table."""


class VoteHost(Protocol):
    """What vote intake needs of the bot: the reaction calls, the players' DMs, the refusals' notices."""

    @property
    def http(self) -> HTTPClient:
        """The client's HTTP calls (reactions by id)."""

    @property
    def presenter(self) -> Refusals:
        """Who tells the judge of refusals."""

    def get_user(self, id: int, /) -> discord.User | None:
        """A cached user."""

    async def fetch_user(self, user_id: int, /) -> discord.User:
        """A user, asked of Discord."""

    def commands_text(self, guild_id: int | None) -> dict[str, str]:
        """Mentions of the bot's commands, for messages that name one."""


Emoji = str | discord.PartialEmoji | discord.Emoji


async def vote_by_reaction(
    bot: VoteHost, table: Table, target: int | str, user_id: int, emoji: Emoji, message_id: int,
    *, member: discord.abc.Messageable | None = None,
) -> bool:
    """Submit the vote a reaction stands for; True if it counted.

    ``member``: who reacted, as the gateway sent them, so telling them why costs no look-up.
    """
    error: RulesError | TableError | None = None
    seat = table.seat_of(user_id)
    if message_id not in table.meta.round:
        error = TableError("vote.late")
    elif str(emoji) != VOTE_EMOJI:
        error = TableError("vote.wrong_emoji", emoji=VOTE_EMOJI)
    elif seat is None:
        error = TableError("table.not_seated")
    else:
        command = CastLiftVote(seat=seat) if target == LIFT else CastVote(seat=seat, candidate=int(target))
        try:
            await table.submit(command, actor=user_id)
            return True
        except (RulesError, TableError) as exc:
            error = exc
    await refuse_reaction(bot, table, message_id, emoji, user_id, error, member=member)
    return False


async def refuse_reaction(
    bot: VoteHost, table: Table, message_id: int, emoji: Emoji, user_id: int, error: RulesError | TableError,
    *, member: discord.abc.Messageable | None = None,
) -> None:
    """A reaction that does not count: off the message, and its author told why, once per table."""
    await remove_reaction(bot, table, message_id, emoji, user_id)
    if user_id not in table.told:
        table.told.add(user_id)
        await tell(bot, table, user_id, error_text(table.language, error, bot.commands_text(table.guild_id)),
                   member=member)


async def remove_reaction(bot: VoteHost, table: Table, message_id: int, emoji: Emoji, user_id: int) -> None:
    """Take a reaction that does not count off the vote message; refused, the judge hears why."""
    # Discord's reaction routes name a custom emoji ``name:id``; its chat form ``<:name:id>``
    # (``str()`` of a custom emoji) is their 400 Unknown Emoji.
    if isinstance(emoji, discord.PartialEmoji | discord.Emoji):
        emoji = f"{emoji.name}:{emoji.id}" if emoji.id else str(emoji.name)
    try:
        await bot.http.remove_reaction(table.channel_id, message_id, emoji, user_id)
    except discord.HTTPException as exc:
        await bot.presenter.refused(table, Action.REMOVE_REACTION, exc)


async def tell(
    bot: VoteHost, table: Table, user_id: int, text: str, *, member: discord.abc.Messageable | None = None,
) -> None:
    """A private word to a player; closed DMs leave the removed reaction as the answer, and the judge told.

    ``member``: who reacted, as the gateway sent them, so telling them costs no look-up.
    """
    try:
        user = member or bot.get_user(user_id) or await bot.fetch_user(user_id)
        await user.send(text, allowed_mentions=discord.AllowedMentions.none())
    except discord.HTTPException as exc:
        await bot.presenter.refused(table, Action.DIRECT_MESSAGE, exc)


async def catch_up(bot: VoteHost, table: Table, channel: discord.abc.Messageable, me: int) -> None:
    """After a restart: count or remove each reaction made on this round's vote messages meanwhile.

    ``me``: the bot's own user id (its seeded ✋ stays).
    """
    events = table.game.events
    now = vote_round(events)
    round_no = table.meta.round_no if table.meta.round_no is not None else now
    current = _open_target(table.game.state) if round_no == now else None  # else the round's windows all closed
    counted = round_votes(events, round_no)
    for message_id in list(table.meta.round):
        target = table.meta.votes.get(message_id)
        try:
            message = await channel.fetch_message(message_id)
        except discord.HTTPException:
            continue
        if target is None:
            continue  # not a vote window (never written so)
        for reaction in message.reactions:
            await _catch_up_reaction(bot, table, message_id, reaction, (target, current), counted, me)


def _open_target(state: GameView) -> int | str | None:
    """The open window's target: the candidate on the clock, or the lift vote."""
    if state.vote is None:
        return None
    return LIFT if state.phase is Phase.LIFT_VOTE else state.vote.candidates[state.vote.index]


async def _catch_up_reaction(
    bot: VoteHost, table: Table, message_id: int, reaction: discord.Reaction,
    targets: tuple[int | str, int | str | None], counted: dict[int, int | str], me: int,
) -> None:
    """Every user's ``reaction`` on a window of ``targets`` (its own, the open one's): counted or removed."""
    target, current = targets
    emoji = str(reaction.emoji)
    async for user in reaction.users():
        seat = table.seat_of(user.id)
        if user.id == me or (emoji == VOTE_EMOJI and seat is not None and counted.get(seat) == target):
            continue
        if emoji == VOTE_EMOJI and target == current:
            if await vote_by_reaction(bot, table, target, user.id, reaction.emoji, message_id):
                counted[seat or 0] = target
        else:
            error = TableError("vote.late") if emoji == VOTE_EMOJI else TableError("vote.wrong_emoji", emoji=VOTE_EMOJI)
            await refuse_reaction(bot, table, message_id, reaction.emoji, user.id, error)
