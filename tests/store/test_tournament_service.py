"""The tournament service of the core over the real store, on SQLite and PostgreSQL.

The Discord side is a stand-in ``RoundPlaces`` that notes which channels it was asked to make and
delete: what these tests check is that a refusal makes nothing and a lost race leaves nothing made.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from mafiabot.core.records import MadeChannels, StoredTournament
from mafiabot.core.rulesets import RulesetCatalog
from mafiabot.core.tournament_service import MadeTable, TournamentService
from mafiabot.core.tournaments import TournamentError
from mafiabot.store import Store

GUILD = 987_654_321_098_765_432
ORGANISER = 876_543_210_987_654_321
PLAYERS = [700_000_000_000_000_000 + i for i in range(1, 21)]
TEXT, VOICE = 555_000_000_000_000_001, 555_000_000_000_000_002
MADE = 556_000_000_000_000_000


class Places:
    """The Discord side as a ledger: every table's channels exist; making and deleting are noted."""

    def __init__(self, *, may_make: bool = True) -> None:
        self.allowed = may_make
        self.made: list[int] = []
        self.removed: list[int] = []

    def check(self, guild_id: int, text_id: int, voice_id: int) -> None:
        """Every pair may hold a table here."""

    def kept(self, guild_id: int, made: MadeChannels) -> tuple[int | None, int | None]:
        return None, None

    def may_make(self, guild_id: int) -> bool:
        return self.allowed

    async def make(self, guild_id: int, near_channel_id: int | None, tournament: str,
                   wanted: Sequence[tuple[int, int | None, int | None]]) -> tuple[list[MadeTable], list[int]]:
        tables: list[MadeTable] = []
        fresh: list[int] = []
        for n, _text, _voice in wanted:
            text, voice = MADE + len(self.made) + 1, MADE + len(self.made) + 2
            self.made += [text, voice]
            fresh += [text, voice]
            tables.append((n, text, voice))
        return tables, fresh

    async def remove(self, guild_id: int, channel_ids: Sequence[int]) -> None:
        self.removed += channel_ids

    async def delete(self, guild_id: int, channel_id: int) -> bool:
        self.removed.append(channel_id)
        return True


def service(store: Store, places: Places) -> TournamentService:
    return TournamentService(records=store.tournaments, games=store, rulesets=RulesetCatalog(store), places=places,
                             owns_guild=lambda _guild: True, seed=2**40 + 7)


async def seated(tournaments: TournamentService) -> StoredTournament:
    """A two-table fiim tournament with twenty players, seated."""
    tm = await tournaments.create(guild_id=GUILD, organiser_id=ORGANISER, title=" Autumn Cup ", ruleset="fiim",
                                  rounds=2, tables=2, scoring=None, finals=None, finals_weight=None)
    assert tm.name == "Autumn Cup"
    assert await tournaments.register(tm.id, [(user, f"P{i}") for i, user in enumerate(PLAYERS)]) == (PLAYERS, [])
    await tournaments.seat(await tournaments.tournament(tm.id))
    return await tournaments.tournament(tm.id)


async def nothing() -> None:
    """No interaction to defer."""


async def test_a_refused_round_makes_no_channel(store: Store) -> None:
    places = Places(may_make=False)
    tournaments = service(store, places)
    tm = await seated(tournaments)
    with pytest.raises(TournamentError) as half:
        await tournaments.prepare_round(tm, [(TEXT, None, None)], near_channel_id=TEXT, slow=nothing)
    assert (half.value.code, half.value.data) == ("tournament.channel_pair", {"table": 1})
    with pytest.raises(TournamentError) as refused:
        await tournaments.prepare_round(tm, [(TEXT, VOICE, None)], near_channel_id=TEXT, slow=nothing)
    assert (refused.value.code, refused.value.data) == ("tournament.no_manage_channels", {"tables": "2"})
    assert places.made == []
    assert (await tournaments.tournament(tm.id)).status == "seated"


async def test_a_round_lost_to_another_process_deletes_the_channels_made_for_it(store: Store) -> None:
    places = Places()
    tournaments = service(store, places)
    tm = await seated(tournaments)
    first = await tournaments.prepare_round(tm, [(TEXT, VOICE, ORGANISER)], near_channel_id=TEXT, slow=nothing)
    second = await tournaments.prepare_round(tm, [(TEXT, VOICE, None)], near_channel_id=TEXT, slow=nothing)
    opened = await tournaments.open_round(tm, first)
    assert (opened.status, opened.current_round) == ("playing", 1)
    assert [(rt.table, rt.channel_id, rt.judge_id) for rt in opened.round_tables] == [
        (1, TEXT, ORGANISER), (2, MADE + 1, None)]
    assert opened.made_channels == (MadeChannels(2, MADE + 1, MADE + 2),)
    with pytest.raises(TournamentError) as lost:
        await tournaments.open_round(tm, second)
    assert (lost.value.code, lost.value.data) == ("tournament.round_open", {"round": 1})
    assert places.removed == second.fresh == [MADE + 3, MADE + 4]
