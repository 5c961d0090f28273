"""The table manager: lobbies being formed, running tables, and recovery after a restart.

This is the bookkeeping of tables without Discord or SQL: one lobby or table per channel, who may
join, the idle lobbies' expiry, the start and its rollback, and the rebuild of open games from
their logs. What it needs from outside comes through ports: the store's rows and logs, the
server's settings and rulesets, the Discord side's places and presenter, a clock.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from engine import Abandon, Game, Phase, Ruleset, command_from_data, from_mapping
from mafiabot.core.clock import wall_now, within
from mafiabot.core.errors import ChannelTakenError
from mafiabot.core.index import TableIndex
from mafiabot.core.meta import TableMeta
from mafiabot.core.mutes import MuteLifter
from mafiabot.core.nicks import restore_owed
from mafiabot.core.runtime import FixedSeats, Lobby, Table, TableError, deal_seats, new_seed, start_command

if TYPE_CHECKING:
    from mafiabot.core.clock import Cancellable, TableClock
    from mafiabot.core.fairplay import Alert
    from mafiabot.core.nicks import Blocked, NickEditor, NickLedger
    from mafiabot.core.ports import (
        GameLog,
        Liveness,
        MemberEditor,
        MuteLedger,
        RulesetLookup,
        SettingsLookup,
        TableRecords,
    )
    from mafiabot.core.records import GuildSettings, StoredGame
    from mafiabot.core.runtime import CueSink, Effects

log = logging.getLogger(__name__)


def ruleset_from_stored(data: dict[str, Any]) -> Ruleset:
    """Read back ``Ruleset.to_dict()`` as the store keeps it."""
    return from_mapping(data)


def may_judge(actor: int, *, judge_id: int, staff: bool, seated: bool, side: Collection[int] = ()) -> bool:
    """The one rule of judge powers: the table's judge, a side judge (``side``) or staff, never a seated player.

    Staff are Manage Server and the server's judge role; side judges are added with ``/mafia judge add``.

    A seated player holds no judge power during their game, whatever their roles: an admin at the
    table could otherwise pause, skip or remove players while playing.
    """
    return not seated and (actor == judge_id or actor in side or staff)


def may_change_judges(actor: int, *, judge_id: int, staff: bool, seated: bool) -> bool:
    """Who chooses a table's judges (hand it over, add or remove a side judge): its judge or staff.

    A side judge judges the game but does not choose who judges it: handing the table to themselves
    would put out the judge who added them. They may only step down themselves.
    """
    return not seated and (actor == judge_id or staff)


@dataclass(frozen=True, slots=True)
class Seated:
    """A player joining a lobby, as the cog saw them."""

    user_id: int
    name: str
    voice_channel_id: int | None
    powers: tuple[str, ...] = field(default=())
    """What the member could do against the table's secrecy (``mafiabot.host.places.table_powers``)."""


@dataclass(frozen=True, slots=True)
class TableOptions:
    """The host's settings for every table (the ``[game]`` and ``[voice]`` sections)."""

    default_ruleset: str = "classic"
    seat_order: str = "random"
    seed: int | None = None
    """Seat and deal every table from this seed; None: a fresh seed each time."""
    lobby_idle_minutes: float = 30.0
    time_scale: float = 1.0
    mute_spectators: bool = False
    """The host forces spectators muted at every table, whatever the server's setting."""
    cues: bool = False
    """The host plays voice cues (where the server has not turned them off)."""
    helper_tokens: int = 0
    """How many helper tokens send member edits beside the bot's own (``[voice] helper_tokens``)."""


class Places(Protocol):
    """What the manager asks of the channels a table lives in (the Discord side)."""

    def missing_permissions(self, guild_id: int, channel_id: int, voice_id: int) -> list[str]:
        """The permissions the bot lacks in a table's channels, by Discord's names."""

    def spectators(self, guild_id: int, voice_channel_id: int) -> list[int]:
        """The people (no bots) in a guild's voice channel now."""

    async def powers(
        self, guild_id: int, channel_id: int, voice_id: int, user_ids: Sequence[int],
    ) -> dict[int, tuple[str, ...]]:
        """What each member could do against a table's secrecy now (``Seated.powers``), asked afresh."""


class TableSide(Protocol):
    """What the Discord side adds to each table the manager builds, and what it is told of them."""

    @property
    def effects(self) -> Effects:
        """Shows every table's events (the presenter)."""

    def fair_play(self, table: Table, alert: Alert) -> None:
        """Tell the table's judges, privately, of a seated player's lapse (a mute lifted by someone else, ...)."""

    def unnumbered(self, table: Table, blocked: list[tuple[int, Blocked]]) -> None:
        """Tell the judge which seats keep their nicknames (Discord would refuse renaming them), and why."""

    def cues(self, table: Table) -> CueSink:
        """The voice cues of a table that plays them."""

    def resumed(self, table: Table) -> None:
        """A game was rebuilt after a restart and goes on."""

    async def catch_up_votes(self, table: Table) -> None:
        """Count the votes cast while the bot was away."""

    def powers_text(self, language: str, powers: Sequence[str]) -> str:
        """The powers a strict table refuses, in words."""

    def holders_text(self, language: str, holders: Sequence[tuple[int, Sequence[str]]]) -> str:
        """Each player (by user id) with the powers they hold, in words, for a refusal that names them."""

    async def lobby_expired(self, lobby: Lobby, minutes: int) -> None:
        """Say on the lobby's message that it closed after ``minutes`` idle."""

    def slow_opening(self, table: Table, *, tables: int, seconds: int, helpers: int) -> None:
        """Tell the judge Night 0 waits ``seconds`` for ``tables`` tables' start mutes, and the helpers it takes."""


ENDING_SECONDS = 10.0
"""How long a polite stop waits for the tables to lift their mutes."""

MEMBER_EDITS = 5
MEMBER_EDIT_WINDOW = 5.0
"""Discord's member-edit bucket per guild and token, as observed (``docs/performance.md``): 5 edits per 5 s."""

OPENING_NOTICE_SECONDS = 15.0
"""A round whose start mutes take longer than this to go out (Night 0 waits for them) is told to the
judge, with the helper tokens that would open it within this time."""


def opening_seconds(edits: int, tokens: int) -> float:
    """How long ``edits`` member edits at once take on ``tokens`` tokens in one guild: a window per extra bucketful."""
    windows = math.ceil(edits / (MEMBER_EDITS * max(tokens, 1)))
    return max(windows - 1, 0) * MEMBER_EDIT_WINDOW


def helpers_for(edits: int, within: float = OPENING_NOTICE_SECONDS) -> int:
    """The fewest helper tokens that send ``edits`` member edits at once in one guild within ``within`` seconds."""
    windows = math.floor(within / MEMBER_EDIT_WINDOW) + 1
    return max(math.ceil(edits / (MEMBER_EDITS * windows)) - 1, 0)


HEARTBEAT_SECONDS = 5.0
"""How often the running games note that their process is alive.

A restart reads a running timer's stored deadline against the game's last heartbeat (or its last
command, if later): a speech, a night or a vote window goes on with the time it had when the bot
stopped. A polite stop notes its own moment; a killed process gives no goodbye, so its players get
back at most this much more than they had."""


class TableManager:
    """Owns every lobby and running table of this bot process."""

    def __init__(
        self, *, records: TableRecords, game_log: GameLog, ledger: MuteLedger, editor: MemberEditor,
        settings: SettingsLookup, rulesets: RulesetLookup, places: Places, side: TableSide, options: TableOptions,
        clock: TableClock, table_clock: Callable[[], TableClock], owns_guild: Callable[[int], bool],
        renamer: NickEditor | None = None, nick_ledger: NickLedger | None = None, liveness: Liveness | None = None,
    ) -> None:
        self.records = records
        self.liveness = liveness
        """Where the running games' heartbeat goes (``HEARTBEAT_SECONDS``); None: no heartbeat."""
        self._heartbeat: Cancellable | None = None
        self.renamer = renamer
        self.nick_ledger = nick_ledger
        """Seat nicknames (``mafiabot.core.nicks``): renames on Discord, and the ledger of names to give back."""
        self.game_log = game_log
        self.ledger = ledger
        self.editor = editor
        self.settings = settings
        self.rulesets = rulesets
        self.places = places
        self.side = side
        self.options = options
        self.clock = clock
        """The idle lobbies' clock and the wall time a stored deadline is read against."""
        self.table_clock = table_clock
        """Makes each new table's clock."""
        self.owns_guild = owns_guild
        """Whether a guild's games belong to this process (its shard)."""
        self.lobbies: dict[int, Lobby] = {}
        self.tables = TableIndex()
        self._starting: set[int] = set()
        """Games between ``/mafia start`` and their first stored command: not leftovers to clean."""
        self._recovered = False
        self.recovered = asyncio.Event()
        """Set once ``recover`` has rebuilt the open games and closed what a failed start left."""
        self._listed = False
        """Whether ``recover`` has read which open games come back (until then any channel may hold one)."""
        self._coming: dict[int, int] = {}
        """The stored games being rebuilt, by id, with their text channel: a command for one waits for it."""
        self._stored: list[StoredGame] | None = None
        """The open games ``prepare`` read, kept for ``recover``: nothing can change them in between."""
        self._progress = asyncio.Event()
        """Set, and replaced, whenever a game comes back (``_moved``): what ``back`` waits on."""
        self._idle: dict[int, Cancellable] = {}
        self._told_opening: set[int] = set()
        """Tables whose judge has heard that Night 0 waits long for the round's start mutes."""
        self.ended: list[Callable[[Table], None]] = []
        """Told of every table whose game is over and stored (a tournament closes its round on it)."""
        self._watchers: dict[int, list[Callable[[], None]]] = {}
        """Per table, who is woken after each of its accepted commands and at its close (``watch``)."""
        self._listener = _Listener(self)

    # -- lookups ---------------------------------------------------------------------------------

    def lobby_in(self, channel_id: int) -> Lobby | None:
        """The lobby being formed in a text channel."""
        return next((lb for lb in self.lobbies.values() if lb.channel_id == channel_id), None)

    def table_in(self, channel_id: int) -> Table | None:
        """The running table of a text channel."""
        return self.tables.in_channel(channel_id)

    def table_in_voice(self, voice_channel_id: int) -> Table | None:
        """The running table that uses a voice channel."""
        return self.tables.in_voice(voice_channel_id)

    def tables_of_user(self, guild_id: int, user_id: int) -> list[Table]:
        """Running tables in a guild where ``user_id`` is seated."""
        return [tb for tb in self.tables.in_guild(guild_id) if user_id in tb.seats]

    def lobby_of(self, guild_id: int, user_id: int) -> Lobby | None:
        """The lobby of the guild ``user_id`` has joined: held in memory only, its start writes their seat."""
        return next((lb for lb in self.lobbies.values() if lb.guild_id == guild_id and lb.has(user_id)), None)

    def _busy(self, guild_id: int, user_id: int) -> bool:
        in_table = any(not tb.over for tb in self.tables_of_user(guild_id, user_id))
        return in_table or self.lobby_of(guild_id, user_id) is not None

    # -- the lobby -------------------------------------------------------------------------------

    async def open_lobby(
        self, *, guild_id: int, channel_id: int, voice_channel_id: int | None, judge: Seated,
        ruleset_name: str | None, seats: int | None, manage_channels: bool = False, tournament: bool = False,
        fixed: FixedSeats | None = None, ruleset: Ruleset | None = None,
    ) -> Lobby:
        """Create a lobby in a text channel bound to a voice channel.

        The creator must sit in that voice channel, unless they may manage it (``manage_channels``):
        otherwise anyone could bind a table to any voice channel and have everyone in it muted.
        Whether the channels can hold a table at all (``mafiabot.host.places.check_place``) the
        Discord side checks first. A tournament's table comes with its ``fixed`` seats and the
        tournament's ``ruleset``, the same at every table, without the server's timer overrides.

        Raises:
            TableError: the channel is busy, the creator is elsewhere, the ruleset or seat count is
                wrong, or the bot lacks permissions.
        """
        voice_id = self._free_place(channel_id, voice_channel_id, judge, manage_channels=manage_channels)
        settings = await self.settings.guild_settings(guild_id)
        if ruleset is None:
            ruleset = await self._ruleset(guild_id, ruleset_name, settings)
        count = len(fixed.players) if fixed is not None else seats or ruleset.default_players
        if count not in ruleset.setups:
            raise TableError("lobby.bad_seats", seats=count, supported=", ".join(map(str, ruleset.player_counts)))
        missing = self.places.missing_permissions(guild_id, channel_id, voice_id)
        if missing:
            raise TableError("lobby.missing_permissions", permissions=", ".join(missing))
        language = settings.language
        try:
            lobby_id = await self.records.open_lobby(
                guild_id=guild_id, channel_id=channel_id, voice_channel_id=voice_id, judge_id=judge.user_id,
                ruleset=ruleset, language=language,
            )
        except ChannelTakenError as exc:
            raise (TableError("lobby.voice_busy", voice=voice_id) if exc.which == "voice"
                   else TableError("lobby.channel_busy")) from None
        lobby = Lobby(
            id=lobby_id, guild_id=guild_id, channel_id=channel_id, voice_channel_id=voice_id,
            judge_id=judge.user_id, ruleset=ruleset, language=language, seats=count,
            strict=settings.strict_tables or tournament or fixed is not None,
            tournament=tournament or fixed is not None, fixed=fixed,
        )
        self.lobbies[lobby.id] = lobby
        self._touch(lobby)
        return lobby

    def _free_place(
        self, channel_id: int, voice_channel_id: int | None, judge: Seated, *, manage_channels: bool
    ) -> int:
        """The voice channel of a new lobby, once both channels are free and the creator may bind them."""
        if self.lobby_in(channel_id) or self.table_in(channel_id):
            raise TableError("lobby.channel_busy")
        voice_id = voice_channel_id or judge.voice_channel_id
        if voice_id is None:
            raise TableError("lobby.no_voice")
        if judge.voice_channel_id != voice_id and not manage_channels:
            raise TableError("lobby.creator_not_in_voice", voice=voice_id)
        if self.table_in_voice(voice_id) or any(lb.voice_channel_id == voice_id for lb in self.lobbies.values()):
            raise TableError("lobby.voice_busy", voice=voice_id)
        return voice_id

    async def _ruleset(self, guild_id: int, name: str | None, settings: GuildSettings) -> Ruleset:
        """The ruleset a lobby plays, with the server's timer and vote window settings applied."""
        name = name or settings.default_ruleset or self.options.default_ruleset
        named = await self.rulesets.find(guild_id, name)
        if named is None:
            known = ", ".join(r.key for r in await self.rulesets.available(guild_id))
            raise TableError("lobby.unknown_ruleset", ruleset=name, known=known)
        ruleset = named.ruleset
        overrides: dict[str, Any] = dict(settings.timers)
        if settings.vote_window is not None:
            overrides["vote_window_seconds"] = settings.vote_window
        return ruleset.replace(**overrides) if overrides else ruleset

    # -- idle lobbies ----------------------------------------------------------------------------

    def _touch(self, lobby: Lobby) -> None:
        """Someone used the lobby: its idle time starts again."""
        lobby.token += 1
        old = self._idle.pop(lobby.id, None)
        if old is not None:
            old.cancel()
        seconds = self.options.lobby_idle_minutes * 60
        loop = asyncio.get_running_loop()
        token = lobby.token
        self._idle[lobby.id] = self.clock.call_later(
            seconds, lambda: loop.create_task(self._expire(lobby.id, token))
        )

    def _untrack(self, lobby: Lobby) -> None:
        self.lobbies.pop(lobby.id, None)
        handle = self._idle.pop(lobby.id, None)
        if handle is not None:
            handle.cancel()

    async def _expire(self, lobby_id: int, token: int) -> None:
        """Close a lobby nobody used for ``lobby_idle_minutes``, and say so on its message."""
        lobby = self.lobbies.get(lobby_id)
        if lobby is None or lobby.token != token or lobby.starting:
            return
        self._untrack(lobby)
        try:
            await self.records.drop_lobby(lobby.id)
        except Exception:
            log.exception("could not drop the idle lobby %s", lobby.id)
        log.info("lobby %s in channel %s expired", lobby.id, lobby.channel_id)
        if lobby.message_id is not None:
            await self.side.lobby_expired(lobby, max(1, round(self.options.lobby_idle_minutes)))

    def lobby(self, lobby_id: int) -> Lobby:
        """A lobby by id.

        Raises:
            TableError: the lobby is gone (started, cancelled, or lost in a restart).
        """
        lobby = self.lobbies.get(lobby_id)
        if lobby is None:
            raise TableError("lobby.gone")
        return lobby

    def join(self, lobby_id: int, player: Seated) -> Lobby:
        """Take a seat in a lobby.

        Raises:
            TableError: the judge, not in the table's voice channel, already in, busy elsewhere,
                the table is full, or (at a strict table) a player who could read the mafia's room
                or lift their own mute.
        """
        lobby = self.lobby(lobby_id)
        self._may_sit(lobby, player)
        lobby.players.append((player.user_id, player.name))
        if player.powers:
            lobby.powers[player.user_id] = player.powers
        self._touch(lobby)
        return lobby

    def _may_sit(self, lobby: Lobby, player: Seated) -> None:
        """Refuse a seat at ``lobby`` to ``player``, or let them sit (see ``join``)."""
        if lobby.starting:
            raise TableError("lobby.starting")
        if player.user_id == lobby.judge_id:
            raise TableError("lobby.judge_cannot_play")
        if lobby.has(player.user_id):
            raise TableError("lobby.already_joined")
        if player.voice_channel_id != lobby.voice_channel_id:
            raise TableError("lobby.not_in_voice", voice=lobby.voice_channel_id)
        if lobby.fixed is not None and player.user_id not in lobby.fixed.players:
            raise TableError("lobby.not_scheduled", table=lobby.fixed.table, round=lobby.fixed.round)
        if self._busy(lobby.guild_id, player.user_id):
            raise TableError("lobby.in_other_game")
        if len(lobby.players) >= lobby.seats:
            raise TableError("lobby.full", seats=lobby.seats)
        if player.powers and lobby.strict:
            raise TableError("lobby.strict", powers=self.side.powers_text(lobby.language, player.powers))

    def leave(self, lobby_id: int, user_id: int) -> Lobby:
        """Give a lobby seat back.

        Raises:
            TableError: the player had not joined, or the cards are being dealt.
        """
        lobby = self.lobby(lobby_id)
        if lobby.starting:
            raise TableError("lobby.starting")
        if not lobby.has(user_id):
            raise TableError("lobby.not_joined")
        lobby.players = [(u, n) for u, n in lobby.players if u != user_id]
        lobby.powers.pop(user_id, None)
        self._touch(lobby)
        return lobby

    @staticmethod
    def _require_judge(judge_id: int, actor: int, *, admin: bool, seated: bool, side: Collection[int] = ()) -> None:
        if not may_judge(actor, judge_id=judge_id, staff=admin, seated=seated, side=side):
            raise TableError("table.seated_judge" if seated and admin else "table.not_judge")

    async def start(self, channel_id: int, actor: int, *, admin: bool = False) -> Table:
        """Seat the lobby's players, deal the cards, and start the game.

        A second start while the first deals is refused (``lobby.starting``), in this process by
        the lobby's flag and in any other by the lobby's row, which only one start turns open.
        If the start fails half-way, the game is closed again, so no seatless game is left behind.

        Raises:
            TableError: no lobby here, not the judge, already starting, the seat count does not match,
                or (at a strict table) a seated player now holds a power that defeats its secrecy.
        """
        lobby = self.lobby_in(channel_id)
        if lobby is None:
            raise TableError("lobby.already_started" if self.table_in(channel_id) else "lobby.none_here")
        self._require_judge(lobby.judge_id, actor, admin=admin, seated=lobby.has(actor))
        if lobby.starting:
            raise TableError("lobby.starting")
        if len(lobby.players) != lobby.seats:
            raise TableError("lobby.wrong_count", count=len(lobby.players), seats=lobby.seats)
        lobby.starting = True
        game_id = lobby.id
        self._starting.add(game_id)
        try:
            if lobby.strict:
                await self._check_powers(lobby)
            if not await self.records.start_lobby(game_id):
                self._untrack(lobby)
                raise TableError("lobby.gone")
            self._untrack(lobby)
            try:
                table, events = await self._deal(lobby)
            except BaseException:
                self.tables.pop(game_id)
                await self.records.release_channel(lobby.channel_id, unstarted_only=True)
                raise
        finally:
            lobby.starting = False
            self._starting.discard(game_id)
        table.start_effects(events)
        return table

    async def _check_powers(self, lobby: Lobby) -> None:
        """A strict table asks again at the deal: a role granted after Join counts as much as one held before.

        Raises:
            TableError: ``lobby.strict_deal``, naming every seated player who holds such a power now.
        """
        found = await self.places.powers(lobby.guild_id, lobby.channel_id, lobby.voice_channel_id,
                                         [user for user, _name in lobby.players])
        holders = [(user, found[user]) for user, _name in lobby.players if found.get(user)]
        if holders:
            raise TableError("lobby.strict_deal", players=self.side.holders_text(lobby.language, holders))

    async def _deal(self, lobby: Lobby) -> tuple[Table, tuple[Any, ...]]:
        """Seat and deal a lobby whose game row was just opened."""
        configured = self.options.seed
        seed = configured if configured is not None else new_seed()
        seats = deal_seats(lobby, order=self.options.seat_order, seed=seed)
        lobby.players = seats
        settings = await self.settings.guild_settings(lobby.guild_id)
        owed = await self.mutes.ours(lobby.guild_id)
        table = self._make_table(lobby.id, lobby, seats, Game(lobby.ruleset), settings)
        table.voice.recorded_already(owed)
        self.tables.add(table)
        return table, await table.submit_start(start_command(lobby, seed), seats)

    def _make_table(
        self, game_id: int, lobby: Lobby, seats: list[tuple[int, str]], game: Game, settings: GuildSettings,
        meta: TableMeta | None = None,
    ) -> Table:
        """A table for a game, under the server's settings (``mute_spectators`` the host can force on).

        Voice cues play when the host turned them on and the server has not turned them off; they
        run beside the table and never hold it up.
        """
        places, guild_id, voice_id = self.places, lobby.guild_id, lobby.voice_channel_id
        table = Table(
            game_id=game_id, lobby=lobby, seats=seats, game=game, log_store=self.game_log, effects=self.side.effects,
            listener=self._listener, editor=self.editor, ledger=self.ledger, time_scale=self.options.time_scale,
            spectators=lambda: places.spectators(guild_id, voice_id),
            mute_spectators=self.options.mute_spectators or settings.mute_spectators, clock=self.table_clock(),
            renamer=self.renamer, nick_ledger=self.nick_ledger, seat_nicknames=settings.seat_nicknames,
            cues=self.side.cues if self.options.cues and settings.voice_cues else None, meta=meta,
        )
        log.info("table %s in channel %s: %d seats", game_id, lobby.channel_id, len(seats))
        return table

    def _opening_waits(self, table: Table) -> None:
        """``table``'s Night 0 waits for its start mutes: when the guild's openings queue long, tell its judge.

        Every table of the guild still opening shares its member-edit bucket, so the wait is read
        from all their seats together, and the judge learns how many helper tokens such a round needs.
        """
        opening = [tb for tb in self.tables.in_guild(table.guild_id) if tb.opening]
        edits = sum(len(tb.seats) for tb in opening)
        seconds = opening_seconds(edits, 1 + self.options.helper_tokens)
        untold = [tb for tb in opening if tb.id not in self._told_opening]
        if seconds <= OPENING_NOTICE_SECONDS or not untold:
            return
        log.warning("guild %s: %d tables opening together need about %.0f s of member edits; %d helper tokens "
                    "would open them within %.0f s", table.guild_id, len(opening), seconds, helpers_for(edits),
                    OPENING_NOTICE_SECONDS)
        # The tables take turns in the bucket: the ones that started first wait as long as the last.
        for tb in untold:
            self._told_opening.add(tb.id)
            self.side.slow_opening(tb, tables=len(opening), seconds=round(seconds), helpers=helpers_for(edits))

    def running(self, game_id: int) -> Table | None:
        """The running table of ``game_id``, if this process runs it."""
        return self.tables.get(game_id)

    def watch(self, table: Table, woken: Callable[[], None]) -> Callable[[], None]:
        """Call ``woken`` after each command ``table`` accepts, each extend of its timer, and once it is closed.

        Returns what stops it. The demo and tests wait on it; a table's stream feed follows the table through it.
        """
        self._watchers.setdefault(table.id, []).append(woken)

        def stop() -> None:
            watchers = self._watchers.get(table.id, [])
            if woken in watchers:
                watchers.remove(woken)

        return stop

    def _woken(self, table: Table) -> None:
        for woken in list(self._watchers.get(table.id, ())):
            woken()
        if table.done.is_set():
            self._watchers.pop(table.id, None)

    def _forget(self, table: Table) -> None:
        self.tables.pop(table.id)
        self._told_opening.discard(table.id)
        for listener in self.ended:
            try:
                listener(table)
            except Exception:
                log.exception("table %s: a listener of its end failed", table.id)

    async def cancel(self, channel_id: int, actor: int, *, admin: bool = False) -> str:
        """Cancel the lobby, or abandon the running game, of a text channel.

        Where the bot holds nothing in this channel but the database still does (a start that
        failed, a game that could not be resumed), that is closed, so the channel is free again.

        Raises:
            TableError: nothing to cancel here, not the judge, or the cards are being dealt.
        """
        lobby = self.lobby_in(channel_id)
        if lobby is not None:
            self._require_judge(lobby.judge_id, actor, admin=admin, seated=lobby.has(actor))
            if lobby.starting:
                raise TableError("lobby.starting")
            self._untrack(lobby)
            await self.records.drop_lobby(lobby.id)
            return "lobby"
        table = self.table_in(channel_id)
        if table is None:
            # A game that never started has nobody to protect; one that did needs staff to close.
            if channel_id and await self.records.release_channel(channel_id, unstarted_only=not admin):
                return "stale"
            raise TableError("lobby.none_here")
        self._require_judge(table.judge_id, actor, admin=admin, seated=table.seat_of(actor) is not None,
                            side=table.meta.judges)
        await table.submit(Abandon(), actor=actor)
        return "game"

    # -- restart ---------------------------------------------------------------------------------

    async def recover(self) -> None:
        """Rebuild every open game of this process's shards and lift every mute owed elsewhere."""
        if self._recovered:
            return
        self._recovered = True
        try:
            closed = await self._close_leftovers()
            listed = self._stored if self._stored is not None else await self.records.open_games(self.owns_guild)
            # A game already here was started in this process before the guilds were ready.
            games = [g for g in listed if g.id not in self.tables and g.id not in closed]
        finally:
            self._stored = None
            self._listed = True
            self._moved()
        self._coming = {g.id: g.channel_id for g in games}
        for stored in games:
            try:
                await self.resume(stored)
            except Exception:
                log.exception("could not resume game %s", stored.id)
            finally:
                self._coming.pop(stored.id, None)
                self._moved()
        await self.mutes.after_restart(self.owns_guild)
        if self.renamer is not None and self.nick_ledger is not None:
            tables = self.tables.values()
            await restore_owed(self.renamer, self.nick_ledger, owns_guild=self.owns_guild,
                               kept=lambda g, u: any(tb.guild_id == g and u in tb.seats for tb in tables))
        self.recovered.set()
        self._moved()
        self._beat()

    def _running_ids(self) -> list[int]:
        return [tb.id for tb in self.tables.values() if not tb.over]

    def _beat(self) -> None:
        """Note every running game alive now, and again in ``HEARTBEAT_SECONDS``."""
        if self.liveness is None:
            return
        asyncio.get_running_loop().create_task(self._seen(self._running_ids()))
        self._heartbeat = self.clock.call_later(HEARTBEAT_SECONDS, self._beat)

    async def _seen(self, game_ids: list[int]) -> None:
        """One heartbeat; a store that does not answer costs the players at most a few seconds after a crash."""
        if self.liveness is None or not game_ids:
            return
        try:
            await self.liveness.seen(game_ids, wall_now(self.clock))
        except Exception as exc:
            log.warning("could not note %d running games alive: %s", len(game_ids), exc)

    def coming(self, channel_ids: Collection[int], table_id: int | None = None) -> bool:
        """Whether a command for these channels (or this table) must wait: its game is still being resumed.

        Until ``recover`` has read the open games, any channel may hold one; a channel with no open
        game never waits once that is known.
        """
        if self.recovered.is_set():
            return False
        if not self._listed:
            return True
        return any(g == table_id or c in channel_ids for g, c in self._coming.items())

    async def back(self, channel_ids: Collection[int], table_id: int | None = None) -> None:
        """Return once the games of these channels (or this table) are resumed, or could not be.

        The caller bounds the wait (a command has Discord's three seconds for its first answer).
        """
        while self.coming(channel_ids, table_id):
            await self._progress.wait()

    def _moved(self) -> None:
        """Wake whoever waits in ``back``: a game came back, or the list of those to come is known."""
        self._progress.set()
        self._progress = asyncio.Event()

    async def prepare(self) -> None:
        """Read which open games a restart brings back, before the first command can arrive.

        Called before the bot connects: from then on a command waits only if its channel holds one
        of these games (``coming``), not whatever channel it comes from. ``recover`` rebuilds them.
        """
        if self._listed:
            return
        games = await self.records.open_games(self.owns_guild)
        self._stored, self._coming, self._listed = games, {g.id: g.channel_id for g in games}, True
        self._moved()

    async def _close_leftovers(self) -> set[int]:
        """Lobbies live in their process; an open game with no command is a start that failed (closed: their ids)."""
        records = self.records
        await records.drop_lobbies(self.owns_guild, keep=self.lobbies)
        closed = await records.abandon_unstarted(self.owns_guild, keep={*self.tables, *self._starting})
        for game_id in closed:
            log.warning("closed game %s: it was opened but never started", game_id)
        return set(closed)

    async def resume(self, stored: StoredGame) -> None:
        """Rebuild one stored open game as a running table, its timer re-armed with the time that was left."""
        table = await self._rebuild(stored)
        # Hands raised while the bot was away count while their window is still open: no time runs
        # out before they are (a window whose time ran out meanwhile closes right after).
        table.caught_up.clear()
        try:
            table.start_effects(())
            if stored.timer_id is not None:
                # Alive from now on: a second crash before the next heartbeat reads the new deadline from here.
                await self._seen([table.id])
                table.recover_timer(stored.timer_id, remaining=stored.timer_remaining, deadline=stored.timer_deadline,
                                    stopped=stored.stopped_at())
            if table.game.state.phase is not Phase.ENDED:
                self.side.resumed(table)
            await self.side.catch_up_votes(table)
        finally:
            table.caught_up.set()

    async def _rebuild(self, stored: StoredGame) -> Table:
        """The table of a stored game, replayed from its log and tracked; no effects run yet."""
        ruleset = ruleset_from_stored(stored.ruleset)
        game = Game.replay(ruleset, [command_from_data(c.command) for c in stored.log])
        seats = [(s.user_id, s.display_name) for s in sorted(stored.seats, key=lambda s: s.seat)]
        # A judge handed over with ``/mafia judge`` is kept in the table's meta, not in the game row.
        judge = stored.discord.get("judge")
        judge_id = judge if isinstance(judge, int) and judge else stored.judge_id or 0
        lobby = Lobby(
            id=stored.id, guild_id=stored.guild_id, channel_id=stored.channel_id,
            voice_channel_id=stored.voice_channel_id or 0, judge_id=judge_id,
            ruleset=ruleset, language=stored.language, seats=len(seats), players=seats,
        )
        settings = await self.settings.guild_settings(stored.guild_id)
        table = self._make_table(stored.id, lobby, seats, game, settings, TableMeta.from_json(stored.discord))
        table.moments = [c.at for c in stored.log]
        table.voice.recorded_already(await self.mutes.ours(stored.guild_id))
        if self.nick_ledger is not None:
            table.resume_renames([(r.user_id, r.nick) for r in await self.nick_ledger.owed_nicks(stored.guild_id)])
        self.tables.add(table)
        return table

    @property
    def mutes(self) -> MuteLifter:
        """Lifts the mutes the bot owes outside any table (``mafiabot.core.mutes`` says how and when)."""
        return MuteLifter(self.editor, self.records, self.tables.values)

    async def lift_owed(self, guild_id: int, user_id: int) -> None:
        """Unmute a member the bot muted and no running table needs muted (out of voice: try again later)."""
        await self.mutes.lift(guild_id, user_id)

    def hand_over(self) -> None:
        """Stop every table and timer here without touching Discord or the store: another process runs them now."""
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            self._heartbeat = None
        for table in list(self.tables.values()):
            table.stop()
        for handle in self._idle.values():
            handle.cancel()
        self._idle.clear()

    async def shutdown(self) -> None:
        """Stop the tables' clocks and the lobbies' idle timers; their state is already stored.

        Every table first lifts its mutes and clears their ledger rows (for at most ``ENDING_SECONDS``):
        an ended game its last unmutes, a running one all of them (it mutes again once resumed). What
        the ledger says is owed after a polite stop is owed indeed, and nobody waits muted for the bot.
        """
        tables = list(self.tables.values())
        for table in tables:
            if table.over:
                table.result_seen()  # a result still waiting for its message: its unmutes go before the bot does
            else:
                table.release_voice()  # nobody sits muted while the bot is away; the resumed table mutes again
        try:
            await asyncio.wait_for(asyncio.gather(*(tb.voice.settled() for tb in tables)), ENDING_SECONDS)
        except TimeoutError:
            log.warning("stopping with some mutes not lifted; the next start lifts them")
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            self._heartbeat = None
        running = self._running_ids()
        for table in tables:
            table.stop()
        try:  # the moment the clocks stopped: what is left on them is kept from here
            await within(self.clock, ENDING_SECONDS, self._seen(running))
        except TimeoutError:
            log.warning("stopping without noting the moment: a restart keeps the time left as of the last heartbeat")
        for handle in self._idle.values():
            handle.cancel()
        self._idle.clear()


class _Listener:
    """The manager's ear at each table it builds (``TableListener``): the Discord side's or its own."""

    def __init__(self, manager: TableManager) -> None:
        self._manager = manager

    def moved(self, table: Table) -> None:
        """Wake whoever watches the table."""
        self._manager._woken(table)

    def ended(self, table: Table) -> None:
        """Forget the table and tell whoever waits for its end."""
        self._manager._forget(table)

    def alert(self, table: Table, alert: Alert) -> None:
        """The Discord side tells the judge."""
        self._manager.side.fair_play(table, alert)

    def unnumbered(self, table: Table, blocked: list[tuple[int, Blocked]]) -> None:
        """The Discord side tells the judge."""
        self._manager.side.unnumbered(table, blocked)

    def opening_waits(self, table: Table) -> None:
        """The judges of a guild whose openings queue long hear of it."""
        self._manager._opening_waits(table)


__all__ = [
    "Places", "Seated", "TableManager", "TableOptions", "TableSide", "may_change_judges", "may_judge",
    "ruleset_from_stored",
]
