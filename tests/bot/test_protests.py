"""Protests, end to end: a player files one during the game or after it, the judge rules, the protocol keeps it.

``/mafia protest`` is one subcommand for both: ``text`` files (a player of the game, during it or
within the ruleset's ``protest_window`` after it), ``protest`` with ``ruling`` rules (the judge, or at
a tournament its organiser). The judge hears of each protest privately, with Uphold and Reject buttons
that ask for the ruling's note.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from engine import Phase
from mafiabot.emulator.errors import ApiError
from mafiabot.emulator.state import Message
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.i18n import t
from mafiabot.host.presenter import custom_id
from mafiabot.testing import Harness, harness, open_table
from tests.bot.test_tournament import start_table
from tests.harness import FAST, admin_of, public, skip_night_zero

SLOW_CLOCK = 0.5
"""Timers at half length: no speech runs out while a test works."""


def protest_alerts(h: Harness, person: ScriptedUser) -> list[Message]:
    return [m for m in person.dm_messages(h.env.app) if m.content.startswith("Protest")]


async def file(h: Harness, who: ScriptedUser, **options: Any) -> str:
    reply = await who.run_command(h.env.text, "mafia protest", **options)
    assert reply.ephemeral, reply.content
    if reply.response_type == 5:
        return (await reply.wait_final()).content
    return reply.content


async def test_a_protest_during_the_game_is_told_to_the_judge_alone_and_ruled_with_a_note() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        player = h.user(table.user_at(3))
        answer = await file(h, player, text="The timer ran short for #2.")
        assert answer == t("en", "protest.filed", id=1, game=table.id)
        alert = await h.wait(lambda: next(iter(protest_alerts(h, h.judge)), None))
        assert "#3" in alert.content
        assert "The timer ran short for #2." in alert.content
        assert not [c for c in public(h) if "timer ran short" in c]  # nothing public
        assert all(not protest_alerts(h, p) for p in h.players)

        asked = await h.judge.press(alert, custom_id("protest", table.id, "1:upheld"))
        assert asked.response_type == 9  # the note's form
        ruled = h.judge.submit_modal(asked, {"note": "The timer is corrected."})
        await h.wait(lambda: ruled.acknowledged)
        assert "✅ " + t("en", "protest.ruled.upheld", id=1) in alert.content
        assert not alert.components
        (stored,) = await h.store.game_protests(table.id)
        assert (stored.status, stored.note, stored.ruled_by, stored.seat, stored.during_game) == (
            "upheld", "The timer is corrected.", h.judge.id, 3, True)

        refused = await file(h, h.judge, text="I protest too")
        assert refused == t("en", "error.protest.not_player")
        refused = await file(h, player, protest=1, ruling="rejected")
        assert refused == t("en", "error.protest.not_judge")
        refused = await file(h, player)
        assert refused == t("en", "error.protest.needs_text")
        refused = await file(h, h.judge, protest=1)
        assert refused == t("en", "error.protest.ruling_needs_both")
        for n in (2, 3):
            assert await file(h, player, text=f"Protest {n}") == t("en", "protest.filed", id=n, game=table.id)
        refused = await file(h, player, text="A fourth one")
        assert refused == t("en", "error.protest.too_many", count=3)
        assert [p.status for p in await h.store.game_protests(table.id)] == ["upheld", "open", "open"]
        assert_no_spec_violations(h.emu)


async def test_a_protest_after_the_game_is_ruled_by_options_and_kept_in_the_protocol_and_export() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        await h.judge.run_command(h.env.text, "mafia draw")
        await h.wait(lambda: table.game.state.phase is Phase.ENDED)
        await h.wait(lambda: h.table() is None)
        player = h.user(table.user_at(5))
        answer = await file(h, player, text="The draw came too early.", game=table.id)
        assert answer == t("en", "protest.filed", id=1, game=table.id)
        await h.wait(lambda: protest_alerts(h, h.judge) or None)
        ruled = await h.judge.run_command(h.env.text, "mafia protest", protest=1, ruling="rejected",
                                          note="The judge may declare it.")
        assert ruled.content == t("en", "protest.ruled.rejected", id=1)

        protocol = await h.store.game_protocol(table.id)
        (protest,) = protocol.protests
        assert (protest.status, protest.during_game, protest.note) == ("rejected", False, "The judge may declare it.")
        shown = await h.players[0].run_command(h.env.text, "mafia game", id=table.id)
        text = shown.content if shown.response_type != 5 else (await shown.wait_final()).content
        assert t("en", "protocol.protests_title") in text
        assert "The draw came too early." in text
        exported = json.loads(await h.store.export_json(table.id))
        assert exported["protocol"]["protests"][0]["status"] == "rejected"


async def test_a_protest_after_the_window_is_refused(tmp_path: Path) -> None:
    (tmp_path / "quick.toml").write_text('base = "classic"\nname = "Quick"\nprotest_window = 0\n', encoding="utf-8")
    # About real time: the window is measured from the stored end of the game, on the machine's clock.
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK, real_time=True,
                       config={"game": {"rulesets_dir": str(tmp_path)}}) as h:
        table = await open_table(h, "quick", 6)
        await skip_night_zero(h, table)
        await h.judge.run_command(h.env.text, "mafia draw")
        await h.wait(lambda: h.table() is None)
        refused = await file(h, h.user(table.user_at(2)), text="Too late?", game=table.id)
        assert refused == t("en", "error.protest.too_late")
        assert await h.store.game_protests(table.id) == []


async def test_a_player_is_told_when_the_judge_takes_no_direct_messages_and_the_protest_stays_filed() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        h.judge.close_dms()
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        player = h.user(table.user_at(4))
        reply = await player.run_command(h.env.text, "mafia protest", text="Noise at night.")
        assert reply.content == t("en", "protest.filed", id=1, game=table.id)
        told = await h.wait(lambda: next((m for m in player.ephemeral_messages()
                                          if m.content == t("en", "protest.judge_unreachable")), None))
        assert told.ephemeral_for == player.id
        assert [p.text for p in await h.store.game_protests(table.id)] == ["Noise at night."]


async def test_a_forged_ruling_click_by_a_player_is_refused() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        player = h.user(table.user_at(2))
        await file(h, player, text="A protest.")
        alert = await h.wait(lambda: next(iter(protest_alerts(h, h.judge)), None))
        # The alert is in the judge's direct messages: nobody else can click it.
        with pytest.raises(ApiError, match="Unknown Message"):
            player.click(alert, custom_id("protest", table.id, "1:upheld"))
        assert [p.status for p in await h.store.game_protests(table.id)] == ["open"]


async def test_at_a_tournament_its_organiser_rules_on_a_protest_and_the_exports_keep_the_ruling() -> None:
    async with harness(10, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        organisers = h.emu.create_role(h.env.guild, "organisers")
        organiser = h.emu.create_scripted_user("organiser", h.env.guild, roles=[organisers])
        await admin_of(h).run_command(h.env.text, "mafia settings", organiser_role=organisers)
        await organiser.run_command(h.env.text, "mafia tournament new", title="Cup", ruleset="fiim", rounds=1,
                                    tables=1)
        for person in h.players:
            await person.run_command(h.env.text, "mafia tournament join")
        await (await organiser.run_command(h.env.text, "mafia tournament seat")).wait_final(timeout=60)
        places: dict[str, Any] = {"text-1": h.env.text, "voice-1": h.env.voice, "judge-1": h.judge}
        opened = await organiser.run_command(h.env.text, "mafia tournament round", **places)
        assert not opened.ephemeral, opened.content
        (tm,) = await h.store.guild_tournaments(h.env.guild.id)
        seats = [s.user_id for s in sorted(tm.schedule, key=lambda s: s.seat) if s.round == 1]
        table = await start_table(h, h.env.text, h.env.voice, h.judge, seats)
        await skip_night_zero(h, table)

        player = h.user(table.user_at(4))
        assert await file(h, player, text="My speech was cut short.") == t("en", "protest.filed", id=1, game=table.id)
        # The organiser rules on a tournament's protests: told privately as the table's judge is.
        alert = await h.wait(lambda: next(iter(protest_alerts(h, organiser)), None))
        assert "My speech was cut short." in alert.content
        assert protest_alerts(h, h.judge)
        assert not [c for c in public(h) if "cut short" in c]
        asked = await organiser.press(alert, custom_id("protest", table.id, "1:rejected"))
        assert asked.response_type == 9
        ruled = organiser.submit_modal(asked, {"note": "The timer ran its full minute."})
        await h.wait(lambda: ruled.acknowledged)
        assert "✅ " + t("en", "protest.ruled.rejected", id=1) in alert.content
        (stored,) = await h.store.game_protests(table.id)
        assert (stored.status, stored.note, stored.ruled_by) == ("rejected", "The timer ran its full minute.",
                                                                 organiser.id)

        await h.judge.run_command(h.env.text, "mafia draw")
        await h.wait(lambda: h.table() is None)
        exported = await organiser.run_command(h.env.text, "mafia tournament export", format="json")
        assert exported.message is not None, exported.content
        (games,) = exported.message.attachments
        (protest,) = json.loads(games.data)["protocol"]["protests"]
        assert (protest["status"], protest["note"], protest["ruled_by"]) == (
            "rejected", "The timer ran its full minute.", organiser.id)
        blanks = await organiser.run_command(h.env.text, "mafia tournament export", format="pdf")
        assert blanks.message is not None, blanks.content
        (blank,) = blanks.message.attachments
        explained = PdfReader(io.BytesIO(blank.data)).pages[1].extract_text()
        assert "My speech was cut short." in explained
        assert "The timer ran its full minute." in explained
        assert_no_spec_violations(h.emu)
