"""Technical fouls and the short-speech penalty, end to end: the real bot on the emulator, scripted people.

A club's ruleset turns them on (docs/rulesets.md#fouls); the judge gives a technical foul with the
``technical`` option of ``/mafia foul`` or from the console, ``/mafia unfoul`` takes back whichever
foul came last, and the second technical foul removes the player.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine import Cause
from engine import events as ev
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.host.i18n import t
from mafiabot.host.presenter import custom_id, seat_label
from mafiabot.testing import Harness, harness, open_table
from tests.harness import FAST, public, skip_night_zero

SLOW_CLOCK = 0.5
"""Timers at half length: no speech runs out while a test issues its commands."""

CLUB = """\
base = "classic"
name = "Strict Club"
technical_fouls = true
three_foul_penalty = "short_speech"
"""


def club(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "strict.toml").write_text(CLUB, encoding="utf-8")
    return {"game": {"rulesets_dir": str(tmp_path)}}


async def said(h: Harness, text: str) -> str:
    return str(await h.wait(lambda: next((c for c in public(h) if text in c), None)))


async def test_technical_fouls_are_given_taken_back_and_remove_on_the_second(tmp_path: Path) -> None:
    async with harness(10, emulator_config=FAST, time_scale=SLOW_CLOCK, config=club(tmp_path)) as h:
        table = await open_table(h, "strict club", 10)
        await skip_night_zero(h, table)
        state = table.game.state
        player = seat_label(table, 4)
        given = await h.judge.run_command(h.env.text, "mafia foul", seat=4, technical=True)
        assert given.ephemeral
        assert given.content == t("en", "judge.done.technical", player=player, reason="")
        await said(h, t("en", "foul.technical", player=player, count=1))
        await h.judge.run_command(h.env.text, "mafia foul", seat=4)
        assert (state.foul_count(4), state.technical_count(4)) == (1, 1)

        status = await h.players[0].run_command(h.env.text, "mafia status")
        assert t("en", "fouls.technical", player=player, count=1) in status.content

        # unfoul takes back the ordinary foul (the last one), then the technical one
        await h.judge.run_command(h.env.text, "mafia unfoul", seat=4)
        assert (state.foul_count(4), state.technical_count(4)) == (0, 1)
        await h.judge.run_command(h.env.text, "mafia unfoul", seat=4)
        await said(h, t("en", "foul.technical_revoked", player=player, count=0))
        assert state.technical_count(4) == 0

        for _ in range(2):
            await h.judge.run_command(h.env.text, "mafia foul", seat=4, technical=True)
        await said(h, t("en", "removal.technical_fouls", player=player))
        assert (departure := state.departure(4)) is not None
        assert departure.cause is Cause.TECHNICAL_FOULS

        # Three ordinary fouls cut #6's next speech to 30 seconds.
        for _ in range(3):
            await h.judge.run_command(h.env.text, "mafia foul", seat=6)
        await said(h, t("en", "foul.speech_short", player=seat_label(table, 6), day=1, seconds=30))

        # The protocol, the game's text, the export and the result sheet keep them apart.
        await h.judge.run_command(h.env.text, "mafia draw")
        await h.wait(lambda: h.table() is None)
        protocol = await h.store.game_protocol(table.id)
        assert (protocol.seats[3].fouls, protocol.seats[3].technical) == (0, 2)
        assert [(f.total, f.revoked) for f in protocol.fouls if f.technical] == [(1, False), (0, True), (1, False),
                                                                                   (2, False)]
        assert protocol.seats[3].departure is not None
        assert protocol.seats[3].departure.cause == "technical_fouls"
        shown = await h.players[0].run_command(h.env.text, "mafia game", id=table.id)
        text = shown.content if shown.response_type != 5 else (await shown.wait_final()).content
        assert t("en", "protocol.technical", count=2) in text
        exported = json.loads(await h.store.export_json(table.id))
        assert exported["protocol"]["seats"][3]["technical"] == 2
        sheet = (await h.store.export_csv(table.id)).splitlines()
        header = sheet[0].lstrip("\ufeff").split(",")
        assert sheet[4].split(",")[header.index("technical_fouls")] == "2"
        assert_no_spec_violations(h.emu)


async def test_a_technical_foul_is_refused_where_the_rules_have_none() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        before = len(table.game.events)
        refused = await h.judge.run_command(h.env.text, "mafia foul", seat=2, technical=True)
        assert refused.ephemeral
        assert refused.content == t("en", "error.foul.no_technical")
        assert len(table.game.events) == before
        panel = await h.judge.run_command(h.env.text, "mafia panel")
        assert panel.message is not None
        ids = {c["custom_id"] for row in panel.message.components for c in row["components"]}
        assert custom_id("panel", table.id, "technical") not in ids


async def test_the_console_switches_its_foul_menu_to_technical_fouls(tmp_path: Path) -> None:
    async with harness(10, emulator_config=FAST, time_scale=SLOW_CLOCK, config=club(tmp_path)) as h:
        table = await open_table(h, "strict club", 10)
        await skip_night_zero(h, table)
        state = table.game.state
        reply = await h.judge.run_command(h.env.text, "mafia panel")
        panel = reply.message
        assert panel is not None
        await h.judge.press(panel, custom_id("panel", table.id, "technical"))
        menu = next(c for row in panel.components for c in row["components"]
                    if c["custom_id"] == custom_id("pfoul", table.id))
        assert menu["placeholder"] == t("en", "panel.menu.technical")
        await h.judge.choose(panel, custom_id("pfoul", table.id), ["5"])
        assert (state.foul_count(5), state.technical_count(5)) == (0, 1)
        assert f"{seat_label(table, 5)} · {t('en', 'panel.technical', count=1)}" in panel.content
        await h.judge.press(panel, custom_id("panel", table.id, "ordinary"))
        await h.judge.choose(panel, custom_id("pfoul", table.id), ["5"])
        assert (state.foul_count(5), state.technical_count(5)) == (1, 1)
        assert any(isinstance(e, ev.FoulGiven) and e.technical for e in table.game.events)
        assert_no_spec_violations(h.emu)
