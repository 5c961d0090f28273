"""``systemctl stop`` sends SIGTERM: the bot stops as after Ctrl-C, nobody left muted, the game resumable."""

from __future__ import annotations

import dataclasses
import signal
from pathlib import Path

from engine import Phase
from mafiabot.emulator.testing import emulated_guild
from tests.bot.processes import bot_and_store
from tests.bot.test_kill import PLAYERS, RACED, VOTE_WINDOW, Player
from tests.harness import RESTART_AT_ONCE as FAST


async def test_sigterm_mid_game_lifts_every_mute_and_the_game_resumes(tmp_path: Path) -> None:
    async with emulated_guild(members=PLAYERS + 1, config=FAST) as env:
        bot, store = await bot_and_store(env, tmp_path, vote_window=VOTE_WINDOW)
        settings = await store.get_settings(env.guild.id)
        await store.save_settings(dataclasses.replace(settings, timers={**settings.timers, **RACED}))
        people = env.members[:PLAYERS]

        def muted() -> int:
            return sum(1 for p in people if env.guild.members[p.id].mute)

        try:
            await bot.start()
            player = Player(env, store, bot, {})
            await player.open_table()
            for _ in range(1200):  # a few speeches in: the seats are muted, the floor moves
                game, meta = await player.game()
                if game.state.phase is Phase.SPEECHES and len(game.history) >= 4 and muted() >= PLAYERS - 1:
                    break
                await player.advance(game, meta)
            assert muted() >= PLAYERS - 1
            stopped_at = len((await player.game())[0].history)

            assert await bot.signal_stop(signal.SIGTERM) == 0  # as a stop with SIGINT ends
            assert muted() == 0
            assert await store.owed_mutes(env.guild.id) == []
            stored = await store.get_game(player.game_id)
            assert stored.status == "open"
            assert stored.last_seq == stopped_at

            await bot.start()
            await env.emu.wait_for(lambda: any("The host is back" in m.content for m in env.emu.messages(env.text)),
                                   timeout=60)
            await env.emu.wait_for(lambda: muted() >= PLAYERS - 1, timeout=60)  # the resumed table mutes again
            acted = 0
            for _ in range(600):  # three moves of the players in the resumed game
                if acted == 3:
                    break
                game, meta = await player.game()
                acted += await player.advance(game, meta)
            assert (await store.get_game(player.game_id)).last_seq > stopped_at
            assert await bot.signal_stop(signal.SIGINT) == 0
            assert muted() == 0
            assert await store.owed_mutes(env.guild.id) == []
        finally:
            await bot.stop()
            await store.close()
