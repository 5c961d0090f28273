"""``/mafia stats`` and ``/mafia top`` answer with their charts, end to end on the emulator.

A whole game is played through Discord; then each command's answer is read back: its text as
before, and one PNG on the same (ephemeral) answer, fetched from the emulator's CDN by the link the
message carries, decoded, of the chart's size, byte for byte the chart the store's numbers draw,
with its alt text in the reader's language.
"""

from __future__ import annotations

import asyncio
import io
from typing import Any

import aiohttp
import pytest
from PIL import Image

from cogs._common import without_files
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
from mafiabot.emulator import Overwrite, Permission
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.i18n import t
from mafiabot.host.pictures.charts import STATS_SIZE, draw_league, draw_stats, league_size
from mafiabot.store import GuildSettings
from mafiabot.testing import Harness, Strategy, harness
from tests.harness import FAST_GLOBAL as FAST
from tests.harness import play_whole_game

SEATS = 10


async def answer(h: Harness, person: ScriptedUser, name: str, **options: Any) -> tuple[list[str], list[Any]]:
    """The texts of a command's answer and the attachment objects of its first message."""
    reply = await person.run_command(h.env.text, name, **options)
    assert reply.ephemeral, reply.content
    # On a busy machine the drawing may outlast the bot's two seconds: the answer then replaces "thinking".
    message = await reply.wait_final() if reply.response_type == DEFERRED_MESSAGE else reply.message
    assert message is not None
    texts = [message.content, *(m.content for m in reply.followups)]
    assert all(not m.attachments for m in reply.followups)
    return texts, list(message.to_json(h.emu.world)["attachments"])


async def served(url: str) -> bytes:
    """The file behind an attachment's link, as a Discord client would download it."""
    async with aiohttp.ClientSession() as http, http.get(url) as got:
        assert got.status == 200, url
        return await got.read()


def decoded_size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG"
        image.load()
        return image.size


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
        (shown,) = files
        assert (shown["filename"], shown["content_type"]) == (STATS_IMAGE, "image/png")
        assert shown["description"] == stats_alt(language, person.name, history)
        assert (shown["width"], shown["height"]) == STATS_SIZE
        png = await served(shown["url"])
        assert decoded_size(png) == STATS_SIZE
        chart = stats_chart(language, person.name, record, history)
        assert chart is not None
        drawn = draw_stats(chart)
        assert png == drawn.png
        assert len(history) == record.games == 1
        assert sum(len(curve) for curve in drawn.curves) == 1

        # Someone who never played: the words alone, no empty chart.
        texts, files = await answer(h, person, "mafia stats", member=h.judge)
        assert len(texts) == 1
        assert files == []

        rows = await h.store.league(guild, limit=50)
        texts, files = await answer(h, h.players[4], "mafia top", period="week")
        assert texts == pages(league_lines(language, rows, "week", None))
        (shown,) = files
        assert shown["filename"] == LEAGUE_IMAGE
        assert shown["description"] == league_alt(language, rows, "week", None)
        assert len(rows) == SEATS
        png = await served(shown["url"])
        assert decoded_size(png) == league_size(SEATS) == (shown["width"], shown["height"])
        table = league_chart(language, rows, "week", None)
        assert table is not None
        assert png == draw_league(table).png

        # A ruleset nobody played: the empty table in words, no image.
        texts, files = await answer(h, h.players[4], "mafia top", ruleset="fiim")
        assert len(texts) == 1
        assert files == []

        # Where the bot may not attach files, the words go alone, and say why the chart is missing.
        bot = h.env.app.user.id
        h.env.text.overwrites[bot] = Overwrite(bot, 1, 0, int(Permission.ATTACH_FILES))
        texts, files = await answer(h, person, "mafia stats")
        assert texts == without_files(language, pages(stats_lines(language, person.name, record)))
        assert files == []
        texts, files = await answer(h, h.players[4], "mafia top", period="week")
        assert texts == without_files(language, pages(league_lines(language, rows, "week", None)))
        assert files == []

        assert_no_spec_violations(h.emu)


DEFERRED_MESSAGE = 5


class HandedClock:
    """The bot's ``sleep``: a wait ends when the test says its time has passed."""

    def __init__(self) -> None:
        self.passed = asyncio.Event()

    async def sleep(self, seconds: float) -> None:
        await self.passed.wait()


async def test_a_slow_chart_defers_and_the_picture_comes_with_the_answer() -> None:
    async with harness(SEATS, emulator_config=FAST) as h:
        await play_whole_game(h, "classic", SEATS, Strategy(4))
        await h.wait(lambda: h.table() is None)
        clock = HandedClock()
        h.bot.sleep = clock.sleep
        release, entered = asyncio.Event(), asyncio.Event()
        reads = h.store.rating_history

        async def slow_history(guild_id: int, user_id: int) -> Any:
            entered.set()
            await release.wait()
            return await reads(guild_id, user_id)

        h.store.rating_history = slow_history  # type: ignore[method-assign]
        person = h.players[1]
        reply = person.command(h.env.text, "mafia stats")
        await asyncio.wait_for(entered.wait(), 10)
        assert not reply.acknowledged
        clock.passed.set()  # Discord's two seconds, as far as the bot can tell, and the store is still reading
        await h.wait(lambda: reply.acknowledged)
        assert reply.response_type == DEFERRED_MESSAGE
        assert reply.ephemeral
        release.set()
        answered = await reply.wait_final(timeout=10)  # in the thinking message's place
        assert reply.followups == []
        assert answered.ephemeral_for == person.id
        record = await h.store.player_stats(h.env.guild.id, person.id)
        assert answered.content == pages(stats_lines("en", person.name, record))[0]
        (shown,) = answered.to_json(h.emu.world)["attachments"]
        assert shown["filename"] == STATS_IMAGE
        assert decoded_size(await served(shown["url"])) == STATS_SIZE
        assert_no_spec_violations(h.emu)


async def test_a_member_repeating_top_gets_the_words_and_his_next_chart_after_the_cooldown() -> None:
    async with harness(SEATS, emulator_config=FAST) as h:
        await h.store.save_settings(GuildSettings(h.env.guild.id, language="ru"))
        await play_whole_game(h, "classic", SEATS, Strategy(3))
        await h.wait(lambda: h.table() is None)
        now = [1000.0]
        h.bot.charts.clock = lambda: now[0]
        rows = await h.store.league(h.env.guild.id, limit=50)
        words = pages(league_lines("ru", rows, "all", None))
        spammer, other = h.players[4], h.players[5]
        texts, files = await answer(h, spammer, "mafia top")
        assert (texts, [f["filename"] for f in files]) == (words, [LEAGUE_IMAGE])
        texts, files = await answer(h, spammer, "mafia top")
        assert (texts, files) == ([f"{words[0]}\n\n{t('ru', 'chart.cooldown', count=15)}"], [])
        now[0] += 11
        texts, files = await answer(h, spammer, "mafia stats")  # one cooldown for both charts
        assert texts[-1].endswith("\n\n" + t("ru", "chart.cooldown", count=4))
        assert files == []
        texts, files = await answer(h, other, "mafia top")
        assert [f["filename"] for f in files] == [LEAGUE_IMAGE]
        now[0] += 4
        texts, files = await answer(h, spammer, "mafia top")
        assert (texts, [f["filename"] for f in files]) == (words, [LEAGUE_IMAGE])
        assert_no_spec_violations(h.emu)
