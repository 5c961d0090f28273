"""A tournament's messages: the announcement, the seating's quality, a round's tables, the standings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

import discord

from cogs.texts.history import ALT_LIMIT
from engine import Standing
from mafiabot.core import tournaments as tn
from mafiabot.core.records import RoundTable, StoredTournament
from mafiabot.core.seating import Schedule, SeatingQuality, quality, random_schedule
from mafiabot.host.i18n import TOURNAMENT_PLACES, WEIGHT_PLACES, decimal_text, ruleset_name, t
from mafiabot.host.pictures.charts import LeagueChart
from mafiabot.host.presenter import custom_id

PAGE_LIMIT = 2000
"""Discord's limit on a message's content."""
LISTED = 60
"""The most players a list names before "and K more": a big field's list would not fit a message."""
MENTIONS_MARGIN = 200
"""Room kept for the line's own words around the list, in the longest language."""
OUT_PER_LINE = 40
"""Mentions of players sitting a round out per line: forty of the longest ids fill under 1,000 characters."""


def announcement(lang: str, tm: StoredTournament) -> str:
    """The tournament, its sizes and rules, and who has registered so far."""
    lines = [
        t(lang, "tournament.title", name=tm.name),
        t(lang, "tournament.info", rounds=tm.rounds, tables=tm.tables,
          ruleset=ruleset_name(lang, tm.ruleset_name), scoring=tm.scoring),
        *_finals_line(lang, tm),
        t(lang, "tournament.registration" if tm.status == tn.REGISTRATION else "tournament.registration_closed"),
    ]
    if not tm.players:
        return _page([*lines, t(lang, "tournament.no_players")])
    room = PAGE_LIMIT - len("\n".join(lines)) - 1
    mentions = [f"<@{p.user_id}>" for p in tm.players]
    return _page([*lines, t(lang, "tournament.players", count=len(mentions), players=some(lang, mentions, room))])


def some(lang: str, mentions: Sequence[str], room: int) -> str:
    """The first of ``mentions`` that fit in ``room`` characters (at most ``LISTED``), and "and K more": none cut."""
    shown = list(mentions[:LISTED])
    while True:
        rest = len(mentions) - len(shown)
        text = ", ".join(shown) + (" " + t(lang, "tournament.players_more", count=rest) if rest else "")
        if len(text) <= room - MENTIONS_MARGIN or not shown:
            return text
        shown.pop()


def _finals_line(lang: str, tm: StoredTournament) -> list[str]:
    """The finals and their weight, when the tournament has any."""
    if not tm.finals:
        return []
    return [t(lang, "tournament.finals_info", count=tm.finals,
              weight=decimal_text(lang, tm.finals_weight, WEIGHT_PLACES))]


def announcement_view(lang: str, tm: StoredTournament) -> discord.ui.View:
    """Join and Leave while registration is open; their clicks are routed by custom id (``cogs.tournament``)."""
    view = discord.ui.View(timeout=None)
    if tm.status != tn.REGISTRATION:
        return view
    view.add_item(discord.ui.Button(label=t(lang, "tournament.button.join"), style=discord.ButtonStyle.success,
                                    custom_id=custom_id("tjoin", tm.id)))
    view.add_item(discord.ui.Button(label=t(lang, "tournament.button.leave"), style=discord.ButtonStyle.secondary,
                                    custom_id=custom_id("tleave", tm.id)))
    return view


def seating_text(lang: str, tm: StoredTournament, schedule: Schedule) -> str:
    """Registration closed, and the schedule's quality beside a random schedule's of the same seed."""
    ours = quality(schedule, tm.forbidden)
    baseline = quality(random_schedule(schedule.players, rounds=tm.rounds, tables=tm.tables, seats=schedule.seats,
                                       seed=tm.seed), tm.forbidden)
    lines = [t(lang, "tournament.seated", name=tm.name, count=len(schedule.players), seed=tm.seed),
             t(lang, "tournament.quality.title")]
    lines += _quality_lines(lang, ours, baseline)
    return _page(lines)


def _quality_lines(lang: str, ours: SeatingQuality, other: SeatingQuality) -> list[str]:
    def span(q: SeatingQuality) -> str:
        return f"{q.meetings_min}-{q.meetings_max}"

    return [
        t(lang, "tournament.quality.games", ours=f"{ours.games_min}-{ours.games_max}",
          random=f"{other.games_min}-{other.games_max}"),
        t(lang, "tournament.quality.meetings", ours=span(ours), random=span(other),
          ideal=f"{ours.ideal_meetings_min}-{ours.meetings_max_bound}"),
        t(lang, "tournament.quality.never", ours=ours.pairs_never_met, random=other.pairs_never_met),
        t(lang, "tournament.quality.seat_repeat", ours=ours.seat_repeat_max, random=other.seat_repeat_max),
        t(lang, "tournament.quality.distinct", ours=ours.distinct_seats_min, random=other.distinct_seats_min),
        t(lang, "tournament.quality.forbidden", ours=ours.forbidden_meetings, random=other.forbidden_meetings),
    ]


def round_text(
    lang: str, tm: StoredTournament, number: int, tables: Sequence[RoundTable], commands: Mapping[str, str],
) -> list[str]:
    """The public round message: each table's channels, judge and seats, and who sits out, in whole lines.

    As many messages as Discord's length limit needs: a player must find his seat, never a cut line.
    """
    lines = [t(lang, "tournament.round.title", name=tm.name, round=number, rounds=tm.rounds)]
    for rt in tables:
        judge = t(lang, "tournament.round.judge", judge=f"<@{rt.judge_id}>") if rt.judge_id else ""
        lines.append(t(lang, "tournament.round.table", table=rt.table, channel=f"<#{rt.channel_id}>",
                       voice=f"<#{rt.voice_channel_id}>", judge=judge))
        seats = tn.table_seats(tm, number, rt.table)
        lines.append(" · ".join(t(lang, "tournament.round.seat", seat=s, user=f"<@{u}>")
                                for s, u in enumerate(seats, 1)))
    playing = {p.user_id for p in tm.schedule if p.round == number}
    out = [f"<@{p.user_id}>" for p in tm.players if p.user_id not in playing]
    for start in range(0, len(out), OUT_PER_LINE):  # a long list in lines that each fit a message
        lines.append(t(lang, "tournament.round.out", players=", ".join(out[start:start + OUT_PER_LINE])))
    lines.append(t(lang, "tournament.round.hint", count=tn.table_size(tm), **commands))
    return paged(lines)


def seat_message(lang: str, tm: StoredTournament, rt: RoundTable, seat: int) -> str:
    """A player's private note of where they play this round."""
    return t(lang, "tournament.round.dm", name=tm.name, round=rt.round, table=rt.table, seat=seat,
             channel=f"<#{rt.channel_id}>", voice=f"<#{rt.voice_channel_id}>")


def standings_pages(lang: str, tm: StoredTournament, rows: Sequence[Standing]) -> list[str]:
    """The standings as text, best first, in as many messages as Discord's length limit needs."""
    lines = [standings_title(lang, tm)]
    names = {p.user_id: p.name for p in tm.players}
    if not any(r.games for r in rows):
        lines.append(t(lang, "tournament.standings.empty"))
    for r in rows:
        lines.append(t(lang, "tournament.standings.line", place=r.place, player=discord.utils.escape_markdown(
            names.get(r.player, str(r.player))), total=figure(lang, r.total), games=r.games, wins=r.wins,
            extra=figure(lang, r.extra), ci=figure(lang, r.ci)))
    return paged(lines)


STANDINGS_IMAGE = "standings.png"


def figure(lang: str, value: Decimal) -> str:
    """A tournament's points as ``lang`` writes them, in thousandths (Ci's own precision): ``3.300``, ``3,300``."""
    return decimal_text(lang, value, TOURNAMENT_PLACES)


def standings_title(lang: str, tm: StoredTournament) -> str:
    """``🏆 Autumn Cup — standings after 2 of 4 rounds``, or the final table's title once it is over."""
    played = tm.current_round if tm.status in (tn.SEATED, tn.FINISHED) else max(tm.current_round - 1, 0)
    key = "tournament.standings.final" if tm.status == tn.FINISHED else "tournament.standings.title"
    return t(lang, key, name=tm.name, round=played, rounds=tm.rounds)


def standings_chart(lang: str, tm: StoredTournament, rows: Sequence[Standing]) -> LeagueChart | None:
    """The standings as a table image: the same lines as the text, in columns (None before any game)."""
    if not any(r.games for r in rows):
        return None
    names = {p.user_id: p.name for p in tm.players}
    columns = (t(lang, "chart.league.place"), t(lang, "chart.league.player"), t(lang, "chart.league.points"),
               t(lang, "chart.standings.games"), t(lang, "chart.standings.wins"), t(lang, "chart.league.extra"),
               "Ci")
    lines = tuple((str(r.place), names.get(r.player, str(r.player)), figure(lang, r.total), str(r.games),
                   str(r.wins), figure(lang, r.extra), figure(lang, r.ci)) for r in rows)
    return LeagueChart(title=standings_title(lang, tm).removeprefix("🏆").strip(), columns=columns, rows=lines,
                       widths=(0.8, 3.0, 1.1, 0.9, 0.9, 1.3, 0.9))


def standings_alt(lang: str, tm: StoredTournament, rows: Sequence[Standing]) -> str:
    """The standings image's alt text."""
    return t(lang, "chart.standings.alt", count=len(rows), name=tm.name)[:ALT_LIMIT]


def paged(lines: Sequence[str]) -> list[str]:
    """Whole lines into messages of at most ``PAGE_LIMIT`` characters (a longer line is cut)."""
    pages: list[str] = []
    current: list[str] = []
    for line in (ln if len(ln) <= PAGE_LIMIT else ln[:PAGE_LIMIT - 1] + "…" for ln in lines):
        if current and len("\n".join([*current, line])) > PAGE_LIMIT:
            pages.append("\n".join(current))
            current = []
        current.append(line)
    if current:
        pages.append("\n".join(current))
    return pages


def _page(lines: Sequence[str]) -> str:
    text = "\n".join(lines)
    return text if len(text) <= PAGE_LIMIT else text[:PAGE_LIMIT - 1] + "…"


def made_note(lang: str, made: Sequence[tuple[int, int, int]]) -> str:
    """The round message's first line when the bot made channels for it (table, text id, voice id); else nothing."""
    if not made:
        return ""
    tables = "; ".join(t(lang, "tournament.round.made_table", table=n, text=f"<#{text}>", voice=f"<#{voice}>")
                       for n, text, voice in made)
    return t(lang, "tournament.round.made", count=len(made), tables=tables) + "\n"


def registered_text(lang: str, name: str, added: Sequence[int], already: Sequence[int]) -> str:
    """What the organiser is told after registering members: how many were added, and who was already in."""
    lines = [t(lang, "tournament.registered", count=len(added), name=name)]
    if already:
        room = PAGE_LIMIT - len(lines[0]) - 1
        lines.append(t(lang, "tournament.registered_already", players=some(lang, [f"<@{u}>" for u in already], room)))
    return _page(lines)
