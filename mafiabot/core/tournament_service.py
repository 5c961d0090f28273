"""A tournament's life as a service of the table core: what ``/mafia tournament`` asks, kept behind ports.

The rules of the life (what may happen next, the schedule, the standings) are ``tournaments``'s; this
service runs them against the store's rows (``TournamentRecords``, ``GameLookup``) and the Discord
side's channels (``RoundPlaces``), as ``TableManager`` runs a table's life. The cog only parses an
interaction, calls one of these, and words the answer; a refusal is a ``TournamentError``.

Every write that moves a tournament along is the store's compare-and-set, so two processes or two
clicks never both take one step: a lost race is refused as the step's own refusal.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Literal, Protocol

from mafiabot.core import tournaments as tn
from mafiabot.core.records import MadeChannels, RoundTable, ScheduledSeat, StoredGame, StoredTournament
from mafiabot.core.runtime import FixedSeats, new_seed
from mafiabot.core.tournaments import TournamentError

if TYPE_CHECKING:
    from engine import Ruleset, Standing
    from mafiabot.core.ports import RulesetLookup
    from mafiabot.core.seating import Schedule

JoinOutcome = Literal["joined", "already", "closed"]
LeaveOutcome = Literal["left", "absent", "closed"]

GivenTable = tuple[int | None, int | None, int | None]
"""One table as the organiser named it: its text channel, its voice channel, its judge (ids; None: not named)."""
MadeTable = tuple[int, int, int]
"""A table number and the text and voice channel the bot made for it."""


class TournamentRecords(Protocol):
    """The tournaments' rows (the store's ``TournamentRepo``): each step a compare-and-set on the status."""

    async def create_tournament(
        self, *, guild_id: int, name: str, ruleset: Ruleset, scoring: str, rounds: int, tables: int, seed: int,
        organiser_id: int, finals: int = 0, finals_weight: Decimal = ...,
    ) -> StoredTournament:
        """A new tournament, open for registration."""

    async def set_announcement(self, tournament_id: int, channel_id: int, message_id: int) -> None:
        """Where the registration announcement is."""

    async def set_site_hidden_rounds(self, tournament_id: int, rounds: int) -> None:
        """Keep the last ``rounds`` rounds' results off the club's pages until the tournament ends."""

    async def get_tournament(self, tournament_id: int) -> StoredTournament | None:
        """One tournament with everything about it."""

    async def guild_tournaments(self, guild_id: int) -> list[StoredTournament]:
        """A server's tournaments, newest first."""

    async def add_player(self, tournament_id: int, user_id: int, name: str) -> JoinOutcome:
        """Register a player; ``closed`` once registration is over."""

    async def add_players(
        self, tournament_id: int, players: Sequence[tuple[int, str]],
    ) -> tuple[list[int], list[int]] | None:
        """Register many players at once: (added, already listed); None once registration is over."""

    async def remove_player(self, tournament_id: int, user_id: int) -> LeaveOutcome:
        """Take a player off the list; ``closed`` once registration is over."""

    async def forbid_pair(self, tournament_id: int, a: int, b: int) -> bool:
        """Keep two players apart; False once registration is over."""

    async def save_schedule(self, tournament_id: int, seats: Sequence[ScheduledSeat]) -> bool:
        """Close registration and keep the schedule; False when it was already closed."""

    async def open_round(self, tournament_id: int, round_number: int, tables: Sequence[RoundTable],
                         made: Sequence[MadeChannels] = ()) -> bool:
        """Open a round at its tables; False unless the round before it is the last one closed."""

    async def forget_channels(self, tournament_id: int, tables: Sequence[int]) -> None:
        """Forget the made channels of ``tables`` once they are deleted."""

    async def link_game(self, tournament_id: int, round_number: int, table: int, game_id: int,
                        judge_id: int | None = None) -> bool:
        """Bind a table's game to the table; False when the round is closed or the table has one."""

    async def close_round(self, tournament_id: int, round_number: int, *, last: bool) -> bool:
        """Close the open round; False if it was not open."""

    async def table_at(self, channel_id: int) -> tuple[StoredTournament, RoundTable] | None:
        """The tournament table an open round plays in a text channel, if one does."""

    async def playing_tournaments(self) -> list[StoredTournament]:
        """Every tournament with a round open."""

    async def tournament_of_game(self, game_id: int) -> StoredTournament | None:
        """The tournament a game was played for, if any."""


class GameLookup(Protocol):
    """The stored games a tournament's tables played (the store's game log)."""

    async def get_game(self, game_id: int) -> StoredGame:
        """A game with its seats and its log."""


class RoundPlaces(Protocol):
    """The channels a round's tables play in, on the Discord side."""

    def check(self, guild_id: int, text_id: int, voice_id: int) -> None:
        """Refuse a pair a table cannot live in (``TableError``, as for any table)."""

    def kept(self, guild_id: int, made: MadeChannels) -> tuple[int | None, int | None]:
        """The channels made for a table in an earlier round that still exist (None for each one gone)."""

    def may_make(self, guild_id: int) -> bool:
        """Whether the bot may make channels on the server (Manage Channels)."""

    async def make(
        self, guild_id: int, near_channel_id: int | None, tournament: str,
        wanted: Sequence[tuple[int, int | None, int | None]],
    ) -> tuple[list[MadeTable], list[int]]:
        """Each wanted table's pair, its kept channels reused and the missing made; (tables, channels made).

        All or nothing: on Discord's refusal the channels made are deleted and a ``TournamentError``
        says why.
        """

    async def remove(self, guild_id: int, channel_ids: Sequence[int]) -> None:
        """Delete channels made for a round that did not open."""

    async def delete(self, guild_id: int, channel_id: int) -> bool:
        """Delete one channel the bot made; True when it is gone (already, or now)."""


@dataclass(frozen=True, slots=True)
class TournamentPlace:
    """A channel that holds a table of an open round: its seats, its rules, its voice channel, its judge."""

    fixed: FixedSeats
    ruleset: Ruleset
    voice_channel_id: int
    judge_id: int | None


@dataclass(frozen=True, slots=True)
class PreparedRound:
    """A round about to open: its number, its tables, and the channels made for it (deleted if it does not)."""

    number: int
    tables: list[RoundTable]
    made: list[MadeTable]
    fresh: list[int]


@dataclass(frozen=True, slots=True)
class ClosedRound:
    """A round whose last game ended: the tournament as the round played it, as it is now, and its standings."""

    played: StoredTournament
    closed: StoredTournament
    standings: list[Standing]
    last: bool


class TournamentService:
    """Runs every tournament of this bot process: its store rows, its games, the channels of its rounds."""

    def __init__(
        self, *, records: TournamentRecords, games: GameLookup, rulesets: RulesetLookup, places: RoundPlaces,
        owns_guild: Callable[[int], bool], seed: int | None = None,
    ) -> None:
        self._records = records
        self._games = games
        self._rulesets = rulesets
        self._places = places
        self._owns_guild = owns_guild
        self._seed = seed
        """The host's fixed seed (reproducible demos and tests); None: a fresh seed per tournament."""

    # -- which tournament ------------------------------------------------------------------------

    async def newest(self, guild_id: int) -> StoredTournament | None:
        """The server's newest tournament: the one its commands are about."""
        found = await self._records.guild_tournaments(guild_id)
        return found[0] if found else None

    async def current(self, guild_id: int) -> StoredTournament:
        """The newest tournament; ``tournament.none`` when the server never had one."""
        tm = await self.newest(guild_id)
        if tm is None:
            raise TournamentError("tournament.none")
        return tm

    async def organised(self, guild_id: int, user_id: int, admin: Callable[[], Awaitable[bool]]) -> StoredTournament:
        """The newest tournament, for its organiser or one who runs tournaments (``admin``) alone."""
        tm = await self.current(guild_id)
        tn.check_organiser(tm, user_id, admin=await admin())
        return tm

    async def tournament(self, tournament_id: int) -> StoredTournament:
        """One tournament as it now is; ``tournament.none`` if it is gone."""
        tm = await self._records.get_tournament(tournament_id)
        if tm is None:
            raise TournamentError("tournament.none")
        return tm

    async def announced(self, tournament_id: int) -> StoredTournament | None:
        """The tournament, if its announcement is known (to show the list on it)."""
        tm = await self._records.get_tournament(tournament_id)
        return tm if tm is not None and tm.announcement is not None else None

    # -- registration ----------------------------------------------------------------------------

    async def create(
        self, *, guild_id: int, organiser_id: int, title: str, ruleset: str, rounds: int, tables: int,
        scoring: str | None, finals: int | None, finals_weight: str | None,
    ) -> StoredTournament:
        """A new tournament open for registration, once the server's last one is finished and the sizes are sound."""
        current = await self.newest(guild_id)
        if current is not None and current.status != tn.FINISHED:
            raise TournamentError("tournament.active", name=current.name)
        named = await self._rulesets.find(guild_id, ruleset)
        if named is None:
            raise TournamentError("tournament.unknown_ruleset", ruleset=ruleset)
        version = tn.check_new(name=title, rounds=rounds, tables=tables, scoring=scoring, ruleset=named.ruleset)
        final_rounds, weight = tn.check_finals(finals=finals, weight=finals_weight, rounds=rounds)
        return await self._records.create_tournament(
            guild_id=guild_id, name=title.strip(), ruleset=named.ruleset, scoring=version.name, rounds=rounds,
            tables=tables, seed=self._seed if self._seed is not None else new_seed(), organiser_id=organiser_id,
            finals=final_rounds, finals_weight=weight,
        )

    async def remember_announcement(self, tournament_id: int, channel_id: int, message_id: int) -> None:
        """Remember the announcement, so closing registration can take its buttons off."""
        await self._records.set_announcement(tournament_id, channel_id, message_id)

    async def registration(self, tournament_id: int, guild_id: int | None) -> StoredTournament:
        """The tournament an announcement's button is of, while it registers."""
        tm = await self._records.get_tournament(tournament_id)
        if tm is None or tm.guild_id != guild_id:
            raise TournamentError("tournament.none")
        tn.check_registration(tm)
        return tm

    async def join(self, tournament_id: int, user_id: int, name: str) -> JoinOutcome:
        """Register a player: ``joined`` or ``already``; ``tournament.closed`` once registration is over."""
        outcome = await self._records.add_player(tournament_id, user_id, name)
        if outcome == "closed":
            raise TournamentError("tournament.closed")
        return outcome

    async def leave(self, tournament_id: int, user_id: int) -> LeaveOutcome:
        """Take a player off the list: ``left`` or ``absent``; ``tournament.closed`` once registration is over."""
        outcome = await self._records.remove_player(tournament_id, user_id)
        if outcome == "closed":
            raise TournamentError("tournament.closed")
        return outcome

    async def register(self, tournament_id: int, batch: Sequence[tuple[int, str]]) -> tuple[list[int], list[int]]:
        """Register one batch of players in one write: (added, already listed)."""
        if not batch:
            return [], []
        written = await self._records.add_players(tournament_id, batch)
        if written is None:
            raise TournamentError("tournament.closed")
        return written

    async def hide_on_site(self, tm: StoredTournament, rounds: int) -> StoredTournament:
        """Keep the last ``rounds`` rounds' results off the club's pages until the tournament ends (0: show all).

        Raises:
            TournamentError: ``tournament.site_hide`` (not from 0 to the tournament's rounds).
        """
        if not 0 <= rounds <= tm.rounds:
            raise TournamentError("tournament.site_hide", rounds=tm.rounds)
        await self._records.set_site_hidden_rounds(tm.id, rounds)
        return await self.tournament(tm.id)

    async def forbid(self, tm: StoredTournament, first: int, second: int) -> None:
        """Keep two registered players apart in the schedule."""
        tn.check_registration(tm)
        if first == second:
            raise TournamentError("tournament.self_pair")
        registered = {p.user_id for p in tm.players}
        for member in (first, second):
            if member not in registered:
                raise TournamentError("tournament.not_registered", player=f"<@{member}>")
        if not await self._records.forbid_pair(tm.id, first, second):
            raise TournamentError("tournament.closed")

    async def seat(self, tm: StoredTournament) -> Schedule:
        """Close registration with the schedule made from the stored seed, and keep it."""
        # The search takes a second or more: it must not hold the event loop.
        schedule = await asyncio.to_thread(tn.make_seating, tm)
        if not await self._records.save_schedule(tm.id, tn.seats_of(schedule)):
            raise TournamentError("tournament.closed")
        return schedule

    # -- rounds ----------------------------------------------------------------------------------

    async def prepare_round(
        self, tm: StoredTournament, given: Sequence[GivenTable], *, near_channel_id: int | None,
        slow: Callable[[], Awaitable[None]],
    ) -> PreparedRound:
        """The next round's tables at the channels given, with the bot's own for each table given none.

        A table keeps the channels the bot made for it in an earlier round while they exist, so a
        tournament of any length holds one pair per table; a deleted one is made again, beside the
        channel the command was typed in (``near_channel_id``). The round is checked as it would be
        first, so a refusal makes nothing. ``slow`` is told before channels are made (they take longer
        than an answer may wait).
        """
        number = tn.next_round(tm)
        self._pairs(tm.guild_id, given, check=True)
        filled = [*given, *[(None, None, None)] * (tm.tables - len(given))]  # a table not named is given none
        made, fresh = await self._make_channels(tm, number, filled, near_channel_id, slow)
        pairs, judges = self._pairs(tm.guild_id, filled, check=False)
        return PreparedRound(number, tn.round_tables(tm, number, pairs, judges), made, fresh)

    async def open_round(self, tm: StoredTournament, prepared: PreparedRound) -> StoredTournament:
        """Open the prepared round; the tournament as it now is. A lost race deletes the channels made for it."""
        remembered = [MadeChannels(n, text, voice) for n, text, voice in prepared.made]
        if not await self._records.open_round(tm.id, prepared.number, prepared.tables, remembered):
            await self._places.remove(tm.guild_id, prepared.fresh)
            raise TournamentError("tournament.round_open", round=prepared.number)
        return await self.tournament(tm.id)

    def _pairs(
        self, guild_id: int, given: Sequence[GivenTable], *, check: bool,
    ) -> tuple[list[tuple[int, int]], list[int | None]]:
        """The (text, voice) and the judge of each table given, in table order; half a pair is refused.

        ``check``: whether each pair is one a table may live in (the organiser's; the bot's own are).
        """
        pairs: list[tuple[int, int]] = []
        judges: list[int | None] = []
        for number, (text, voice, judge) in enumerate(given, 1):
            if text is None and voice is None:
                continue
            if text is None or voice is None:
                raise TournamentError("tournament.channel_pair", table=number)
            if check:
                self._places.check(guild_id, text, voice)
            pairs.append((text, voice))
            judges.append(judge)
        return pairs, judges

    async def _make_channels(
        self, tm: StoredTournament, number: int, given: list[GivenTable], near_channel_id: int | None,
        slow: Callable[[], Awaitable[None]],
    ) -> tuple[list[MadeTable], list[int]]:
        """Fill each table of ``given`` named no channels with the bot's own: (tables made now, channels made)."""
        missing = [n for n in range(1, tm.tables + 1) if given[n - 1][0] is None and given[n - 1][1] is None]
        if not missing:
            return [], []
        pairs, _judges = self._pairs(tm.guild_id, given, check=False)
        tn.round_tables(tm, number, pairs + [(-n, -n) for n in missing])  # the round as it would open
        wanted = self._fill_kept(tm, given, missing)
        if not wanted:
            return [], []
        if not self._places.may_make(tm.guild_id):
            raise TournamentError("tournament.no_manage_channels", tables=", ".join(str(n) for n, _, _ in wanted))
        await slow()
        made_now, fresh = await self._places.make(tm.guild_id, near_channel_id, tm.name, wanted)
        for n, text, voice in made_now:
            given[n - 1] = (text, voice, given[n - 1][2])
        return made_now, fresh

    def _fill_kept(
        self, tm: StoredTournament, given: list[GivenTable], missing: Sequence[int],
    ) -> list[tuple[int, int | None, int | None]]:
        """Put the tables whose two channels from an earlier round exist into ``given``; the ones to make."""
        wanted: list[tuple[int, int | None, int | None]] = []
        for n in missing:
            made = next((m for m in tm.made_channels if m.table == n), None)
            text, voice = self._places.kept(tm.guild_id, made) if made is not None else (None, None)
            if text is not None and voice is not None:
                given[n - 1] = (text, voice, given[n - 1][2])
            else:
                wanted.append((n, text, voice))
        return wanted

    async def remove_channels(self, tm: StoredTournament) -> tuple[list[int], list[int]]:
        """Delete the channels the bot made for the tables: (tables removed, tables whose channels Discord kept).

        Channels already gone count as removed; the ones kept stay remembered, so it can be asked again.
        """
        tn.check_remove_channels(tm)
        removed: list[int] = []
        kept: list[int] = []
        for made in tm.made_channels:
            gone = [await self._places.delete(tm.guild_id, c) for c in (made.channel_id, made.voice_channel_id)]
            (removed if all(gone) else kept).append(made.table)
        await self._records.forget_channels(tm.id, removed)
        return removed, kept

    # -- the tables' games -----------------------------------------------------------------------

    async def place_at(
        self, channel_id: int, user_id: int, staff: Callable[[int], Awaitable[bool]],
    ) -> TournamentPlace | None:
        """The tournament table of a channel's open round, for its judge opening it; None for an ordinary channel.

        ``staff`` says whether the user is the tournament's staff, given its organiser.

        Raises:
            TournamentError: ``tournament.not_table_judge`` (the table has another judge),
                ``tournament.table_unjudged`` (no judge named: only the tournament's staff may open it),
                ``tournament.table_played`` (its game of this round is already under way or over).
        """
        found = await self._records.table_at(channel_id)
        if found is None:
            return None
        tm, rt = found
        if rt.judge_id != user_id and not await staff(tm.organiser_id):
            if rt.judge_id:
                raise TournamentError("tournament.not_table_judge", table=rt.table, judge=f"<@{rt.judge_id}>")
            # Whoever opens a table judges a game that counts: not a member who happens to be first.
            raise TournamentError("tournament.table_unjudged", table=rt.table)
        if rt.game_id is not None and (await self._games.get_game(rt.game_id)).status in ("open", "finished"):
            raise TournamentError("tournament.table_played", table=rt.table, round=rt.round)
        seats = tn.table_seats(tm, rt.round, rt.table)
        return TournamentPlace(FixedSeats(tm.id, rt.round, rt.table, seats), tm.rules(), rt.voice_channel_id,
                               rt.judge_id)

    async def link(self, place: TournamentPlace, game_id: int, judge_id: int) -> bool:
        """Bind a just-opened lobby's game to its table; False if another game took the table first."""
        fixed = place.fixed
        return await self._records.link_game(fixed.tournament_id, fixed.round, fixed.table, game_id,
                                             judge_id=judge_id)

    async def games(self, tm: StoredTournament) -> dict[int, StoredGame]:
        """The games the tournament's tables have played, by id."""
        ids = {rt.game_id for rt in tm.round_tables if rt.game_id is not None}
        return {gid: await self._games.get_game(gid) for gid in sorted(ids)}

    async def standings(self, tm: StoredTournament) -> list[Standing]:
        """The standings over the tournament's ended games (counted off the event loop)."""
        games = await self.games(tm)
        return await asyncio.to_thread(tn.standings_of, tm, games)

    # -- a round's end ---------------------------------------------------------------------------

    async def game_ended(self, game_id: int) -> ClosedRound | None:
        """A game ended: the round it closed, if it was the last of its tournament's open round."""
        tm = await self._records.tournament_of_game(game_id)
        return None if tm is None else await self._close_if_done(tm)

    async def catch_up(self) -> AsyncIterator[ClosedRound]:
        """The rounds whose last game ended while no process was there to hear it, closed one by one."""
        for tm in await self._records.playing_tournaments():
            if self._owns_guild(tm.guild_id):
                closed = await self._close_if_done(tm)
                if closed is not None:
                    yield closed

    async def _close_if_done(self, tm: StoredTournament) -> ClosedRound | None:
        ended = []
        for rt in tn.current_tables(tm):
            if rt.game_id is not None and (await self._games.get_game(rt.game_id)).status == "finished":
                ended.append(rt.game_id)
        if not tn.round_complete(tm, ended):
            return None
        last = tm.current_round >= tm.rounds
        if not await self._records.close_round(tm.id, tm.current_round, last=last):
            return None  # another process closed it
        closed = await self._records.get_tournament(tm.id)
        if closed is None:
            return None
        return ClosedRound(tm, closed, await self.standings(closed), last)


__all__ = [
    "ClosedRound", "GameLookup", "GivenTable", "MadeTable", "PreparedRound", "RoundPlaces", "TournamentPlace",
    "TournamentRecords", "TournamentService",
]
