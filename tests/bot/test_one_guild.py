"""Three tables in one guild share its member-edit bucket: floor changes first, the tables take turns.

The emulator keeps one member-edit bucket per guild and token, whichever table (voice channel)
an edit is for: 5 edits per window here, with one token, so two tables' starts (24 mutes) queue
for five windows. The real bot's editor sends every table's edits, each table through its own
reconciler as a running table does; the order Discord saw them in is read from the emulator.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path

from mafiabot.core.voice import VoiceReconciler
from mafiabot.emulator import EmulatorConfig, RateLimitConfig, RequestRecord
from mafiabot.emulator.state import DEFAULT_EVERYONE, ChannelType, Permission
from mafiabot.emulator.testing import Table as EmuTable
from mafiabot.emulator.testing import assert_no_spec_violations, emulated_guild, running
from mafiabot.host.bot import MafiaBot
from mafiabot.host.members import DiscordMemberEditor
from mafiabot.store import Store, sqlite_url
from mafiabot.tools.config import parse_config

MEMBER_EDIT = "PATCH /guilds/{guild_id}/members/{user_id}"
WINDOW = EmulatorConfig(rate_limits=RateLimitConfig(member_edits=(5, 1.0)))
"""Discord's 5 edits per window, with a 1 s window so that the six windows of the test pass quickly."""
HELPER = int(DEFAULT_EVERYONE | Permission.MUTE_MEMBERS)


class NoLedger:
    async def record_mutes(self, guild_id: int, user_ids: Iterable[int], game_id: int) -> None:
        return None

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        return None


def member_edits(env: EmuTable) -> list[RequestRecord]:
    return [r for r in env.emu.requests if f"{r.method} {r.route}" == MEMBER_EDIT]


def edited(record: RequestRecord) -> int:
    return int(record.path.rsplit("/", 1)[1])


@contextlib.asynccontextmanager
async def three_tables(
    env: EmuTable, tmp_path: Path, helpers: Sequence[str] = (),
) -> AsyncIterator[tuple[MafiaBot, list[list[int]], list[VoiceReconciler]]]:
    """Tables A (12 players), B (2) and C (12) in voice channels of their own; the bot and a reconciler each."""
    sizes = (12, 2, 12)
    seats, start = [], 0
    for n, size in enumerate(sizes):
        channel = env.voice if n == 0 else env.emu.create_channel(env.guild, f"Table {n + 1}", ChannelType.GUILD_VOICE)
        people = env.members[start:start + size]
        for person in people:
            person.join_voice(channel)
        seats.append([p.id for p in people])
        start += size
    store = await Store.open(sqlite_url(tmp_path / "g.sqlite3"))
    config = parse_config({"discord": {"sync_commands": False}, "voice": {"helper_tokens": list(helpers)}})
    bot = MafiaBot(config, store, guild_ready_timeout=0.05)
    try:
        async with running(bot, env):
            guild = bot.get_guild(env.guild.id)
            assert guild is not None
            await env.emu.wait_for(lambda: all((m := guild.get_member(u)) is not None and m.voice
                                               for table in seats for u in table))
            voices = [VoiceReconciler(bot.editor, NoLedger(), guild_id=env.guild.id, game_id=n + 1)
                      for n in range(len(sizes))]
            for voice in voices:
                voice.start()
            yield bot, seats, voices
            for voice in voices:
                await voice.close()
    finally:
        await store.close()


async def test_a_start_batch_delays_another_tables_floor_change_by_one_slot_at_most(tmp_path: Path) -> None:
    async with emulated_guild(members=26, config=WINDOW) as env:
        b_speaker = env.members[12].id
        env.guild.members[b_speaker].mute = True  # the floor moves from B's second player to its first
        async with three_tables(env, tmp_path) as (bot, seats, (a, b, c)):
            assert isinstance(bot.editor, DiscordMemberEditor)
            b.recorded_already([b_speaker])
            a.update(dict.fromkeys(seats[0], True), kind="start")
            c.update(dict.fromkeys(seats[2], True), kind="start")
            await env.emu.wait_for(lambda: len(member_edits(env)) >= 5)  # the window is spent; 19 mutes wait
            b.update({b_speaker: False, seats[1][1]: True}, kind="play")
            for voice in (a, b, c):
                await asyncio.wait_for(voice.settled(), 30)

            sent = member_edits(env)
            assert len(sent) == 26
            assert [r.status for r in sent] == [200] * 26
            # B's floor change takes the window's first slots, the new speaker's unmute first.
            assert [(edited(r), r.body) for r in sent[5:7]] == [(b_speaker, {"mute": False}),
                                                                (seats[1][1], {"mute": True})]
            # The two starts take turns: neither waits behind the whole of the other.
            table_of = {u: name for name, table in zip("AC", (seats[0], seats[2]), strict=True) for u in table}
            rest = "".join(table_of[edited(r)] for r in sent[7:])
            for i in range(1, len(rest)):
                if rest[i] == rest[i - 1]:  # twice in a row only once the other table has nothing left
                    assert set(rest[i:]) == {rest[i]}, rest
            assert {rest[0], rest[1]} == {"A", "C"}, rest
            assert bot.editor.rate_limited == 0
            assert bot.editor.sent_by_lane == [2, 24]
            assert all(env.guild.members[u].mute for u in seats[0] + seats[2] + seats[1][1:])
            assert not env.guild.members[b_speaker].mute
        assert_no_spec_violations(env.emu)


async def test_a_floor_change_goes_by_a_helper_while_the_bots_own_global_limit_is_queued(tmp_path: Path) -> None:
    async with emulated_guild(members=26, config=WINDOW) as env:
        app = env.emu.create_application("helper1")
        env.emu.add_bot(env.guild, app, HELPER)
        b_speaker = env.members[12].id
        env.guild.members[b_speaker].mute = True
        async with three_tables(env, tmp_path, [app.token]) as (bot, seats, (_, b, _)):
            # Tables opening together: the bot's own token has a second of requests queued.
            limit = bot.global_limit
            limit.hold(30.0)
            opening = [asyncio.create_task(limit.acquire(bulk=True)) for _ in range(3)]
            await asyncio.sleep(0)
            assert limit.queued == 3
            b.recorded_already([b_speaker])
            b.update({b_speaker: False, seats[1][1]: True}, kind="play")
            await asyncio.wait_for(b.settled(), 10)
            sent = member_edits(env)
            # With both tokens fresh, the second edit would take the bot's token (5 left against 4).
            assert [r.app_id for r in sent] == [app.id, app.id]
            assert not env.guild.members[b_speaker].mute
            assert env.guild.members[seats[1][1]].mute
            for task in opening:
                task.cancel()
            await asyncio.gather(*opening, return_exceptions=True)
        assert_no_spec_violations(env.emu)
