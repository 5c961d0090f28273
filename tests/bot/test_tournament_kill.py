"""A tournament survives a SIGKILL mid-round: ``mafiabot run`` in its own process, killed and restarted.

The round is open and its table's game under way when the process is killed; the restarted process
resumes the game, which is still the tournament's, and when the judge ends it the round (the
tournament's only one) closes and the standings count it.
"""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from pathlib import Path
from typing import Any

from mafiabot.emulator.state import Permission
from mafiabot.emulator.testing import emulated_guild
from mafiabot.host.i18n import t
from tests.bot.processes import bot_and_store
from tests.harness import FAST_GLOBAL as FAST

PLAYERS = 10
TIMEOUT = 60


async def test_a_sigkill_mid_round_loses_nothing_and_the_tournament_finishes(tmp_path: Path) -> None:
    async with emulated_guild(members=PLAYERS + 1, config=FAST) as env:
        bot, store = await bot_and_store(env, tmp_path)
        role = env.emu.create_role(env.guild, "admins", int(Permission.MANAGE_GUILD))
        admin = env.emu.create_scripted_user("organiser", env.guild, roles=[role])
        players, judge = env.members[:PLAYERS], env.members[PLAYERS]
        try:
            await bot.start()
            announced = await admin.run_command(env.text, "mafia tournament new", title="Night Cup", ruleset="fiim",
                                                rounds=1, tables=1, timeout=TIMEOUT)
            assert not announced.ephemeral, announced.content
            for person in players:
                await person.run_command(env.text, "mafia tournament join", timeout=TIMEOUT)
            seated = await admin.run_command(env.text, "mafia tournament seat", timeout=TIMEOUT)
            await seated.wait_final(timeout=TIMEOUT)
            channels: dict[str, Any] = {"text-1": env.text, "voice-1": env.voice, "judge-1": judge}
            opened = await admin.run_command(env.text, "mafia tournament round", timeout=TIMEOUT, **channels)
            assert not opened.ephemeral, opened.content
            for person in [*players, judge]:
                person.join_voice(env.voice)
            lobby = (await judge.run_command(env.text, "mafia new", timeout=TIMEOUT)).message
            assert lobby is not None
            join = lobby.components[0]["components"][0]["custom_id"]
            for person in players:
                await person.press(lobby, join, timeout=TIMEOUT)
            await judge.run_command(env.text, "mafia start", timeout=TIMEOUT)
            (game,) = await store.open_games(lambda guild_id: guild_id == env.guild.id)
            (tm,) = await store.guild_tournaments(env.guild.id)
            assert tm.round_tables[0].game_id == game.id
            assert [s.user_id for s in sorted(game.seats, key=lambda s: s.seat)] == [
                p.user_id for p in sorted(tm.schedule, key=lambda p: p.seat)]

            back = t("en", "game.resumed")
            before = sum(1 for m in env.emu.messages(env.text) if back in m.content)
            await bot.kill()
            await bot.start()
            await env.emu.wait_for(lambda: sum(1 for m in env.emu.messages(env.text) if back in m.content) > before,
                                   TIMEOUT)
            ended = await judge.run_command(env.text, "mafia draw", timeout=TIMEOUT)
            assert ended.content == t("en", "judge.done.draw"), ended.content
            over = t("en", "tournament.finished", name="Night Cup", round=1)
            await env.emu.wait_for(lambda: any(over in m.content for m in env.emu.messages(env.text)), TIMEOUT)
            exported = await admin.run_command(env.text, "mafia tournament export", timeout=TIMEOUT)
            assert exported.message is not None
            files = {f.filename: f.data.decode("utf-8") for f in exported.message.attachments}
            lines = list(csv.DictReader(io.StringIO(files["standings.csv"])))
            # A draw: nobody wins; every player has FIIM 7's auto-bonus of 0.3 for the one game.
            assert {int(line["player"]): (Decimal(line["total"]), int(line["games"])) for line in lines} == {
                p.id: (Decimal("0.3"), 1) for p in players}
            finished = await store.get_tournament(tm.id)
            assert finished is not None
            assert finished.status == "finished"
            assert (await store.get_game(game.id)).status == "finished"
        finally:
            await bot.stop()
            await store.close()
