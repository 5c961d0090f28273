"""Answers with files where the bot lacks Attach Files: the words still come, with the reason, and no file.

Discord checks Attach Files on interaction answers as on messages (the emulator refuses such a file
with 403/50013); the bot reads ``app_permissions`` first, so nothing it answers is refused.
"""

from __future__ import annotations

from mafiabot.emulator import Overwrite, Permission
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.host.i18n import t
from mafiabot.testing import Harness, Strategy, harness
from tests.bot.test_rulesets import CLUB, upload
from tests.bot.test_slow_store import seated_tournament
from tests.harness import FAST, admin_of, play_whole_game

NOTE = t("en", "files.not_allowed")


def deny_attach_files(h: Harness) -> None:
    """The bot may post in the table's channel, but attach nothing there."""
    bot = h.env.app.user.id
    h.env.text.overwrites[bot] = Overwrite(bot, 1, 0, int(Permission.ATTACH_FILES))


def refused_files(h: Harness) -> list[int]:
    """Statuses of the bot's interaction answers that Discord refused."""
    return [r.status for r in h.emu.requests
            if (r.route or "").startswith(("/interactions/", "/webhooks/")) and r.status >= 400]


async def test_a_protocol_and_an_export_without_attach_files_come_as_words_and_say_why() -> None:
    async with harness(10, emulator_config=FAST) as h:
        table = await play_whole_game(h, "classic", 10, Strategy(4))
        await h.wait(lambda: h.table() is None)
        deny_attach_files(h)
        protocol = await h.players[0].run_command(h.env.text, "mafia game", id=table.id)
        await h.wait(lambda: any(NOTE in m.content for m in [protocol.message, *protocol.followups] if m))
        assert all(not m.attachments for m in [protocol.message, *protocol.followups] if m is not None)
        export = await h.players[0].run_command(h.env.text, "mafia game", id=table.id, format="json")
        assert export.content.startswith(t("en", "protocol.export", id=table.id, format="JSON"))
        assert export.content.endswith(NOTE)
        assert export.message is not None
        assert not export.message.attachments
        assert refused_files(h) == []
        assert_no_spec_violations(h.emu)


async def test_a_schedule_and_standings_export_without_attach_files_come_as_words_and_say_why() -> None:
    async with harness(10, emulator_config=FAST) as h:
        deny_attach_files(h)
        admin = await seated_tournament(h)
        seat = next(m for m in h.emu.messages(h.env.text) if t("en", "tournament.quality.title") in m.content)
        assert not seat.attachments
        assert any(NOTE in m.content for m in h.emu.messages(h.env.text) if m.id >= seat.id)
        exported = await admin.run_command(h.env.text, "mafia tournament export")
        assert exported.ephemeral
        assert exported.content.endswith(NOTE)
        assert exported.message is not None
        assert not exported.message.attachments
        assert refused_files(h) == []


async def test_a_rulesets_file_without_attach_files_comes_as_words_and_says_why() -> None:
    async with harness(2, emulator_config=FAST) as h:
        admin = admin_of(h)
        await upload(h, admin, "club.toml", CLUB)
        deny_attach_files(h)
        shown = await h.players[0].run_command(h.env.text, "mafia ruleset show", ruleset="our club")
        assert shown.ephemeral
        texts = [shown.content, *(m.content for m in shown.followups)]
        assert NOTE in texts[-1]
        assert shown.message is not None
        assert not shown.message.attachments
        assert refused_files(h) == []
