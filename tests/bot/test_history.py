"""``/mafia history``, ``game``, ``stats`` and ``top`` end to end: whole games played on the emulator, then read back.

What Discord received is compared with two things: the cog's renderers fed with what the store
computes (so every number on screen is the store's), and facts worked out by hand from the engine's
own table (roles, the winner, classic's one point per winner), so a bug shared by the store and
the renderer would still show.

The emulator keeps every file sent with a message (``Emulator.uploads``), so the exports are
checked byte for byte as the bot sent them.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
import pytest_asyncio
from pypdf import PdfReader

from cogs.texts.history import (
    days_played,
    export_files,
    history_lines,
    league_lines,
    pages,
    points_text,
    protocol_lines,
    signed_points,
    stats_lines,
)
from engine import Role
from mafiabot.core.runtime import Table
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.emulator.users import Reply, ScriptedUser
from mafiabot.host.i18n import t
from mafiabot.store import GuildSettings
from mafiabot.testing import Driver, Harness, Strategy, harness, open_table
from tests.harness import FAST_GLOBAL as FAST
from tests.harness import play_whole_game

SEATS = 10
AWARDS = {seat: Decimal("0.25") if seat % 2 else Decimal("-0.5") for seat in range(1, 9)}
"""The judge's extra points in the second game, by seat."""
REASON = "for the way this player argued the case on the first day, kept calm and counted the votes aloud; seat"
DISCORD_LIMIT = 2000
ROLE_NAMES = {lang: {r: t(lang, f"role.{r.value}") for r in Role} for lang in ("en", "ru")}
NOT_LATIN = re.compile(r"</[^>]*>|<[@#t][^>]*>|#\d+|player\d+|\b(JSON|CSV)\b")
"""What may stay Latin in a Russian answer: markup (command mentions too), seats, the emulator's user names and
file format names; a preset's name is Russian."""


async def play(h: Harness, seed: int) -> Table:
    """One whole classic game, played through Discord to its end."""
    table = await play_whole_game(h, "classic", SEATS, Strategy(seed))
    await h.wait(lambda: h.table() is None)
    return table


DEFERRED_MESSAGE = 5


async def ask(person: ScriptedUser, h: Harness, name: str, expected: int, **options: Any) -> list[str]:
    """Run a command and return the texts of all its answers, once ``expected`` of them arrived."""
    reply: Reply = await person.run_command(h.env.text, name, **options)
    assert reply.ephemeral, reply.content
    # A busy machine may hold the answer past the bot's two seconds: it then replaces "thinking".
    first = (await reply.wait_final()).content if reply.response_type == DEFERRED_MESSAGE else reply.content
    if expected > 1:
        await reply.wait_followups(expected - 1)
    texts = [first, *(m.content for m in reply.followups)]
    assert len(texts) == expected, texts
    assert all(0 < len(text) <= DISCORD_LIMIT for text in texts)
    return texts


def wins(table: Table) -> dict[int, int]:
    """Each member's win (1) or not (0), from the engine's cards and outcome."""
    outcome = table.game.outcome()
    assert outcome is not None
    state = table.game.state
    return {table.user_at(s): int(state.role(s).team.value == outcome.result.value) for s in range(1, SEATS + 1)}


def points_by_hand(table: Table, awards: dict[int, Decimal]) -> dict[int, Decimal]:
    """Classic, worked by hand (rules.md#points): 1 point per member of the winning team, plus the judge's points."""
    won = wins(table)
    return {table.user_at(s): won[table.user_at(s)] + awards.get(s, Decimal(0)) for s in range(1, SEATS + 1)}


async def expected_history(h: Harness, lang: str) -> list[str]:
    games = await h.store.recent_games(h.env.guild.id, 10)
    days = [days_played(await h.store.game_protocol(g.id)) for g in games]
    history = history_lines(lang, list(zip(games, days, strict=True)), h.bot.commands_text(h.env.guild.id))
    # The hint names /mafia game by mention, so each reader's client shows its own name for it.
    mafia = h.env.app.guild_commands[h.env.guild.id]
    mafia_id = next(c["id"] for c in mafia.values() if c["name"] == "mafia")
    assert f"</mafia game:{mafia_id}>" in history[-1]
    return pages(history)


@dataclass(frozen=True)
class TwoGames:
    """Two whole classic games played on one emulator, and what the commands answered while the second ran."""

    h: Harness
    first: Table
    second: Table
    refused: list[list[str]]
    """``/mafia game`` of the running second game: a player's, the judge's, a player's as JSON."""
    history_running: list[str]

    @property
    def awards(self) -> dict[int, dict[int, Decimal]]:
        return {self.first.id: {}, self.second.id: AWARDS}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def two_games() -> AsyncIterator[TwoGames]:
    """Played once for the module's checks (a worker that takes one of them plays them for itself)."""
    async with harness(SEATS, emulator_config=FAST) as h:
        h.bot.charts.cooldown = 0  # the judge reads every member's stats in a row; the cooldown: test_stats_images.py
        first = await play(h, seed=11)
        second = await open_table(h, "classic", SEATS)
        refused = [await ask(person, h, "mafia game", 1, id=second.id) for person in (h.players[0], h.judge)]
        refused.append(await ask(h.players[0], h, "mafia game", 1, id=second.id, format="json"))
        running = await ask(h.players[1], h, "mafia history", 1)
        # The judge's extra points and a foul: more to show, and more than one message for the protocol.
        for seat, value in AWARDS.items():  # a Russian or Georgian judge writes 0,25 for 0.25
            written = str(value).replace(".", ",") if seat % 2 else str(value)
            reply = await h.judge.run_command(h.env.text, "mafia points", seat=seat, value=written,
                                              reason=f"{REASON} {seat}")
            assert reply.content.startswith(f"Extra points for #{seat}"), reply.content
        reply = await h.judge.run_command(h.env.text, "mafia foul", seat=3)
        assert reply.content.startswith("Foul to #3"), reply.content
        await Driver(h, second, Strategy(12)).play()
        await second.done.wait()
        await h.wait(lambda: h.table() is None)
        yield TwoGames(h, first, second, refused, running)
        assert_no_spec_violations(h.emu)


@pytest.mark.asyncio(loop_scope="module")
async def test_a_running_games_protocol_is_refused_and_history_shows_it_in_progress(two_games: TwoGames) -> None:
    second = two_games.second
    assert two_games.refused == [[t("en", "protocol.running", id=second.id)]] * 3
    history = two_games.history_running
    assert f"#{second.id} " in history[0]
    assert "in progress" in history[0]
    assert not any(name in history[0] for name in ROLE_NAMES["en"].values())


@pytest.mark.asyncio(loop_scope="module")
async def test_history_lists_both_games_newest_first(two_games: TwoGames) -> None:
    h, first, second = two_games.h, two_games.first, two_games.second
    expected = await expected_history(h, "en")
    history = await ask(h.players[2], h, "mafia history", len(expected))
    assert history == expected
    lines = history[0].splitlines()
    assert lines[1].startswith(f"#{second.id} · ")
    assert lines[2].startswith(f"#{first.id} · ")
    for line, table in zip(lines[1:3], (second, first), strict=True):
        outcome = table.game.outcome()
        assert outcome is not None
        assert f"· Classic · {t('en', f'history.result.{outcome.result.value}')} · " in line
        day = table.game.state.day
        assert line.endswith((f"{day} days · {SEATS} players", f"{day} day · {SEATS} players"))


@pytest.mark.asyncio(loop_scope="module")
async def test_a_games_protocol_shows_every_card_the_points_and_the_judges_extra_points(two_games: TwoGames) -> None:
    h, second = two_games.h, two_games.second
    for table in (two_games.first, second):
        protocol = await h.store.game_protocol(table.id)
        expected = pages(protocol_lines("en", protocol))
        texts = await ask(h.players[3], h, "mafia game", len(expected), id=table.id)
        assert texts == expected
        text = "\n".join(texts)
        outcome = table.game.outcome()
        assert outcome is not None
        assert t("en", f"end.result.{outcome.result.value}") in text
        points = points_by_hand(table, two_games.awards[table.id])
        won = wins(table)
        for seat in range(1, SEATS + 1):
            role = table.game.state.role(seat)
            line = next(x for x in text.splitlines() if x.startswith(f"#{seat} {table.name_at(seat)} — "))
            assert f" — {ROLE_NAMES['en'][role]} · " in line
            assert f"points {points_text('en', points[table.user_at(seat)])} · " in line
            assert ("· won ·" in line) == bool(won[table.user_at(seat)])
        assert "Night 1:" in text
        assert "Day 1, first word #" in text
        assert "Speeches: " in text
    assert len(expected) > 1, "the second protocol is long enough to need a second message"
    for seat, value in AWARDS.items():
        assert f"#{seat} {second.name_at(seat)}: {signed_points('en', value)} — {REASON} {seat} (" in text
    assert f"#3 {second.name_at(3)}, " in text.split("Fouls:")[1]

    missing = await ask(h.players[0], h, "mafia game", 1, id=9999)
    assert missing == ["There is no game #9999 on this server."]


@pytest.mark.asyncio(loop_scope="module")
async def test_each_format_answers_with_files_that_parse_back_and_match_the_store(two_games: TwoGames) -> None:
    h, first = two_games.h, two_games.first
    wire: dict[str, bytes] = {}
    for export, names in (("json", [f"mafia-game-{first.id}.json"]),
                          ("csv", [f"mafia-game-{first.id}-seats.csv", f"mafia-game-{first.id}-log.csv"]),
                          ("mafiaratings", [f"mafia-game-{first.id}-mafiaratings.json"]),
                          ("polemica", [f"mafia-game-{first.id}-polemica.json"]),
                          ("pdf", [f"mafia-game-{first.id}-fiim.pdf"])):
        before = len(h.emu.uploads)
        texts = await ask(h.players[0], h, "mafia game", 1, id=first.id, format=export)
        assert texts == [f"Game #{first.id} as {export.upper()}."]
        sent = dict(h.emu.uploads[before:])
        assert list(sent) == names
        if export != "pdf":  # the blank carries the judge's name, which only the server knows
            assert sent == dict(await export_files(h.store, first.id, export))
        wire |= sent

    # The rating sites' files: ten players in seat order, each with the card the engine dealt.
    site = json.loads(wire[f"mafia-game-{first.id}-mafiaratings.json"])
    cards = {Role.CITIZEN: "civ", Role.SHERIFF: "sheriff", Role.MAFIA: "maf", Role.DON: "don"}
    assert [p["role"] for p in site["players"]] == [cards[first.game.state.role(s)] for s in range(1, SEATS + 1)]
    assert [p["name"] for p in site["players"]] == [first.name_at(s) for s in range(1, SEATS + 1)]
    polemica = json.loads(wire[f"mafia-game-{first.id}-polemica.json"])
    assert [p["position"] for p in polemica["players"]] == list(range(1, SEATS + 1))
    blank = PdfReader(io.BytesIO(wire[f"mafia-game-{first.id}-fiim.pdf"]))
    assert len(blank.pages) == 2
    assert all(first.name_at(s) in blank.pages[0].extract_text() for s in range(1, SEATS + 1))

    stored = await h.store.get_game(first.id)
    data = json.loads(wire[f"mafia-game-{first.id}.json"].decode("utf-8"))
    assert data == json.loads(await h.store.export_json(first.id))
    assert data["format"] == "mafiabot.game/1"
    assert data["game"]["id"] == first.id
    assert data["game"]["status"] == "finished"
    assert [(s["seat"], s["user_id"], s["role"]) for s in data["seats"]] == [
        (s, first.user_at(s), first.game.state.role(s).value) for s in range(1, SEATS + 1)]
    assert len(data["log"]) == len(stored.log) == len(first.game.history)
    outcome = first.game.outcome()
    assert outcome is not None
    assert data["protocol"]["result"] == outcome.result.value

    seats_csv = wire[f"mafia-game-{first.id}-seats.csv"].decode("utf-8-sig")
    assert seats_csv == await h.store.export_csv(first.id, table="seats")
    seats = list(csv.DictReader(io.StringIO(seats_csv)))
    points, won = points_by_hand(first, {}), wins(first)
    assert [(int(r["seat"]), int(r["user_id"]), r["role"]) for r in seats] == [
        (s, first.user_at(s), first.game.state.role(s).value) for s in range(1, SEATS + 1)]
    assert [Decimal(r["points"]) for r in seats] == [points[first.user_at(s)] for s in range(1, SEATS + 1)]
    assert [r["won"] for r in seats] == [str(won[first.user_at(s)]) for s in range(1, SEATS + 1)]
    log_csv = wire[f"mafia-game-{first.id}-log.csv"].decode("utf-8-sig")
    assert log_csv == await h.store.export_csv(first.id, table="log")
    log = list(csv.DictReader(io.StringIO(log_csv)))
    assert len(log) == sum(max(1, len(c.events)) for c in stored.log)


@pytest.mark.asyncio(loop_scope="module")
async def test_stats_count_each_members_wins_points_extra_points_and_fouls(two_games: TwoGames) -> None:
    h, first, second, guild = two_games.h, two_games.first, two_games.second, two_games.h.env.guild.id
    games = (first, second)
    people = [p.id for p in h.players]
    won = {u: wins(first)[u] + wins(second)[u] for u in people}
    draws = sum(1 for g in games if (o := g.game.outcome()) is not None and o.result.value == "draw")
    extra = {u: AWARDS.get(second.seat_of(u) or 0, Decimal(0)) for u in people}
    total = {u: points_by_hand(first, {})[u] + points_by_hand(second, AWARDS)[u] for u in people}
    fouled = second.user_at(3)
    for person in h.players:
        record = await h.store.player_stats(guild, person.id)
        expected = pages(stats_lines("en", person.name, record))
        texts = await ask(h.judge, h, "mafia stats", len(expected), member=person)
        assert texts == expected
        u = person.id
        losses, rate = 2 - won[u] - draws, f"{won[u] / 2:.0%}"
        assert f"Games: 2 · wins {won[u]} · draws {draws} · losses {losses} · win rate {rate}" in texts[0]
        assert f"Points: {points_text('en', total[u])} (extra points {signed_points('en', extra[u])})" in texts[0]
        assert f"Fouls: {int(u == fouled)} · removals 0" in texts[0]
        assert "Rating: Classic: " in texts[0]
    mine = await ask(h.players[4], h, "mafia stats", 1)
    assert mine[0].startswith(f"{h.players[4].name} on this server:")
    nobody = await ask(h.players[0], h, "mafia stats", 1, member=h.judge)
    assert nobody == [f"{h.judge.name} has no finished games on this server yet."]


@pytest.mark.asyncio(loop_scope="module")
async def test_the_league_table_ranks_by_points_then_wins_then_extra_points(two_games: TwoGames) -> None:
    h, first, second, guild = two_games.h, two_games.first, two_games.second, two_games.h.env.guild.id
    people = [p.id for p in h.players]
    won = {u: wins(first)[u] + wins(second)[u] for u in people}
    extra = {u: AWARDS.get(second.seat_of(u) or 0, Decimal(0)) for u in people}
    total = {u: points_by_hand(first, {})[u] + points_by_hand(second, AWARDS)[u] for u in people}
    rows = await h.store.league(guild, limit=50)
    expected = pages(league_lines("en", rows, "all", None))
    table_text = await ask(h.players[5], h, "mafia top", len(expected))
    assert table_text == expected
    assert table_text[0].splitlines()[0] == "League table, all time:"
    assert [r.user_id for r in rows] == sorted(people, key=lambda u: (-total[u], -won[u], -extra[u], u))
    for row in rows:
        u = row.user_id
        assert (f"{row.rank}. {row.display_name} — points {points_text('en', total[u])} · wins {won[u]} of 2 · "
                f"extra points {signed_points('en', extra[u])}") in table_text[0].splitlines()
    week = await ask(h.players[5], h, "mafia top", len(expected), period="week", ruleset="classic")
    assert week[0].splitlines()[0] == "League table, last 7 days · rules: Classic:"
    assert week[0].splitlines()[1:] == table_text[0].splitlines()[1:]
    fiim = await ask(h.players[5], h, "mafia top", 1, ruleset="fiim")
    assert fiim[0].splitlines()[1] == "No finished games in this period."


def latin_left(text: str) -> list[str]:
    """Latin words in a Russian answer once markup, seats, user and ruleset names are taken out."""
    return re.findall(r"[A-Za-z]+", NOT_LATIN.sub("", text))


async def test_everything_answers_in_russian() -> None:
    async with harness(SEATS, emulator_config=FAST) as h:
        guild = h.env.guild.id
        await h.store.save_settings(GuildSettings(guild, language="ru"))
        game = await play(h, seed=5)
        running = await open_table(h, "classic", SEATS)
        assert running.language == "ru"

        refused = await ask(h.players[0], h, "mafia game", 1, id=running.id)
        assert refused == [t("ru", "protocol.running", id=running.id)]
        answers = list(refused)

        expected = await expected_history(h, "ru")
        history = await ask(h.players[0], h, "mafia history", len(expected))
        assert history == expected
        assert f"{SEATS} игроков" in history[0]
        assert "идёт" in history[0]
        answers += history

        protocol = await h.store.game_protocol(game.id)
        expected = pages(protocol_lines("ru", protocol))
        texts = await ask(h.players[1], h, "mafia game", len(expected), id=game.id)
        assert texts == expected
        text = "\n".join(texts)
        for seat in range(1, SEATS + 1):
            role = ROLE_NAMES["ru"][game.game.state.role(seat)]
            assert any(x.startswith(f"#{seat} {game.name_at(seat)} — {role} · ") for x in text.splitlines()), seat
        assert "Рассадка:" in text
        assert "Ночь 1:" in text
        answers += texts
        answers += await ask(h.players[1], h, "mafia game", 1, id=game.id, format="csv")
        answers += await ask(h.players[1], h, "mafia game", 1, id=9999)

        person = h.players[2]
        record = await h.store.player_stats(guild, person.id)
        expected = pages(stats_lines("ru", person.name, record))
        texts = await ask(person, h, "mafia stats", len(expected))
        assert texts == expected
        won = wins(game)[person.id]
        assert f"Игр: 1 · побед: {won} · ничьих: 0 · поражений: {1 - won}" in texts[0]
        assert f"Баллы: {won},00 (из них доп. баллы: 0,00)" in texts[0]  # a comma, as Russian writes it
        answers += texts
        answers += await ask(person, h, "mafia stats", 1, member=h.judge)

        rows = await h.store.league(guild, limit=50)
        expected = pages(league_lines("ru", rows, "month", None))
        texts = await ask(h.players[3], h, "mafia top", len(expected), period="month")
        assert texts == expected
        assert texts[0].startswith("Таблица лиги, последние 30 дней:")
        answers += texts

        for answer in answers:
            assert not latin_left(answer), answer
        assert_no_spec_violations(h.emu)


def test_the_mafia_group_stays_within_discords_25_subcommands() -> None:
    import importlib

    from cogs._cog import MafiaCog
    from mafiabot.host.bot import INITIAL_EXTENSIONS

    cogs = [value for extension in INITIAL_EXTENSIONS for value in vars(importlib.import_module(extension)).values()
            if isinstance(value, type) and issubclass(value, MafiaCog) and value.__module__ == extension]
    names = [command.name for cog in cogs for command in cog.__cog_app_commands__]
    assert {"history", "game", "stats", "top"} <= set(names)
    assert len(names) <= 25, names


def test_pages_fit_discord_and_lose_nothing() -> None:
    lines = [f"line {i} " + "x" * 60 for i in range(100)] + ["y" * 5000, "", "last"]
    out = pages(lines)
    assert len(out) > 1
    assert all(0 < len(page) <= DISCORD_LIMIT for page in out)
    assert "".join(out).replace("\n", "") == "".join(lines)
