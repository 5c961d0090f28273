"""Tournaments in the store, on SQLite and PostgreSQL: registration, schedule, rounds and their games."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from engine import FIIM
from mafiabot.core.records import MadeChannels, RoundTable, ScheduledSeat
from mafiabot.store import Store

T0 = datetime(2026, 12, 1, 19, 0, tzinfo=UTC)
GUILD = 987_654_321_098_765_432
ORGANISER = 876_543_210_987_654_321
PLAYERS = [700_000_000_000_000_000 + i for i in range(1, 11)]
TEXT, VOICE = 555_000_000_000_000_001, 555_000_000_000_000_002


async def _registered(store: Store) -> int:
    t = await store.create_tournament(guild_id=GUILD, name="Autumn Cup", ruleset=FIIM, scoring="fiim-7", rounds=2,
                                      tables=1, seed=2**40 + 7, organiser_id=ORGANISER, at=T0)
    for i, user in enumerate(PLAYERS):
        assert await store.tournaments.add_player(t.id, user, f"P{i + 1}", at=T0 + timedelta(seconds=i)) == "joined"
    return t.id


def _schedule() -> list[ScheduledSeat]:
    return [ScheduledSeat(r, 1, s + 1, PLAYERS[(s + r) % 10]) for r in (1, 2) for s in range(10)]


async def test_a_tournament_keeps_what_it_was_made_with(store: Store) -> None:
    tid = await _registered(store)
    t = await store.get_tournament(tid)
    assert t is not None
    assert (t.guild_id, t.name, t.ruleset_name, t.scoring, t.rounds, t.tables, t.seed, t.organiser_id) == (
        GUILD, "Autumn Cup", FIIM.name, "fiim-7", 2, 1, 2**40 + 7, ORGANISER)
    assert (t.status, t.current_round, t.created_at) == ("registration", 0, T0)
    assert t.rules() == FIIM
    assert [p.user_id for p in t.players] == PLAYERS  # in the order they joined
    assert t.players[0].name == "P1"
    assert [x.id for x in await store.guild_tournaments(GUILD)] == [tid]
    assert await store.guild_tournaments(GUILD + 1) == []
    assert await store.get_tournament(tid + 1000) is None


async def test_registration_joins_leaves_and_closes(store: Store) -> None:
    tid = await _registered(store)
    repo = store.tournaments
    assert await repo.add_player(tid, PLAYERS[0], "again") == "already"
    assert await repo.remove_player(tid, PLAYERS[0]) == "left"
    assert await repo.remove_player(tid, PLAYERS[0]) == "absent"
    assert await repo.add_player(tid, PLAYERS[0], "P1") == "joined"
    assert await repo.forbid_pair(tid, PLAYERS[3], PLAYERS[1]) is True
    assert await repo.save_schedule(tid, _schedule()) is True
    assert await repo.save_schedule(tid, _schedule()) is False  # the second close changes nothing
    assert await repo.add_player(tid, 1, "late") == "closed"
    assert await repo.remove_player(tid, PLAYERS[0]) == "closed"
    assert await repo.forbid_pair(tid, PLAYERS[0], PLAYERS[2]) is False
    t = await store.get_tournament(tid)
    assert t is not None
    assert t.status == "seated"
    assert t.forbidden == ((PLAYERS[1], PLAYERS[3]),)
    assert list(t.schedule) == _schedule()
    assert len(t.players) == 10


async def test_rounds_open_link_their_games_and_close_once(store: Store) -> None:
    tid = await _registered(store)
    repo = store.tournaments
    table = RoundTable(1, 1, TEXT, VOICE, judge_id=ORGANISER)
    assert await repo.open_round(tid, 1, [table]) is False  # not seated yet
    assert await repo.save_schedule(tid, _schedule())
    assert await repo.open_round(tid, 2, [table]) is False  # rounds go in order
    assert await repo.open_round(tid, 1, [table]) is True
    assert await repo.open_round(tid, 1, [table]) is False
    found = await repo.table_at(TEXT)
    assert found is not None
    assert (found[0].id, found[1]) == (tid, table)
    assert await repo.table_at(VOICE) is None

    game_id = await store.create_game(guild_id=GUILD, channel_id=TEXT, ruleset=FIIM, created_at=T0)
    assert await repo.link_game(tid, 1, 1, game_id) is True
    assert await repo.link_game(tid, 1, 1, game_id + 1) is False  # a table plays one game
    assert await repo.link_game(tid, 1, 2, game_id) is False  # no such table
    by_game = await repo.tournament_of_game(game_id)
    assert by_game is not None
    assert by_game.round_tables == (RoundTable(1, 1, TEXT, VOICE, ORGANISER, game_id),)
    assert await repo.tournament_of_game(game_id + 1) is None

    assert await repo.close_round(tid, 2, last=False) is False
    assert await repo.close_round(tid, 1, last=False) is True
    assert await repo.close_round(tid, 1, last=False) is False
    assert await repo.table_at(TEXT) is None  # the channel is free between rounds
    t = await store.get_tournament(tid)
    assert t is not None
    assert (t.status, t.current_round) == ("seated", 1)

    assert await repo.open_round(tid, 2, [RoundTable(2, 1, TEXT, VOICE)]) is True
    assert await repo.link_game(tid, 1, 1, game_id) is False  # the closed round takes no game
    assert await repo.close_round(tid, 2, last=True) is True
    t = await store.get_tournament(tid)
    assert t is not None
    assert (t.status, t.current_round, len(t.round_tables)) == ("finished", 2, 2)


async def test_a_lobby_that_never_started_gives_its_table_to_the_next(store: Store) -> None:
    tid = await _registered(store)
    repo = store.tournaments
    await repo.save_schedule(tid, _schedule())
    await repo.open_round(tid, 1, [RoundTable(1, 1, TEXT, VOICE)])
    first = await store.open_lobby(guild_id=GUILD, channel_id=TEXT, voice_channel_id=VOICE, judge_id=ORGANISER,
                                   ruleset=FIIM)
    assert await repo.link_game(tid, 1, 1, first, judge_id=ORGANISER) is True
    assert await repo.link_game(tid, 1, 1, first, judge_id=ORGANISER) is True  # the same lobby again
    await store.drop_lobby(first)
    second = await store.open_lobby(guild_id=GUILD, channel_id=TEXT, voice_channel_id=VOICE, judge_id=ORGANISER + 1,
                                    ruleset=FIIM)
    assert await repo.link_game(tid, 1, 1, second, judge_id=ORGANISER + 1) is True
    assert await store.start_lobby(second)
    assert await repo.link_game(tid, 1, 1, second + 100) is False  # a started game keeps its table
    t = await store.get_tournament(tid)
    assert t is not None
    assert t.round_tables[0].game_id == second
    assert t.round_tables[0].judge_id == ORGANISER + 1
    assert [x.id for x in await repo.playing_tournaments()] == [tid]


async def test_finals_keep_their_exact_weight_and_the_announcement_its_place(store: Store) -> None:
    t = await store.create_tournament(guild_id=GUILD, name="Final Cup", ruleset=FIIM, scoring="fiim-7", rounds=4,
                                      tables=1, seed=1, organiser_id=ORGANISER, at=T0, finals=2,
                                      finals_weight=Decimal("1.25"))
    assert (t.finals, t.finals_weight, t.announcement) == (2, Decimal("1.25"), None)
    await store.tournaments.set_announcement(t.id, TEXT, 2**62 + 3)  # snowflakes past 32 bits
    again = await store.get_tournament(t.id)
    assert again is not None
    assert (again.finals, str(again.finals_weight), again.announcement) == (2, "1.25", (TEXT, 2**62 + 3))
    plain = await store.get_tournament(await _registered(store))
    assert plain is not None
    assert (plain.finals, plain.finals_weight) == (0, Decimal(1))


async def test_a_roster_is_registered_in_one_write_per_batch_and_made_channels_are_remembered(store: Store) -> None:
    t = await store.create_tournament(guild_id=GUILD, name="Big Cup", ruleset=FIIM, scoring="fiim-7", rounds=2,
                                      tables=1, seed=1, organiser_id=ORGANISER, at=T0)
    repo = store.tournaments
    assert await repo.add_player(t.id, PLAYERS[0], "early", at=T0) == "joined"
    roster = [(10**17 + i, f"M{i}") for i in range(1500)]
    batch = [(PLAYERS[0], "early again"), *roster]
    added, already = await repo.add_players(t.id, batch, at=T0 + timedelta(hours=1)) or ([], [])
    assert (added, already) == ([u for u, _ in roster], [PLAYERS[0]])
    listed = await store.get_tournament(t.id)
    assert listed is not None
    assert len(listed.players) == 1501
    assert listed.players[0].name == "early"  # kept as first registered
    assert await repo.save_schedule(t.id, _schedule())
    assert await repo.add_players(t.id, [(1, "late")]) is None  # closed: nothing written
    made = [MadeChannels(1, TEXT, VOICE)]
    assert await repo.open_round(t.id, 1, [RoundTable(1, 1, TEXT, VOICE)], made)
    opened = await store.get_tournament(t.id)
    assert opened is not None
    assert opened.made_channels == tuple(made)
    await repo.forget_channels(t.id, [1])
    forgotten = await store.get_tournament(t.id)
    assert forgotten is not None
    assert forgotten.made_channels == ()
