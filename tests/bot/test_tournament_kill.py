"""A tournament survives a SIGKILL mid-round: ``mafiabot run`` in its own process, killed and restarted.

The round is open and its table's game under way when the process is killed; the restarted process
resumes the game, which is still the tournament's, and when the judge ends it the round (the
tournament's only one) closes and the standings count it. Then a round of two tables at once in one
guild, killed while both games run, both played to their end by the scripted players of the crash
tests: the standings are those of the games the store keeps.
"""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import io
from decimal import Decimal
from pathlib import Path
from typing import Any

from engine import Game, command_from_data, from_mapping
from engine.ruleset import CLASSIC
from engine.scoring import FIIM_LATEST, standings, tournament_game
from mafiabot.core import tournaments as tn
from mafiabot.emulator.state import ChannelType, Permission
from mafiabot.emulator.testing import Table as EmuTable
from mafiabot.emulator.testing import emulated_guild
from mafiabot.host.i18n import t
from mafiabot.store import Store
from tests.bot.processes import BotProcess, bot_and_store
from tests.bot.test_kill import RACED, VOTE_WINDOW, Player
from tests.harness import RESTART_AT_ONCE as FAST

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


class TablePlayer(Player):
    """``Player`` at one table of the round: its channels, its judge, and its seats as the schedule dealt them."""

    def __init__(self, env: EmuTable, store: Store, bot: BotProcess, kill_at: dict[str, int],
                 game_id: int, games: list[int]) -> None:
        super().__init__(env, store, bot, kill_at)
        self.game_id = game_id
        self.games = games
        self.statuses_at_kill: list[str] = []

    async def maybe_kill(self, kind: str) -> bool:
        if self.kill_at.get(kind) == self.actions[kind] + 1:
            self.statuses_at_kill = [(await self.store.get_game(g)).status for g in self.games]
        return await super().maybe_kill(kind)


async def open_table(env: EmuTable, text: Any, voice: Any, judge: Any, seats: list[Any]) -> None:
    """The table's people go to its voice channel; its judge opens it, they join, the judge starts it."""
    for person in [*seats, judge]:
        person.join_voice(voice)
    busy = {t("en", "error.lobby.channel_busy"), t("en", "error.lobby.voice_busy", voice=f"<#{voice.id}>")}
    deadline = asyncio.get_running_loop().time() + TIMEOUT
    while True:
        lobby = (await judge.run_command(text, "mafia new", timeout=TIMEOUT)).message
        assert lobby is not None
        joins = [c["custom_id"] for row in lobby.components for c in row["components"] if ":join:" in c["custom_id"]]
        if joins or lobby.content not in busy or asyncio.get_running_loop().time() > deadline:
            break
        # The last round's table leaves its channels once its mutes are lifted, a moment after the
        # round's close is posted: the judge asks again once nobody in the voice channel is muted.
        await env.emu.wait_for(lambda: not any(
            env.guild.members[user].mute for user, state in env.guild.voice_states.items()
            if state.channel_id == voice.id), TIMEOUT)
    assert joins, lobby.content  # a refusal says why
    join = joins[0]
    for person in seats:
        await person.press(lobby, join, timeout=TIMEOUT)
    await judge.run_command(text, "mafia start", timeout=TIMEOUT)


async def test_a_sigkill_while_two_tables_of_a_round_play_loses_nothing(tmp_path: Path) -> None:
    async with emulated_guild(members=2 * PLAYERS + 2, config=FAST) as env:
        bot, store = await bot_and_store(env, tmp_path)
        # A tournament plays its own copy of the ruleset, without the server's timer settings: the
        # long timers are the ruleset's, so that a slow restart cannot change either game.
        long_timers = CLASSIC.replace(**RACED, vote_window_seconds=VOTE_WINDOW, night_zero_seconds=1)
        assert await store.save_guild_ruleset(guild_id=env.guild.id, key="night cup", ruleset=long_timers, source="",
                                              uploaded_by=0, limit=10) == "saved"
        role = env.emu.create_role(env.guild, "admins", int(Permission.MANAGE_GUILD))
        admin = env.emu.create_scripted_user("organiser", env.guild, roles=[role])
        players, judges = env.members[:2 * PLAYERS], env.members[2 * PLAYERS:]
        text_2 = env.emu.create_channel(env.guild, "table-2")
        voice_2 = env.emu.create_channel(env.guild, "Table 2 voice", ChannelType.GUILD_VOICE)
        places = [(env.text, env.voice), (text_2, voice_2)]
        try:
            await bot.start()
            await admin.run_command(env.text, "mafia tournament new", title="Night Cup", ruleset="night cup", rounds=1,
                                    tables=2, timeout=TIMEOUT)
            for person in players:
                await person.run_command(env.text, "mafia tournament join", timeout=TIMEOUT)
            await (await admin.run_command(env.text, "mafia tournament seat", timeout=TIMEOUT)).wait_final(TIMEOUT)
            channels: dict[str, Any] = {}
            for n, ((text, voice), judge) in enumerate(zip(places, judges, strict=True), 1):
                channels |= {f"text-{n}": text, f"voice-{n}": voice, f"judge-{n}": judge}
            opened = await admin.run_command(env.text, "mafia tournament round", timeout=TIMEOUT, **channels)
            assert not opened.ephemeral, opened.content
            (tm,) = await store.guild_tournaments(env.guild.id)
            by_id = {p.id: p for p in players}
            seated = [[by_id[u] for u in tn.table_seats(tm, 1, n)] for n in (1, 2)]
            for n, ((text, voice), judge) in enumerate(zip(places, judges, strict=True)):
                await open_table(env, text, voice, judge, seated[n])
            linked = await store.get_tournament(tm.id)
            assert linked is not None
            games = [rt.game_id for rt in linked.round_tables]
            assert None not in games
            game_ids = [g for g in games if g is not None]

            tables = [TablePlayer(dataclasses.replace(env, text=text, voice=voice, members=[*seated[n], judges[n]]),
                                  store, bot, {"speech": 3} if n == 0 else {}, game_ids[n], game_ids)
                      for n, (text, voice) in enumerate(places)]
            await asyncio.gather(*(table.play() for table in tables))
            assert bot.starts == 2
            assert tables[0].statuses_at_kill == ["open", "open"]  # both games were under way at the kill
            assert [phase for phase, _ in tables[0].phases_at_kill] == ["speeches"]

            over = t("en", "tournament.finished", name="Night Cup", round=1)
            await env.emu.wait_for(lambda: all(any(over in m.content for m in env.emu.messages(text))
                                               for text, _ in places), TIMEOUT)
            exported = await admin.run_command(env.text, "mafia tournament export", timeout=TIMEOUT)
            assert exported.message is not None
            files = {f.filename: f.data.decode("utf-8") for f in exported.message.attachments}
            lines = list(csv.DictReader(io.StringIO(files["standings.csv"])))

            # The standings of the games as the store keeps them, scored here from their logs.
            scored = []
            for n, game_id in enumerate(game_ids):
                stored = await store.get_game(game_id)
                assert stored.status == "finished"
                assert sum(e["type"] == "GameEnded" for c in stored.log for e in c.events) == 1
                seats = [s.user_id for s in sorted(stored.seats, key=lambda s: s.seat)]
                assert seats == [p.id for p in seated[n]]
                state = Game.replay(from_mapping(stored.ruleset), [command_from_data(c.command) for c in stored.log])
                assert state.state.outcome is not None
                scored.append(tournament_game(state.state, FIIM_LATEST, round_number=1, players=seats))
            expected = {r.player: (r.total, r.games) for r in standings(scored, version=FIIM_LATEST)}
            assert {int(line["player"]): (Decimal(line["total"]), int(line["games"])) for line in lines} == expected
            assert set(expected) == {p.id for p in players}
            finished = await store.get_tournament(tm.id)
            assert finished is not None
            assert finished.status == "finished"
            assert [rt.game_id for rt in finished.round_tables] == game_ids
        finally:
            await bot.stop()
            await store.close()
