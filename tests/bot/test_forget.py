"""``/mafia settings forget_member``: staff forget a member through Discord, after one confirming click.

A whole game is played on the emulator first, so there is something to forget; each refusal is
checked to be private and in the server's language, and to leave every row of the store as it was.
"""

from __future__ import annotations

import logging

import pytest

from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.emulator.users import Reply
from mafiabot.host.i18n import t
from mafiabot.store.privacy import FORGOTTEN
from mafiabot.testing import Strategy, harness, open_table
from mafiabot.testing.harness import settle
from tests.harness import FAST_GLOBAL as FAST
from tests.harness import admin_of, play_whole_game
from tests.store.test_store_privacy import _mentions, _rows


def _button(reply: Reply) -> str:
    assert reply.message is not None, reply.content
    return next(str(c["custom_id"]) for row in reply.message.components for c in row["components"]
                if ":forget:" in c["custom_id"])


async def test_staff_forget_a_member_after_confirming_and_refusals_change_nothing() -> None:
    async with harness(10, emulator_config=FAST) as h:
        admin, gone, guild = admin_of(h), h.players[1], h.env.guild.id
        table = await play_whole_game(h, "classic", 10, Strategy(3))
        await h.wait(lambda: h.table() is None)
        rows = _rows(h.store)
        assert _mentions(rows, gone.id)

        refused = await h.players[0].run_command(h.env.text, "mafia settings", forget_member=gone)
        assert refused.ephemeral
        assert refused.content == t("en", "error.forget.not_admin")
        mixed = await admin.run_command(h.env.text, "mafia settings", forget_member=gone, vote_window=5)
        assert mixed.ephemeral
        assert mixed.content == t("en", "error.forget.alone")
        asked = await admin.run_command(h.env.text, "mafia settings", forget_member=gone)
        assert asked.ephemeral
        assert asked.content == t("en", "forget.confirm", member=f"<@{gone.id}>")
        assert _rows(h.store) == rows  # asking deletes nothing

        done = await admin.press(asked.message, _button(asked))  # type: ignore[arg-type]
        assert done.content == t("en", "forget.done", member=f"<@{gone.id}>", count=1)
        assert _mentions(_rows(h.store), gone.id) == []
        seats = (await h.store.game_protocol(table.id)).seats
        assert [s.display_name for s in seats].count(FORGOTTEN) == 1
        assert (await h.store.player_stats(guild, gone.id)).games == 0
        assert_no_spec_violations(h.emu)


async def test_a_member_at_a_running_table_is_not_forgotten_and_the_refusal_is_in_the_servers_language() -> None:
    async with harness(10, emulator_config=FAST) as h:
        admin, seated = admin_of(h), h.players[4]
        await admin.run_command(h.env.text, "mafia settings", language="ru")
        asked = await admin.run_command(h.env.text, "mafia settings", forget_member=seated)
        assert asked.content == t("ru", "forget.confirm", member=f"<@{seated.id}>")
        table = await open_table(h, "classic", 10)
        # The table stands still only once its mafia room is stored and Night 0's clock is set (and
        # stored): the rows read before either would differ by them, refusal or not.
        await h.wait(lambda: table.deadline() is not None)
        await settle(h, table)
        rows = _rows(h.store)

        refused = await admin.press(asked.message, _button(asked))  # type: ignore[arg-type]

        assert refused.ephemeral
        assert refused.content == t("ru", "error.forget.playing", member=f"<@{seated.id}>")
        assert _rows(h.store) == rows
        assert_no_spec_violations(h.emu)


async def test_a_member_in_a_lobby_not_started_is_not_forgotten_until_they_leave_it() -> None:
    """A lobby lives in memory: its start would write the member's seat again right after the deletion."""
    async with harness(10, emulator_config=FAST) as h:
        admin, waiting = admin_of(h), h.players[4]
        for person in (h.judge, waiting):
            person.join_voice(h.env.voice)
        lobby = (await h.judge.run_command(h.env.text, "mafia new", ruleset="classic", seats=10)).message
        assert lobby is not None
        buttons = {c["custom_id"].split(":")[1]: str(c["custom_id"]) for row in lobby.components
                   for c in row["components"]}
        assert not (await waiting.press(lobby, buttons["join"])).ephemeral
        asked = await admin.run_command(h.env.text, "mafia settings", forget_member=waiting)
        rows = _rows(h.store)

        refused = await admin.press(asked.message, _button(asked))  # type: ignore[arg-type]

        assert refused.ephemeral
        assert refused.content == t("en", "error.forget.lobby", member=f"<@{waiting.id}>", channel=h.env.text.id)
        assert _rows(h.store) == rows
        await waiting.press(lobby, buttons["leave"])
        done = await admin.press(asked.message, _button(asked))  # type: ignore[arg-type]
        assert done.content == t("en", "forget.done", member=f"<@{waiting.id}>", count=0)
        assert_no_spec_violations(h.emu)


async def test_removing_the_bot_deletes_nothing_and_the_log_names_the_command_that_would(
        caplog: pytest.LogCaptureFixture) -> None:
    """A kick by mistake must not wipe a club's history: the host operator deletes a server, on purpose."""
    async with harness(10, emulator_config=FAST) as h:
        await play_whole_game(h, "classic", 10, Strategy(3))
        await h.wait(lambda: h.table() is None)
        rows = _rows(h.store)
        guild = h.bot.get_guild(h.env.guild.id)
        assert guild is not None
        listeners = h.bot.extra_events.get("on_guild_remove", [])  # what discord.py runs on GUILD_DELETE
        assert listeners
        with caplog.at_level(logging.INFO):
            for listener in listeners:
                await listener(guild)
        said = [r.getMessage() for r in caplog.records if "forget-guild" in r.getMessage()]
        assert said == [f"server {guild.id} removed the bot; its records stay (a kick by mistake loses nothing): "
                        f"mafiabot forget-guild {guild.id} --yes deletes them"]
        assert _rows(h.store) == rows
