"""History, protocols, stats and the league table in words (``/mafia history``, ``game``, ``stats``, ``top``).

The store computes every number (``recent_games``, ``game_protocol``, ``player_stats``, ``league``);
this module only turns those facts into words through the catalogs, and splits long answers into
messages that fit Discord's 2000-character limit. The renderers are plain functions of the store's
records, so the tests can compare what Discord received with what the store says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal

from discord.utils import escape_markdown

from engine import CLASSIC, Role, Ruleset, silent_vote_target
from mafiabot.core.ports import History
from mafiabot.core.protocol import Day, Moment, Night, Protocol, ProtocolSeat, VoteRound
from mafiabot.core.ratings import DEFAULT_RATING
from mafiabot.core.records import PERIOD_DAYS, GameSummary, LeagueRow, PlayerStats, RatingPoint
from mafiabot.host.exports import GAME_FORMATS, Named, game_files
from mafiabot.host.i18n import (
    POINT_PLACES,
    RATING_PLACES,
    command_mention,
    decimal_text,
    has_key,
    protocol_cause,
    ruleset_name,
    t,
)
from mafiabot.host.pictures.charts import Curve, LeagueChart, RoleWins, StatsChart

PAGE_LIMIT = 1900
"""Characters per message: Discord allows 2000; the margin covers clients that count differently."""
HISTORY_DEFAULT = 10
LEAGUE_LIMIT = 50
TEAMS = ("red", "black", "maniac")
SPEECH_KINDS = ("silent", "last_word", "defense", "tie_speech", "farewell")
"""Floor kinds marked in the list of speeches; a plain day speech (``speech``) is not."""
ALT_LIMIT = 1024
"""Discord's limit on an attachment's description (its alt text)."""
STATS_IMAGE = "mafia-stats.png"
LEAGUE_IMAGE = "mafia-top.png"
WIN_REASONS = ("all_black_gone", "parity", "maniac_duel", "everyone_gone", "no_departures", "declared_draw",
               "abandoned")


# -- small pieces --------------------------------------------------------------------------------


def points_text(lang: str, value: Decimal) -> str:
    """Points as ``lang`` writes them, in hundredths: ``1.00``, ``0.25`` (``1,00``, ``0,25`` in ru and ka).

    >>> [points_text("ru", Decimal(x)) for x in ("1", "0.250", "-0.5")]
    ['1,00', '0,25', '-0,50']

    Extra points are bounded now (``engine.EXTRA_POINTS_LIMIT``), but a database kept from before
    may hold any decimal; such a total is written short rather than in thousands of digits:

    >>> points_text("en", Decimal("1E+5000"))
    '1.00E+5000'
    """
    return decimal_text(lang, value, POINT_PLACES)


def signed_points(lang: str, value: Decimal) -> str:
    """Extra points with their sign, so ``+0.25`` and ``-0.50`` read as additions.

    >>> [signed_points("en", Decimal(x)) for x in ("0", "0.25", "-0.5")]
    ['0.00', '+0.25', '-0.50']
    """
    return decimal_text(lang, value, POINT_PLACES, signed=True)


def date_text(when: datetime | None, style: str = "d") -> str:
    """A Discord timestamp: every reader sees the date in their own locale and time zone."""
    return f"<t:{int(when.timestamp())}:{style}>" if when is not None else "—"


def seats_text(seats: Sequence[int]) -> str:
    """Seats as ``#2, #5`` (a dash for none), as the presenter writes them."""
    return ", ".join(f"#{seat}" for seat in seats) if seats else "—"


def player_text(lang: str, seat: int, name: str) -> str:
    """``#3 Name``; names are escaped so a ``*`` or ``_`` in one does not format the answer."""
    return t(lang, "seat.label", seat=seat, name=escape_markdown(name)).strip()


def role_text(lang: str, role: str | None, rules: Ruleset | None = None) -> str:
    """The role's name at ``rules``' table (its Sheriff may be the Detective); across rulesets, the plain name."""
    if role is None:
        return "—"
    card = (rules or CLASSIC).card_name(Role(role)) if role in tuple(Role) else role
    key = f"role.{card}"
    return t(lang, key) if has_key(key) else role


def team_text(lang: str, team: str) -> str:
    """A side's name."""
    if team not in TEAMS:
        return team
    return t(lang, {"red": "team.red", "black": "team.black", "maniac": "team.maniac"}[team])


def moment_text(lang: str, moment: Moment) -> str:
    """``day 2`` or ``night 1``."""
    return t(lang, {"day": "protocol.moment.day", "night": "protocol.moment.night"}[moment.kind],
             number=moment.number)


def result_text(lang: str, status: str, result: str | None) -> str:
    """A game's outcome in a few words, for the history list."""
    if status == "open" or result is None:
        return t(lang, "history.result.open")
    if result not in ("red", "black", "maniac", "draw", "abandoned"):
        return result
    key = {"red": "history.result.red", "black": "history.result.black", "maniac": "history.result.maniac",
           "draw": "history.result.draw", "abandoned": "history.result.abandoned"}[result]
    return t(lang, key)


def days_played(protocol: Protocol) -> int:
    """How many days the game reached (night 0 and the first night count for none)."""
    return max((day.number for day in protocol.days), default=0)


def pages(lines: Sequence[str], limit: int = PAGE_LIMIT) -> list[str]:
    r"""Join lines into messages of at most ``limit`` characters, breaking only between lines.

    A single line longer than ``limit`` (never expected, but names are user input) is cut hard.

    >>> pages(["a" * 5, "b" * 5, "c" * 5], limit=11)
    ['aaaaa\nbbbbb', 'ccccc']
    """
    out: list[str] = []
    current = ""
    for line in lines:
        pieces = [line[i:i + limit] for i in range(0, len(line), limit)] or [""]
        for piece in pieces:
            candidate = f"{current}\n{piece}" if current else piece
            if len(candidate) > limit:
                out.append(current)
                current = piece
            else:
                current = candidate
    out.append(current)
    return [page.strip("\n") for page in out if page.strip()] or ["—"]


# -- /mafia history --------------------------------------------------------------------------------


def history_lines(
    lang: str, games: Sequence[tuple[GameSummary, int]], commands: Mapping[str, str] | None = None,
) -> list[str]:
    """One line per game, newest first: id, date, ruleset, result, days and players.

    ``commands``: the mentions of the bot's commands (``MafiaBot.commands_text``) for the closing hint.
    """
    if not games:
        return [t(lang, "history.empty")]
    lines = [t(lang, "history.title")]
    for game, days in games:
        lines.append(t(lang, "history.line", id=game.id, date=date_text(game.created_at),
                       ruleset=ruleset_name(lang, game.ruleset_name),
                       result=result_text(lang, game.status, game.result),
                       days=t(lang, "history.days", count=days), players=t(lang, "history.players",
                                                                             count=game.players)))
    mention = (commands or {}).get("cmd_game") or command_mention({}, "mafia game")
    lines.append(t(lang, "history.hint", cmd_game=mention))
    return lines


# -- /mafia game -----------------------------------------------------------------------------------


def _seat_line(lang: str, protocol: Protocol, seat: ProtocolSeat, rules: Ruleset) -> str:
    details: list[str] = []
    if seat.won is True:
        details.append(t(lang, "protocol.won"))
    elif protocol.result == "draw":
        details.append(t(lang, "protocol.drew"))
    elif seat.won is False:
        details.append(t(lang, "protocol.lost"))
    if seat.points is not None:
        details.append(t(lang, "protocol.points", points=points_text(lang, seat.points)))
    details.append(t(lang, "protocol.fouls", count=seat.fouls))
    if seat.technical:
        details.append(t(lang, "protocol.technical", count=seat.technical))
    if seat.departure is not None:
        details.append(t(lang, "protocol.left", cause=protocol_cause(lang, seat.departure.cause),
                         moment=moment_text(lang, seat.departure.at)))
    return t(lang, "protocol.seat", player=player_text(lang, seat.seat, seat.display_name),
             role=role_text(lang, seat.role, rules), details=" · ".join(details))


def _night_lines(lang: str, night: Night, names: dict[int, str], rules: Ruleset) -> list[str]:
    lines = _shot_lines(lang, night)
    lines += [_check_line(lang, check.by, check.seat, check.target, rules, found=check.found) for check in night.checks]
    lines += [t(lang, "protocol.heal", seat=h.seat, target=h.target) for h in night.heals]
    lines += _morning_lines(lang, night)
    if night.best_move is not None:
        best = night.best_move
        lines.append(t(lang, "protocol.best_move", player=player_text(lang, best.seat, names.get(best.seat, "")),
                       seats=seats_text(best.targets), count=best.black))
    if not lines:
        return []
    return [t(lang, "protocol.night_title", number=night.number), *lines]


def _shot_lines(lang: str, night: Night) -> list[str]:
    lines: list[str] = []
    if night.shots:
        lines.append(t(lang, "protocol.shots", shots=", ".join(f"#{s.seat} → #{s.target}" for s in night.shots)))
    if night.maniac is not None:
        lines.append(t(lang, "protocol.maniac_shot", seat=night.maniac.seat, target=night.maniac.target))
    elif night.maniac_passed:
        lines.append(t(lang, "protocol.maniac_passed"))
    return lines


def _check_line(lang: str, by: str, seat: int, target: int, rules: Ruleset, *, found: bool) -> str:
    if by == "don":
        key = f"end.check.don_yes.{rules.checker}" if found else f"end.check.don_no.{rules.checker}"
        return t(lang, key, seat=seat, target=target)
    result = t(lang, f"check.result.{rules.check_result(black=found)}")
    return t(lang, f"end.check.{rules.checker}", seat=seat, target=target, result=result)


def _morning_lines(lang: str, night: Night) -> list[str]:
    """Who the night took, once it was resolved (night 0 takes nobody)."""
    if not night.resolved or night.number <= 0:
        return []
    if night.killed:
        return [t(lang, "protocol.killed", seats=seats_text(night.killed))]
    if night.mafia_target is None:
        return [t(lang, "morning.mafia_missed")]
    return [t(lang, "protocol.nobody_killed")]


def _speech(lang: str, seat: int, kind: str) -> str:
    if kind not in SPEECH_KINDS:
        return f"#{seat}"
    key = {"silent": "protocol.kind.silent", "last_word": "protocol.kind.last_word",
           "defense": "protocol.kind.defense", "tie_speech": "protocol.kind.tie_speech",
           "farewell": "protocol.kind.farewell"}[kind]
    return f"#{seat} ({t(lang, key)})"


def _day_lines(lang: str, day: Day, names: dict[int, str]) -> list[str]:
    lines = _floor_lines(lang, day)
    ties = list(day.ties)
    for vote in day.votes:
        lines += _vote_lines(lang, vote, ties.pop(0) if ties else None)
    lines += _verdict_lines(lang, day, names)
    if not lines and day.number == 0:
        return []
    return [t(lang, "protocol.day_title", number=day.number, seat=day.opener), *lines]


def _floor_lines(lang: str, day: Day) -> list[str]:
    """The morning's critical fouls, a cancelled vote, the speeches, the skipped and the nominations."""
    lines: list[str] = []
    if day.critical_fouls:
        lines.append(t(lang, "morning.critical", seats=seats_text(day.critical_fouls)))
    if day.vote_cancelled:
        lines.append(t(lang, "day.vote_cancelled"))
    if day.speeches:
        lines.append(t(lang, "protocol.speeches", seats=", ".join(_speech(lang, s.seat, s.kind) for s in day.speeches)))
    if day.skipped:
        lines.append(t(lang, "protocol.skipped", seats=seats_text([s.seat for s in day.skipped])))
    if day.nominations:
        items = ", ".join(f"#{n.seat} → #{n.target}" for n in day.nominations)
        lines.append(t(lang, "protocol.nominations", items=items))
    return lines


def _vote_lines(lang: str, vote: VoteRound, tie: Sequence[int] | None) -> list[str]:
    """One vote round: its tally, where the silent votes went, and the tie it left (if any)."""
    lines = [t(lang, "protocol.vote.revote" if vote.kind == "revote" else "protocol.vote.main")]
    lines += [t(lang, "vote.result_line", target=f"#{row.candidate}", count=row.total, voters=seats_text(row.voters))
              for row in vote.tally]
    if vote.silent and vote.tally:
        last = silent_vote_target([row.candidate for row in vote.tally])
        lines.append(t(lang, "vote.silent", target=f"#{last}", seats=seats_text(vote.silent)))
    if tie is not None:
        lines.append(t(lang, "vote.tie", seats=seats_text(tie)))
    return lines


def _verdict_lines(lang: str, day: Day, names: dict[int, str]) -> list[str]:
    """The lift vote, why nobody was voted, and who was voted out."""
    lines: list[str] = []
    if day.lift is not None:
        key = "vote.lift_passed" if day.lift.passed else "vote.lift_failed"
        lines.append(t(lang, key, count=len(day.lift.yes), seats=seats_text(day.lift.yes)))
    if day.no_vote is not None and has_key(f"vote.none.{day.no_vote}"):
        lines.append(t(lang, f"vote.none.{day.no_vote}"))
    lines += [t(lang, "vote.out", player=player_text(lang, s, names.get(s, ""))) for s in day.voted_out]
    return lines


def protocol_lines(lang: str, protocol: Protocol) -> list[str]:
    """The judge's sheet of a finished game: header, result, seats, each night and day, fouls, points.

    Nights and days are interleaved in the order they were played (night 0, day 1, night 1, …).
    """
    rules = protocol.rules()
    names = {s.seat: s.display_name for s in protocol.seats}
    lines = _header_lines(lang, protocol)
    lines += ["", t(lang, "protocol.seats_title")]
    lines += [_seat_line(lang, protocol, seat, rules) for seat in protocol.seats]
    nights = {night.number: night for night in protocol.nights}
    days = {day.number: day for day in protocol.days}
    for number in range(max([*nights, *days], default=-1) + 1):
        for block in (_day_lines(lang, days[number], names) if number in days else [],
                      _night_lines(lang, nights[number], names, rules) if number in nights else []):
            if block:
                lines += ["", *block]
    return lines + _judge_lines(lang, protocol, names)


def _header_lines(lang: str, protocol: Protocol) -> list[str]:
    """The game, its date and judge, its result and why."""
    game = protocol.game
    judge = f"<@{game.judge_id}>" if game.judge_id else "—"
    lines = [t(lang, "protocol.title", id=game.id, ruleset=ruleset_name(lang, game.ruleset_name),
               date=date_text(game.finished_at or game.created_at, "f"), judge=judge)]
    result = protocol.result or "abandoned"
    lines.append(t(lang, f"end.result.{result}") if has_key(f"end.result.{result}") else result)
    if protocol.reason in WIN_REASONS:
        reason = {"all_black_gone": "protocol.reason.all_black_gone", "parity": "protocol.reason.parity",
                  "maniac_duel": "protocol.reason.maniac_duel", "everyone_gone": "protocol.reason.everyone_gone",
                  "no_departures": "protocol.reason.no_departures",
                  "declared_draw": "protocol.reason.declared_draw",
                  "abandoned": "protocol.reason.abandoned"}[protocol.reason]
        lines.append(t(lang, "protocol.reason", reason=t(lang, reason)))
    return lines


def _judge_lines(lang: str, protocol: Protocol, names: dict[int, str]) -> list[str]:
    """The judge's calls: fouls, removals and extra points."""
    lines: list[str] = []
    if protocol.fouls:
        lines += ["", t(lang, "protocol.fouls_title")]
        for foul in protocol.fouls:
            kind = "protocol.foul.oath" if foul.oath else "protocol.foul.given"
            if foul.technical:
                kind = "protocol.foul.technical"
            revoked = "protocol.foul.technical_revoked" if foul.technical else "protocol.foul.revoked"
            lines.append(t(lang, revoked if foul.revoked else kind,
                           player=player_text(lang, foul.seat, names.get(foul.seat, "")),
                           moment=moment_text(lang, foul.at), count=foul.total))
    if protocol.removals:
        lines += ["", t(lang, "protocol.removals_title")]
        for removal in protocol.removals:
            player = player_text(lang, removal.seat, names.get(removal.seat, ""))
            text = t(lang, f"removal.{removal.cause}", player=player)
            if removal.reason:
                text += " " + t(lang, "judge.reason", reason=escape_markdown(removal.reason))
            lines.append(text)
    if protocol.extra_points:
        lines += ["", t(lang, "protocol.extra_title")]
        lines += [t(lang, "protocol.extra", player=player_text(lang, x.seat, names.get(x.seat, "")),
                    value=signed_points(lang, x.value), reason=escape_markdown(x.reason),
                    moment=moment_text(lang, x.at))
                  for x in protocol.extra_points]
    return lines + protest_lines(lang, protocol, names)


def protest_lines(lang: str, protocol: Protocol, names: dict[int, str]) -> list[str]:
    """The game's protests with their rulings (and the ruling's note), as the protocol's text shows them."""
    if not protocol.protests:
        return []
    lines = ["", t(lang, "protocol.protests_title")]
    for p in protocol.protests:
        text = escape_markdown(p.text)
        line = t(lang, "protocol.protest", id=p.id, player=player_text(lang, p.seat, names.get(p.seat, "")),
                 when=t(lang, "protocol.protest.during" if p.during_game else "protocol.protest.after"),
                 text=text, status=t(lang, f"protest.status.{p.status}"))
        if p.note:
            line += " · " + t(lang, "protocol.protest.note", note=escape_markdown(p.note))
        lines.append(line)
    return lines


async def export_files(history: History, game_id: int, export: str, *, language: str = "en",
                       judge: Named | None = None) -> list[tuple[str, bytes]]:
    """The files ``/mafia game format:`` attaches, as (file name, bytes): ``mafiabot.host.exports``.

    JSON is the whole game (it can be replayed); CSV is two sheets, the result sheet and the log;
    ``mafiaratings`` and ``polemica`` the rating sites' game; ``pdf`` the FIIM protocol blank.

    Raises:
        GameNotFoundError: no such game.
        ExportRefusedError: a rating site's format cannot hold the game.
    """
    fmt = next(f for f in GAME_FORMATS if f == export)
    if judge is None:
        return await game_files(history, game_id, fmt, language=language)
    return await game_files(history, game_id, fmt, language=language, judge=judge)


# -- /mafia stats ----------------------------------------------------------------------------------


def stats_lines(lang: str, name: str, stats: PlayerStats) -> list[str]:
    """A member's record: games and results, points, fouls, best moves, by team and role, ratings."""
    player = escape_markdown(name)
    if not stats.games:
        return [t(lang, "stats.none", player=player)]
    lines = [
        t(lang, "stats.title", player=player),
        t(lang, "stats.games", games=stats.games, wins=stats.wins, draws=stats.draws, losses=stats.losses,
          rate=f"{stats.win_rate:.0%}"),
        t(lang, "stats.points", points=points_text(lang, stats.points),
          extra=signed_points(lang, stats.extra_points)),
        t(lang, "stats.fouls", fouls=stats.fouls, removals=stats.removals),
    ]
    if stats.best_moves:
        lines.append(t(lang, "stats.best_moves", count=stats.best_moves, black=stats.best_move_black))
    teams = [t(lang, "stats.item", name=team_text(lang, team), wins=c.wins, games=c.games)
             for team, c in sorted(stats.by_team.items(), key=lambda x: TEAMS.index(x[0]) if x[0] in TEAMS else 9)]
    lines.append(t(lang, "stats.by_team", items=", ".join(teams)))
    roles = [t(lang, "stats.item", name=role_text(lang, role), wins=c.wins, games=c.games)
             for role, c in stats.by_role.items()]
    lines.append(t(lang, "stats.by_role", items=", ".join(roles)))
    if stats.ratings:
        ratings = [t(lang, "stats.rating_item", ruleset=ruleset_name(lang, ruleset),
                     rating=decimal_text(lang, rating, RATING_PLACES))
                   for ruleset, rating in sorted(stats.ratings.items())]
        lines.append(t(lang, "stats.ratings", items=", ".join(ratings)))
    return lines


# -- /mafia top ------------------------------------------------------------------------------------


def period_text(lang: str, period: str) -> str:
    """The period's name, as its choice reads."""
    key = {"all": "cmd.top.period.all", "year": "cmd.top.period.year", "month": "cmd.top.period.month",
           "week": "cmd.top.period.week"}[period if period in PERIOD_DAYS else "all"]
    return t(lang, key)


def league_lines(lang: str, rows: Sequence[LeagueRow], period: str, ruleset: str | None) -> list[str]:
    """The league table (rules.md#league-table): by points, then wins, then extra points; equal lines share a rank."""
    title = t(lang, "top.title", period=period_text(lang, period),
              ruleset=t(lang, "top.ruleset", ruleset=ruleset_name(lang, ruleset)) if ruleset else "")
    if not rows:
        return [title, t(lang, "top.empty")]
    return [title, *(t(lang, "top.line", rank=row.rank, player=escape_markdown(row.display_name),
                       points=points_text(lang, row.points), wins=row.wins, games=row.games,
                       extra=signed_points(lang, row.extra_points)) for row in rows)]


# -- the charts (``mafiabot.host.pictures.charts`` draws them) ------------------------------------


def stats_chart(lang: str, name: str, stats: PlayerStats, history: Sequence[RatingPoint]) -> StatsChart | None:
    """The ``/mafia stats`` chart: one rating curve per ruleset over the member's games, and wins by role.

    None when there is nothing to draw (no finished game). The x of a point is the member's game
    number over every ruleset, so the curves of two rulesets interleave as the games were played.
    """
    if not stats.games or not history:
        return None
    by_ruleset: dict[str, list[tuple[int, float]]] = {}
    for number, point in enumerate(history, start=1):
        by_ruleset.setdefault(point.ruleset_name, []).append((number, point.rating))
    curves = tuple(Curve(ruleset_name(lang, ruleset), tuple(n for n, _ in points), tuple(r for _, r in points))
                   for ruleset, points in by_ruleset.items())
    roles = tuple(RoleWins(role_text(lang, role), c.games, c.wins) for role, c in stats.by_role.items())
    return StatsChart(
        title=name, rating_title=t(lang, "chart.stats.rating_title"), rating_axis=t(lang, "chart.stats.rating_axis"),
        game_axis=t(lang, "chart.stats.game_axis"), roles_title=t(lang, "chart.stats.roles_title"),
        games_label=t(lang, "chart.stats.games"), wins_label=t(lang, "chart.stats.wins"),
        curves=curves, roles=roles, baseline=DEFAULT_RATING,
    )


def stats_alt(lang: str, name: str, history: Sequence[RatingPoint]) -> str:
    """The stats chart's alt text."""
    return t(lang, "chart.stats.alt", player=name, count=len(history))[:ALT_LIMIT]


def league_chart(lang: str, rows: Sequence[LeagueRow], period: str, ruleset: str | None) -> LeagueChart | None:
    """The ``/mafia top`` table as an image: the same lines as the text, in columns (None with no rows)."""
    if not rows:
        return None
    title = t(lang, "chart.league.title", period=period_text(lang, period),
              ruleset=t(lang, "top.ruleset", ruleset=ruleset_name(lang, ruleset)) if ruleset else "")
    columns = (t(lang, "chart.league.place"), t(lang, "chart.league.player"), t(lang, "chart.league.points"),
               t(lang, "chart.league.wins"), t(lang, "chart.league.extra"))
    lines = tuple((str(row.rank), row.display_name, points_text(lang, row.points), f"{row.wins} / {row.games}",
                   signed_points(lang, row.extra_points)) for row in rows)
    return LeagueChart(title=title, columns=columns, rows=lines, widths=(0.8, 3.0, 1.1, 1.4, 1.5))


def league_alt(lang: str, rows: Sequence[LeagueRow], period: str, ruleset: str | None) -> str:
    """The league image's alt text."""
    return t(lang, "chart.league.alt", count=len(rows), period=period_text(lang, period),
             ruleset=t(lang, "top.ruleset", ruleset=ruleset_name(lang, ruleset)) if ruleset else "")[:ALT_LIMIT]
