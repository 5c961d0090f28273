"""The lobby message: who judges, where, the seats taken so far, and its Join and Leave buttons."""

from __future__ import annotations

import discord

from mafiabot.core.runtime import Lobby
from mafiabot.host.i18n import ruleset_name, t
from mafiabot.host.places import LIFTS_OWN_MUTE, READS_MAFIA_ROOM
from mafiabot.host.presenter import custom_id


def lobby_text(lobby: Lobby) -> str:
    """Ruleset, judge, voice channel and the seats taken so far."""
    lang = lobby.language
    lines = [
        t(lang, "lobby.title", ruleset=ruleset_name(lang, lobby.ruleset)),
        t(lang, "lobby.info", judge=f"<@{lobby.judge_id}>", voice=f"<#{lobby.voice_channel_id}>",
          count=len(lobby.players), seats=lobby.seats),
    ]
    if lobby.fixed is not None:
        lines += _scheduled_lines(lobby)
    else:
        lines += [t(lang, "lobby.seat", number=i, user=f"<@{user}>")
                  for i, (user, _name) in enumerate(lobby.players, 1)]
    if not lobby.players:
        lines.append(t(lang, "lobby.empty"))
    # Said before the deal, so everyone knows who could see the mafia's room or speak at will.
    readers = [f"<@{user}>" for user, _ in lobby.players if set(lobby.powers.get(user, ())) & set(READS_MAFIA_ROOM)]
    lifters = [f"<@{user}>" for user, _ in lobby.players if LIFTS_OWN_MUTE in lobby.powers.get(user, ())]
    if readers:
        lines.append(t(lang, "lobby.notice.readers", players=", ".join(readers)))
    if lifters:
        lines.append(t(lang, "lobby.notice.lifters", players=", ".join(lifters)))
    return "\n".join(lines)


def _scheduled_lines(lobby: Lobby) -> list[str]:
    """A tournament table: every seat of the schedule, and who of them has come."""
    fixed, lang = lobby.fixed, lobby.language
    if fixed is None:
        return []
    lines = [t(lang, "lobby.tournament", table=fixed.table, round=fixed.round)]
    for number, user in enumerate(fixed.players, 1):
        key = "lobby.seat" if lobby.has(user) else "lobby.seat.waiting"
        lines.append(t(lang, key, number=number, user=f"<@{user}>"))
    return lines


def lobby_view(lobby: Lobby) -> discord.ui.View:
    """Join and Leave; their clicks are routed by custom id (``cogs.lobby``)."""
    view = discord.ui.View(timeout=None)
    view.add_item(discord.ui.Button(label=t(lobby.language, "button.join"), style=discord.ButtonStyle.success,
                                    custom_id=custom_id("join", lobby.id)))
    view.add_item(discord.ui.Button(label=t(lobby.language, "button.leave"), style=discord.ButtonStyle.secondary,
                                    custom_id=custom_id("leave", lobby.id)))
    return view
