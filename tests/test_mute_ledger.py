"""The mute ledger: written before a member's first mute, left alone by floor changes, emptied at the end."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from engine import find_ruleset
from mafiabot.core.voice import VoiceReconciler
from mafiabot.emulator import EmulatorConfig, RateLimitConfig
from mafiabot.emulator.testing import emulated_guild, running
from mafiabot.host.bot import MafiaBot
from mafiabot.store import Store, sqlite_url
from mafiabot.tools.config import parse_config

ROOMY = EmulatorConfig(rate_limits=RateLimitConfig(member_edits=(100, 1.0)))


async def test_one_ledger_write_per_member_per_game_and_none_left_after_it(tmp_path: Path) -> None:
    async with emulated_guild(members=6, config=ROOMY) as env:
        for person in env.members:
            person.join_voice(env.voice)
        store = await Store.open(sqlite_url(tmp_path / "ledger.sqlite3"))
        bot = MafiaBot(parse_config({"discord": {"sync_commands": False}}), store, guild_ready_timeout=0.05)
        try:
            async with running(bot, env):
                # The bot's start-up recovery lifts owed mutes: let it finish before this game writes any.
                await bot.tables.recovered.wait()
                guild = bot.get_guild(env.guild.id)
                assert guild is not None

                def everyone_in_voice() -> bool:
                    return all((m := guild.get_member(p.id)) is not None and m.voice for p in env.members)

                await env.emu.wait_for(everyone_in_voice)
                game_id = await store.create_game(guild_id=env.guild.id, channel_id=env.text.id,
                                                  judge_id=env.members[0].id, ruleset=find_ruleset("classic"))
                writes: list[list[int]] = []
                record = store.record_mutes

                async def spy(
                    guild_id: int, user_ids: Iterable[int], game_id: int | None, *, at: datetime | None = None
                ) -> None:
                    writes.append(sorted(user_ids))
                    await record(guild_id, writes[-1], game_id, at=at)

                store.record_mutes = spy  # type: ignore[method-assign]
                voice = VoiceReconciler(bot.editor, store, guild_id=env.guild.id, game_id=game_id)
                voice.start()
                seats = [p.id for p in env.members]

                async def settle(desired: dict[int, bool], kind: str) -> None:
                    voice.update(desired, kind=kind)
                    await asyncio.wait_for(voice.settled(), 10)
                    await env.emu.wait_for(lambda: all(env.guild.members[u].mute == m for u, m in desired.items()))

                await settle(dict.fromkeys(seats, True), "start")
                assert writes == [sorted(seats)]  # a whole table's mutes: one transaction
                for holder in seats[:4]:
                    await settle({u: u != holder for u in seats}, "play")
                assert len(writes) == 1  # floor changes write nothing
                owed = {m.user_id for m in await store.owed_mutes(env.guild.id)}
                assert owed == set(seats)  # the floor holder too: a crash now costs at most a needless unmute

                # The game ends while seats[3] holds the floor: the others are unmuted, and nobody
                # (the already unmuted holder included) is left on the ledger.
                await settle(dict.fromkeys(seats, False), "end")
                await voice.close()
                assert await store.owed_mutes(env.guild.id) == []
                assert voice.stats.most_in_one_change <= 2
        finally:
            await store.close()
