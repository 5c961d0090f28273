"""A whole Saturday: 40 players, 4 tables, 10 rounds, the tables under a category, a SIGKILL mid-round.

``mafiabot run`` in its own process. The organiser opens every round from a desk channel in the
tournament's category with no channels given: the bot makes each table's text and voice channel in
round 1 and plays every later round in the same ones, so the category never holds more than its
desk and one pair per table (Discord's limit is 50; a tournament made new channels every round
would be refused in round 7). Each game is ended at once by its judge (removals that give either
side the win, or a draw, with extra points), the quickest a game can be while still scoring
something; in round 5 the process is killed while all four games are under way and restarted. The
standings the bot exports equal the scoring version's over the games as the store keeps them, and
the organiser removes the channels at the end.
"""

from __future__ import annotations

import asyncio
import csv
import io
from decimal import Decimal
from pathlib import Path
from typing import Any

from engine import Game, Team, command_from_data, from_mapping
from engine.scoring import FIIM_LATEST, TournamentGame, standings, tournament_game
from mafiabot.core import tournaments as tn
from mafiabot.emulator.rest import MAX_CATEGORY_CHANNELS
from mafiabot.emulator.state import BOT_PERMISSIONS, Channel, ChannelType, Permission
from mafiabot.emulator.testing import Table as EmuTable
from mafiabot.emulator.testing import assert_no_spec_violations, emulated_guild
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.i18n import t
from mafiabot.store import Store
from tests.bot.processes import BotProcess, bot_and_store
from tests.bot.test_tournament_kill import open_table
from tests.harness import RESTART_AT_ONCE as FAST

PLAYERS, TABLES, ROUNDS = 40, 4, 10
KILL_ROUND = 5
TIMEOUT = 60
CUP = "Saturday Cup"


def in_category(env: EmuTable, category: Channel) -> list[Channel]:
    """The channels the category holds, in the emulator's state."""
    channels = (env.emu.world.channels[c] for c in env.guild.channels)
    return [c for c in channels if c.parent_id == category.id]


async def replayed(store: Store, game_id: int) -> Game:
    stored = await store.get_game(game_id)
    return Game.replay(from_mapping(stored.ruleset), [command_from_data(c.command) for c in stored.log])


async def end_game(store: Store, judge: ScriptedUser, text: Channel, game_id: int, way: int) -> None:
    """The judge ends the game: red wins (the three black removed), a draw, or black wins (four red removed)."""
    game = await replayed(store, game_id)
    if way == 1:
        reply = await judge.run_command(text, "mafia draw", timeout=TIMEOUT)
        assert reply.content == t("en", "judge.done.draw"), reply.content
        return
    team = Team.BLACK if way == 0 else Team.RED
    seats = [s for s in range(1, 11) if game.state.role(s).team is team][:3 if way == 0 else 4]
    for seat in seats:
        reply = await judge.run_command(text, "mafia remove", seat=seat, reason="a Saturday", timeout=TIMEOUT)
        assert " is disqualified." in reply.content, reply.content


async def extra_points(judge: ScriptedUser, text: Channel, round_number: int, table: int) -> None:
    seat = (round_number * table) % 10 + 1
    value = "0.25" if (round_number + table) % 2 else "-0.3"
    reply = await judge.run_command(text, "mafia points", seat=seat, value=value, reason="a read", timeout=TIMEOUT)
    assert reply.content.startswith("Extra points for "), reply.content


async def resumed_everywhere(env: EmuTable, bot: BotProcess, texts: list[Channel]) -> None:
    """SIGKILL the process and start it again; wait until every table says its host is back."""
    back = t("en", "game.resumed")

    def count(text: Channel) -> int:
        return sum(1 for m in env.emu.messages(text) if back in m.content)

    before = [count(text) for text in texts]
    await bot.kill()
    await bot.start()
    await env.emu.wait_for(lambda: all(count(text) > n for text, n in zip(texts, before, strict=True)), TIMEOUT)


async def test_ten_rounds_of_four_tables_under_a_category_with_a_sigkill_play_to_the_end(tmp_path: Path) -> None:
    async with emulated_guild(members=PLAYERS + TABLES, config=FAST,
                              bot_permissions=BOT_PERMISSIONS | int(Permission.MANAGE_CHANNELS)) as env:
        emu, guild = env.emu, env.guild
        category = emu.create_channel(guild, CUP, ChannelType.GUILD_CATEGORY)
        desk = emu.create_channel(guild, "organisers-desk", parent=category)
        bot, store = await bot_and_store(env, tmp_path)
        role = emu.create_role(guild, "admins", int(Permission.MANAGE_GUILD))
        admin = emu.create_scripted_user("organiser", guild, roles=[role])
        players, judges = env.members[:PLAYERS], env.members[PLAYERS:]
        by_id = {p.id: p for p in players}
        try:
            await bot.start()
            announced = await admin.run_command(desk, "mafia tournament new", title=CUP, ruleset="fiim",
                                                rounds=ROUNDS, tables=TABLES, timeout=TIMEOUT)
            assert not announced.ephemeral, announced.content
            for person in players:
                await person.run_command(desk, "mafia tournament join", timeout=TIMEOUT)
            await (await admin.run_command(desk, "mafia tournament seat", timeout=TIMEOUT)).wait_final(TIMEOUT)
            judged: dict[str, Any] = {f"judge-{n}": judges[n - 1] for n in range(1, TABLES + 1)}
            pairs: set[tuple[int, int]] = set()
            for number in range(1, ROUNDS + 1):
                opened = await admin.run_command(desk, "mafia tournament round", timeout=TIMEOUT, **judged)
                await opened.wait_final(TIMEOUT)
                assert t("en", "tournament.round.title", name=CUP, round=number, rounds=ROUNDS) in opened.content
                (tm,) = await store.guild_tournaments(guild.id)
                tables = tn.current_tables(tm)
                pairs |= {(rt.channel_id, rt.voice_channel_id) for rt in tables}
                assert len(pairs) == TABLES  # the same channels every round
                assert len(in_category(env, category)) == 1 + 2 * TABLES <= MAX_CATEGORY_CHANNELS
                texts = [emu.world.channels[rt.channel_id] for rt in tables]
                voices = [emu.world.channels[rt.voice_channel_id] for rt in tables]
                seated = [[by_id[u] for u in tn.table_seats(tm, number, rt.table)] for rt in tables]
                await asyncio.gather(*(open_table(env, texts[i], voices[i], judges[i], seated[i])
                                       for i in range(TABLES)))
                linked = await store.get_tournament(tm.id)
                assert linked is not None
                games = [rt.game_id for rt in tn.current_tables(linked)]
                game_ids = [g for g in games if g is not None]
                assert len(game_ids) == TABLES
                await asyncio.gather(*(extra_points(judges[i], texts[i], number, i + 1) for i in range(TABLES)))
                if number == KILL_ROUND:
                    assert [(await store.get_game(g)).status for g in game_ids] == ["open"] * TABLES
                    await resumed_everywhere(env, bot, texts)
                await asyncio.gather(*(end_game(store, judges[i], texts[i], game_ids[i], (number + i) % 3)
                                       for i in range(TABLES)))
                key = "tournament.finished" if number == ROUNDS else "tournament.round.closed"
                done = t("en", key, name=CUP, round=number)
                await emu.wait_for(lambda: all(any(done in m.content for m in emu.messages(text))  # noqa: B023
                                               for text in texts), TIMEOUT)  # noqa: B023
                assert len(in_category(env, category)) == 1 + 2 * TABLES
            assert bot.starts == 2

            exported = await admin.run_command(desk, "mafia tournament export", timeout=TIMEOUT)
            assert exported.message is not None
            files = {f.filename: f.data.decode("utf-8") for f in exported.message.attachments}
            lines = list(csv.DictReader(io.StringIO(files["standings.csv"])))
            finished = await store.get_tournament(tm.id)
            assert finished is not None
            assert finished.status == "finished"
            scored: list[TournamentGame] = []
            for rt in finished.round_tables:
                assert rt.game_id is not None
                stored = await store.get_game(rt.game_id)
                assert stored.status == "finished"
                seats = [s.user_id for s in sorted(stored.seats, key=lambda s: s.seat)]
                assert seats == list(tn.table_seats(finished, rt.round, rt.table))
                game = await replayed(store, rt.game_id)
                assert game.state.outcome is not None
                scored.append(tournament_game(game.state, FIIM_LATEST, round_number=rt.round, players=seats))
            assert len(scored) == ROUNDS * TABLES
            expected = {r.player: (r.total, r.games, r.place) for r in standings(scored, version=FIIM_LATEST)}
            assert {int(line["player"]): (Decimal(line["total"]), int(line["games"]), int(line["place"]))
                    for line in lines} == expected
            assert set(expected) == {p.id for p in players}
            assert len({total for total, _, _ in expected.values()}) > 3  # the games scored differently

            removed = await admin.run_command(desk, "mafia tournament remove-channels", timeout=TIMEOUT)
            assert (await removed.wait_final(TIMEOUT)).content == t(
                "en", "tournament.channels_removed", count=TABLES, tables="1, 2, 3, 4")
            assert in_category(env, category) == [desk]
            assert_no_spec_violations(emu)
        finally:
            await bot.stop()
            await store.close()
