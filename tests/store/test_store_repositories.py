"""The store as repositories: each concern works on its own over one database, and ``Store`` answers for all."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime

import pytest

from engine import CLASSIC, FIIM, Ruleset, from_mapping
from mafiabot.core.errors import ChannelTakenError, StoreError
from mafiabot.core.records import SeatInfo, StoredRuleset, stored_ruleset
from mafiabot.core.rulesets import parse_ruleset
from mafiabot.store import Store
from mafiabot.store.db import Database, Repository
from mafiabot.store.guild_rulesets import GuildRulesetRepo
from mafiabot.store.history import HistoryRepo
from mafiabot.store.log import GameLogRepo
from mafiabot.store.mutes import MuteLedgerRepo
from mafiabot.store.settings import SettingsRepo
from mafiabot.store.tables import TableRepo

T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
GUILD = 987_654_321_098_765_432
REPOSITORIES = (GameLogRepo, TableRepo, MuteLedgerRepo, SettingsRepo, GuildRulesetRepo, HistoryRepo)


def _public_methods(repo: type[Repository]) -> list[str]:
    return [name for name, _ in inspect.getmembers(repo, inspect.iscoroutinefunction) if not name.startswith("_")]


@pytest.mark.parametrize("repo", REPOSITORIES, ids=lambda r: r.__name__)
def test_the_store_answers_every_method_of_every_repository(repo: type[Repository]) -> None:
    names = _public_methods(repo)
    assert names
    for name in names:
        assert getattr(Store, name).__wrapped__ is getattr(repo, name), name


def test_each_method_belongs_to_one_repository() -> None:
    names = [name for repo in REPOSITORIES for name in _public_methods(repo)]
    assert len(names) == len(set(names))


async def test_repositories_share_one_database_without_the_store(store_url: str) -> None:
    db = await Database.open(store_url)
    try:
        log, tables, mutes = GameLogRepo(db), TableRepo(db), MuteLedgerRepo(db)
        lobby = await tables.open_lobby(guild_id=GUILD, channel_id=1, voice_channel_id=2, judge_id=3, ruleset=FIIM)
        with pytest.raises(ChannelTakenError):
            await tables.open_lobby(guild_id=GUILD, channel_id=1, voice_channel_id=4, judge_id=3, ruleset=FIIM)
        assert await tables.start_lobby(lobby)
        await log.seat_players(lobby, [SeatInfo(1, 21, "Ann"), SeatInfo(2, 22, "Bob")], muting_in=GUILD, muting=[22])
        assert [(m.user_id, m.game_id) for m in await mutes.owed_mutes(GUILD)] == [(22, lobby)]
        assert [(g.id, g.rules()) for g in await log.open_games()] == [(lobby, FIIM)]
    finally:
        await db.close()
    with pytest.raises(StoreError, match="closed"):
        await mutes.owed_mutes()


async def test_the_store_and_its_repositories_are_one_database(store: Store) -> None:
    game_id = await store.log.create_game(guild_id=GUILD, channel_id=1, ruleset=CLASSIC, created_at=T0)
    await store.log.append(game_id, 1, {"type": "Timeout"}, [{"type": "Resumed"}], actor_id=None, at=T0)
    assert [(c.seq, c.events) for c in await store.load_log(game_id)] == [(1, [{"type": "Resumed"}])]
    await store.mutes.record_mutes(GUILD, [5], game_id, at=T0)
    assert [m.user_id for m in await store.owed_mutes(GUILD)] == [5]


CLUB = b'name = "Our Club"\nbase = "fiim"\nspeech_seconds = 50\n'


@pytest.mark.parametrize("rules", [CLASSIC, FIIM, from_mapping({"base": "fiim", "name": "club"})])
def test_a_stored_ruleset_reads_back_as_the_engine_reads_it(rules: Ruleset) -> None:
    data = rules.to_dict()
    assert stored_ruleset(data) == from_mapping(data) == rules


async def test_an_uploaded_ruleset_reads_back_as_it_was_parsed(store: Store) -> None:
    club = parse_ruleset(CLUB, default_name="club")
    assert club == stored_ruleset({"name": "Our Club", "base": "fiim", "speech_seconds": 50})
    await store.save_guild_ruleset(
        guild_id=GUILD, key="our club", ruleset=club, source=CLUB.decode(), uploaded_by=7, limit=5, at=T0,
    )
    stored = await store.rulesets.get_guild_ruleset(GUILD, "our club")
    assert isinstance(stored, StoredRuleset)
    assert stored.ruleset == club
