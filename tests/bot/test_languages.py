"""Whole games in Russian and Georgian: the table hears its own language, and each preset its own words.

Only Discord's markup (mentions, timestamps, command mentions), seat numbers and the players' own
names may be Latin on the table's channel of a ru or ka game; a georgian game names the Detective,
whose checks read mafia / not mafia, and never the Sheriff, in every language.
"""

from __future__ import annotations

import re

import pytest

from cogs.texts.history import pages, protocol_lines
from engine import events as ev
from mafiabot.host.i18n import t
from mafiabot.testing import Harness, Strategy, harness, open_table
from tests.harness import FAST_GLOBAL as FAST
from tests.harness import play_whole_game

MARKUP = re.compile(r"</[^>]*>|<(?:t:\d+:[A-Za-z]|@[!&]?\d+|#\d+)>")
COMMAND_TEXT = re.compile(r"(?<![<\w])/(mafia|мафия|მაფია)\b")
"""A command written as text: a reader whose client speaks another language would not find it."""


def table_texts(h: Harness) -> list[str]:
    """Every message the bot posted where the whole table reads it (the channel, not ephemeral answers)."""
    assert h.bot.user is not None
    return [m.content for m in h.emu.messages(h.env.text) if m.ephemeral_for is None and m.author_id == h.bot.user.id]


def english_left(h: Harness, text: str) -> list[str]:
    """Latin words in ``text`` once markup and the players' own names are taken out."""
    for person in [*h.players, h.judge]:
        text = text.replace(person.name, "")
    return re.findall(r"[A-Za-z]+", MARKUP.sub("", text))


@pytest.mark.parametrize(("language", "ruleset", "players", "seed"), [
    ("ru", "georgian", 12, 5), ("ka", "georgian", 12, 5), ("ru", "classic", 10, 3), ("ka", "classic", 10, 3),
])
async def test_a_whole_game_speaks_only_its_language_on_the_table(
    language: str, ruleset: str, players: int, seed: int,
) -> None:
    async with harness(players, emulator_config=FAST, config={"game": {"language": language}}) as h:
        table = await play_whole_game(h, ruleset, players, Strategy(seed))
        assert table.language == language
        texts = table_texts(h)
        assert any(t(language, f"ruleset.{ruleset}") in text for text in texts)
        for text in texts:
            assert not english_left(h, text), text
        # Private answers too: a command is named by mention wherever the bot names one.
        for message in h.emu.messages(h.env.text):
            assert not COMMAND_TEXT.search(message.content), message.content
        if language == "ka":
            # Discord cannot write "in 30 seconds" in Georgian: the table sees clock times instead.
            assert not any(":R>" in text for text in texts)
            assert any(re.search(r"<t:\d+:T>", text) for text in texts)
        assert h.emu.violations == []


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
async def test_a_georgian_game_names_the_detective_and_never_the_sheriff(language: str) -> None:
    async with harness(12, emulator_config=FAST, config={"game": {"language": language}}, seed=3) as h:
        table = await play_whole_game(h, "georgian", 12, Strategy(5))
        # The deal is seeded, so the Detective lives to check: the test never passes for want of a check.
        assert any(isinstance(e, ev.SheriffChecked) for e in table.game.events)
        everything = [m.content for m in h.emu.messages(h.env.text)]
        for thread in h.emu.world.channels.values():
            if getattr(thread, "parent_id", None) == h.env.text.id:
                everything += [m.content for m in h.emu.messages(thread)]
        # Private answers too: the Don's prompt and the night checks.
        sheriff, detective = t(language, "role.sheriff"), t(language, "role.detective")
        stem = sheriff[:-1] if language == "ka" else sheriff
        assert not [text for text in everything if stem.lower() in text.lower()]
        summary = next(text for text in everything if t(language, "end.checks_title") in text)
        assert detective in summary
        mafia, not_mafia = t(language, "check.result.mafia"), t(language, "check.result.not_mafia")
        assert f": {mafia}." in summary or f": {not_mafia}." in summary
        for colour in ("black", "red"):
            assert f": {t(language, f'check.result.{colour}')}." not in summary
        night_zero = next(text for text in everything if t(language, "night.zero") in text)
        assert t(language, "role.doctor") in night_zero
        assert detective in night_zero
        # The protocol, read back from the store, speaks the same words.
        protocol = await h.store.game_protocol(table.id)
        pages_ = pages(protocol_lines(language, protocol))
        reply = await h.players[0].run_command(h.env.text, "mafia game", id=table.id)
        if len(pages_) > 1:
            await reply.wait_followups(len(pages_) - 1)
        sheet = "\n".join([reply.content, *(m.content for m in reply.followups)])
        assert sheet == "\n".join(pages_)
        assert detective in sheet
        assert stem.lower() not in sheet.lower()
        assert f": {mafia}." in sheet or f": {not_mafia}." in sheet


async def test_a_pause_names_resume_by_its_mention() -> None:
    async with harness(10, emulator_config=FAST, config={"game": {"language": "ru"}}) as h:
        await open_table(h, "classic", 10)
        reply = await h.judge.run_command(h.env.text, "mafia clock pause")
        group = next(c for c in h.env.app.guild_commands[h.env.guild.id].values() if c["name"] == "mafia")
        assert f"</mafia clock resume:{group['id']}>" in reply.content
        assert not COMMAND_TEXT.search(reply.content)
        # Without the commands' ids (never synced, nor fetched) the name is plain text, never a broken mention.
        h.bot.command_ids.clear()
        await h.judge.run_command(h.env.text, "mafia clock resume")
        reply = await h.judge.run_command(h.env.text, "mafia clock pause")
        assert "/mafia clock resume" in reply.content
        assert "</" not in reply.content
