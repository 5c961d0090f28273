"""Seat nicknames across a crash: the bot process is SIGKILLed mid-game and restarted on the same database.

The resumed table keeps the seat nicknames and gives every old one back when the judge cancels, as it
would after a game without a crash; a restarted bot gives back at once the nicknames of a game no
table resumes. A kill right after the start, with some start edits still unanswered, leaves those
seats unnumbered: the restarted bot numbers them, and tells the judge of a seat it could not.
Nobody is left with a seat number in their name, and the ledger ends empty.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from mafiabot.core.nicks import seat_nick
from mafiabot.core.records import GuildSettings
from mafiabot.emulator import FaultRule
from mafiabot.emulator.state import Permission
from mafiabot.emulator.testing import BOT_PERMISSIONS, emulated_guild
from mafiabot.testing import harness
from tests.bot.processes import bot_and_store
from tests.harness import FAST, RESTART_AT_ONCE

PLAYERS = 6
RENAMING = BOT_PERMISSIONS | Permission.MANAGE_NICKNAMES


async def test_a_killed_bot_keeps_the_seat_nicknames_and_gives_them_back_at_the_cancel(tmp_path: Path) -> None:
    async with emulated_guild(members=PLAYERS + 1, config=RESTART_AT_ONCE, bot_permissions=RENAMING) as env:
        bot, store = await bot_and_store(env, tmp_path, seat_nicknames=True)
        players, judge = env.members[:PLAYERS], env.members[PLAYERS]
        own = {p.id: (f"Own{i}" if i % 2 else None) for i, p in enumerate(players)}
        for person in players:
            env.guild.members[person.id].nick = own[person.id]
        try:
            await bot.start()
            for person in env.members:
                person.join_voice(env.voice)
            reply = await judge.run_command(env.text, "mafia new", ruleset="classic", seats=PLAYERS, timeout=20)
            lobby = reply.message
            assert lobby is not None, reply.content
            join = next(c["custom_id"] for row in lobby.components for c in row["components"]
                        if ":join:" in c["custom_id"])
            for person in players:
                await person.press(lobby, join, timeout=20)
            await judge.run_command(env.text, "mafia start", timeout=20)
            (game,) = await store.open_games(lambda guild_id: guild_id == env.guild.id)
            seats = [s.user_id for s in sorted(game.seats, key=lambda s: s.seat)]
            numbered = [seat_nick(i, own[u] or env.emu.world.users[u].name) for i, u in enumerate(seats, 1)]

            def nicknames() -> list[str | None]:
                return [env.guild.members[u].nick for u in seats]

            await env.emu.wait_for(lambda: nicknames() == numbered, timeout=30)
            await bot.kill()
            owed = {r.user_id: r.nick for r in await store.owed_nicks(env.guild.id)}
            assert owed == {u: own[u] for u in seats}  # on the ledger, each with what to give back
            assert nicknames() == numbered  # a dead bot gives nothing back

            back = sum(1 for m in env.emu.messages(env.text) if "The host is back" in m.content)
            await bot.start()
            await env.emu.wait_for(
                lambda: sum(1 for m in env.emu.messages(env.text) if "The host is back" in m.content) > back,
                timeout=60,
            )
            assert nicknames() == numbered  # the resumed table keeps them
            cancel = await judge.run_command(env.text, "mafia cancel", timeout=20)
            assert cancel.content
            await env.emu.wait_for(lambda: nicknames() == [own[u] for u in seats], timeout=30)
            await env.emu.wait_for(lambda: not any(env.guild.members[u].mute for u in seats), timeout=30)
        finally:
            await bot.stop()
        assert await store.owed_nicks(env.guild.id) == []
        await store.close()


MEMBER_EDIT = "/guilds/{guild_id}/members/{user_id}"
UNANSWERED = 3
"""Start edits Discord has not answered when the bot is killed (a member-edit window's worth)."""


async def test_a_bot_killed_right_after_the_start_numbers_every_seat_once_restarted(tmp_path: Path) -> None:
    async with emulated_guild(members=PLAYERS + 1, config=RESTART_AT_ONCE, bot_permissions=RENAMING) as env:
        bot, store = await bot_and_store(env, tmp_path)
        # Night 0 lasts the whole test: every seated player is to be muted throughout.
        await store.save_settings(GuildSettings(env.guild.id, timers={"night_zero_seconds": 3600}, seat_nicknames=True))
        players, judge = env.members[:PLAYERS], env.members[PLAYERS]
        own = {p.id: (f"Own{i}" if i % 2 else None) for i, p in enumerate(players)}
        for person in players:
            env.guild.members[person.id].nick = own[person.id]
        try:
            await bot.start()
            for person in env.members:
                person.join_voice(env.voice)
            reply = await judge.run_command(env.text, "mafia new", ruleset="classic", seats=PLAYERS, timeout=20)
            lobby = reply.message
            assert lobby is not None, reply.content
            join = next(c["custom_id"] for row in lobby.components for c in row["components"]
                        if ":join:" in c["custom_id"])
            for person in players:
                await person.press(lobby, join, timeout=20)
            # The first start edits get no answer before the kill (Discord never applies them here).
            env.emu.inject_fault(FaultRule(method="PATCH", route=MEMBER_EDIT, hang=3600, times=UNANSWERED))
            await judge.run_command(env.text, "mafia start", timeout=20)
            (game,) = await store.open_games(lambda guild_id: guild_id == env.guild.id)
            seats = [s.user_id for s in sorted(game.seats, key=lambda s: s.seat)]
            numbered = [seat_nick(i, own[u] or env.emu.world.users[u].name) for i, u in enumerate(seats, 1)]

            def nicknames() -> list[str | None]:
                return [env.guild.members[u].nick for u in seats]

            def done() -> list[int]:
                return [u for u, n in zip(seats, numbered, strict=True) if env.guild.members[u].nick == n]

            await env.emu.wait_for(lambda: len(done()) == PLAYERS - UNANSWERED, timeout=30)
            await bot.kill()
            left = [u for u in seats if u not in done()]
            assert len(left) == UNANSWERED
            assert not any(env.guild.members[u].mute for u in left)  # their edits never landed
            # Discord will refuse one of the names the restarted bot still has to give (400/50035).
            refused = left[0]
            env.emu.refuse_nicknames(f"^{re.escape(numbered[seats.index(refused)])}$")

            await bot.start()
            expected = [own[u] if u == refused else n for u, n in zip(seats, numbered, strict=True)]
            await env.emu.wait_for(lambda: nicknames() == expected, timeout=60)

            await env.emu.wait_for(lambda: all(env.guild.members[u].mute for u in seats), timeout=30)
            note = await env.emu.wait_for(
                lambda: [m.content for m in judge.dm_messages(env.app) if "Seat numbers" in m.content], timeout=30,
            )
            assert len(note) == 1
            assert f"#{seats.index(refused) + 1}" in note[0]
            assert "Discord refused" in note[0]
            renamed_at = len(env.emu.requests)
            cancel = await judge.run_command(env.text, "mafia cancel", timeout=20)
            assert cancel.content
            # From the restart's renames to the cancel, nobody's nickname changed again.
            between = [r for r in env.emu.requests[renamed_at:] if r.route == MEMBER_EDIT and "nick" in r.body]
            assert all(r.body["nick"] in (own[u] for u in seats) for r in between), [r.body for r in between]
            await env.emu.wait_for(lambda: nicknames() == [own[u] for u in seats], timeout=30)
            await env.emu.wait_for(lambda: not any(env.guild.members[u].mute for u in seats), timeout=30)
        finally:
            await bot.stop()
        assert await store.owed_nicks(env.guild.id) == []
        await store.close()


async def test_a_restarted_bot_gives_back_the_nicknames_no_table_keeps() -> None:
    async with harness(3, emulator_config=FAST, bot_permissions=RENAMING) as h:
        await h.bot.tables.recovered.wait()
        guild = h.env.guild
        first, second, third = h.players
        await h.store.save_settings(dataclasses.replace(GuildSettings(guild.id), seat_nicknames=True))
        # What a crash left: renamed members, on the ledger, with no open game to resume.
        guild.members[first.id].nick, guild.members[second.id].nick = "1 · Anya", "2 · player2"
        await h.store.record_nicks(guild.id, [(first.id, "Anya"), (second.id, None)], None)
        restarted = h.bot.build_tables()
        await restarted.recover()
        assert guild.members[first.id].nick == "Anya"
        assert guild.members[second.id].nick is None
        assert guild.members[third.id].nick is None  # never renamed: never touched
        assert await h.store.owed_nicks(guild.id) == []
        edits = [r for r in h.emu.requests if r.method == "PATCH" and r.app_id == h.env.app.id]
        assert [r.body for r in edits] == [{"nick": "Anya"}, {"nick": None}]
