"""``/mafia stats`` and ``/mafia top`` answer with their charts, end to end on the emulator.

A whole game is played through Discord; then each command's answer is read back: its text as
before, and one PNG attached to the same answer, of the chart's size, byte for byte the chart the
store's numbers draw, with its alt text in the reader's language.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest

from cogs.texts.history import (
    LEAGUE_IMAGE,
    STATS_IMAGE,
    league_alt,
    league_chart,
    league_lines,
    pages,
    stats_alt,
    stats_chart,
    stats_lines,
)
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.pictures.charts import STATS_SIZE, draw_league, draw_stats, league_size
from mafiabot.store import GuildSettings
from mafiabot.tools.demo import Harness, Strategy, harness
from tests.harness import FAST_GLOBAL as FAST
from tests.harness import play_whole_game

SEATS = 10
Files = list[tuple[str, bytes]]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def last_callback(h: Harness) -> Any:
    """The body (``payload_json``) of the latest interaction callback the bot sent."""
    bodies = [r.body for r in h.emu.requests if r.method == "POST" and r.path.endswith("/callback")]
    assert bodies
    return bodies[-1]


async def answer(h: Harness, person: ScriptedUser, name: str, **options: Any) -> tuple[list[str], Files]:
    """The texts of a command's answer and the files that came with it."""
    before = len(h.emu.uploads)
    reply = await person.run_command(h.env.text, name, **options)
    assert reply.ephemeral, reply.content
    return [reply.content, *(m.content for m in reply.followups)], list(h.emu.uploads[before:])


@pytest.mark.parametrize("language", ["en", "ka"])
async def test_stats_and_top_answer_with_their_charts(language: str) -> None:
    async with harness(SEATS, emulator_config=FAST) as h:
        guild = h.env.guild.id
        await h.store.save_settings(GuildSettings(guild, language=language))
        await play_whole_game(h, "classic", SEATS, Strategy(3))
        await h.wait(lambda: h.table() is None)

        person = h.players[2]
        record = await h.store.player_stats(guild, person.id)
        history = await h.store.rating_history(guild, person.id)
        texts, files = await answer(h, person, "mafia stats")
        assert texts == pages(stats_lines(language, person.name, record))
        assert [name for name, _ in files] == [STATS_IMAGE]
        png = files[0][1]
        assert png_size(png) == STATS_SIZE
        chart = stats_chart(language, person.name, record, history)
        assert chart is not None
        drawn = draw_stats(chart)
        assert png == drawn.png
        assert len(history) == record.games == 1
        assert sum(len(curve) for curve in drawn.curves) == 1
        attachments = last_callback(h)["data"]["attachments"]
        assert [(a["filename"], a["description"]) for a in attachments] == [
            (STATS_IMAGE, stats_alt(language, person.name, history))]

        # Someone who never played: the words alone, no empty chart.
        texts, files = await answer(h, person, "mafia stats", member=h.judge)
        assert len(texts) == 1
        assert files == []

        rows = await h.store.league(guild, limit=50)
        texts, files = await answer(h, h.players[4], "mafia top", period="week")
        assert texts == pages(league_lines(language, rows, "week", None))
        assert [name for name, _ in files] == [LEAGUE_IMAGE]
        assert len(rows) == SEATS
        assert png_size(files[0][1]) == league_size(SEATS)
        table = league_chart(language, rows, "week", None)
        assert table is not None
        assert files[0][1] == draw_league(table).png
        attachments = last_callback(h)["data"]["attachments"]
        assert [(a["filename"], a["description"]) for a in attachments] == [
            (LEAGUE_IMAGE, league_alt(language, rows, "week", None))]

        # A ruleset nobody played: the empty table in words, no image.
        texts, files = await answer(h, h.players[4], "mafia top", ruleset="fiim")
        assert len(texts) == 1
        assert files == []
        assert "attachments" not in last_callback(h)["data"]

        assert_no_spec_violations(h.emu)
