"""Seat numbers in nicknames, end to end: "5 · Anya" from the start, the old nickname back after it.

The real bot on the emulator. The rename rides on the start mute (one PATCH with ``mute`` and
``nick``), so a start costs the same member edits with the setting on as off; the end unmute brings
the old nickname back, after a whole game and after a cancel. The owner and a member whose role is
not below the bot's are left alone, and the judge hears of them once.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import discord

from engine import Phase
from mafiabot.core.nicks import Rename, seat_nick
from mafiabot.core.records import GuildSettings
from mafiabot.core.runtime import Table
from mafiabot.emulator.state import DEFAULT_EVERYONE, Permission
from mafiabot.emulator.testing import BOT_PERMISSIONS, emulated_guild, running
from mafiabot.host.bot import MafiaBot
from mafiabot.store import Store, sqlite_url
from mafiabot.testing import Driver, Harness, Strategy, harness, open_table
from mafiabot.tools.config import parse_config
from tests.harness import FAST, FAST_GLOBAL, play_to_the_end, public

RENAMING = BOT_PERMISSIONS | Permission.MANAGE_NICKNAMES
"""The bot's role as a server with seat nicknames sets it up: Manage Nicknames besides the rest."""
EDIT = ("PATCH", "/guilds/{guild_id}/members/{user_id}")


async def bot_sees(h: Harness, event: str, action: Callable[[], object], count: int = 1) -> None:
    """Do ``action`` and wait until the bot's cache has taken ``count`` gateway ``event``s (it is not the emulator's
    state, so ``h.wait`` would not wake for it)."""
    seen = 0

    def counted(*_: object) -> bool:
        nonlocal seen
        seen += 1
        return seen >= count

    waiter = h.bot.wait_for(event, check=counted, timeout=10)  # listening from here, before the action
    action()
    await waiter


def member_edits(h: Harness) -> list[Any]:
    """The bot's member edits so far, as the emulator received them."""
    return [r for r in h.emu.requests if (r.method, r.route) == EDIT and r.app_id == h.env.app.id]


async def numbering_on(h: Harness, *, on: bool = True) -> None:
    await h.store.save_settings(dataclasses.replace(GuildSettings(h.env.guild.id), seat_nicknames=on))


def nicknames(h: Harness, table: Table) -> list[str | None]:
    """Each seat's nickname on Discord now, in seat order."""
    return [h.env.guild.members[user].nick for user in table.seats]


def give_nicknames(h: Harness) -> dict[int, str | None]:
    """Half the players have a nickname of their own, half have none: what each must get back."""
    own: dict[int, str | None] = {}
    for i, person in enumerate(h.players):
        own[person.id] = f"Own{i}" if i % 2 == 0 else None
        h.env.guild.members[person.id].nick = own[person.id]
    return own


async def started(h: Harness) -> Table:
    """A table opened and started; wait until its start mutes are all on Discord."""
    table = await open_table(h, "classic", len(h.players))
    await h.wait(lambda: all(h.env.guild.members[u].mute for u in table.seats))
    await table.voice.settled()
    return table


async def test_a_start_costs_the_same_member_edits_with_seat_nicknames_on_as_off() -> None:
    edits: dict[bool, int] = {}
    for on in (False, True):
        async with harness(10, emulator_config=FAST, time_scale=0.5, bot_permissions=RENAMING) as h:
            await numbering_on(h, on=on)
            own = give_nicknames(h)
            table = await started(h)
            sent = member_edits(h)
            edits[on] = len(sent)
            if on:
                assert all(set(r.body) == {"mute", "nick"} for r in sent), [r.body for r in sent]
                expected = numbered_from(h, table, own)
                assert nicknames(h, table) == expected
                assert all(len(n) <= 32 for n in expected)
            else:
                assert all(set(r.body) == {"mute"} for r in sent)
                assert nicknames(h, table) == [own[u] for u in table.seats]
    print(f"member edits per start of a 10-seat table: seat nicknames off {edits[False]}, on {edits[True]}")  # noqa: T201
    assert edits[True] == edits[False] == 10


async def test_every_nickname_comes_back_after_a_whole_game() -> None:
    async with harness(6, emulator_config=FAST_GLOBAL, bot_permissions=RENAMING) as h:
        await numbering_on(h)
        own = give_nicknames(h)
        h.env.guild.members[h.players[0].id].nick = "A very long nickname of thirty2"
        own[h.players[0].id] = "A very long nickname of thirty2"
        table = await started(h)
        assert nicknames(h, table) == numbered_from(h, table, own)
        await play_to_the_end(table, Driver(h, table, Strategy(5)))
        await h.wait(lambda: nicknames(h, table) == [own[u] for u in table.seats])
        await h.wait(lambda: not table.voice._tasks)
        assert await h.store.owed_nicks(h.env.guild.id) == []
        assert not [m for m in public(h) if "Seat numbers" in m]


def numbered_from(h: Harness, table: Table, own: dict[int, str | None]) -> list[str]:
    return [seat_nick(seat, own[u] or h.emu.world.users[u].name) for seat, u in enumerate(table.seats, 1)]


async def test_a_cancel_gives_every_nickname_back_and_the_owner_is_skipped_with_one_note() -> None:
    async with harness(6, emulator_config=FAST, time_scale=0.5, bot_permissions=RENAMING) as h:
        await numbering_on(h)
        own = give_nicknames(h)
        owner, moderator = h.players[1], h.players[2]
        await bot_sees(h, "guild_update", lambda: h.emu.transfer_ownership(h.env.guild, owner.user))
        above = h.emu.create_role(h.env.guild, "moderators")  # made after the bot's role: above it
        h.env.guild.members[moderator.id].roles.append(above.id)  # the bot learns it from their voice state
        table = await started(h)
        expected: list[str | None] = list(numbered_from(h, table, own))
        for person in (owner, moderator):
            expected[table.seats.index(person.id)] = own[person.id]
        assert nicknames(h, table) == expected
        assert not [r for r in member_edits(h) if r.status >= 400]  # nothing was refused: nothing was tried
        note = await h.wait(lambda: [m.content for m in h.judge.dm_messages(h.env.app) if "Seat numbers" in m.content])
        assert len(note) == 1
        assert f"#{table.seat_of(owner.id)}" in note[0]
        assert "owner" in note[0]
        assert f"#{table.seat_of(moderator.id)}" in note[0]
        assert "2 players" in note[0]
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        reply = await h.judge.run_command(h.env.text, "mafia cancel")
        assert reply.content
        await h.wait(lambda: table.over)
        await h.wait(lambda: nicknames(h, table) == [own[u] for u in table.seats])
        await table.done.wait()
        assert await h.store.owed_nicks(h.env.guild.id) == []
        assert not [m for m in public(h) if "Seat numbers" in m]


async def test_a_nickname_discord_refuses_costs_the_rename_only_and_the_judge_hears_once() -> None:
    """Discord refuses some names with 400/50035 (not every rule is published): that player is muted
    at the start all the same, keeps their nickname, is not tried again, and the judge hears of it once."""
    async with harness(6, emulator_config=FAST, time_scale=0.5, bot_permissions=RENAMING) as h:
        await numbering_on(h)
        own = give_nicknames(h)
        refused = h.players[1]  # has no nickname of their own: their seat nickname carries their name
        h.emu.refuse_nicknames(rf"· {re.escape(h.emu.world.users[refused.id].name)}$")
        table = await started(h)
        expected: list[str | None] = list(numbered_from(h, table, own))
        expected[table.seats.index(refused.id)] = own[refused.id]
        assert nicknames(h, table) == expected
        assert all(h.env.guild.members[u].mute for u in table.seats)  # the refused one too
        theirs = [r for r in member_edits(h) if int(r.path.rsplit("/", 1)[1]) == refused.id]
        assert [(r.status, set(r.body)) for r in theirs] == [(400, {"mute", "nick"}), (200, {"mute"})]
        note = await h.wait(lambda: [m.content for m in h.judge.dm_messages(h.env.app) if "Seat numbers" in m.content])
        assert f"#{table.seat_of(refused.id)}" in note[0]
        assert "Discord refused" in note[0]
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        reply = await h.judge.run_command(h.env.text, "mafia cancel")
        assert reply.content
        await h.wait(lambda: table.over)
        await h.wait(lambda: nicknames(h, table) == [own[u] for u in table.seats])
        await table.done.wait()
        assert await h.store.owed_nicks(h.env.guild.id) == []
        theirs = [r for r in member_edits(h) if int(r.path.rsplit("/", 1)[1]) == refused.id]
        assert [r.body for r in theirs[2:]] == [{"mute": False}]  # never tried again, not even at the end
        notes = [m.content for m in h.judge.dm_messages(h.env.app) if "Seat numbers" in m.content]
        assert len(notes) == 1


async def test_a_player_no_mute_edit_reaches_is_numbered_by_an_edit_of_its_own() -> None:
    """The seat nickname is wanted as the mute is: a player a moderator muted before the game gets no
    start mute (their mute is not the bot's), so the rename goes alone, and the mute stays theirs."""
    async with harness(6, emulator_config=FAST, time_scale=0.5, bot_permissions=RENAMING) as h:
        await numbering_on(h)
        own = give_nicknames(h)
        muted = h.players[2]
        h.env.guild.members[muted.id].mute = True  # a moderator's mute, there when they join voice
        table = await open_table(h, "classic", len(h.players))
        await h.wait(lambda: nicknames(h, table) == numbered_from(h, table, own))
        await table.voice.settled()
        theirs = [r.body for r in member_edits(h) if int(r.path.rsplit("/", 1)[1]) == muted.id]
        assert theirs == [{"nick": numbered_from(h, table, own)[table.seats.index(muted.id)]}]
        assert h.env.guild.members[muted.id].mute
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        reply = await h.judge.run_command(h.env.text, "mafia cancel")
        assert reply.content
        await h.wait(lambda: nicknames(h, table) == [own[u] for u in table.seats])
        await table.done.wait()
        assert await h.store.owed_nicks(h.env.guild.id) == []
        assert h.env.guild.members[muted.id].mute  # the moderator's mute is not the bot's to lift


async def test_the_emulator_refuses_to_rename_the_owner_and_a_member_not_below_the_bot_as_discord_does() -> None:
    async with harness(3, emulator_config=FAST, bot_permissions=RENAMING) as h:
        owner, equal, below = h.players
        await bot_sees(h, "guild_update", lambda: h.emu.transfer_ownership(h.env.guild, owner.user))
        bot_role = max(h.env.bot_member.roles, key=lambda r: h.env.guild.roles[r].position)
        h.env.guild.members[equal.id].roles.append(bot_role)  # the bot's own role: not below it

        def join() -> None:
            for person in h.players:  # their voice states tell the bot each member's roles
                person.join_voice(h.env.voice)

        await bot_sees(h, "voice_state_update", join, count=len(h.players))

        async def refusal(person: Any) -> int | None:
            """Discord's code for a mute and a rename in one edit, as discord.py sends it; None when done."""
            try:
                await h.bot.http.edit_member(h.env.guild.id, person.id, mute=True, nick="1 · x")
            except discord.HTTPException as exc:
                return exc.code
            return None

        assert await refusal(owner) == 50013
        assert await refusal(equal) == 50013
        assert await refusal(below) is None
        # A refused edit changes nothing: the mute falls with the rename, which is why the bot never sends it.
        assert [h.env.guild.members[p.id].mute for p in h.players] == [False, False, True]
        assert [h.env.guild.members[p.id].nick for p in h.players] == [None, None, "1 · x"]
        # What the bot reads from its cache agrees with what Discord refuses.
        blocked = [h.bot.editor.nickname(h.env.guild.id, p.id).blocked for p in h.players]
        assert blocked == ["owner", "role", None]


async def test_without_manage_nicknames_nobody_is_renamed_and_the_start_still_mutes() -> None:
    async with harness(6, emulator_config=FAST, time_scale=0.5) as h:
        await numbering_on(h)
        own = give_nicknames(h)
        table = await started(h)
        assert nicknames(h, table) == [own[u] for u in table.seats]
        assert all(set(r.body) == {"mute"} and r.status < 400 for r in member_edits(h))
        note = await h.wait(lambda: [m.content for m in h.judge.dm_messages(h.env.app) if "Seat numbers" in m.content])
        assert "6 players" in note[0]
        assert "Manage Nicknames" in note[0]


async def test_a_helper_token_that_may_mute_but_not_rename_leaves_renames_to_the_bot(tmp_path: Path) -> None:
    async with emulated_guild(members=3, config=FAST, bot_permissions=RENAMING) as env:
        helper = env.emu.create_application("helper")
        helper_member = env.emu.add_bot(env.guild, helper, int(DEFAULT_EVERYONE | Permission.MUTE_MEMBERS
                                                             | Permission.MANAGE_NICKNAMES))
        for role in helper_member.roles:
            env.guild.roles[role].position = 0  # at the bottom of the list: above nobody
        for person in env.members:
            person.join_voice(env.voice)
        store = await Store.open(sqlite_url(tmp_path / "helper.sqlite3"))
        config = parse_config({"discord": {"sync_commands": False}, "voice": {"helper_tokens": [helper.token]}})
        bot = MafiaBot(config, store, guild_ready_timeout=0.05)
        try:
            async with running(bot, env):
                first, second, third = env.members
                assert await bot.editor.set_mute(env.guild.id, first.id, mute=True, nick=Rename("1 · x"))
                sent = [(r.app_id, r.status, r.body) for r in env.emu.requests if (r.method, r.route) == EDIT]
                assert sent == [(helper.id, 403, {"mute": True, "nick": "1 · x"}),
                                (env.app.id, 200, {"mute": True, "nick": "1 · x"})]
                assert env.guild.members[first.id].nick == "1 · x"
                assert env.guild.members[first.id].mute
                # The helper still mutes: only renames go elsewhere.
                for person in (second, third):
                    assert await bot.editor.set_mute(env.guild.id, person.id, mute=True)
                mutes = [r for r in env.emu.requests if (r.method, r.route) == EDIT and r.body == {"mute": True}]
                assert helper.id in {r.app_id for r in mutes}
        finally:
            await store.close()
