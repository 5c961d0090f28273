"""A finished game in the two rating sites' own formats: mafiaratings' game JSON and Polemica's game.

Both sites take exactly the classic sport table: ten seats, six citizens, a Sheriff, two mafia and
a Don, checks that answer black or red. Any other game (twelve seats, a doctor or a maniac, the
georgian Detective) is refused with the reason (``ExportRefusedError``) and stays in the bot's own
format. Everything here is read from the game's protocol (``core.protocol``: deaths, checks, shots,
nominations, votes, the best move, fouls, extra points) and from its log for the moments the
protocol does not keep (when a foul, ordinary or technical, was given, while whom was speaking); where the
silent votes go
is the engine's answer (``silent_vote_target``). docs/federation.md maps every field to its source.

Round numbers: mafiaratings counts rounds from 0 (round r is night r then day r, and the bot's
first day is its day 0), Polemica numbers days and nights as the bot does (night n follows day n).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal

from engine import Role, SeatPoints, event_from_data, seat_points, silent_vote_target
from engine import events as ev
from engine.errors import RefusalError
from engine.ids import Cause, FloorKind, Result
from engine.ruleset import Ruleset
from engine.scoring import protocol_version
from mafiabot.core.protocol import Day, Protocol, ProtocolSeat
from mafiabot.core.records import JSON, JSONObject, StoredGame, StoredTournament
from mafiabot.core.tournaments import final_state, multipliers

Format = Literal["mafiaratings", "polemica"]
FORMATS: tuple[Format, ...] = ("mafiaratings", "polemica")
SEATS = 10
"""Both sites' table: ten seats, numbered 1 to 10."""
DEALT = {Role.CITIZEN: 6, Role.SHERIFF: 1, Role.MAFIA: 2, Role.DON: 1}
"""The only deal both sites know (mafiaratings ``Game::check_game_result`` refuses any other)."""


class ExportRefusedError(RefusalError):
    """A game a site's format cannot hold: ``code`` says why (``export.seats``, ``export.roles``, ...)."""

    def __init__(self, code: str, **data: Any) -> None:
        self.code = code
        self.data: dict[str, Any] = data
        super().__init__(f"{code}({data})")


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a game sits: the tournament's numbers, and the ids the organiser has from the site.

    The bot never knows a site's ids (club, event, tournament, the judge's and players' accounts);
    they come from the organiser (``mafiabot export --club-id ...``) or stay out of the file.
    """

    tournament: str = ""
    stage: str = ""
    """The tournament's stage as the protocol names it (a round, a final)."""
    round: int | None = None
    table: int | None = None
    number: int | None = None
    """The game's number in the tournament (its order of play)."""
    factor: Decimal = Decimal(1)
    club_id: int | None = None
    event_id: int | None = None
    tournament_id: int | None = None
    moderator_id: int | None = None
    player_ids: dict[int, int] = field(default_factory=dict)
    """The site's account of each Discord user, where the organiser gave it."""


# -- which games a site takes -------------------------------------------------------------------------------------


def check_exportable(protocol: Protocol, fmt: Format) -> Result:
    """The game's result, or a refusal of a game the site's format cannot hold, naming why.

    Raises:
        ExportRefusedError: not finished, not ten seats, another deal, or checks that are not black/red.
    """
    if protocol.result is None or protocol.result == Result.ABANDONED:
        raise ExportRefusedError("export.unfinished", format=fmt)
    if len(protocol.seats) != SEATS:
        raise ExportRefusedError("export.seats", format=fmt, seats=len(protocol.seats), size=SEATS)
    dealt: dict[Role, int] = {}
    for seat in protocol.seats:
        role = Role(seat.role) if seat.role else Role.CITIZEN
        dealt[role] = dealt.get(role, 0) + 1
    if dealt != DEALT:
        raise ExportRefusedError("export.roles", format=fmt, size=SEATS)
    if protocol.rules().check_style != "black_red":
        raise ExportRefusedError("export.checks", format=fmt)
    return Result(protocol.result)


# -- where the game was when something happened -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Moment:
    """Where the table was: the day or night, who held the floor and why, which vote was running."""

    kind: Literal["night", "day"]
    number: int
    floor: FloorKind | None = None
    speaker: int | None = None
    voting: int | None = None
    """The voting round (0 the main vote, 1 the first revote...) while hands are counted."""
    lift: bool = False
    best_move: bool = False


@dataclass(frozen=True, slots=True)
class Mark:
    """A foul or a removal and when it happened."""

    at: datetime
    moment: Moment


@dataclass(slots=True)
class Timeline:
    """The fouls and technical fouls still standing and the removals, each with its moment, read from the log."""

    fouls: dict[int, list[Mark]] = field(default_factory=dict)
    techs: dict[int, list[Mark]] = field(default_factory=dict)
    """Technical fouls, counted apart from ``fouls`` as the engine counts them."""
    removals: dict[int, Mark] = field(default_factory=dict)
    started: datetime | None = None
    ended: datetime | None = None


class _Walker:
    """Follows the events in order, keeping the moment they belong to."""

    def __init__(self) -> None:
        self.now = Moment("night", 0)
        self.timeline = Timeline()

    def feed(self, at: datetime, event: ev.Event) -> None:
        now = self.now
        match event:
            case ev.NightFell(night=n):
                self.now = Moment("night", n)
            case ev.DayStarted(day=d):
                self.now = Moment("day", d)
            case ev.FloorGiven(turn=turn):  # a car crash speech keeps the count of the day's votes
                self.now = Moment(now.kind, now.number, turn.kind, turn.seat, voting=now.voting)
            case ev.VotingStarted():
                voting = 0 if now.voting is None else now.voting + 1
                self.now = Moment(now.kind, now.number, voting=voting)
            case ev.LiftVoteStarted():
                self.now = Moment(now.kind, now.number, voting=now.voting, lift=True)
            case ev.BestMoveAsked(seat=seat):
                self.now = Moment(now.kind, now.number, speaker=seat, best_move=True)
            case ev.FoulGiven(seat=seat, technical=technical):
                self._marks(seat, technical=technical).append(Mark(at, now))
            case ev.FoulRevoked(seat=seat, total=total, technical=technical):
                del self._marks(seat, technical=technical)[total:]
            case ev.ActionTakenBack(seat=seat, total=total, technical=technical):
                del self._marks(seat, technical=False)[total:]
                del self._marks(seat, technical=True)[technical:]
                if event.kind == "removal":
                    self.timeline.removals.pop(seat, None)
            case ev.PlayerRemoved(seat=seat):
                self.timeline.removals[seat] = Mark(at, now)
            case ev.GameEnded():
                self.timeline.ended = at
            case _:
                pass


    def _marks(self, seat: int, *, technical: bool) -> list[Mark]:
        marks = self.timeline.techs if technical else self.timeline.fouls
        return marks.setdefault(seat, [])


def timeline(game: StoredGame) -> Timeline:
    """When each standing foul and each removal of ``game`` happened, and while what."""
    walker = _Walker()
    walker.timeline.started = game.log[0].at if game.log else game.created_at
    for command in game.log:
        for data in command.events:
            walker.feed(command.at, event_from_data(data))
    return walker.timeline


# -- shared readings of the protocol ------------------------------------------------------------------------------


def _order(kind: str, number: int) -> int:
    """A day or night as one count: night 0, day 1, night 1, day 2..."""
    return 2 * number if kind == "night" else 2 * number - 1


def _alive_at(protocol: Protocol, day: Day) -> list[int]:
    """The seats still at the table when ``day`` voted: none had left before that day."""
    now = _order("day", day.number)
    return [s.seat for s in protocol.seats
            if s.departure is None or _order(s.departure.at.kind, s.departure.at.number) >= now]


def _ballots(protocol: Protocol, day: Day) -> list[dict[int, int]]:
    """Each voting round of ``day``: who voted for whom, the silent hands where the engine sends them.

    A lone nominee the engine sends away without a count (after the first day) had every hand:
    each seat's silent vote goes to the only candidate, as the sites record it.
    """
    rounds = []
    for vote in day.votes:
        if not vote.closed or not vote.tally:
            continue
        ballot = {voter: row.candidate for row in vote.tally for voter in row.voters}
        target = silent_vote_target([row.candidate for row in vote.tally])
        ballot.update(dict.fromkeys(vote.silent, target))
        rounds.append(ballot)
    if not day.votes and len(day.voted_out) == 1 and day.voted_out_cause == Cause.VOTED_OUT:
        rounds.append(dict.fromkeys(_alive_at(protocol, day), silent_vote_target(day.voted_out)))
    return rounds


def _extra(protocol: Protocol, seat: int) -> tuple[Decimal, str]:
    """The judge's extra points for ``seat`` and their reasons, joined."""
    given = [x for x in protocol.extra_points if x.seat == seat]
    return sum((x.value for x in given), Decimal(0)), "; ".join(x.reason for x in given if x.reason)


def _utc(at: datetime | None) -> datetime:
    at = at or datetime.fromtimestamp(0, UTC)
    return at.astimezone(UTC) if at.tzinfo else at.replace(tzinfo=UTC)


def _number(value: Decimal) -> int | float:
    """A point figure as a JSON number: whole figures as integers."""
    return int(value) if value == value.to_integral_value() else float(value)


# -- mafiaratings -------------------------------------------------------------------------------------------------

MR_ROLES = {Role.CITIZEN: "civ", Role.SHERIFF: "sheriff", Role.MAFIA: "maf", Role.DON: "don"}
MR_WINNER = {Result.RED: "civ", Result.BLACK: "maf", Result.DRAW: "tie"}
MR_DEATH = {Cause.KILLED: "night", Cause.VOTED_OUT: "day", Cause.LIFTED: "day", Cause.FOULS: "warnings",
            Cause.TECHNICAL_FOULS: "techFouls", Cause.OATHS: "kickOut", Cause.DISQUALIFIED: "kickOut",
            Cause.LEFT: "giveUp"}
MR_TIMED_BY_FOULS = (Cause.FOULS, Cause.TECHNICAL_FOULS)
"""Deaths whose time the site takes from the last foul (``Game::get_player_death_time``), so none is written."""
MR_FEATURES = "gsdutclhvknwr"
"""Don and Sheriff checks, deaths with round, type and time, legacy, shooting, voting with the lift
vote, nominating, warnings with their times (``Game::feature_flags_help`` in include/game.php); the
``w`` and ``r`` flags cover technical fouls too ("warnings and tech fouls share the same flag")."""
MR_MAX_WARNINGS = 4
MR_MAX_TECH_FOULS = 2
"""``check_tech_fouls`` cuts a longer list to two: the site's rules remove a player at the second."""
MR_THREE_FOULS = {"lose_speech": 0, "short_speech": 1, "none": 2}
"""Rules code option 9.5: the third foul costs the next speech, cuts it to 30 s, or costs nothing."""


def mr_round(kind: str, number: int) -> int:
    """The mafiaratings round of a bot's day or night: night n is round n, day d is round d - 1."""
    return number if kind == "night" else number - 1


def mr_gametime(moment: Moment) -> JSONObject:
    """A moment as mafiaratings' gametime object (``Game::add_time_help``, ``check_gametime``)."""
    out: JSONObject = {"round": mr_round(moment.kind, moment.number)}
    if moment.best_move or moment.floor is FloorKind.LAST_WORD:  # the best move is asked before the day starts
        out.update(time="night kill speaking", speaker=moment.speaker)
    elif moment.kind == "night":
        out["time"] = "arrangement" if moment.number == 0 else "shooting"
    elif moment.floor is FloorKind.FAREWELL:
        out.update(time="day kill speaking", speaker=moment.speaker)
    elif moment.floor in (FloorKind.SPEECH, FloorKind.SILENT):
        out.update(time="speaking", speaker=moment.speaker)
    elif moment.lift:
        out.update(time="voting kill all", votingRound=moment.voting or 0)
    elif moment.voting is not None or moment.floor in (FloorKind.DEFENSE, FloorKind.TIE_SPEECH):
        out.update(time="voting", votingRound=moment.voting or 0)
        if moment.speaker is not None and moment.floor is not None:
            out["speaker"] = moment.speaker
    else:
        out["time"] = "day start"
    return out


def rules_code(rules: Ruleset) -> str:
    """The ruleset as mafiaratings' 13-digit rules code (include/rules.php, one digit per option)."""
    digits = [
        0,  # 6.3 rotation: the next day opens with the seat after the last opener
        0,  # 6.7 on record: colours left on record are not recorded
        0,  # 6.8 on record count
        2,  # 7.5 withdraw: a nomination cannot be withdrawn
        0,  # 7.16 first day: a lone nominee on day 1 is not voted on
        0,  # 7.18 split order: the revote keeps the order
        0,  # 7.21 a table tied among all: night falls, nobody leaves
        0,  # 7.22 two tied at four: the lift vote as in any round
        0 if rules.lift_three_tied_at_nine else 1,  # 7.23 three tied at nine
        0 if rules.best_move else 1,  # 8.17 legacy (the best move)
        0 if rules.last_word_after_end else 1,  # 8.19 the last word after the end
        MR_THREE_FOULS[rules.three_foul_penalty],  # 9.5 three fouls
        1 if rules.technical_fouls else 0,  # 9.6 technical fouls (9.6.2: counted apart, the second removes)
    ]
    return "".join(map(str, digits))


def _mr_death(seat: ProtocolSeat, line: Timeline) -> JSONObject | None:
    departure = seat.departure
    if departure is None:
        return None
    cause = Cause(departure.cause)
    death: JSONObject = {"round": mr_round(departure.at.kind, departure.at.number), "type": MR_DEATH[cause]}
    mark = line.removals.get(seat.seat)
    if cause.is_removal and mark is not None:
        death["round"] = mr_round(mark.moment.kind, mark.moment.number)
        if cause not in MR_TIMED_BY_FOULS:
            # A death of warnings (tech fouls) takes its time from the fourth warning (the second tech foul),
            # and ``check_warnings`` (``check_tech_fouls``) cuts the one whose time the death repeats.
            death["time"] = mr_gametime(mark.moment)
    return death


def _per_round(values: dict[int, JSON]) -> list[JSON]:
    """``values`` by round as an array from round 0, nulls between, none trailing."""
    if not values:
        return []
    return [values.get(r) for r in range(max(values) + 1)]


def _mr_votes(protocol: Protocol) -> dict[int, dict[int, JSON]]:
    """Each seat's voting per round: one vote, or the votes of each revote with the lift vote's yes/no last."""
    out: dict[int, dict[int, JSON]] = {}
    for day in protocol.days:
        r = mr_round("day", day.number)
        rounds = _ballots(protocol, day)
        voters = sorted({v for ballot in rounds for v in ballot} | set(day.lift.yes if day.lift else ()))
        for voter in voters:
            votes: list[JSON] = [ballot[voter] for ballot in rounds if voter in ballot]
            if day.lift is not None and day.lift.alive:
                votes.append(voter in day.lift.yes)
            if votes:
                out.setdefault(voter, {})[r] = votes[0] if len(votes) == 1 else votes
    return out


@dataclass(slots=True)
class _Actions:
    """Each seat's nominations, shots, the checks it underwent and its best move, by mafiaratings round."""

    nominating: dict[int, dict[int, JSON]] = field(default_factory=dict)
    shooting: dict[int, dict[int, JSON]] = field(default_factory=dict)
    checks: dict[tuple[str, int], int] = field(default_factory=dict)
    legacy: dict[int, list[JSON]] = field(default_factory=dict)
    voting: dict[int, dict[int, JSON]] = field(default_factory=dict)


def _mr_actions(protocol: Protocol) -> _Actions:
    acts = _Actions(voting=_mr_votes(protocol))
    for day in protocol.days:
        for nomination in day.nominations:
            acts.nominating.setdefault(nomination.seat, {}).setdefault(mr_round("day", day.number), nomination.target)
    for night in protocol.nights:
        for shot in night.shots:
            acts.shooting.setdefault(shot.seat, {})[night.number - 1] = shot.target
        for check in night.checks:
            acts.checks.setdefault((check.by, check.target), night.number)
        if night.best_move is not None:
            acts.legacy[night.best_move.seat] = list(night.best_move.targets)
    return acts


def _mr_player(protocol: Protocol, seat: ProtocolSeat, line: Timeline, acts: _Actions,
               place: Placement) -> JSONObject:
    """One seat as ``players[n]``: only the fields it has, as ``Game::api_help`` lets them be absent."""
    player: JSONObject = {"name": seat.display_name, "role": MR_ROLES[Role(seat.role or Role.CITIZEN)]}
    if seat.user_id in place.player_ids:
        player["id"] = place.player_ids[seat.user_id]
    death = _mr_death(seat, line)
    warnings: list[JSON] = [mr_gametime(mark.moment) for mark in line.fouls.get(seat.seat, [])[:MR_MAX_WARNINGS]]
    techs: list[JSON] = [mr_gametime(mark.moment) for mark in line.techs.get(seat.seat, [])[:MR_MAX_TECH_FOULS]]
    extra, reasons = _extra(protocol, seat.seat)
    fields: list[tuple[str, JSON]] = [
        ("death", death), ("warnings", warnings or None), ("techFouls", techs or None),
        ("don", acts.checks.get((Role.DON.value, seat.seat))),
        ("sheriff", acts.checks.get((Role.SHERIFF.value, seat.seat))),
        ("bonus", _number(extra) if extra else None), ("comment", reasons or None),
        ("legacy", acts.legacy.get(seat.seat)),
    ]
    for key, source in (("voting", acts.voting), ("nominating", acts.nominating), ("shooting", acts.shooting)):
        fields.append((key, _per_round(source[seat.seat]) if source.get(seat.seat) else None))
    player.update((key, value) for key, value in fields if value is not None)
    return player


def mafiaratings_game(game: StoredGame, protocol: Protocol, place: Placement | None = None) -> JSONObject:
    """One game as mafiaratings' ``api/ops/game.php?op=create`` takes it (``Game::api_help``).

    Raises:
        ExportRefusedError: the game is not a ten-seat classic game (``check_exportable``).
    """
    result = check_exportable(protocol, "mafiaratings")
    place = place or Placement()
    line = timeline(game)
    acts = _mr_actions(protocol)
    players: list[JSON] = [_mr_player(protocol, seat, line, acts, place) for seat in protocol.seats]
    out: JSONObject = {
        "features": MR_FEATURES,
        "rating": True,
        "startTime": _utc(line.started).isoformat(),
        "endTime": _utc(line.ended or protocol.game.finished_at).isoformat(),
        "timezone": "UTC",
        "language": game.language,
        "rules": rules_code(protocol.rules()),
        "winner": MR_WINNER[result],
        "moderator": {"id": place.moderator_id} if place.moderator_id is not None else {},
        "players": players,
    }
    for key, value in (("clubId", place.club_id), ("eventId", place.event_id),
                       ("tournamentId", place.tournament_id), ("tableNum", place.table),
                       ("gameNum", place.number)):
        if value is not None:
            out[key] = value
    return out


# -- Polemica -----------------------------------------------------------------------------------------------------

PL_ROLES = {Role.DON: 0, Role.MAFIA: 1, Role.CITIZEN: 2, Role.SHERIFF: 3}
"""``Role`` in model/game/Role.kt: an integer."""
PL_RESULT = {Result.RED: 0, Result.BLACK: 1}
"""``PolemicaGameResult``: RED_WIN 0, BLACK_WIN 1; it has no draw, so a draw has no result."""
PL_RECORD_VERSION = 4
PL_SCORING_TYPE = 1


def pl_stage(moment: Moment) -> JSONObject:
    """A moment as Polemica's ``Stage`` (model/game/Stage.kt): type, day, and the player or the vote."""
    if moment.best_move:  # asked at dawn, before the day starts
        return {"type": "guess", "day": moment.number, "player": moment.speaker}
    if moment.kind == "night":
        return {"type": "shooting" if moment.number else "briefing", "day": moment.number}
    stage: JSONObject = {"day": moment.number}
    if moment.best_move:
        stage["type"] = "guess"
    elif moment.floor is FloorKind.LAST_WORD:
        stage["type"] = "shooted"
    elif moment.floor is FloorKind.FAREWELL:
        stage["type"] = "voted"
    elif moment.floor in (FloorKind.DEFENSE, FloorKind.TIE_SPEECH):
        stage["type"] = "reSpeech"
    elif moment.floor is not None:
        stage["type"] = "speech"
    elif moment.lift:
        stage["type"] = "lift"
    elif moment.voting is not None:
        stage.update(type="voting", voting=moment.voting + 1)
    else:
        stage["type"] = "toDay"
    if moment.speaker is not None and stage["type"] not in ("voting", "lift"):
        stage["player"] = moment.speaker
    return stage


def _local(at: datetime | None) -> str:
    """A time as Polemica's ``LocalDateTime``: ISO 8601 without a zone, in UTC."""
    return _utc(at).replace(tzinfo=None).isoformat(timespec="milliseconds")


def _pl_votes(protocol: Protocol) -> list[JSON]:
    """Nominations (``num`` 0), each voting round (``num`` 1, 2...), and the lift vote's yes hands (no ``num``)."""
    out: list[JSON] = []
    for day in protocol.days:
        for nomination in day.nominations:
            out.append({"day": day.number, "num": 0, "voter": nomination.seat, "candidate": nomination.target})
        for num, ballot in enumerate(_ballots(protocol, day), start=1):
            out.extend({"day": day.number, "num": num, "voter": voter, "candidate": candidate}
                       for voter, candidate in sorted(ballot.items()))
        if day.lift is not None and day.lift.seats:
            out.extend({"day": day.number, "voter": voter, "candidate": day.lift.seats[0]}
                       for voter in sorted(day.lift.yes))
    return out


def _pl_foul(mark: Mark) -> JSONObject:
    """A foul as Polemica's ``Foul``: when, and at which stage."""
    return {"time": _local(mark.at), "stage": pl_stage(mark.moment)}


def _pl_player(seat: ProtocolSeat, line: Timeline, guesses: dict[int, list[JSON]], place: Placement) -> JSONObject:
    """One seat as ``PolemicaPlayer``: each foul and technical foul with its time and stage, a removal: ``disqual``."""
    return {
        "position": seat.seat,
        "username": seat.display_name,
        "role": PL_ROLES[Role(seat.role or Role.CITIZEN)],
        "techs": [_pl_foul(mark) for mark in line.techs.get(seat.seat, [])],
        "fouls": [_pl_foul(mark) for mark in line.fouls.get(seat.seat, [])],
        "guess": {"mafs": guesses[seat.seat], "civs": None, "vice": None} if seat.seat in guesses else None,
        "player": place.player_ids.get(seat.user_id) if seat.user_id is not None else None,
        "disqual": pl_stage(line.removals[seat.seat].moment) if seat.seat in line.removals else None,
        "award": None,
    }


def polemica_game(game: StoredGame, protocol: Protocol, place: Placement | None = None) -> JSONObject:
    """One game as Polemica's ``POST /v1/competitions/{id}/games`` takes it (``PolemicaGame``).

    Raises:
        ExportRefusedError: the game is not a ten-seat classic game (``check_exportable``).
    """
    result = check_exportable(protocol, "polemica")
    place = place or Placement()
    line = timeline(game)
    guesses: dict[int, list[JSON]] = {
        n.best_move.seat: list(n.best_move.targets) for n in protocol.nights if n.best_move is not None}
    players: list[JSON] = [_pl_player(seat, line, guesses, place) for seat in protocol.seats]
    bonuses: list[JSON] = []
    for seat in protocol.seats:
        extra, reasons = _extra(protocol, seat.seat)
        if extra:
            bonuses.append({"position": seat.seat, "text": reasons, "scores": float(extra), "basic": False})
    last_day = max((d.number for d in protocol.days), default=0)
    end: JSONObject = {"type": "gameOver", "day": last_day}
    return {
        "id": None,
        "name": place.stage or None,
        "master": place.moderator_id or 0,
        "referee": None,
        "scoringVersion": None,
        "scoringType": PL_SCORING_TYPE,
        "version": PL_RECORD_VERSION,
        "zeroVoting": None,
        "tags": [],
        "players": players,
        "checks": [{"night": n.number, "role": PL_ROLES[Role(c.by)], "player": c.target}
                   for n in protocol.nights for c in n.checks],
        "shots": [{"night": n.number, "shooter": s.seat, "victim": s.target}
                  for n in protocol.nights for s in n.shots],
        "stage": end,
        "votes": _pl_votes(protocol),
        "comKiller": None,
        "bonuses": bonuses,
        "started": _local(line.started),
        "stop": end,
        "isLive": False,
        "result": PL_RESULT.get(result),
        "num": place.number,
        "table": place.table,
        "phase": place.round,
        "factor": float(place.factor),
    }


# -- files --------------------------------------------------------------------------------------------------------


def federation_game(fmt: Format, game: StoredGame, protocol: Protocol, place: Placement | None = None) -> JSONObject:
    """One game in ``fmt``.

    Raises:
        ExportRefusedError: the format cannot hold the game.
    """
    if fmt == "mafiaratings":
        return mafiaratings_game(game, protocol, place)
    return polemica_game(game, protocol, place)


def federation_json(fmt: Format, games: Sequence[tuple[StoredGame, Protocol, Placement]]) -> str:
    """The file an organiser uploads: one game as an object, a tournament's games as an array in order.

    Raises:
        ExportRefusedError: a game the format cannot hold (the first, by its order).
    """
    data = [federation_game(fmt, g, p, place) for g, p, place in games]
    return json.dumps(data[0] if len(data) == 1 else data, ensure_ascii=False, indent=1) + "\n"



# -- what the files are made of -----------------------------------------------------------------------------------


def seat_lines(game: StoredGame) -> tuple[SeatPoints, ...]:
    """Each seat's points by line (win, best move, penalty, extra), as the engine counts them for the blank."""
    state = final_state(game)
    return seat_points(state.state, protocol_version(state.ruleset))


def tournament_order(tm: StoredTournament) -> list[tuple[int, Placement]]:
    """The tournament's played games in order of play (round, then table), each with its numbers and weight."""
    weights = multipliers(tm)
    tables = sorted((rt for rt in tm.round_tables if rt.game_id is not None), key=lambda rt: (rt.round, rt.table))
    return [(rt.game_id, Placement(tournament=tm.name, round=rt.round, table=rt.table, number=number,
                                   factor=weights.get(rt.round, Decimal(1))))
            for number, rt in enumerate(tables, start=1) if rt.game_id is not None]
