"""Presence at online tables, end to end: a ruleset wants the camera on, the judge hears the moment it is off.

Online clubs require a player to confirm his presence by face or gestures: with ``presence = "floor"``
while he holds the floor, with ``"day"`` all day. The judge gets a direct message (never anything
public) naming the seat, with a button that gives that seat a foul in one click.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from engine import Phase
from mafiabot.emulator.state import Message
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.fairplay import PRESENCE_FOUL
from mafiabot.host.i18n import t
from mafiabot.host.presenter import custom_id, seat_label
from mafiabot.testing import Harness, harness, open_table
from tests.harness import FAST, floor_seat, public, skip_night_zero

SLOW_CLOCK = 0.5
"""Timers at half length: no speech runs out while a test works."""


def club(tmp_path: Path, presence: str) -> dict[str, Any]:
    (tmp_path / "online.toml").write_text(f'base = "classic"\nname = "Online"\npresence = "{presence}"\n',
                                          encoding="utf-8")
    return {"game": {"rulesets_dir": str(tmp_path)}}


def presence_alerts(h: Harness, person: ScriptedUser) -> list[Message]:
    return [m for m in person.dm_messages(h.env.app) if m.content.startswith("Presence")]


async def alerted(h: Harness, count: int) -> list[Message]:
    return list(await h.wait(lambda: found if len(found := presence_alerts(h, h.judge)) >= count else None))


async def test_a_camera_off_on_the_floor_is_told_privately_with_a_one_click_foul(tmp_path: Path) -> None:
    async with harness(10, emulator_config=FAST, time_scale=SLOW_CLOCK, config=club(tmp_path, "floor")) as h:
        table = await open_table(h, "online", 10)
        await skip_night_zero(h, table)
        state = table.game.state
        assert floor_seat(table) == 1
        (alert,) = await alerted(h, 1)  # #1 took the floor with his camera off
        assert "#1" in alert.content
        assert "camera off" in alert.content
        assert not any("Presence" in c for c in public(h))
        assert all(not presence_alerts(h, p) for p in h.players)

        second = h.user(table.user_at(2))
        second.set_camera(h.env.guild)  # by day, before his turn: no alert when the floor reaches him
        await h.judge.run_command(h.env.text, "mafia skip")
        await h.wait(lambda: state.floor is not None and state.floor.seat == 2)
        second.set_camera(h.env.guild, on=False)  # the moment it goes off
        alerts = await alerted(h, 2)
        assert "#2" in alerts[1].content

        button = custom_id(PRESENCE_FOUL, table.id, "1")
        assert [c["custom_id"] for row in alert.components for c in row["components"]] == [button]
        pressed = await h.judge.press(alert, button)
        assert pressed.response_type == 7, pressed.content
        await h.wait(lambda: state.foul_count(1) == 1)
        await h.wait(lambda: "✅" in alert.content and not alert.components)
        assert t("en", "judge.done.foul", player=seat_label(table, 1), reason="") in alert.content
        assert_no_spec_violations(h.emu)


async def test_day_presence_wants_every_living_camera_on_and_night_wants_none(tmp_path: Path) -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK, config=club(tmp_path, "day")) as h:
        table = await open_table(h, "online", 6)
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        await h.judge.run_command(h.env.text, "mafia clock pause")
        await h.judge.run_command(h.env.text, "mafia clock resume")
        assert presence_alerts(h, h.judge) == []  # at night no camera is wanted
        await skip_night_zero(h, table)
        alerts = await alerted(h, 6)  # the whole table has its camera off by day
        assert sorted(re.findall(r"(?<!<)#(\d+)", a.content)[0] for a in alerts) == ["1", "2", "3", "4", "5", "6"]


async def test_a_table_without_a_presence_policy_never_asks_for_a_camera() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        speaker = floor_seat(table)
        await h.judge.run_command(h.env.text, "mafia skip")
        await h.wait(lambda: table.game.state.floor is not None and table.game.state.floor.seat != speaker)
        h.user(table.user_at(3)).set_stream(h.env.guild)  # no alert either; the last look has happened
        assert presence_alerts(h, h.judge) == []


def console_buttons(panel: Message) -> list[str]:
    return [c["custom_id"] for row in panel.components for c in row["components"] if c.get("type") == 2]


async def test_the_console_offers_the_foul_for_a_camera_off_while_it_lasts_and_gives_it_in_one_click(
        tmp_path: Path) -> None:
    async with harness(10, emulator_config=FAST, time_scale=SLOW_CLOCK, config=club(tmp_path, "floor")) as h:
        table = await open_table(h, "online", 10)
        await skip_night_zero(h, table)
        state = table.game.state
        assert floor_seat(table) == 1
        await alerted(h, 1)  # #1 holds the floor with his camera off
        reply = await h.judge.run_command(h.env.text, "mafia panel")
        assert reply.message is not None
        panel = reply.message
        button = custom_id("ppres", table.id, "1")
        assert button in console_buttons(panel)
        labels = [c.get("label") for row in panel.components for c in row["components"]]
        assert "Foul #1 (camera off)" in labels
        assert "Camera off while the rules want it on: #1." in panel.content

        first = h.user(table.user_at(1))
        first.set_camera(h.env.guild)  # back on: the console stops offering the foul at once
        await h.wait(lambda: button not in console_buttons(panel))
        assert "Camera off" not in panel.content
        first.set_camera(h.env.guild, on=False)  # off again while he speaks: offered again
        await h.wait(lambda: button in console_buttons(panel))

        pressed = await h.judge.press(panel, button)
        assert pressed.response_type == 7, pressed.content
        assert state.foul_count(1) == 1  # the same engine command as the seat menu's foul
        assert f"✅ {t('en', 'judge.done.foul', player=seat_label(table, 1), reason='')}" in panel.content
        assert button not in console_buttons(panel)  # answered: gone though the camera is still off
        await h.wait(lambda: any(f"Foul to {seat_label(table, 1)}: 1 foul." in c for c in public(h)))
        assert_no_spec_violations(h.emu)
