"""Plain values the store takes and gives: no ORM objects ever leave it, and no text for users."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import NamedTuple, TypeAlias

from engine import Game, Result, from_mapping, winners
from engine.ruleset import Ruleset
from mafiabot.core.errors import SettingsError

JSON: TypeAlias = str | int | float | bool | list["JSON"] | dict[str, "JSON"] | None
"""A value as JSON holds it: what the log keeps of commands and events, and a game's Discord ids."""
JSONObject: TypeAlias = dict[str, JSON]
"""A JSON object: one command, one event, a ruleset's ``to_dict()``."""

LANGUAGES = ("en", "ru", "ka")
"""The languages the bot has catalogs for."""

TIMER_SETTINGS = tuple(f.name for f in dataclasses.fields(Ruleset) if f.name.endswith("_seconds"))
"""The ruleset timers a server may override."""

MAX_TIMER_SECONDS = 3600
MAX_VOTE_WINDOW = 60


def stored_ruleset(data: Mapping[str, object]) -> Ruleset:
    """The one reader of ruleset data: ``Ruleset.to_dict()`` as stored, or a file's settings as served.

    The engine decides what the data means (``engine.from_mapping``): a preset's own ``to_dict``
    has an empty ``base`` and reads back as that preset. Everything that turns stored or uploaded
    data into a ruleset (a game's rules, a server's uploads, the host's folder) comes through here.

    Raises:
        RulesetError: the data is not a ruleset this engine understands.
    """
    return from_mapping(data)


class SeatInfo(NamedTuple):
    """Who sits where; ``role`` is the card's value, None until the cards are dealt."""

    seat: int
    user_id: int
    display_name: str
    role: str | None = None


@dataclass(frozen=True, slots=True)
class StoredCommand:
    """One accepted command and the events it produced, as written by ``Store.append``."""

    seq: int
    command: JSONObject
    events: list[JSONObject]
    actor_id: int | None
    at: datetime


@dataclass(frozen=True, slots=True)
class StoredGame:
    """A game with everything the bot needs to rebuild its table after a restart."""

    id: int
    guild_id: int
    channel_id: int
    voice_channel_id: int | None
    judge_id: int | None
    ruleset_name: str
    ruleset: JSONObject
    """``Ruleset.to_dict()`` as stored; ``rules()`` reads it back."""
    language: str
    status: str
    created_at: datetime
    finished_at: datetime | None
    result: str | None
    reason: str | None
    last_seq: int
    timer_id: int | None
    timer_deadline: datetime | None
    timer_remaining: float | None
    discord: JSONObject
    """What the bot keeps of the game's Discord side (thread, vote messages), as it wrote it."""
    seats: list[SeatInfo]
    log: list[StoredCommand]
    seen_at: datetime | None = None
    """When the process that ran the game was last known alive (its heartbeat or a polite stop)."""

    def stopped_at(self) -> datetime | None:
        """The latest moment the game is known to have been running: its last heartbeat or its last command.

        A running timer kept its deadline; what was left on it is the deadline less this moment.
        """
        moments = [m for m in (self.seen_at, self.log[-1].at if self.log else None) if m is not None]
        return max(moments) if moments else None

    def rules(self) -> Ruleset:
        """The game's ruleset, exactly as it was when the game was created."""
        return stored_ruleset(self.ruleset)


@dataclass(frozen=True, slots=True)
class SeatFinal:
    """One seat's facts at the end of a game, as the engine knows them."""

    seat: int
    role: str
    team: str
    won: bool
    points: Decimal
    extra_points: Decimal
    """Everything but the win point: Best Move, removal penalties and the judge's points."""
    fouls: int
    removed: bool
    best_move_black: int | None = None


@dataclass(frozen=True, slots=True)
class GameFinal:
    """How a game ended; ``result`` is an ``engine.Result`` value."""

    result: str
    reason: str
    seats: tuple[SeatFinal, ...] = ()

    @property
    def abandoned(self) -> bool:
        """An abandoned game counts for no statistics and no rating."""
        return self.result == Result.ABANDONED.value


def final_from_game(game: Game) -> GameFinal:
    """Read a finished game's result and every seat's facts; a game without a result is abandoned."""
    state = game.state
    outcome = state.outcome
    if outcome is None or outcome.result is Result.ABANDONED:
        return GameFinal(Result.ABANDONED.value, outcome.reason.value if outcome else "abandoned")
    points = game.points()
    won_by = winners(state)
    seats = []
    for seat in range(1, state.players + 1):
        role = state.role(seat)
        won = seat in won_by
        total = points[seat]
        best = state.best_move_black if state.best_move and state.best_move_seat == seat else None
        seats.append(
            SeatFinal(
                seat=seat,
                role=role.value,
                team=role.team.value,
                won=won,
                points=total,
                extra_points=total - (1 if won else 0),
                fouls=state.foul_count(seat),
                removed=state.removed(seat),
                best_move_black=best,
            )
        )
    return GameFinal(outcome.result.value, outcome.reason.value, tuple(seats))


@dataclass(frozen=True, slots=True)
class GuildSettings:
    """A server's settings; ``GuildSettings(guild_id)`` are the defaults.

    ``timers`` overrides ruleset timers by their field name (``speech_seconds`` and the like);
    ``vote_window`` overrides the vote window. Validation runs on construction, so a value the bot
    cannot use never reaches the database.

    Raises:
        SettingsError: a value is out of range or a key is unknown; ``field`` names it.
    """

    guild_id: int
    language: str = "en"
    judge_role_id: int | None = None
    default_ruleset: str = "classic"
    timers: dict[str, int] = field(default_factory=dict)
    vote_window: int | None = None
    mute_spectators: bool = True
    voice_cues: bool = True
    results_channel_id: int | None = None
    strict_tables: bool = False
    """Refuse a seat to whoever could read the mafia's room or lift their own mute (tournaments always do)."""
    seat_nicknames: bool = False
    """Put each seated player's seat number in their nickname ("5 · Anya") while the game runs."""
    judge_sees_roles: bool = True
    """The judge's console (``/mafia panel``) shows every role: the judge is the host's assistant."""
    organiser_role_id: int | None = None
    """Members with this role run tournaments as a Manage Server member may (``/mafia tournament``)."""
    site_pages: bool = False
    """The club's pages (``mafiabot site build``) are built: nothing is public until the staff say so."""

    def __post_init__(self) -> None:
        if self.language not in LANGUAGES:
            raise SettingsError("language", f"{self.language!r} is not one of {', '.join(LANGUAGES)}",
                                problem="language", value=self.language, known=", ".join(LANGUAGES))
        if not self.default_ruleset or len(self.default_ruleset) > 64:
            raise SettingsError("default_ruleset", f"{self.default_ruleset!r} is not a ruleset name",
                                problem="ruleset", value=self.default_ruleset)
        for name, value in self.timers.items():
            _check_timer(name, value)
        window = self.vote_window
        if window is not None and not _whole_in(window, MAX_VOTE_WINDOW):
            raise SettingsError("vote_window", f"{window!r} is not a whole number of seconds from 1 to 60",
                                problem="vote_window", value=window, max=MAX_VOTE_WINDOW)


def _whole_in(value: object, top: int) -> bool:
    """Whether ``value`` is a whole number from 1 to ``top`` (a bool is no number here)."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= top


def _check_timer(name: str, value: object) -> None:
    if name not in TIMER_SETTINGS:
        raise SettingsError(f"timers.{name}", "unknown timer", problem="timer_unknown", timer=name)
    if not _whole_in(value, MAX_TIMER_SECONDS):
        raise SettingsError(f"timers.{name}", f"{value!r} is not a whole number of seconds from 1 to 3600",
                            problem="timer_range", timer=name, value=value, max=MAX_TIMER_SECONDS)


@dataclass(frozen=True, slots=True)
class StoredRuleset:
    """A server's uploaded ruleset: what tables play (``ruleset``) and the TOML it came from."""

    guild_id: int
    key: str
    name: str
    source: str
    data: Mapping[str, JSON]
    uploaded_by: int
    uploaded_at: datetime

    @property
    def ruleset(self) -> Ruleset:
        """The validated ruleset, as it was when uploaded."""
        return stored_ruleset(self.data)


@dataclass(frozen=True, slots=True)
class MuteRecord:
    """A server mute the bot made and has not lifted yet."""

    guild_id: int
    user_id: int
    game_id: int | None
    muted_at: datetime


@dataclass(frozen=True, slots=True)
class NickRecord:
    """A seat nickname the bot gave and has not taken back yet, with the nickname to give back."""

    guild_id: int
    user_id: int
    game_id: int | None
    nick: str | None
    """The member's own nickname before the game; None: they had none."""


@dataclass(frozen=True, slots=True)
class GameSummary:
    """One line of a server's game history."""

    id: int
    guild_id: int
    channel_id: int
    judge_id: int | None
    ruleset_name: str
    status: str
    created_at: datetime
    finished_at: datetime | None
    result: str | None
    reason: str | None
    players: int
    days: int = 0
    """Days the game reached (night 0 and the first night count for none)."""


@dataclass(frozen=True, slots=True)
class WinCount:
    """Games and wins under one role or on one team."""

    games: int = 0
    wins: int = 0


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """One member's record on a server (abandoned games excluded)."""

    guild_id: int
    user_id: int
    ruleset: str | None
    games: int
    wins: int
    draws: int
    losses: int
    win_rate: float
    """Wins over games, draws included in the games; 0 with no games."""
    points: Decimal
    extra_points: Decimal
    fouls: int
    removals: int
    best_moves: int
    """How many Best Moves this member made."""
    best_move_black: int
    """How many black seats those Best Moves named in all."""
    by_role: dict[str, WinCount]
    by_team: dict[str, WinCount]
    ratings: dict[str, float]
    """The member's rating under each ruleset played (or only ``ruleset`` when given)."""


PERIOD_DAYS = {"week": 7, "month": 30, "year": 365}
"""``/mafia top period:``: rolling windows, so "month" means the same thing on the 1st and the 31st."""


def since(period: str, now: datetime) -> datetime | None:
    """Where a league period starts (None: all time); the command and the club's pages share it."""
    days = PERIOD_DAYS.get(period)
    return now - timedelta(days=days) if days is not None else None


@dataclass(frozen=True, slots=True)
class LeagueRow:
    """A line of the league table; rows with equal total, wins and extra points share a rank."""

    rank: int
    user_id: int
    display_name: str
    games: int
    wins: int
    points: Decimal
    extra_points: Decimal
    win_rate: float


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A member's rating under one ruleset right after one of their finished games."""

    game_id: int
    ruleset_name: str
    finished_at: datetime
    rating: float


@dataclass(frozen=True, slots=True)
class RatingEntry:
    """A player's rating on a server under one ruleset."""

    user_id: int
    rating: float
    games: int


@dataclass(frozen=True, slots=True)
class TournamentPlayer:
    """A registered player and the name they registered under."""

    user_id: int
    name: str


@dataclass(frozen=True, slots=True)
class ScheduledSeat:
    """One place of a tournament's schedule; every number counts from 1."""

    round: int
    table: int
    seat: int
    user_id: int


@dataclass(frozen=True, slots=True)
class RoundTable:
    """A table of an opened round: where it plays, who judges it, and its game once started."""

    round: int
    table: int
    channel_id: int
    voice_channel_id: int
    judge_id: int | None = None
    game_id: int | None = None


@dataclass(frozen=True, slots=True)
class MadeChannels:
    """The text and voice channel the bot made for a tournament's table: every round of that table plays there."""

    table: int
    channel_id: int
    voice_channel_id: int


@dataclass(frozen=True, slots=True)
class StoredTournament:
    """A tournament with everything about it the store keeps."""

    id: int
    guild_id: int
    name: str
    ruleset_name: str
    ruleset: JSONObject
    """``Ruleset.to_dict()`` as stored when the tournament was made."""
    scoring: str
    rounds: int
    tables: int
    seed: int
    status: str
    """``registration``, ``seated``, ``playing`` or ``finished`` (``mafiabot.core.tournaments``)."""
    current_round: int
    """The last round opened; 0 before the first."""
    organiser_id: int
    created_at: datetime
    players: tuple[TournamentPlayer, ...] = ()
    forbidden: tuple[tuple[int, int], ...] = ()
    schedule: tuple[ScheduledSeat, ...] = ()
    round_tables: tuple[RoundTable, ...] = ()
    finals: int = 0
    """How many of the last rounds are finals."""
    finals_weight: Decimal = Decimal(1)
    """The multiplier of every final round's points."""
    announcement: tuple[int, int] | None = None
    """The registration announcement's (channel, message), once it is posted."""
    made_channels: tuple[MadeChannels, ...] = ()
    """The channels the bot made for tables given none, by table, until the organiser removes them."""
    site_hidden_rounds: int = 0
    """How many of the last rounds the club's pages keep hidden until the tournament ends (finals told live)."""

    def site_rounds(self) -> int:
        """The rounds whose results the club's pages show now: all of them once the tournament is over."""
        return self.rounds if self.status == "finished" else self.rounds - self.site_hidden_rounds

    def rules(self) -> Ruleset:
        """The ruleset every table of the tournament plays."""
        return stored_ruleset(self.ruleset)
